"""The evidence and expectation flags `gpuslo check` and `gpuslo exporter` share, apart from the
Runner built from them (`gpuslo.cli.sources`): `gpuslo check --help` imports this module, the
terminal helpers and the state directory's name only, no check, runner or policy (issue 30)."""

from __future__ import annotations

import argparse

from gpuslo.cli.terminal import number
from gpuslo.exporter.state import SYSTEM_STATE_DIR

DEFAULT_TIMEOUT_S = 10.0


def _network(text: str) -> dict[str, int]:
    """`N` (InfiniBand devices) or `KIND=N[,KIND=N]` with KIND infiniband or efa."""
    out = {}
    for part in text.split(","):
        kind, _, count = part.rpartition("=")
        kind = kind.strip() or "infiniband"
        if kind not in ("infiniband", "efa") or not count.strip().isdigit():
            raise argparse.ArgumentTypeError(f"expected N or infiniband=N / efa=N, got {text!r}")
        out[kind] = int(count)
    return out


# A check's deadline: a millisecond at least, an hour at most (a check that needs longer is broken,
# and the event loop cannot wait 1e12 s).
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 0.001, 3600.0


def add_source_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The evidence and expectation flags shared by `gpuslo check` and `gpuslo exporter`."""
    add = parser.add_argument
    add("--config", metavar="FILE", help="node config YAML (see gpuslo/exporter/node_config.py)")
    add(
        "--node",
        metavar="NAME",
        help="node name in gpuslo_node_info and check output (default: the config's node, else "
        "the host name; in Kubernetes pass the downward API's spec.nodeName)",
    )
    add(
        "--kernel-log",
        metavar="PATH",
        help="read this kernel-log file instead of /dev/kmsg, journalctl -k or dmesg",
    )
    add(
        "--fabricmanager-log",
        metavar="PATH",
        help="nvidia-fabricmanager log (default /var/log/fabricmanager.log when present; set, "
        "an unreadable one is unknown)",
    )
    add(
        "--hostengine-log",
        metavar="PATH",
        help="DCGM nv-hostengine log (default /var/log/nv-hostengine.log when present; set, an "
        "unreadable one is unknown)",
    )
    add(
        "--dcgm-url",
        metavar="URL",
        help="dcgm-exporter metrics URL (http://127.0.0.1:9400/metrics)",
    )
    add("--path.sysfs", dest="path_sysfs", metavar="DIR", help="root of sysfs (default /sys)")
    add("--path.procfs", dest="path_procfs", metavar="DIR", help="root of procfs (default /proc)")
    add(
        "--expect-gpus",
        type=int,
        metavar="N",
        help="GPUs this node must have (default: the "
        "count seen at the first healthy run, kept in the state dir)",
    )
    add(
        "--expect-network-devices",
        type=_network,
        metavar="N|KIND=N",
        help="network devices expected: N InfiniBand devices, or infiniband=N / efa=N",
    )
    add("--instance-type", metavar="TYPE", help="cloud instance type (expected EFA count)")
    add(
        "--check-timeout",
        type=number(MIN_TIMEOUT_S, MAX_TIMEOUT_S, "seconds"),
        metavar="SECONDS",
        help=f"deadline of each check, {MIN_TIMEOUT_S:g} to {MAX_TIMEOUT_S:g} "
        f"(default {DEFAULT_TIMEOUT_S:g})",
    )
    add(
        "--state-dir",
        metavar="DIR",
        help=f"where checks keep cursors and baselines (default "
        f"{SYSTEM_STATE_DIR} when writable, else $XDG_STATE_HOME/gpuslo, i.e. "
        "~/.local/state/gpuslo)",
    )
    add("--active", action="store_true", help="also run the active GPU probe (gpu_probe)")
    add("--policy", metavar="FILE", help="operator Xid policy overlay (YAML)")
