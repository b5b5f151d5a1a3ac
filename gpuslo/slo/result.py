"""The SLO engine's result: `WeeklyResult`, every figure the weekly report needs, and its JSON twin
(`WeeklyResult.to_json_dict()`). Built by `gpuslo.slo.engine.compute_week` (whose docstring gives
the categories, layers and job bases); figures are in hours, GPU-hours or ratios 0–1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo import crawl, job_losses, objectives, reliability
from gpuslo.slo.accounting import Accounting
from gpuslo.slo.frames import iso_utc

CAPACITY_BASIS = "capacity accounting"


@dataclass
class WeeklyResult:
    """Every number the weekly report needs. Frames keep their documented columns:
    jobs (attribution.job_summary), interruptions (attribution.attribute), reliability
    (reliability.mtbf_mttr), lemon_nodes, blast_radius, daily (per_day), crawl (every slowdown
    in the window, `crawl.attribute_slowdowns` plus gpu_hours), node_scores
    (`crawl.node_scores`), job_losses (`job_losses.job_losses`: per job, kind unusable|badput,
    layer, reason and node, the GPU-hours it lost) and jobs_hit (`job_losses.jobs_hit`: per
    job, held and lost GPU-hours with its main layer and reason, most hit first)."""

    start: pd.Timestamp
    end: pd.Timestamp
    gpus: int
    nodes: int
    provisioned_gpu_hours: float
    usable_gpu_hours: float
    categories: dict[str, float]
    category_ticks: dict[str, int]
    provisioned_ticks: int
    lost_gpu_hours_by_layer: dict[str, float]
    lost_gpu_hours_by_reason: dict[str, float]
    badput_gpu_hours_by_category: dict[str, float]
    productive_gpu_hours: float
    allocated_gpu_hours: float
    job_gpu_hours: float
    job_productive_gpu_hours: float
    slos: dict[str, objectives.SloStatus]
    burn_rates: list[dict]
    interruptions_per_1000_gpu_days: float | None
    interruption_basis: str
    gpu_fault_starts: int
    jobs: pd.DataFrame
    interruptions: pd.DataFrame
    reliability: pd.DataFrame
    lemon_nodes: pd.DataFrame
    blast_radius: pd.DataFrame
    daily: pd.DataFrame
    data_quality: dict
    crawl: pd.DataFrame
    node_scores: pd.DataFrame
    slowdown_rule: dict
    accounting: Accounting = field(repr=False)
    job_losses: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=job_losses.COLUMNS))
    jobs_hit: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=job_losses.HIT_COLUMNS))
    job_basis: str = CAPACITY_BASIS
    # progress after a training log's last commit, in the job side's allocated GPU-hours beside
    # productive and badput (`names.CATEGORY_UNCOMMITTED`; 0 for journals and counters)
    uncommitted_gpu_hours: float = 0.0
    # jobs whose goodput is unknown (`Frames.goodput_unknown`): in the wall time and MTTI, not in
    # the fleet ETTR
    goodput_unknown: frozenset[str] = frozenset()
    return_to_service: dict = field(default_factory=dict)  # reliability.return_to_service
    serving: dict = field(default_factory=dict)  # serving_week.serving_week; {} without replicas

    @property
    def usable_ratio(self) -> float | None:
        """Usable / provisioned GPU-hours (None when nothing is provisioned)."""
        return (
            self.usable_gpu_hours / self.provisioned_gpu_hours
            if self.provisioned_gpu_hours
            else None
        )

    @property
    def goodput_ratio(self) -> float | None:
        """Job goodput: productive over all GPU-time the jobs' journals account for (every
        category of `names.JOB_CATEGORIES`, recovery and wasted progress included; for training
        logs, which are finished, the progress after a log's last commit too, as `gpuslo
        goodput` counts it: `engine._finished_only`), summed over jobs: the definition of
        `gpuslo_job_gpu_seconds_total` and of the `job_goodput` recording rules, so the report
        and Prometheus agree. None without journals."""
        return self.job_productive_gpu_hours / self.job_gpu_hours if self.job_gpu_hours else None

    @property
    def job_gpu_hours_by_category(self) -> dict[str, float]:
        """The jobs' own GPU-hours by category (every names.JOB_CATEGORIES key), summed over
        jobs from the calculator: what the exporters' gpuslo_job_gpu_seconds_total counters
        increase by over the window, and the definition of goodput_ratio. Unlike
        badput_gpu_hours_by_category it includes job time on GPUs that were not usable."""
        if not len(self.jobs):
            return dict.fromkeys(names.JOB_CATEGORIES, 0.0)
        return {c: float(self.jobs[c].sum()) / 3600 for c in names.JOB_CATEGORIES}

    @property
    def unusable_gpu_hours_by_layer(self) -> dict[str, float]:
        """Provisioned GPU-hours that were not usable, by layer (every names.LAYERS key); sums to
        provisioned − usable. The rest of `lost_gpu_hours_by_layer` is job badput."""
        by = self.accounting.by_layer_reason.groupby("layer", observed=True)["seconds"].sum()
        return {layer: float(by.get(layer, 0.0)) / 3600 for layer in names.LAYERS}

    @property
    def capacity_missing(self) -> str | None:
        """Why the capacity figures cannot be known (`data_quality.cannot_fill["capacity"]`:
        journals or training logs alone carry no GPU inventory or verdicts) when nothing was
        provisioned, else None. Then provisioned, usable and unusable GPU-hours are not 0.0 but
        unknown: the JSON twin writes them null and names the reason in `not_available`."""
        why = (self.data_quality.get("cannot_fill") or {}).get("capacity")
        return why if why and not self.provisioned_gpu_hours else None

    def _capacity_dict(self) -> dict:
        """The JSON twin's capacity keys: provisioned_gpu_hours, usable_gpu_hours,
        unusable_gpu_hours_by_layer, each null (with `not_available`: key -> reason) when
        `capacity_missing`."""
        figures = {"provisioned_gpu_hours": self.provisioned_gpu_hours,
                   "usable_gpu_hours": self.usable_gpu_hours,
                   "unusable_gpu_hours_by_layer": self.unusable_gpu_hours_by_layer}
        why = self.capacity_missing
        if why is None:
            return figures
        return {**dict.fromkeys(figures), "not_available": dict.fromkeys(figures, why)}

    def crawl_dict(self) -> dict:
        """The crawl section's figures: slowdown_gpu_hours (the jobs' journals, as the counters
        `gpuslo_job_gpu_seconds_total{category="slowdown"}` and the recording rules give it),
        capacity_slowdown_gpu_hours (the capacity accounting's `slowdown` category: the same,
        capped by each job's allocated usable time), by_layer,
        rows (per job, cause layer, reason and node: gpu_hours, slowdowns, worst ratio, the
        job's slowest node and its score) and slowest_nodes (per job and node, lowest score
        first, at most 20), rule (the sustained-slowdown rule used)."""
        table = crawl.crawl_table(self.crawl, self.node_scores)
        by_layer = self.crawl.groupby("layer", observed=True)["gpu_hours"].sum()
        return {
            "slowdown_gpu_hours": float(self.jobs[names.CATEGORY_SLOWDOWN].sum()) / 3600
            if len(self.jobs) else 0.0,
            "capacity_slowdown_gpu_hours": self.badput_gpu_hours_by_category[
                names.CATEGORY_SLOWDOWN
            ],
            "by_layer": {layer: float(by_layer.get(layer, 0.0)) for layer in names.LAYERS},
            "rows": table.to_dict("records"),
            "slowest_nodes": self.node_scores.head(20).to_dict("records"),
            "rule": self.slowdown_rule,
        }

    def fleet_figures(self) -> dict:
        """The fleet's reliability figures the report shows beside the JSON twin (same rounding):
        fleet_ettr (`reliability.fleet_ettr`), mtti_hours (`reliability.mtti_hours`), mttr_hours
        and mttr_by_layer (`reliability.mean_repair`), lost_gpu_hours (every layer: unusable
        capacity plus job badput), each from its table's rows as the JSON twin writes them.
        Computed once, here; the report never recomputes them."""
        mttr, by_layer = reliability.mean_repair(self.reliability)
        lost = self.lost_gpu_hours_by_layer.values()
        return _plain({
            "fleet_ettr": reliability.fleet_ettr(
                self.jobs[~self.jobs.index.isin(list(self.goodput_unknown))]),
            "mtti_hours": reliability.mtti_hours(self.jobs, len(self.interruptions)),
            "mttr_hours": mttr,
            "mttr_by_layer": by_layer,
            "lost_gpu_hours": sum(reliability.as_reported(value) for value in lost),
        })

    def to_json_dict(self) -> dict:
        """The report's JSON twin: the issue's top-level keys (start, end, provisioned_gpu_hours,
        usable_gpu_hours, usable_ratio, productive_gpu_hours, goodput_ratio,
        lost_gpu_hours_by_layer, lost_gpu_hours_by_reason, interruptions_per_1000_gpu_days, slos,
        data_quality) plus the rest (allocated_gpu_hours = productive_gpu_hours + the sum of
        badput_gpu_hours_by_category + uncommitted_gpu_hours), and `window` (`window_of`); the
        capacity keys null with `not_available` when `capacity_missing`. Floats rounded to 6
        decimals, NaN → None, times ISO 8601; start, end and the covered span None when
        undated."""
        window = window_of(self.start, self.end, self.data_quality)
        quality = self.data_quality
        if not window["dated"]:
            quality = {**quality, "covered": {**quality["covered"], "start": None, "end": None}}
        return _plain(
            {
                "start": self.start if window["dated"] else None,
                "end": self.end if window["dated"] else None,
                "window": window,
                "gpus": self.gpus,
                "nodes": self.nodes,
                **self._capacity_dict(),
                "usable_ratio": self.usable_ratio,
                "productive_gpu_hours": self.productive_gpu_hours,
                "allocated_gpu_hours": self.allocated_gpu_hours,
                "job_basis": self.job_basis,
                "goodput_ratio": self.goodput_ratio,
                "job_gpu_hours": self.job_gpu_hours,
                "job_productive_gpu_hours": self.job_productive_gpu_hours,
                "categories_gpu_hours": self.categories,
                "lost_gpu_hours_by_layer": self.lost_gpu_hours_by_layer,
                "lost_gpu_hours_by_reason": self.lost_gpu_hours_by_reason,
                "job_badput_gpu_hours_by_layer": {
                    layer: value - self.unusable_gpu_hours_by_layer[layer]
                    for layer, value in self.lost_gpu_hours_by_layer.items()
                },
                "badput_gpu_hours_by_category": self.badput_gpu_hours_by_category,
                "uncommitted_gpu_hours": self.uncommitted_gpu_hours,
                "job_gpu_hours_by_category": self.job_gpu_hours_by_category,
                "interruptions": len(self.interruptions),
                "interruptions_per_1000_gpu_days": self.interruptions_per_1000_gpu_days,
                "interruption_basis": self.interruption_basis,
                "gpu_fault_starts": self.gpu_fault_starts,
                "slos": {name: status.to_dict() for name, status in self.slos.items()},
                "burn_rates": self.burn_rates,
                "jobs": job_records(self.jobs),
                "reliability": self.reliability.reset_index().to_dict("records"),
                "lemon_nodes": self.lemon_nodes.to_dict("records"),
                "blast_radius": self.blast_radius.to_dict("records"),
                "daily": self.daily.to_dict("records"),
                "crawl": self.crawl_dict(),
                "jobs_hit": self.jobs_hit.to_dict("records"),
                "job_losses": self.job_losses.drop(columns="ticks").to_dict("records"),
                "data_quality": quality,
                "return_to_service": self.return_to_service,
                **({"serving": self.serving} if self.serving else {}),
            }
        )


def window_of(start: pd.Timestamp, end: pd.Timestamp, data_quality: dict) -> dict:
    """{"dated", "hours", "why"}: the window's length in hours, and whether its times are
    calendar dates; a source without dates (training logs that carry none: their times count
    from the log's start) says why in `cannot_fill["dates"]`, and then the window has a length
    but no date."""
    why = (data_quality.get("cannot_fill") or {}).get("dates")
    return {"dated": why is None, "hours": (end - start).total_seconds() / 3600, "why": why}


GPUS_UNKNOWN = ("no source gave the job's GPU count: no gpuslo_gpu_allocation series held its "
                "GPUs and no journal line named them")


def job_records(jobs: pd.DataFrame) -> list[dict]:
    """The jobs table's rows as dicts. A GPU count of 0 is one no source gave (`report
    --prometheus` on exporters without an allocation source: the job counters carry no GPU
    count, newcomer7 F5): `gpus` null and `gpus_unknown` says why, never a confident 0."""
    rows = jobs.reset_index().to_dict("records")
    for row in rows:
        gpus = row.get("gpus")
        if gpus is None or pd.isna(gpus) or gpus == 0:
            row.update(gpus=None, gpus_unknown=GPUS_UNKNOWN)
    return rows


def _plain(value):
    """JSON-ready copy: floats rounded to 6 decimals (NaN/inf → None), timestamps ISO 8601,
    numpy scalars to Python, dict keys as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else iso_utc(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return round(float(value), 6) + 0.0 if np.isfinite(value) else None
    return str(value) if not isinstance(value, str) else value
