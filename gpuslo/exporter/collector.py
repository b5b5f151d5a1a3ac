"""The exporter's prometheus_client custom collector: fresh metric families on every scrape from
the latest `NodeSnapshot` and the tailed job journals (DESIGN.md §4; names.METRICS).

Nothing runs on a scrape: `collect()` reads the snapshot the check thread swapped in last and the
job goodput the journal tailer keeps. Results older than 3 × their check's interval at scrape
time are exposed as `unknown`/`stale_data` (`verdict.stale_as_unknown`), and a check whose last
run is that old reports `unknown` even with no result. Statesets (`gpuslo_gpu_verdict`,
`gpuslo_node_verdict`, `gpuslo_check_status`) are gauges with exactly one series at 1.
No snapshot yet (the first cycle has not finished) exposes the node as `unknown`, never healthy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from gpuslo import __version__, names
from gpuslo.exporter.snapshot import AllocationSourceState, GpuAllocation, NodeSnapshot
from gpuslo.goodput.calculator import JobGoodput
from gpuslo.verdict import (
    NODE_SCOPE,
    STALE_INTERVALS,
    CheckResult,
    combine,
    gpu_scoped,
    gpu_verdicts,
    node_verdict,
    stale_as_unknown,
)

Jobs = list[tuple[str, JobGoodput]]
# The check's status stateset folds its results worst first.
_STATUS_ORDER = (names.STATUS_FAIL, names.STATUS_UNKNOWN, names.STATUS_WARN, names.STATUS_OK)


class Families:
    """One family per metric of `names.METRICS`, with its HELP text and label names."""

    def __init__(self) -> None:
        self.by_name: dict[str, Metric] = {}
        for name, (kind, labels, help_text) in sorted(names.METRICS.items()):
            if kind == "counter":
                family = CounterMetricFamily(name, help_text, labels=list(labels))
            else:
                family = GaugeMetricFamily(name, help_text, labels=list(labels))
            self.by_name[name] = family

    def add(self, name: str, labels: Iterable[str], value: float) -> None:
        """Add one sample to `name` (label values in the order of names.METRICS)."""
        self.by_name[name].add_metric(list(labels), float(value))

    def stateset(self, name: str, prefix: list[str], states: Iterable[str], current: str) -> None:
        """One series per state of `states`, 1 for `current`, 0 for the others."""
        for state in states:
            self.add(name, [*prefix, state], 1.0 if state == current else 0.0)


def fresh_results(snapshot: NodeSnapshot, now: float) -> list[CheckResult]:
    """The snapshot's results with those older than 3 × their check's interval made `unknown`."""
    intervals = {beat.check: beat.interval_s for beat in snapshot.heartbeats}
    return [stale_as_unknown(r, now, intervals.get(r.check, 30.0)) for r in snapshot.results]


def check_statuses(
    snapshot: NodeSnapshot, results: list[CheckResult], now: float
) -> dict[str, str]:
    """Status per configured check: the worst of its results; `unknown` when it has none or its
    last run is older than 3 × its interval (the check itself stopped)."""
    out = {}
    for beat in snapshot.heartbeats:
        own = {r.status for r in results if r.check == beat.check}
        stale = now - beat.last_run > STALE_INTERVALS * beat.interval_s
        worst = next((s for s in _STATUS_ORDER if s in own), names.STATUS_UNKNOWN)
        out[beat.check] = names.STATUS_UNKNOWN if stale else worst
    return out


def _stale_check_results(statuses: dict[str, str], results: list[CheckResult]) -> list[CheckResult]:
    """A node-scoped unknown result for each check that went silent, so verdicts see it."""
    have = {r.check for r in results if r.status == names.STATUS_UNKNOWN}
    return [
        CheckResult(
            check=check,
            scope=NODE_SCOPE,
            status=names.STATUS_UNKNOWN,
            reason="stale_data",
            message="no recent run of this check",
            source="exporter",
        )
        for check, status in sorted(statuses.items())
        if status == names.STATUS_UNKNOWN and check not in have
    ]


def add_node(fam: Families, snapshot: NodeSnapshot | None, now: float) -> None:
    """Node, GPU and check families from `snapshot` evaluated at `now` (None: nothing known)."""
    if snapshot is None:
        fam.add("gpuslo_node_usable", [], 0)
        fam.stateset("gpuslo_node_verdict", [], names.VERDICTS, names.VERDICT_UNKNOWN)
        return
    fam.add("gpuslo_node_info", [snapshot.node, snapshot.driver_version, snapshot.cuda_version], 1)
    if snapshot.gpus_expected is not None:  # the fleet's denominator, also with no GPU readable
        fam.add("gpuslo_gpu_expected", [], snapshot.gpus_expected)
    results = gpu_scoped(fresh_results(snapshot, now), snapshot.gpus)
    statuses = check_statuses(snapshot, results, now)
    results += _stale_check_results(statuses, results)
    verdicts = gpu_verdicts(results, [g.uuid for g in snapshot.gpus])
    for gpu in sorted(snapshot.gpus, key=lambda g: (len(g.index), g.index, g.uuid)):
        ids = [gpu.index, gpu.uuid]
        fam.add("gpuslo_gpu_info", [*ids, gpu.pci_bus_id, gpu.model, gpu.family], 1)
        fam.add("gpuslo_gpu_usable", ids, verdicts[gpu.uuid] == names.VERDICT_HEALTHY)
        fam.stateset("gpuslo_gpu_verdict", ids, names.VERDICTS, verdicts[gpu.uuid])
        problems = {
            (r.check, r.reason, r.layer, r.action)
            for r in results
            if r.scope in (gpu.uuid, NODE_SCOPE) and r.status in ("fail", "unknown")
        }
        for problem in sorted(problems):
            fam.add("gpuslo_gpu_problem", [*ids, *problem], 1)
    node = (
        node_verdict(results)
        if snapshot.gpus
        else combine([r.status for r in results] + [names.STATUS_UNKNOWN])
    )  # no inventory: never healthy
    usable = node == names.VERDICT_HEALTHY and all(
        v == names.VERDICT_HEALTHY for v in verdicts.values()
    )
    fam.add("gpuslo_node_usable", [], usable)
    fam.stateset("gpuslo_node_verdict", [], names.VERDICTS, node)
    add_degradations(fam, results, snapshot.gpus)
    add_checks(fam, snapshot, statuses)
    add_validation(fam, snapshot)


def add_validation(fam: Families, snapshot: NodeSnapshot) -> None:
    """The return-to-service gate's families (none when the gate did not run): a state stateset
    per GPU of the inventory, tries and since for the GPUs it holds, gates ended, validators,
    gate_unavailable and the hold-down length."""
    view = snapshot.validation
    if view is None:
        return
    held = {g.uuid: g for g in view.gpus}
    index = {g.uuid: g.index for g in snapshot.gpus}
    for gpu in sorted(snapshot.gpus, key=lambda g: (len(g.index), g.index, g.uuid)):
        state = held[gpu.uuid].state if gpu.uuid in held else ""
        fam.stateset("gpuslo_gpu_validation_state", [gpu.index, gpu.uuid],
                     names.VALIDATION_STATES, state)
    for g in sorted(view.gpus, key=lambda g: (len(g.gpu), g.gpu, g.uuid)):
        fam.add("gpuslo_gpu_validation_tries", [g.gpu, g.uuid], g.tries)
        fam.add("gpuslo_gpu_validation_since_timestamp_seconds", [g.gpu, g.uuid], g.since)
    for (uuid, outcome), count in sorted(view.gates_total.items()):
        fam.add("gpuslo_gpu_validation_gates_total", [index.get(uuid, ""), uuid, outcome], count)
    for validator, state in sorted(view.validators.items()):
        fam.stateset("gpuslo_gpu_validation_validator", [validator], names.VALIDATOR_STATES,
                     state)
    fam.add("gpuslo_gpu_validation_gate_unavailable", [], view.gate_unavailable)
    fam.add("gpuslo_gpu_validation_hold_down_cycles", [], view.hold_down_cycles)


def add_degradations(fam: Families, results: list[CheckResult], gpus: Iterable[Any]) -> None:
    """`gpuslo_node_degradation`: one series per fresh warn result with a degradation reason
    (names.DEGRADATION_REASONS), labelled by its scope: a GPU of the inventory (gpu, uuid), a
    device (device), or the node (all empty). Fail ones are problems (gpuslo_gpu_problem)."""
    index = {g.uuid: g.index for g in gpus}
    found = set()
    for r in results:
        if r.status != names.STATUS_WARN or r.reason not in names.DEGRADATION_REASONS:
            continue
        if r.scope in index:
            scope = (index[r.scope], r.scope, "")
        else:
            scope = ("", "", "" if r.scope == NODE_SCOPE else r.scope)
        found.add((*scope, r.check, r.reason))
    for labels in sorted(found):
        fam.add("gpuslo_node_degradation", labels, 1)


def add_checks(fam: Families, snapshot: NodeSnapshot, statuses: dict[str, str]) -> None:
    """Heartbeat families: status stateset, timestamps, interval, duration, runs and errors."""
    for beat in sorted(snapshot.heartbeats, key=lambda b: b.check):
        check = [beat.check]
        fam.stateset("gpuslo_check_status", check, names.STATUSES, statuses[beat.check])
        fam.add("gpuslo_check_last_run_timestamp_seconds", check, beat.last_run)
        fam.add("gpuslo_check_last_success_timestamp_seconds", check, beat.last_success)
        fam.add("gpuslo_check_interval_seconds", check, beat.interval_s)
        fam.add("gpuslo_check_duration_seconds", check, beat.duration_s)
        fam.add("gpuslo_check_runs_total", check, beat.runs_total)
        for reason, count in sorted(beat.errors_total.items()):
            fam.add("gpuslo_check_errors_total", [beat.check, reason], count)


def add_events(fam: Families, snapshot: NodeSnapshot | None) -> None:
    """Kernel-log event counters and network device counts."""
    if snapshot is None:
        return
    for key, count in sorted(snapshot.xid_events.items()):
        fam.add("gpuslo_xid_events_total", key, count)
    for key, count in sorted(snapshot.sxid_events.items()):
        fam.add("gpuslo_sxid_events_total", key, count)
    fam.add("gpuslo_kernel_log_records_lost_total", [], snapshot.kernel_log_records_lost)
    index = {g.uuid: g.index for g in snapshot.gpus}
    for (uuid, why), count in sorted(snapshot.probe_speed_not_judged.items()):
        fam.add("gpuslo_gpu_probe_speed_not_judged_total", [index.get(uuid, ""), uuid, why], count)
    for source, count in sorted(snapshot.unrecognised_messages.items()):
        fam.add("gpuslo_unrecognised_messages_total", [source], count)
    for kind, count in sorted(snapshot.network_devices.items()):
        fam.add("gpuslo_network_devices", [kind], count)
    for kind, count in sorted(snapshot.network_devices_expected.items()):
        fam.add("gpuslo_network_devices_expected", [kind], count)


def add_jobs(fam: Families, jobs: Jobs) -> None:
    """Job goodput families; `jobs` is already bounded (most recent first). A job whose goodput
    its log cannot give (`goodput_unknown`, `jobs.log_reading.LogJobGoodput`) has its progress
    and interruptions and `gpuslo_job_goodput_unknown{reason}`, never GPU-seconds."""
    for job, goodput in sorted(jobs):
        unknown = getattr(goodput, "goodput_unknown", "")  # a log that proves no commit, ...
        if unknown:  # its goodput is not made up: no GPU-seconds, no committed step
            fam.add("gpuslo_job_goodput_unknown", [job, unknown], 1)
        else:
            for category in names.JOB_CATEGORIES:
                fam.add("gpuslo_job_gpu_seconds_total", [job, category],
                        goodput.gpu_seconds[category])
            if goodput.committed_step >= 0:
                fam.add("gpuslo_job_step", [job], goodput.committed_step)
        if goodput.last_step >= 0:
            fam.add("gpuslo_job_last_step", [job], goodput.last_step)
        # Only a running job can stall: a finished job's last progress would page
        # GpusloJobStalled for as long as the job stays among the exposed ones.
        if goodput.last_progress_t and goodput.status == "running":
            fam.add("gpuslo_job_last_progress_timestamp_seconds", [job], goodput.last_progress_t)
        # Straggler scores compare running nodes only: a finished job's last compute time
        # would stay the "fastest" or "slowest" node of nothing.
        if goodput.compute_s is not None and goodput.status == "running":
            fam.add("gpuslo_job_step_compute_seconds", [job], goodput.compute_s)
        for layer in names.LAYERS:
            fam.add("gpuslo_job_interruptions_total", [job, layer], goodput.interruptions[layer])


def add_allocations(
    fam: Families,
    allocations: Iterable[GpuAllocation],
    sources: Iterable[AllocationSourceState] = (),
) -> None:
    """`gpuslo_gpu_allocation`: one series per distinct record of every allocation source (the
    kubelet, the HPC job mapping), sorted; `gpuslo_gpu_allocation_source`: one per source."""
    for allocation in sorted(set(allocations), key=lambda a: (len(a.gpu), a.labels())):
        fam.add("gpuslo_gpu_allocation", allocation.labels(), 1)
    for state in sorted(sources, key=lambda s: s.source):
        fam.add("gpuslo_gpu_allocation_source", [state.source, state.status, state.reason], 1)


def build_families(
    snapshot: NodeSnapshot | None,
    jobs: Jobs,
    now: float,
    version: str = __version__,
    extra: Iterable[tuple[str, Iterable[str], float]] = (),
    allocations: Iterable[GpuAllocation] = (),
    allocation_sources: Iterable[AllocationSourceState] = (),
) -> list[Metric]:
    """Every family of names.METRICS (sorted by name) for one scrape: the node, its events, the
    jobs, the GPU allocations of every source with the sources' states, plus `extra` samples
    (metric, label values, value) from other samplers (Slurm state). Pure."""
    fam = Families()
    fam.add("gpuslo_build_info", [version], 1)
    add_node(fam, snapshot, now)
    add_events(fam, snapshot)
    add_jobs(fam, jobs)
    add_allocations(fam, allocations, allocation_sources)
    for name, labels, value in extra:
        fam.add(name, labels, value)
    return list(fam.by_name.values())


class GpusloCollector:
    """A prometheus_client collector; register it on the exporter's own `CollectorRegistry`.

    Args:
        snapshot: returns the latest NodeSnapshot (None before the first cycle).
        jobs: returns the bounded job list [(job id, JobGoodput)].
        clock: returns Unix seconds (staleness is judged at scrape time).
        extra: returns extra samples (metric, label values, value), e.g. PlatformSampler.samples.
        allocations: returns (GpuAllocation list, AllocationSourceState list) of every source.
    """

    def __init__(
        self,
        snapshot: Callable[[], NodeSnapshot | None],
        jobs: Callable[[], Jobs],
        clock: Callable[[], float],
        version: str = __version__,
        extra: Callable[[], Iterable[Any]] = tuple,
        allocations: Callable[[], tuple[list[GpuAllocation], list[AllocationSourceState]]] = (
            lambda: ([], [])),
    ) -> None:
        self._snapshot, self._jobs, self._clock, self._version = snapshot, jobs, clock, version
        self._extra, self._allocations = extra, allocations

    def collect(self) -> Iterator[Metric]:
        """Build every family now from the latest state."""
        allocations, sources = self._allocations()
        yield from build_families(
            self._snapshot(), self._jobs(), self._clock(), self._version, self._extra(),
            allocations, sources,
        )

    def describe(self) -> list[Any]:
        """Nothing: registering must not call `collect` (and so read state) at import."""
        return []
