"""`port_errors`: InfiniBand/RoCE and EFA port error counters rising between runs, link flaps and
saturated counters — the degraded links that make a job crawl instead of crash.

Evidence: sysfs `class/infiniband/*/ports/*/counters/` and `hw_counters/`
(`gpuslo.exporter.evidence.fabric.counters`). Rules: `gpuslo.exporter.policy.port_counters`
(`warn` `network_port_errors` / `network_link_flap`, `fail` where the node config's
`degradation_status` says so; the node config's `port_error_threshold` sets how many errors per
run count, default any). The counters of the last run are the baseline, persisted atomically in
`<state_dir>/port_counters.json` with their time (the rate's denominator); a baseline that cannot
be read or is not such a mapping makes the check `unknown` until it is fixed or removed — never
reset silently, which would hide errors that rose meanwhile. A node without RDMA ports says so
(`applicable=False`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import DependencyMissing, InputError, ParseError, ToolError
from gpuslo.exporter.checks.base import DEFAULT_INTERVAL_S, CheckContext, degradation_status
from gpuslo.exporter.evidence.fabric.counters import read_port_counters
from gpuslo.exporter.evidence.fabric.sysfs import NotSysfs
from gpuslo.exporter.policy.port_counters import judge_port
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.verdict import NODE_SCOPE, CheckResult

CHECK = "port_errors"
STATE_FILE = "port_counters.json"


def load_baseline(path: Path) -> dict[str, Any]:
    """{"t": Unix seconds, "ports": {port: {counter: count}}}; {} before the first run. Raises
    ParseError naming the file when it is not such a mapping, ToolError when it cannot be read."""
    try:
        data = read_json_state(path, {})
    except OSError as error:
        raise ToolError(f"{path}: cannot read the port counter baseline ({error})") from None
    if data == {}:
        return data
    ports = data.get("ports") if isinstance(data, dict) else None
    valid = (
        isinstance(data.get("t") if isinstance(data, dict) else None, int | float)
        and isinstance(ports, dict)
        and all(
            isinstance(counts, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values())
            for counts in ports.values()
        )
    )
    if not valid:
        raise ParseError(str(path), 'not a {"t": seconds, "ports": {port: {counter: count}}} map')
    return data


@dataclass
class PortErrorsCheck:
    """The `port_errors` check (see the module docstring for its rules)."""

    name: str = CHECK
    interval_s: float = DEFAULT_INTERVAL_S
    dependencies: tuple[str, ...] = field(default=("sysfs:class/infiniband",))

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Read the counters, judge each port against the baseline, then persist the baseline.
        Raises DependencyMissing for a root that is not a sysfs, ToolError/ParseError for a
        sysfs or baseline that cannot be read (the runner makes them `unknown`)."""
        started = time.monotonic()
        try:
            now_counts = read_port_counters(context.sysfs)
        except NotSysfs as error:
            raise DependencyMissing(str(error)) from None
        except InputError as error:
            raise ToolError(str(error)) from None
        path = Path(context.state_dir) / STATE_FILE
        baseline = load_baseline(path)
        now = context.clock() if context.clock else time.time()
        elapsed = now - float(baseline.get("t", now))
        threshold = int(context.config.get("port_error_threshold") or 1)
        before = baseline.get("ports", {})
        results = [self._result(port, judge_port(port, before.get(port), counts, elapsed,
                                                 threshold), context)
                   for port, counts in sorted(now_counts.items())]
        if not results:
            results = [CheckResult(check=CHECK, scope=NODE_SCOPE, status=names.STATUS_OK,
                                   message="not applicable: no RDMA port error counters",
                                   applicable=False)]
        kept = {p: {k: v for k, v in c.items() if v is not None} for p, c in now_counts.items()}
        with contextlib.suppress(OSError):  # unwritable: the next run compares with the older one
            write_json_atomic(path, {"t": now, "ports": {**before, **kept}})
        duration, source = time.monotonic() - started, f"sysfs {context.sysfs}"
        return [_stamp(r, source, now, duration) for r in results]

    @staticmethod
    def _result(port: str, judged, context: CheckContext) -> CheckResult:
        status = judged.status
        if status == names.STATUS_WARN:
            status = degradation_status(context, judged.reason)
        action = names.ACTION_CHECK_CABLING if judged.reason else names.ACTION_NONE
        return CheckResult(check=CHECK, scope=port.partition("/")[0], status=status,
                           reason=judged.reason, action=action, message=judged.message)


def _stamp(result: CheckResult, source: str, now: float, duration: float) -> CheckResult:
    return replace(result, source=source, observed_at=now, duration_s=duration)
