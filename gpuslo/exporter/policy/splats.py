"""What a kernel splat through an NVIDIA kernel module means for the GPU, as data (pure).

The rules are the Xid policy's `kernel_splats` section (`gpuslo/data/xid_policy.yaml`, which
names its sources; an operator overlay merges over it): one rule (class, action, reason) per
splat type of `gpuslo.exporter.evidence.kernel_log.splats`. `splat_rule` reads it:
- a type the section lacks reads as an `oops` (fail closed), and with no `oops` rule either as
  fatal, `reboot_node`, reason `driver_crash`;
- a `trace` (NVIDIA frames whose header the log does not show: the type, and so the meaning,
  cannot be read) is `unknown` with reason `parse_error`, never a policy class;
- each type has its finding signal (`SIGNALS`): `kernel_oops`, `kernel_warning`, `kernel_stall`,
  `kernel_trace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuslo import names
from gpuslo.errors import ConfigError

SECTION = "kernel_splats"
TYPES = ("oops", "bug", "atomic_sleep", "warning", "soft_lockup", "hard_lockup", "hung_task",
         "rcu_stall")
SIGNALS = {
    "oops": "kernel_oops",
    "bug": "kernel_oops",
    "atomic_sleep": "kernel_warning",
    "warning": "kernel_warning",
    "soft_lockup": "kernel_stall",
    "hard_lockup": "kernel_stall",
    "hung_task": "kernel_stall",
    "rcu_stall": "kernel_stall",
    "trace": "kernel_trace",
}
DEFAULT_RULE = {"class": names.CLASS_FATAL, "action": names.ACTION_REBOOT_NODE,
                "reason": "driver_crash"}


def splat_entry(section: Mapping[str, Any] | None, kind: str | None) -> Mapping[str, Any] | None:
    """The policy entry for splat type `kind` from the `kernel_splats` section (None: no section):
    its own, else the `oops` entry, else `DEFAULT_RULE`; None for a `trace` (unknown)."""
    if kind == "trace":
        return None
    rules = section or {}
    return rules.get(kind or "") or rules.get("oops") or DEFAULT_RULE


def splat_signal(kind: str | None) -> str:
    """The finding signal of splat type `kind` (`kernel_trace` for one not known)."""
    return SIGNALS.get(kind or "", "kernel_trace")


def check_section(section: Any, source: str, check_rule) -> None:
    """Raise ConfigError (through `check_rule(entry, where, source)` for each rule, or naming the
    field) when `section` is not a mapping of splat type to rule."""
    if section is None:
        return
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: field {SECTION}: expected a mapping of splat type to rule")
    for kind, entry in section.items():
        if kind not in TYPES:
            raise ConfigError(f"{source}: field {SECTION}.{kind}: unknown splat type (known: "
                              f"{', '.join(TYPES)})")
        check_rule(entry, f"{SECTION}.{kind}", source)
