"""The check heartbeats of a simulated exporter: `gpuslo_check_*` per node and check.

Every check runs every `CHECK_INTERVAL_S` seconds. What a simulated fault or unknown stretch does
to the check that reports its reason (`REASON_CHECK`), as the exporter's runner would record it:

| verdict / reason              | status  | last run  | last success | errors_total{reason} |
|-------------------------------|---------|-----------|--------------|----------------------|
| unhealthy (any reason)        | fail    | advances  | advances     | —                    |
| unknown, `stale_data`         | unknown | frozen    | frozen       | — (the check stopped)|
| unknown, any other reason     | unknown | advances  | frozen       | +1 per run           |
| otherwise                     | ok      | advances  | advances     | —                    |

`gpuslo_check_runs_total` counts the runs, `gpuslo_check_errors_total{reason}` appears with its
first error (the exporter exposes only reasons that occurred). Nothing is written while the
node has no data.
"""

from __future__ import annotations

import numpy as np

from gpuslo import names
from gpuslo.slo.simulate.sampling import Block, Fleet, labels, lines

CHECKS = (  # the exporter's default checks (gpuslo.exporter.checks.registry)
    "gpu_inventory", "xid", "dcgm", "gpu_memory", "thermal", "nvlink", "pcie", "network_links",
    "port_errors",
)
CHECK_INTERVAL_S = 30
CHECK_DURATION_S = "0.25"
REASON_CHECK = {
    "xid_fatal": "xid", "sxid_fatal": "xid", "fallen_off_bus": "xid",
    "ecc_uncorrectable": "gpu_memory", "row_remap_pending": "gpu_memory",
    "row_remap_failure": "gpu_memory", "recovery_action": "gpu_memory",
    "gpu_missing": "gpu_inventory", "gpu_inaccessible": "gpu_inventory",
    "driver_mismatch": "gpu_inventory", "nvlink_down": "nvlink", "nvlink_errors": "nvlink",
    "fabric_unhealthy": "nvlink", "pcie_degraded": "pcie", "thermal_slowdown": "thermal",
    "network_devices_missing": "network_links", "network_port_down": "network_links",
    "network_port_degraded": "network_links", "probe_failed": "dcgm",
    "check_timeout": "dcgm", "dependency_missing": "network_links", "tool_error": "dcgm",
    "parse_error": "dcgm", "stale_data": "xid",
    # warn-level degradations (gpuslo_node_degradation's check label)
    "clocks_sw_thermal": "thermal", "clocks_sw_power_cap": "thermal",
    "network_port_errors": "port_errors", "network_link_flap": "port_errors",
}
OK, FAIL, ERROR, STALE = 0, 1, 2, 3


def check_of(reason: str) -> str:
    """The check that reports `reason` (dcgm for a reason no other check owns)."""
    return REASON_CHECK.get(reason, "dcgm")
_STATUS = {OK: names.STATUS_OK, FAIL: names.STATUS_FAIL, ERROR: names.STATUS_UNKNOWN,
           STALE: names.STATUS_UNKNOWN}


def check_codes(fleet: Fleet, block: Block) -> tuple[np.ndarray, dict[tuple[int, int], str]]:
    """(code per node × check × sample: OK, FAIL, ERROR or STALE; the error reason per
    (node, check)). The worst code wins where intervals overlap."""
    width = len(fleet.grid.times_s)
    codes = np.zeros((len(block.nodes), len(CHECKS), width), dtype=np.int8)
    reasons: dict[tuple[int, int], str] = {}
    bad = block.bad
    i0, i1 = fleet.offsets(bad["start"], bad["end"])
    node_of = {node: n for n, node in enumerate(block.nodes)}
    for row, a, b in zip(bad.itertuples(index=False), i0, i1, strict=True):
        if b <= a:
            continue
        n, c = node_of[row.node], CHECKS.index(check_of(row.reason))
        if row.verdict == names.VERDICT_UNHEALTHY:
            code = FAIL
        elif row.reason == "stale_data":
            code = STALE
        else:
            code, reasons[n, c] = ERROR, row.reason
        codes[n, c, a:b] = np.maximum(codes[n, c, a:b], code)
    return codes, reasons


