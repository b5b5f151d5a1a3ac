"""Recording rules: the three SLIs at every window, lost GPUs by layer and reason, the objectives,
the remaining error budgets and the job step time the stall alert needs.

A usable GPU is healthy (gpuslo_gpu_usable 1) and on a schedulable node, as in the SLO engine
(DESIGN.md §6): GPUs on nodes kube-state-metrics reports cordoned leave the numerator and count as
lost to `platform`/`cordoned`.

Each rule is a plain dict (`record`, `expr`, optional `labels`), ready for YAML. Names follow
Prometheus' `level:metric:operations` convention with level `gpuslo` (fleet-wide aggregates);
the SLI names come from `slo_spec.sli_record` so the dashboards and the report name the same series.

Missing data never counts as good, and no division can produce NaN or +Inf that would poison a
long window. The guards, each used below:

- `> 0` on every denominator: an empty inventory (or no allocated GPU-seconds) gives *no sample*
  instead of 0/0 = NaN or x/0 = +Inf. A window that holds a NaN would stay NaN for its whole
  length (sum_over_time(NaN) is NaN), so the guard is what keeps a 28-day window usable.
- `or vector(0)` on every numerator: "no GPU is usable" or "no productive GPU-second" is a 0,
  not an absent series — an absent numerator would make the ratio vanish instead of reading bad.
- the usable-GPU denominator is what the fleet should have, per node (see `provisioned_rules`),
  never only what answered: a node whose exporter dies or stops listing GPUs keeps its GPUs in
  the denominator, as blind (`observability`/`no_data`) time, until it is retired explicitly.
- `last_over_time(...[1h])` for the check inventory: a target that stops answering keeps its
  checks in the denominator for an hour while the numerator drops them.
- `clamp_max(..., 1)`: a usable series without its inventory series (a relabelling accident)
  cannot push a ratio above 1 and hide bad time elsewhere.
- windowed SLIs are ratios of sums over the window (GPU-time weighted), not averages of ratios.
- GPUs count once per (instance, uuid) and checks once per (instance, check), so a label that
  changes under them (a new driver's model string) cannot double the inventory for an hour.

Every SLI has two levels, so a 28-day window reads one sparse recorded series instead of the raw
samples of every GPU or job: per-evaluation counts (GPUs usable, GPUs in the inventory, checks
fresh, job GPU-seconds by category), then `sum_over_time` of those over the window. The job
GPU-seconds level records, at each evaluation of its group (every `GOODPUT_INTERVAL`, pinned in
the group), the exact increase of `gpuslo_job_gpu_seconds_total` since the previous evaluation:
each series minus its last value before (`last_over_time(...[COUNTER_HOLD] offset
GOODPUT_INTERVAL)`), plus the whole value of a job seen for the first time (no value in the hold,
nothing productive yet: the counters start at 0 with the job). The increases telescope, so their
sum over a window is last − first of every counter, the amount the SLO engine computes from the
journals — with no `rate()`/`increase()` extrapolation, which Prometheus does and VictoriaMetrics
does not, so both give the same numbers. Limits: a node silent for longer than COUNTER_HOLD while
its job progresses loses that stretch's increase; a missed evaluation loses its interval.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts import crawl, inventory, job_series, job_tiles, liveness, locate
from gpuslo.alerts.inventory import GPU_PROVISIONED_COUNT
from gpuslo.slo_spec import SloSpec, format_number, sli_record, slo_record

INVENTORY_HOLD = "1h"  # how long a silent target's checks stay in the check denominator
STEP_TIME_WINDOW = "6h"  # window the job step time is measured over
STEP_TIME_HOLD = "3d"  # how long a stalled job keeps its last measured step time

GPU_USABLE_COUNT = "gpuslo:gpu_usable:count"
GPU_UNUSABLE_COUNT = "gpuslo:gpu_unusable:count"
GPU_LOST_COUNT = "gpuslo:gpu_lost:count"
CHECK_FRESH_COUNT = "gpuslo:check_fresh:count"
CHECK_INVENTORY_COUNT = "gpuslo:check_inventory:count"
JOB_STEP_TIME = "gpuslo:job_step_time:seconds"
GOODPUT_INTERVAL = "1m"  # evaluation interval of the job GPU-seconds group (the offset below)
COUNTER_HOLD = "1h"  # how far back a counter's previous value is looked for
JOB_SECONDS_INCREASE = f"gpuslo:job_gpu_seconds:increase{GOODPUT_INTERVAL}"
# Exporters (by `instance`) whose Kubernetes node is cordoned: gpuslo_node_info{node} joined with
# kube-state-metrics' kube_node_spec_unschedulable{node}. Without kube-state-metrics this is
# empty and every healthy GPU counts as schedulable.
CORDONED = "(gpuslo_node_info and on (node) (kube_node_spec_unschedulable == 1))"
HEALTHY = "gpuslo_gpu_usable == 1 and on (instance, uuid) gpuslo_gpu_info"


def lost_expr() -> str:
    """GPUs lost now by (layer, reason): one per GPU and active problem reason, healthy GPUs on
    cordoned nodes as `platform`/`cordoned` (an unhealthy GPU on a cordoned node counts under
    its problem only, the order DESIGN.md §6 gives), and provisioned GPUs nobody reports
    (`inventory.unseen_lost_arms`: blind, or missing when the node's inventory check fails)."""
    per_gpu = "count by (instance, uuid, layer, reason) (gpuslo_gpu_problem == 1)"
    problems = f"count by (layer, reason) ({per_gpu})"
    cordoned = f"count(count by (instance, uuid) ({HEALTHY} and on (instance) {CORDONED}))"
    platform = inventory.with_labels(cordoned, names.LAYER_PLATFORM, "cordoned")
    arms = [("problem", problems), ("cordoned", platform), *inventory.unseen_lost_arms()]
    return inventory.union("sum by (layer, reason)", arms)


def instant_rules(spec: SloSpec) -> list[dict]:
    """Instantaneous counts: the provisioned inventory per node and for the fleet
    (`gpuslo.alerts.inventory`), usable GPUs, checks, lost GPUs by layer and reason, step time.
    A usable GPU is healthy and on a schedulable node (DESIGN.md §6)."""
    return [
        *inventory.per_node_rules(spec),
        *inventory.fleet_rules(),
        {
            "record": GPU_USABLE_COUNT,
            "expr": f"count(count by (instance, uuid) ({HEALTHY} unless on (instance) {CORDONED}))"
            " or vector(0)",
        },
        {
            "record": GPU_UNUSABLE_COUNT,
            "expr": f"{GPU_PROVISIONED_COUNT} - {GPU_USABLE_COUNT}",
        },
        {"record": GPU_LOST_COUNT, "expr": lost_expr()},
        {
            "record": CHECK_FRESH_COUNT,
            "expr": "count(count by (instance, check) ((time() -"
            " gpuslo_check_last_run_timestamp_seconds) <= 3 * gpuslo_check_interval_seconds))"
            " or vector(0)",
        },
        {
            "record": CHECK_INVENTORY_COUNT,
            "expr": "count(count by (instance, check)"
            f" (last_over_time(gpuslo_check_interval_seconds[{INVENTORY_HOLD}])))",
        },
        {"record": JOB_STEP_TIME, "expr": step_time_expr()},
    ]


def job_seconds_increase_expr() -> str:
    """Job GPU-seconds by category gained since the previous evaluation, fleet-wide (see the
    module docstring): one series per category."""
    x = "gpuslo_job_gpu_seconds_total"
    before = f"last_over_time({x}[{COUNTER_HOLD}] offset {GOODPUT_INTERVAL})"
    first = (f"({x} unless {before})"
             f' and on (instance, job) ({x}{{category="{names.CATEGORY_PRODUCTIVE}"}} == 0)')
    return f"sum by (category) (\n  ({x} - {before})\nor\n  ({first})\n)"


def goodput_rules() -> list[dict]:
    """The first level of the job goodput SLI (evaluated every GOODPUT_INTERVAL)."""
    return [{"record": JOB_SECONDS_INCREASE, "expr": job_seconds_increase_expr()}]


def step_time_expr() -> str:
    """Seconds per step of each job: time between the first and last progress seen in the window
    over the steps done in it. Steps come from the progress counter `gpuslo_job_last_step` (every
    step seen, committed or not): a job whose log shows no commit evidence exposes no committed
    `gpuslo_job_step`, and its stall must still page (README, goodput). Only a job without
    `gpuslo_job_last_step` (an exporter older than it, the simulator) falls back to the committed
    step. Both sides `> 0`, so a job that made no progress in the window records nothing (and
    the stall alert keeps its last step time) instead of 0 or +Inf."""
    w = STEP_TIME_WINDOW
    span = (
        f"(max by (job) (max_over_time(gpuslo_job_last_progress_timestamp_seconds[{w}]))"
        f" - min by (job) (min_over_time(gpuslo_job_last_progress_timestamp_seconds[{w}])))"
    )

    def steps(metric: str) -> str:
        return (f"(max by (job) (max_over_time({metric}[{w}]))"
                f" - min by (job) (min_over_time({metric}[{w}])))")

    seen, committed = steps("gpuslo_job_last_step"), steps("gpuslo_job_step")
    return (f"({span} > 0)\n/ (\n  ({seen} > 0)\nor\n"
            f"  (({committed} > 0) unless on (job) {seen})\n)")


def ratio_expr(slo: str, window: str) -> str:
    """Good ratio of `slo` over `window` (0–1); no sample when the window holds no inventory."""
    if slo == names.SLO_USABLE_GPU:
        good, total = GPU_USABLE_COUNT, GPU_PROVISIONED_COUNT
    elif slo == names.SLO_CHECK_LIVENESS:
        good, total = CHECK_FRESH_COUNT, CHECK_INVENTORY_COUNT
    else:
        seconds = JOB_SECONDS_INCREASE
        productive = f'{seconds}{{category="{names.CATEGORY_PRODUCTIVE}"}}'
        return (
            f"clamp_max((sum(sum_over_time({productive}[{window}])) or vector(0))"
            f" / (sum(sum_over_time({seconds}[{window}])) > 0), 1)"
        )
    return (
        f"clamp_max((sum_over_time({good}[{window}]) or vector(0))"
        f" / (sum_over_time({total}[{window}]) > 0), 1)"
    )


def slo_rules(spec: SloSpec, slo: str) -> list[dict]:
    """The SLI of `slo` at every window, its objective and its remaining error budget (a ratio of
    the period's budget: 1 = untouched, 0 = spent, below 0 = overspent)."""
    rules = [{"record": sli_record(slo, w), "expr": ratio_expr(slo, w)} for w in spec.sli_windows]
    objective = format_number(spec.objectives[slo])
    budget = format_number(spec.error_budget(slo))
    rules.append({"record": slo_record(slo, "objective"), "expr": f"vector({objective})"})
    rules.append(
        {
            "record": slo_record(slo, "error_budget_remaining"),
            "expr": f"1 - (1 - {sli_record(slo, spec.period)}) / {budget}",
        }
    )
    return rules


def recording_groups(spec: SloSpec) -> list[dict]:
    """Rule groups of recording rules: the first level (`first_level_groups`: counts, job
    GPU-seconds, the report's locate series), then one group per SLO, the crawl's, the
    per-check liveness and the per-job series groups (`gpuslo.alerts.liveness`,
    `gpuslo.alerts.job_series`: what the check-liveness and job goodput dashboards read)."""
    groups = first_level_groups(spec)
    for slo in names.SLOS:
        groups.append({"name": f"gpuslo-slo-{slo}", "rules": slo_rules(spec, slo)})
    groups.append(crawl.recording_group())
    groups.append(liveness.recording_group(INVENTORY_HOLD))
    groups.append(job_series.recording_group())
    return groups


def first_level_groups(spec: SloSpec) -> list[dict]:
    """The groups that read only raw series (what `promtool tsdb create-blocks-from rules`,
    which cannot chain rules, backfills in one pass): per-evaluation counts, the job
    GPU-seconds increases, the locate series (`gpuslo.alerts.locate`) and the per-job
    GPU-seconds tiles the report reads (`gpuslo.alerts.job_tiles`)."""
    return [
        {"name": "gpuslo-sli-counts", "rules": instant_rules(spec)},
        {"name": "gpuslo-job-gpu-seconds", "interval": GOODPUT_INTERVAL, "rules": goodput_rules()},
        locate.recording_group(),
        job_tiles.recording_group(),
    ]


def recorded_names(spec: SloSpec) -> set[str]:
    """Every series name the recording rules define (for the vocabulary test and dashboards)."""
    return {rule["record"] for group in recording_groups(spec) for rule in group["rules"]}
