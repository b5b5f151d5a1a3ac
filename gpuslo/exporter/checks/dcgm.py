"""`dcgm` check: scrape dcgm-exporter over HTTP and judge each GPU with the shared rules.

Evidence: `context.dcgm_url` (not configured → one explicit not-applicable result), fetched with
`read_dcgm_page` (timeout, byte cap) and parsed with `parse_dcgm_page`. One result per GPU UUID
(the worst of what applies, since results are indexed by check and scope) plus at most one node
result:
- a fatal last Xid (`DCGM_FI_DEV_XID_ERRORS`, classed by the Xid policy) or a fatal
  `evaluate_gpu` problem → `fail` with its reason and action; warn-class findings → `warn`;
- a fault-carrying field shown only with a value it cannot hold (a DCGM blank sentinel, NaN,
  +-Inf, a negative count: `policy.dcgm.unusable_findings`) → `unknown` `no_data` for that GPU;
- stale data → `unknown` `stale_data`: the GPU draws power but its energy counter has not moved
  for more than `config["dcgm"]["stale_after_s"]` seconds (default 90: three of dcgm-exporter's
  30 s collection intervals). The counters, with the time each value was first seen, are kept in
  `<state_dir>/dcgm.json` (atomic writes) together with the URL they came from;
- a metric family the previous scrape had, or a required one (`config["dcgm"]["required_metrics"]`,
  default `DCGM_FI_DEV_XID_ERRORS`), missing from this page → node `unknown` `no_data`: missing
  is unknown, never zero; a page without GPUs → node `unknown` `no_data`.
A page none of whose GPU UUIDs is this node's is another node's (`policy.dcgm.on_this_node`): the
check reads this node's UUIDs itself from the driver's `<procfs>/driver/nvidia/gpus/*/information`
(`read_local_uuids`), so `gpuslo check --check dcgm` alone, without the NVML inventory, answers
one node `unknown` instead of that node's verdicts; without those files it judges the page as is.
Connection refused → `DependencyMissing`; timeouts, HTTP errors, truncated or oversized answers
→ `ToolError`; a page that is not exposition format → `ParseError` (the runner makes them
unknown).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuslo import names
from gpuslo.errors import ParseError
from gpuslo.exporter.checks.base import DEFAULT_INTERVAL_S, CheckContext
from gpuslo.exporter.evidence.dcgm.http import DEFAULT_MAX_BYTES, read_dcgm_page
from gpuslo.exporter.evidence.dcgm.page import DcgmPage, parse_dcgm_page
from gpuslo.exporter.evidence.dcgm.staleness import (
    STALE_AFTER_S,
    EnergyMark,
    stale_gpus,
    track_energy,
)
from gpuslo.exporter.evidence.nvidia_smi.proc import parse_proc_driver, read_gpu_information
from gpuslo.exporter.policy.dcgm import (
    REQUIRED_FAMILIES,
    gpu_findings,
    missing_families,
    on_this_node,
)
from gpuslo.exporter.policy.xid import XidPolicy, load_policy
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

CHECK = "dcgm"
STATE_FILE = "dcgm.json"
DEFAULT_REQUIRED = REQUIRED_FAMILIES
_STATUS_OF_CLASS = {
    names.CLASS_FATAL: names.STATUS_FAIL,
    names.CLASS_WARN: names.STATUS_WARN,
    names.CLASS_CONTAINED: names.STATUS_WARN,
    names.CLASS_APPLICATION: names.STATUS_WARN,
    names.CLASS_UNKNOWN: names.STATUS_UNKNOWN,  # a health field the page shows with no value
}
_RANK = {names.STATUS_OK: 0, names.STATUS_WARN: 1, names.STATUS_UNKNOWN: 2, names.STATUS_FAIL: 3}


@dataclass(frozen=True)
class DcgmState:
    """What earlier scrapes of `url` left: energy counter marks by UUID and the families the last
    page had."""

    url: str = ""
    energy: dict[str, EnergyMark] = field(default_factory=dict)
    families: frozenset[str] = frozenset()


def _finding_result(gpu_scope: str, index: str, finding: Finding) -> CheckResult:
    status = _STATUS_OF_CLASS.get(finding.class_, names.STATUS_OK)
    reason = (finding.reason or "xid_fatal") if status == names.STATUS_FAIL else ""
    if status == names.STATUS_UNKNOWN:
        reason = finding.reason or "no_data"
    if status == names.STATUS_WARN and finding.reason in names.DEGRADATION_REASONS:
        reason = finding.reason  # a warn that explains a crawl keeps its reason
    return CheckResult(
        check=CHECK,
        scope=gpu_scope,
        gpu=index,
        status=status,
        reason=reason,
        action=finding.action or names.ACTION_NONE,
        message=finding.message or "",
    )


def _worst(scope: str, index: str, results: list[CheckResult]) -> CheckResult:
    if not results:
        return CheckResult(
            check=CHECK,
            scope=scope,
            gpu=index,
            status=names.STATUS_OK,
            message="no Xid, ECC, row-remap, recovery or thermal problem reported",
        )
    worst = max(results, key=lambda r: (_RANK[r.status], names.ACTION_SEVERITY[r.action]))
    messages = [r.message for r in results if r.status == worst.status and r.message]
    return replace(worst, message="; ".join(dict.fromkeys(messages)))


def _no_data(message: str) -> CheckResult:
    """A node result `unknown` / `no_data`: the page does not show what the check needs."""
    return CheckResult(check=CHECK, scope=NODE_SCOPE, status=names.STATUS_UNKNOWN,
                       reason="no_data", message=message)


def evaluate_page(
    page: DcgmPage,
    previous: DcgmState,
    policy: XidPolicy,
    now: float,
    required: tuple[str, ...] = DEFAULT_REQUIRED,
    stale_after_s: float = STALE_AFTER_S,
    gpu_family: str | None = None,
) -> tuple[list[CheckResult], DcgmState]:
    """Results for one parsed page given the state of earlier scrapes, and the state to keep
    (pure; see the module docstring for the rules). `observed_at`, `source` and `duration_s` are
    left to the caller. `policy` classes each GPU's last Xid; `gpu_family` overrides the family
    the page names."""
    results = []
    missing = missing_families(page.families, tuple(required), previous.families)
    if missing:
        results.append(_no_data(f"missing from the page: {', '.join(missing)}"))
    if not page.gpus:
        results.append(_no_data("the page lists no GPU"))
    marks = track_energy(previous.energy, page, now)
    stale = stale_gpus(marks, page, now, stale_after_s)
    for uuid, gpu in page.gpus.items():
        own = [
            _finding_result(uuid, gpu.index, f)
            for f in gpu_findings(gpu, policy, gpu_family, CHECK)
        ]
        if uuid in stale:
            own.append(
                CheckResult(
                    check=CHECK,
                    scope=uuid,
                    gpu=gpu.index,
                    status=names.STATUS_UNKNOWN,
                    reason="stale_data",
                    message=stale[uuid],
                )
            )
        results.append(_worst(uuid, gpu.index, own))
    return results, DcgmState(previous.url, marks, page.families)


def load_state(path: Path, url: str) -> DcgmState:
    """The state earlier scrapes of `url` left in `path`; empty when absent or written for another
    URL. Raises ParseError when the file is not valid JSON."""
    data = read_json_state(path, {})
    if not isinstance(data, dict) or data.get("url") != url:
        return DcgmState(url=url)
    try:
        energy = {
            str(uuid): EnergyMark(float(mark[0]), float(mark[1]))
            for uuid, mark in (data.get("energy") or {}).items()
        }
        families = frozenset(str(name) for name in data.get("families") or ())
    except (TypeError, ValueError, IndexError, AttributeError) as error:
        raise ParseError(
            str(path), f"state file field unreadable ({error})", field="energy"
        ) from None
    return DcgmState(url, energy, families)


def save_state(path: Path, state: DcgmState) -> None:
    """Persist `state` (atomic write): `{"url", "energy": {uuid: [mJ, since]}, "families"}`."""
    energy = {uuid: [mark.energy_mj, mark.since] for uuid, mark in sorted(state.energy.items())}
    write_json_atomic(
        path, {"url": state.url, "energy": energy, "families": sorted(state.families)}
    )


def read_local_uuids(procfs: Path) -> set[str]:
    """This node's GPU UUIDs from `<procfs>/driver/nvidia/gpus/*/information` (the driver's own
    inventory: `GPU UUID:` lines, readable without NVML); empty when the files are absent or
    unreadable (nothing is then known of the page's origin)."""
    uuids: set[str] = set()
    for path, text in read_gpu_information(procfs):
        uuids.update(g.status.uuid for g in parse_proc_driver(text, path).gpus if g.status.uuid)
    return uuids


def _not_applicable() -> list[CheckResult]:
    return [
        CheckResult(
            check=CHECK,
            scope=NODE_SCOPE,
            status=names.STATUS_OK,
            applicable=False,
            message="not applicable: no dcgm-exporter URL configured (--dcgm-url)",
        )
    ]


@dataclass
class DcgmCheck:
    """The `dcgm` check (see the module docstring)."""

    name: str = CHECK
    interval_s: float = DEFAULT_INTERVAL_S
    dependencies: tuple[str, ...] = ("dcgm-exporter (HTTP)",)

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Scrape, evaluate against the persisted state, persist the new state."""
        if not context.dcgm_url:
            return _not_applicable()
        started = time.monotonic()
        settings = context.config.get("dcgm") or {}
        max_bytes = int(settings.get("max_bytes", DEFAULT_MAX_BYTES))
        text = read_dcgm_page(context.dcgm_url, context.timeout_s * 0.8, max_bytes)
        page = parse_dcgm_page(text, context.dcgm_url)
        state_path = Path(context.state_dir) / STATE_FILE
        previous = load_state(state_path, context.dcgm_url)
        now = context.clock() if context.clock else time.time()
        results, state = evaluate_page(
            page,
            previous,
            load_policy(context.policy_path),
            now,
            required=tuple(settings.get("required_metrics", DEFAULT_REQUIRED)),
            stale_after_s=float(settings.get("stale_after_s", STALE_AFTER_S)),
            gpu_family=context.gpu_family,
        )
        save_state(state_path, state)
        took = time.monotonic() - started
        source = f"dcgm-exporter {context.dcgm_url}"
        results = [replace(r, source=source, observed_at=now, duration_s=took) for r in results]
        return on_this_node(results, read_local_uuids(Path(context.procfs)))
