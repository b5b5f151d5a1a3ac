"""The report's one model of its numbers: every quantity the header, the tables, the plots and
the JSON's `report.figures` show, computed once from the engine's JSON twin and fleet figures.
A quantity has one value and one name wherever it appears (tests/slo/test_report_consistency.py
reads them back from each rendering).

Two accountings meet here, and each quantity names the one it comes from:
- the capacity accounting gives every provisioned GPU-hour one category, so allocated,
  productive, each badput category, lost GPU-hours and their layers are capacity GPU-hours
  (productive = the allocated usable time the jobs' journals call productive);
- the job_goodput SLI is the journals' own ratio, productive over all the GPU-time they record
  (`goodput_ratio`, what Prometheus's recording rules compute from the same counters). It is
  the only figure called "goodput ratio"; the waterfall's last share is "productive share of
  allocated", a capacity ratio, and says so.
Without a capacity accounting (journals alone) productive and badput come from the journals.
The allocated GPU-hours are productive + every badput category + `uncommitted` (progress after a
training log's last commit: at risk, neither productive nor lost; `names.CATEGORY_UNCOMMITTED`).
`uncommitted` is None where the job basis does not carry it (journals and counters book progress
once a commit or a restart settles it, so theirs is in neither figure), a float otherwise.

Units: GPU-hours and hours (float), ratios 0–1, counts (int); None where the data has none:
provisioned, usable and unusable_by_layer are None when the engine could not know them (its
`not_available`: journals or training logs alone carry no GPU inventory), never 0.0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gpuslo import names

NOT_ALLOCATED = "not allocated (no job data)"
CAPACITY, JOURNALS = "capacity accounting", "journals"
TRAINING_LOGS = "training logs"  # the job basis whose uncommitted progress counts (finished logs)


@dataclass(frozen=True)
class Figures:
    """See the module docstring. `*_by_layer` dicts have every names.LAYERS key;
    `mttr_by_layer`: layer -> {"mttr_hours", "faults"} for layers with closed faults."""

    provisioned: float | None
    usable: float | None
    usable_ratio: float | None
    unusable_by_layer: dict[str, float] | None
    allocated: float
    not_allocated: float
    not_allocated_label: str
    productive: float
    productive_basis: str
    badput_by_category: dict[str, float]
    productive_share_of_allocated: float | None
    goodput_ratio: float | None
    job_badput_by_layer: dict[str, float]
    lost_by_layer: dict[str, float]
    lost: float
    faults: int
    gpus_hit: int
    mttr_hours: float | None
    mttr_by_layer: dict[str, dict]
    mtti_hours: float | None
    uncommitted: float | None = None

    def to_dict(self) -> dict:
        """Plain dict of every field (the JSON's `report.figures`)."""
        return asdict(self)


def _layers(values: dict | None) -> dict[str, float]:
    return {layer: float((values or {}).get(layer) or 0.0) for layer in names.LAYERS}


def capacity_missing(doc: dict) -> str | None:
    """Why the capacity figures are unknown (the engine's `not_available` reason), else None."""
    return (doc.get("not_available") or {}).get("provisioned_gpu_hours")


def _gpu_hours(doc: dict, key: str) -> float | None:
    """`doc[key]` as GPU-hours: None when the engine lists it as not available, else a float."""
    return None if key in (doc.get("not_available") or {}) else float(doc.get(key) or 0.0)


def job_records(fig: Figures) -> str:
    """What the jobs' GPU-time was read from, in words: the basis without a capacity
    accounting (`journals`, `training logs`), else the journals beside it."""
    return JOURNALS if fig.productive_basis == CAPACITY else fig.productive_basis


def has_job_data(doc: dict) -> bool:
    """True when the source has jobs (allocations or journals): idle then means usable and not
    allocated to a job; without job data nothing can be called idle."""
    cannot = (doc.get("data_quality") or {}).get("cannot_fill") or {}
    return bool(doc.get("jobs")) or bool(doc.get("allocated_gpu_hours")) or "goodput" not in cannot


def _uncommitted(doc: dict, basis: str) -> float | None:
    """The job side's uncommitted GPU-hours (`uncommitted_gpu_hours`): a float for training logs
    or wherever it is not 0, None where the basis books none (see the module docstring)."""
    value = float(doc.get("uncommitted_gpu_hours") or 0.0)
    return value if value or basis == TRAINING_LOGS else None


def _job_side(doc: dict) -> tuple[float, float, dict[str, float], str]:
    """(allocated, productive, badput by category, basis): the engine's job side as its JSON
    twin gives it (`job_basis`: the capacity accounting's, or the journals' without one), so
    the model and the top-level keys are one figure each."""
    split = doc.get("badput_gpu_hours_by_category") or {}
    badput = {category: float(value or 0.0) for category, value in split.items()}
    basis = doc.get("job_basis") or (CAPACITY if doc.get("provisioned_gpu_hours") else JOURNALS)
    allocated = float(doc.get("allocated_gpu_hours") or 0.0)
    return allocated, float(doc.get("productive_gpu_hours") or 0.0), badput, basis


def figures(doc: dict, extra: dict, mttr_by_layer: dict[str, dict]) -> Figures:
    """The report's figures from the engine's JSON twin `doc`, `build.derived`'s `extra` and the
    engine's MTTR per layer (`WeeklyResult.fleet_figures()["mttr_by_layer"]`)."""
    allocated, productive, badput, basis = _job_side(doc)
    reliability = doc.get("reliability") or []
    lost_by_layer = _layers(doc.get("lost_gpu_hours_by_layer"))
    return Figures(
        provisioned=_gpu_hours(doc, "provisioned_gpu_hours"),
        usable=_gpu_hours(doc, "usable_gpu_hours"),
        usable_ratio=doc.get("usable_ratio"),
        unusable_by_layer=None if capacity_missing(doc)
        else _layers(doc.get("unusable_gpu_hours_by_layer")),
        allocated=allocated,
        not_allocated=float((doc.get("categories_gpu_hours") or {}).get("idle") or 0.0),
        not_allocated_label=names.ACCOUNTING_IDLE if has_job_data(doc) else NOT_ALLOCATED,
        productive=productive,
        productive_basis=basis,
        badput_by_category=badput,
        productive_share_of_allocated=productive / allocated if allocated else None,
        goodput_ratio=doc.get("goodput_ratio"),
        job_badput_by_layer=_layers(doc.get("job_badput_gpu_hours_by_layer")),
        lost_by_layer=lost_by_layer,
        lost=sum(lost_by_layer.values()),
        faults=sum(int(r.get("faults") or 0) for r in reliability),
        gpus_hit=sum(int(r.get("gpu_faults") or 0) for r in reliability),
        mttr_hours=extra.get("mttr_hours"),
        mttr_by_layer=mttr_by_layer,
        mtti_hours=extra.get("mtti_hours"),
        uncommitted=_uncommitted(doc, basis),
    )


def of(doc: dict) -> Figures:
    """The figures a built report document carries (`report.figures`), or, for an engine-only
    document, those it implies without the engine's fleet figures (MTTI, MTTR)."""
    stored = (doc.get("report") or {}).get("figures")
    return Figures(**stored) if stored else figures(doc, {}, {})
