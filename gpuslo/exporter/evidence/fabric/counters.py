"""Port error counters of InfiniBand/RoCE and EFA devices from sysfs (read and parse; judging is
`gpuslo.exporter.policy.port_counters`).

Files read, under `class/infiniband/<dev>/ports/<n>/`:
- `counters/<name>` — the InfiniBand PortCounters attribute (IBTA spec vol. 1, 16.1.3.5) the
  kernel exposes for every IB and RoCE HCA (`drivers/infiniband/core/sysfs.c`). These counters
  are narrow and *saturate* at their maximum instead of wrapping (the spec: "stops at all ones");
  `ERROR_COUNTERS` gives each one's width in bits, so a value at 2^bits − 1 is a saturated
  counter whose rate cannot be told.
- `hw_counters/<name>` — driver counters; for EFA (`drivers/infiniband/hw/efa/efa_verbs.c`,
  64 bits) the error ones of `EFA_ERROR_COUNTERS`.
A counter file that is absent is not reported by that driver (skipped); one that exists but
cannot be read or parsed is None (unknown, never zero).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.errors import InputError
from gpuslo.exporter.evidence.fabric.sysfs import NotSysfs

# counters/<name> -> width in bits (IBTA PortCounters).
ERROR_COUNTERS: dict[str, int] = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
}
# hw_counters/<name> of the EFA driver that count errors (64 bits: they do not saturate).
EFA_ERROR_COUNTERS: tuple[str, ...] = (
    "rx_drops",
    "rdma_read_wr_err",
    "rdma_write_wr_err",
    "retrans_timeout_events",
    "unresponsive_remote_events",
    "impaired_remote_conn_events",
)
LINK_DOWNED = "counters/link_downed"
PortCounters = dict[str, dict[str, int | None]]


def counter_max(name: str) -> int | None:
    """The saturation value of `counters/<name>` (2^bits − 1), None for a 64-bit hw counter."""
    kind, _, base = name.partition("/")
    bits = ERROR_COUNTERS.get(base) if kind == "counters" else None
    return (1 << bits) - 1 if bits else None


def parse_counter(text: str) -> int | None:
    """A counter file's value: a decimal count (some drivers add a newline); None when it is not
    one (an error text, an empty file)."""
    text = text.strip()
    return int(text) if text.isdigit() else None


def _read_counter(path: Path) -> int | None:
    try:
        return parse_counter(path.read_text(encoding="ascii", errors="replace"))
    except OSError:
        return None


def read_port_counters(sysfs: str | Path) -> PortCounters:
    """{"<dev>/<port>": {"counters/<name>" or "hw_counters/<name>": count or None}} for every
    RDMA port, only the error counters named above that the driver exposes. Raises NotSysfs for
    a root that is not a sysfs, InputError when `class/infiniband` cannot be listed."""
    root = Path(sysfs)
    if not (root / "class").is_dir():
        raise NotSysfs(str(root), "not a sysfs: no class/ directory")
    base = root / "class" / "infiniband"
    if not base.exists():
        return {}
    out: PortCounters = {}
    try:
        devices = sorted(p for p in base.iterdir())
    except OSError as error:
        raise InputError(str(base), f"cannot list RDMA devices ({error})") from None
    for device in devices:
        ports = device / "ports"
        for port in sorted(ports.iterdir()) if ports.is_dir() else ():
            found: dict[str, int | None] = {}
            for name in ERROR_COUNTERS:
                if (port / "counters" / name).exists():
                    found[f"counters/{name}"] = _read_counter(port / "counters" / name)
            for name in EFA_ERROR_COUNTERS:
                if (port / "hw_counters" / name).exists():
                    found[f"hw_counters/{name}"] = _read_counter(port / "hw_counters" / name)
            if found:
                out[f"{device.name}/{port.name}"] = found
    return out
