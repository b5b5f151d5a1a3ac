"""The exporter's platform sample: this node's Slurm state and reason. (The GPUs Slurm jobs hold
are an allocation source of the job side: `gpuslo.exporter.jobs.hpc.HpcJobAllocations`.)

slurmctld keeps no state history without slurmdbd, so the exporter samples its own node's state
(`evidence.slurm.read_node`) every cycle and exports it as kube-state-metrics exports cordons;
Prometheus keeps the history and the SLO engine reads it as schedulability
(`gpuslo.slo.sources.slurm`). `node_state_labels(node)` is the pure mapping to bounded labels:

| Slurm | state | reason_layer | reason |
|---|---|---|---|
| drained/down, reason `gpuslo: <check> <reason> ...` | drained/down | its layer | <reason> |
| drained, someone else's reason | drained | platform | slurm_drain |
| DOWN, someone else's reason or none | down | platform | slurm_down |
| MAINT (maintenance reservation) | maintenance | platform | slurm_maintenance |
| IDLE/ALLOCATED/MIXED/... | up | "" | "" |
| scontrol failed | unknown | observability | check_timeout, dependency_missing, ... |
| anything else raised while reading it | unknown | observability | tool_error |

Sampling never raises: the series stays, `unknown` with its reason, so `exporter --once
--slurm` and every cycle of the server keep their Slurm series whatever scontrol printed.
"""

from __future__ import annotations

import logging

from gpuslo import names
from gpuslo.exporter.evidence.slurm import (
    DEFAULT_SCONTROL,
    Run,
    SlurmNode,
    SlurmUnavailable,
    read_node,
    run_command,
)
from gpuslo.exporter.slurm.drain import own_reason_word

log = logging.getLogger(__name__)
Sample = tuple[str, tuple[str, ...], float]  # (metric name, label values in METRICS order, value)
SAMPLE_TIMEOUT_S = 5.0


def node_state_labels(node: SlurmNode) -> tuple[str, str, str]:
    """(state, reason_layer, reason) for `node`, as the table in the module docstring. Pure."""
    own = own_reason_word(node.reason)
    if node.down or node.drained:
        state = "down" if node.down else "drained"
        if own:
            return state, names.layer_of(own), own
        return state, names.LAYER_PLATFORM, "slurm_down" if node.down else "slurm_drain"
    if "MAINT" in node.flags:
        return "maintenance", names.LAYER_PLATFORM, "slurm_maintenance"
    return names.SLURM_STATE_UP, "", ""


class PlatformSampler:
    """Samples this node's Slurm state; `samples()` returns the latest, without I/O.

    Args:
        node: Slurm NodeName to sample, or None not to sample Slurm.
        scontrol, run, timeout_s: how scontrol is run (injected; timeout per call).
    """

    def __init__(self, node: str | None, scontrol: str = DEFAULT_SCONTROL,
                 run: Run = run_command, timeout_s: float = SAMPLE_TIMEOUT_S) -> None:
        self.node = node
        self.scontrol, self.run, self.timeout_s = scontrol, run, timeout_s
        self._latest: list[Sample] = []
        self._last_error = ""

    def sample(self) -> list[Sample]:
        """Read Slurm now; keep and return the samples. Never raises: a Slurm failure becomes
        state unknown with its reason, anything else unknown with tool_error (logged once per
        distinct error, on one line)."""
        out: list[Sample] = []
        if self.node:
            try:
                labels = node_state_labels(read_node(self.node, self.scontrol, self.run,
                                                     self.timeout_s))  # fmt: skip
            except SlurmUnavailable as error:
                labels = ("unknown", names.LAYER_OBSERVABILITY, error.reason)
            except Exception as error:  # noqa: BLE001 - fail closed: the series stays, unknown
                labels = ("unknown", names.LAYER_OBSERVABILITY, "tool_error")
                said = " ".join(f"{type(error).__name__}: {error}".split())[:300]
                if said != self._last_error:
                    log.warning("slurm state of %r unreadable: %s", self.node, said)
                self._last_error = said
            out.append(("gpuslo_slurm_node_state", labels, 1.0))
        self._latest = out
        return out

    def samples(self) -> list[Sample]:
        """The samples of the last `sample()` call."""
        return list(self._latest)