def _slot(unix: np.ndarray, check: int) -> np.ndarray:
    """End of the last run at or before each time: runs end every interval, offset per check."""
    offset = 1 + check
    return (unix - offset) // CHECK_INTERVAL_S * CHECK_INTERVAL_S + offset


def _frozen(unix: np.ndarray, live: np.ndarray, check: int) -> np.ndarray:
    """The last run's end, frozen at the last sample where `live` held (the simulation start
    before any)."""
    index = np.maximum.accumulate(np.where(live, np.arange(len(live)), -1))
    return np.where(index >= 0, _slot(unix[np.maximum(index, 0)], check), _slot(unix[:1], check))


def _each(fleet: Fleet, block: Block):
    codes, reasons = check_codes(fleet, block)
    unix = fleet.grid.base + fleet.grid.times_s
    for n, node in enumerate(block.nodes):
        for c, check in enumerate(CHECKS):
            yield n, node, c, check, codes[n, c], reasons.get((n, c)), unix


def status(fleet: Fleet, block: Block) -> str:
    out = []
    for n, node, _, check, code, _, _ in _each(fleet, block):
        shown = np.array([_STATUS[int(k)] for k in range(4)], dtype=object)[code]
        for state in names.STATUSES:
            out.append(lines("gpuslo_check_status" + labels(instance=node, check=check,
                                                            status=state),
                             (shown == state).astype(np.int8), fleet.grid, block.present[n]))
    return "".join(out)


def last_run(fleet: Fleet, block: Block) -> str:
    return "".join(
        lines("gpuslo_check_last_run_timestamp_seconds" + labels(instance=node, check=check),
              _frozen(unix, code != STALE, c), fleet.grid, block.present[n])
        for n, node, c, check, code, _, unix in _each(fleet, block))


def last_success(fleet: Fleet, block: Block) -> str:
    return "".join(
        lines("gpuslo_check_last_success_timestamp_seconds" + labels(instance=node, check=check),
              _frozen(unix, code <= FAIL, c), fleet.grid, block.present[n])
        for n, node, c, check, code, _, unix in _each(fleet, block))


def _constant(name: str, value: str):
    def family(fleet: Fleet, block: Block) -> str:
        values = np.full(len(fleet.grid.times_s), value, dtype=object)
        return "".join(lines(name + labels(instance=node, check=check), values, fleet.grid,
                             block.present[n]) for n, node in enumerate(block.nodes)
                       for check in CHECKS)
    return family


def _runs(fleet: Fleet, live: np.ndarray) -> np.ndarray:
    """Runs done by each sample: every interval while `live`, from the simulation start."""
    per_step = max(fleet.grid.step // CHECK_INTERVAL_S, 1)
    before = int(fleet.grid.times_s[0]) // CHECK_INTERVAL_S if len(fleet.grid.times_s) else 0
    return before + np.cumsum(live.astype(np.int64) * per_step)


def runs_total(fleet: Fleet, block: Block) -> str:
    return "".join(
        lines("gpuslo_check_runs_total" + labels(instance=node, check=check),
              _runs(fleet, code != STALE), fleet.grid, block.present[n])
        for n, node, _, check, code, _, _ in _each(fleet, block))


def errors_total(fleet: Fleet, block: Block) -> str:
    out = []
    for n, node, _, check, code, reason, _ in _each(fleet, block):
        if reason is None:
            continue
        count = _runs(fleet, code == ERROR) - _runs(fleet, np.zeros(len(code), dtype=bool))
        out.append(lines("gpuslo_check_errors_total" + labels(instance=node, check=check,
                                                              reason=reason),
                         count, fleet.grid, block.present[n] & (count > 0)))
    return "".join(out)


FAMILIES = (
    ("gpuslo_check_status", "gauge", status),
    ("gpuslo_check_last_run_timestamp_seconds", "gauge", last_run),
    ("gpuslo_check_last_success_timestamp_seconds", "gauge", last_success),
    ("gpuslo_check_interval_seconds", "gauge",
     _constant("gpuslo_check_interval_seconds", str(CHECK_INTERVAL_S))),
    ("gpuslo_check_duration_seconds", "gauge",
     _constant("gpuslo_check_duration_seconds", CHECK_DURATION_S)),
    ("gpuslo_check_runs_total", "counter", runs_total),
    ("gpuslo_check_errors_total", "counter", errors_total),
)
