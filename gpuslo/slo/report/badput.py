"""The report's section "Goodput, ETTR and badput": the job_goodput SLI, the badput waterfall that
splits the allocated GPU-hours of the job side (`report.figures.Figures`: productive, each badput
category, and the progress no checkpoint committed yet where the basis carries it) and the
largest jobs with their goodput and ETTR."""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report.figures import CAPACITY, job_records
from gpuslo.slo.report.model import (
    TOP,
    Section,
    Table,
    cannot,
    goodput_covers,
    hours,
    ratio,
    share,
)


def goodput(doc, extra, wow, fig) -> Section:
    title = "Goodput, ETTR and badput"
    if not doc.get("jobs"):
        return Section("goodput", title, missing=cannot(
            doc, "goodput", "the data has no job allocations or Recorder journals"))
    tables = (_job_table(doc["jobs"]),)
    if not fig.allocated:
        why = cannot(doc, "capacity", "no allocated GPU-time in the fleet accounting")
        return Section("goodput", title, (
            f"Per-job goodput from the {job_records(fig)} only; no fleet badput waterfall: "
            f"{why}.",), tables)
    allocated = fig.allocated
    rows = (("allocated", hours(allocated), ratio(1.0)),)
    rows += tuple(
        (f"− {k}", hours(v), share(v, allocated)) for k, v in fig.badput_by_category.items()
    )
    if fig.uncommitted is not None:
        rows += ((f"− {names.UNCOMMITTED_LABEL}", hours(fig.uncommitted),
                  share(fig.uncommitted, allocated)),)
    rows += (("= productive", hours(fig.productive), ratio(fig.productive_share_of_allocated)),)
    lines = (
        f"Goodput ratio {ratio(fig.goodput_ratio)} (the job_goodput SLI: productive / all "
        f"GPU-time the jobs' {job_records(fig)} record, recovery and wasted progress included, as "
        f"Prometheus records it); fleet ETTR {ratio(extra['fleet_ettr'])}. The waterfall "
        f"splits the allocated GPU-hours of the {fig.productive_basis}: "
        f"{ratio(fig.productive_share_of_allocated)} of them were productive"
        + (
            " (a capacity share, not the SLI: the journals also count GPU-time the capacity "
            "accounting holds unusable)."
            if fig.productive_basis == CAPACITY
            else "."
        ),
        *_uncommitted_line(fig),
        *_no_commit_line(doc["jobs"], goodput_covers(doc)),
    )
    return Section("goodput", title, lines,
                   (Table(("badput waterfall", "GPU-hours", "share of allocated"), rows), *tables))


def _uncommitted_line(fig) -> tuple[str, ...]:
    """The sentence that says what the uncommitted row is, where the waterfall shows one."""
    if fig.uncommitted is None:
        return ()
    return (f"{hours(fig.uncommitted)} GPU-hours are {names.UNCOMMITTED_LABEL}: progress after "
            "the last checkpoint the logs show, neither productive nor lost yet (a checkpoint "
            "would commit it, a restart from an earlier one would waste it); it is in the "
            "allocated GPU-hours, not in the badput.",)


def _no_commit_line(jobs: list[dict], covers: str | None = None) -> tuple[str, ...]:
    """The sentence naming the jobs whose journals hold no commit evidence (their goodput and
    ETTR unknown: `attribution.job_summary`'s `committed`); `covers` (`goodput_covers`): the
    training logs whose goodput is unknown are left out of the allocated GPU-hours and the SLI
    (`Frames.goodput_unknown`), and the sentence says so instead."""
    blind = sorted(j["job"] for j in jobs if j.get("committed") is False)
    if not blind:
        return ()
    named = ", ".join(blind[:TOP]) + (f" and {len(blind) - TOP} more" if len(blind) > TOP else "")
    where = (f"their GPU-time is left out of the allocated GPU-hours, the waterfall and the SLI "
             f"({covers}), their spans and interruptions still count" if covers else
             "their GPU-time stays in the allocated GPU-hours and in the SLI as the counters "
             "book it")
    return (f"{len(blind)} job(s) ({named}) show no commit evidence (no checkpoint, no restart "
            "from a step): which of their progress was committed cannot be known, so their "
            f"goodput and ETTR are unknown (—); {where}.",)


def _job_table(jobs: list[dict]) -> Table:
    top = sorted(jobs, key=lambda j: (-(j.get("allocated_gpu_seconds") or 0), j["job"]))[:TOP]
    # a job of 0 GPUs is one whose GPU count no source gave (no allocation series: newcomer 7
    # F5): unknown, never a confident 0
    rows = tuple((j["job"], str(j["gpus"]) if j.get("gpus") else "—",
                  hours((j.get("allocated_gpu_seconds") or 0) / 3600),
                  ratio(j.get("goodput_ratio")), ratio(j.get("ettr"))) for j in top)
    return Table(("job (largest first)", "GPUs", "allocated GPU-h", "goodput", "ETTR"), rows)
