"""Turn an `SmiReading` into `inspect` findings: one per problem `evaluate_gpu` finds, fields the
driver could not read, GPUs missing against the expected count, error lines, and the inventory
(`gpus_seen`, class ok, with model and family) so "nothing wrong" never reads as "nothing read".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from gpuslo import names
from gpuslo.exporter.evidence.gpu_status import GpuStatus, gpu_key, latest_per_gpu
from gpuslo.exporter.evidence.nvidia_smi.values import (
    UNKNOWN_WHEN_UNREAD,
    GpuReading,
    SmiReading,
    is_error,
)
from gpuslo.exporter.policy.clocks import workload_clock_findings
from gpuslo.exporter.policy.gpu import evaluate_gpu, gpus_missing
from gpuslo.exporter.policy.temperature_peers import temperature_outliers
from gpuslo.verdict import Finding


def identity(status: GpuStatus) -> dict:
    """The Finding keys that name a GPU: gpu (index), pci (NVML form) and uuid, where known."""
    uuid = status.uuid if status.uuid and status.uuid.upper().startswith("GPU-") else None
    return {"gpu": status.index, "pci": status.pci_bus_id, "uuid": uuid}


def gpu_findings(kind: str, reading: GpuReading) -> list[Finding]:
    """Findings for one GPU: each `evaluate_gpu` problem, then its unreadable fields (`gpu_error`:
    class unknown when a health or cooling field is unreadable (`values.UNKNOWN_WHEN_UNREAD`: a
    fan or temperature `ERR!` leaves thermal health untold), warn otherwise — a transient power
    `ERR!` is not actionable)."""
    where = identity(reading.status)
    out = [p.finding(kind, line=reading.line, **where) for p in evaluate_gpu(reading.status)]
    out += workload_clock_findings(kind, reading.status, line=reading.line, **where)
    if not reading.health_shown and reading.status.accessible is not False:
        out.append(Finding(kind=kind, class_=names.CLASS_UNKNOWN, signal="gpu_error",
                           reason="no_data", line=reading.line, **where,
                           message="the output shows no health section for this GPU (ECC, "
                           "row remapping, clocks, temperature): cut short, health not read"))
    if reading.status.accessible is not False:
        out += [Finding(kind=kind, class_=names.CLASS_UNKNOWN, signal="health_field_unreadable",
                        reason="no_data", line=reading.line, **where,
                        message=f"{field}: {why}, so the faults it carries are unknown for "
                        "this GPU (nvidia-smi prints N/A for a count it did not read)")
                for field, why in reading.unread_faults]
    if reading.status.accessible is False or not reading.field_errors:
        return out
    health = sorted({n for n, _ in reading.field_errors if n in UNKNOWN_WHEN_UNREAD})
    other = sorted({n for n, _ in reading.field_errors if n not in UNKNOWN_WHEN_UNREAD})
    for fields, klass in ((health, names.CLASS_UNKNOWN), (other, names.CLASS_WARN)):
        if fields:
            values = sorted({v for n, v in reading.field_errors if n in fields})
            why = "driver could not read" if any(map(is_error, values)) else ", ".join(values)
            out.append(
                Finding(
                    kind=kind,
                    class_=klass,
                    signal="gpu_error",
                    reason="tool_error" if klass == names.CLASS_UNKNOWN else None,
                    message=f"{why}: {', '.join(fields)}",
                    line=reading.line,
                    **where,
                )
            )
    return out


def inventory(kind: str, gpus: tuple[GpuReading, ...], driver: str | None) -> list[Finding]:
    """One `gpus_seen` finding (class ok) per (model, family) among the GPUs shown, with
    `count`; gpu/pci/uuid when it is a single GPU; model, family (and driver) in `extra`. A GPU
    the driver cannot query is still a GPU shown (a table row of `ERR!`s, a `[GPU is lost]`
    row): it counts under its model when the output names it, else only in the total. A node of
    more than one model (a V100 beside two GTX 1080 Ti), or with GPUs shown without a model, also
    gets one `gpus_seen` with the total first: the node's GPU count is what an expected count is
    compared with (`missing` counts the same GPUs)."""
    shown = [g.status for g in gpus]
    named = [s for s in shown if s.model or s.accessible is not False]
    groups = Counter((s.model or "unknown", s.family or "unknown") for s in named)
    out = []
    if len(groups) > 1 or len(named) < len(shown):
        total, lost = len(shown), len(shown) - len(named)
        extra = {"driver_version": driver} if driver else {}
        what = "more than one model" if len(groups) > 1 else f"{lost} unreadable, model not shown"
        out.append(Finding(kind=kind, class_=names.CLASS_OK, signal="gpus_seen", count=total,
                           message=f"{total} GPUs, {what}", extra=extra))
    for (model, family), count in sorted(groups.items()):
        members = [
            s for s in named if (s.model or "unknown", s.family or "unknown") == (model, family)
        ]
        where = identity(members[0]) if count == 1 else {}
        extra = {k: v for k, v in (("model", model), ("family", family)) if v != "unknown"}
        if driver:
            extra["driver_version"] = driver
        what = f"{model} ({family})" if model != "unknown" else "GPU (model not in this output)"
        out.append(
            Finding(
                kind=kind,
                class_=names.CLASS_OK,
                signal="gpus_seen",
                count=count,
                message=f"{count} x {what}",
                extra=extra,
                **where,
            )
        )
    return out


def missing(kind: str, reading: SmiReading, expect_gpus: int | None) -> list[Finding]:
    """`gpu_missing` (fatal, count = GPUs missing) when fewer GPUs are attached or shown than
    `expect_gpus`, or when the output says "No devices were found".

    nvidia-smi -q's "Attached GPUs" counts as present: a `-i N` query prints one block of many.
    But the GPUs counted there and not shown were not read, so with an expected count they also
    give a `gpu_missing` finding of class unknown (reason no_data, count = GPUs not shown): the
    evidence covers part of the node and cannot call the rest healthy (see `not_shown`).
    """
    seen = max(len(reading.gpus), reading.attached_gpus or 0)
    out = not_shown(kind, reading, expect_gpus)
    problem = gpus_missing(seen, expect_gpus, reading.no_devices)
    return [problem.finding(kind), *out] if problem else out


def not_shown(kind: str, reading: SmiReading, expect_gpus: int | None) -> list[Finding]:
    """With an expected count: one `gpu_missing` finding of class unknown (reason no_data,
    count = the GPUs "Attached GPUs" counts that have no block here, up to the expected count).

    Without one, a capture showing fewer blocks than "Attached GPUs" is judged on the GPUs it
    shows (a `-i N` query prints one block of eight, and the text cannot tell it from a paste cut
    at a block boundary: ../shared/corpus case 030 is such a query and must read healthy), and
    says so in one `gpus_not_shown` finding (class ok, count = GPUs not shown): the verdict
    covers only the GPUs shown, never the node.
    """
    if reading.attached_gpus is None:
        return []
    if expect_gpus is None:
        return _unjudged(kind, reading)
    hidden = min(reading.attached_gpus, expect_gpus) - len(reading.gpus)
    if hidden <= 0:
        return []
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_UNKNOWN,
            signal="gpu_missing",
            reason="no_data",
            count=hidden,
            message=(
                f"{hidden} of {reading.attached_gpus} attached GPUs not shown in this output "
                f"({len(reading.gpus)} shown, {expect_gpus} expected): their health was not read"
            ),
        )
    ]


def _unjudged(kind: str, reading: SmiReading) -> list[Finding]:
    """The `gpus_not_shown` finding (class ok) for `not_shown` without an expected count."""
    shown = len(reading.gpus)
    hidden = (reading.attached_gpus or 0) - shown
    if hidden <= 0 or not shown:
        return []
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_OK,
            signal="gpus_not_shown",
            count=hidden,
            message=(
                f"{hidden} of {reading.attached_gpus} attached GPUs not shown in this output "
                f"(a -i query or a cut-off paste): this verdict covers the {shown} shown, not "
                f"the node; --expect-gpus {reading.attached_gpus} judges the node"
            ),
        )
    ]


def cut_finding(kind: str, reading: SmiReading) -> list[Finding]:
    """One finding of class unknown (signal `gpu_error`, reason no_data) for a capture cut off
    before nvidia-smi finished (`SmiReading.cut`), on the GPU whose block it stops in: what it
    shows is judged (a fault it shows still makes the verdict unhealthy), but the sections after
    the cut, and any GPU after it, were not seen, so nothing wrong there is not healthy."""
    if reading.cut is None:
        return []
    line, what = reading.cut
    before = [g for g in reading.gpus if g.line is None or g.line <= line]
    where = identity(before[-1].status) if before else {}
    return [Finding(kind=kind, class_=names.CLASS_UNKNOWN, signal="gpu_error", reason="no_data",
                    line=line, **where,
                    message=f"output cut off at line {line}: {what}; the sections after it "
                    "(ECC, row remapping, recovery action, ...) and any GPU after it were not "
                    "seen")]


def faults_not_shown(kind: str, reading: SmiReading) -> list[Finding]:
    """One `health_fields_not_shown` finding (class ok, count = GPUs) when the output shows, for
    readable GPUs whose other sections it shows, none of the fields that carry GPU faults
    (`GpuReading.faults_shown`). Class ok, not unknown: an excerpt is judged on what it shows
    (../shared/corpus case 050, a `-q -d PERFORMANCE` section, reads healthy), so this finding
    is what keeps the verdict from reading as the GPU's health."""
    blind = [g for g in reading.gpus
             if not g.faults_shown and g.health_shown and g.status.accessible is not False]
    if not blind or reading.cut is not None:
        return []
    where = identity(blind[0].status) if len(blind) == 1 else {}
    return [Finding(kind=kind, class_=names.CLASS_OK, signal="health_fields_not_shown",
                    count=len(blind), **where,
                    message=f"{len(blind)} GPU(s) shown without any field that carries GPU faults "
                    "(ECC errors, row remapping, retired pages, recovery action, reset status): "
                    "judged on what the output shows, not on those faults")]


def error_lines(kind: str, reading: SmiReading) -> list[Finding]:
    """One `nvml_error` finding (class unknown, reason tool_error) per error line in the output."""
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_UNKNOWN,
            signal="nvml_error",
            reason="tool_error",
            message=text[:200],
            line=line,
        )
        for line, text in reading.errors
    ]


# The mark of a per-GPU inventory finding (`each_gpu_seen`) in `extra`, beside the per-model ones.
EACH_GPU = ("inventory", "gpu")


def is_each_gpu(finding: Finding) -> bool:
    """True for a per-GPU `gpus_seen` finding of `each_gpu_seen` (not a per-model count)."""
    return finding.extra.get(EACH_GPU[0]) == EACH_GPU[1]


def _names_gpu(finding: Finding, status: GpuStatus) -> bool:
    """True when `finding` is about the GPU of `status` (its PCI bus id, UUID or, naming
    neither, its index)."""
    where = identity(status)
    if finding.pci or finding.uuid:
        return (finding.pci, finding.uuid) != (None, None) and (
            (finding.pci is not None and finding.pci == where["pci"])
            or (finding.uuid is not None and finding.uuid == where["uuid"]))
    return finding.gpu is not None and finding.gpu == status.index


def each_gpu_seen(kind: str, gpus: tuple[GpuReading, ...], found: list[Finding]) -> list[Finding]:
    """One `gpus_seen` finding (class ok, count 1, with the GPU's identity and model) per GPU of
    a model shown more than once (`inventory` names a lone GPU in its own finding) that the
    output names by PCI bus id or UUID and that no finding in `found` other than an ok one is
    about: the inventory names every GPU shown and read, as the dcgm-exporter page reader does
    (`inspect.dcgm.inventory_finding`; fresh21 case 2307, three A100 rows under a zsh prompt,
    the third box cut: each row's bus id). A GPU with a problem is named by its problem's
    finding instead, never ok. Each carries `extra["inventory"] == "gpu"` (`is_each_gpu`)."""
    models = Counter((g.status.model, g.status.family) for g in gpus)
    out = []
    for gpu in gpus:
        status = gpu.status
        where = identity(status)
        if models[(status.model, status.family)] < 2 or not (where["pci"] or where["uuid"]):
            continue
        if status.accessible is False or any(
            f.class_ != names.CLASS_OK and _names_gpu(f, status) for f in found
        ):
            continue
        extra = {k: v for k, v in (("model", status.model), ("family", status.family)) if v}
        extra[EACH_GPU[0]] = EACH_GPU[1]
        out.append(Finding(kind=kind, class_=names.CLASS_OK, signal="gpus_seen", count=1,
                           line=gpu.line, message=f"GPU {status.index}: {status.model or 'GPU'}",
                           extra=extra, **where))
    return out


def distinct_gpus(gpus: tuple[GpuReading, ...]) -> tuple[GpuReading, ...]:
    """One reading per GPU, in first-seen order, the latest sample of each: rows or blocks that
    repeat one GPU's identity (`gpu_key`) are that GPU sampled over time (`nvidia-smi
    --query-gpu=... --format=csv -l 1`, fresh16 case 1818: index 0 thirteen times is one GPU,
    not thirteen; nvidia-smi(1): `-l` repeats the query every N seconds). A GPU with no
    identity is its own (`gpu_status.latest_per_gpu`, which `temperature_peers` shares)."""
    return latest_per_gpu(gpus, lambda gpu: gpu.status)


def _sampled_findings(kind: str, gpus: tuple[GpuReading, ...]) -> list[Finding]:
    """`gpu_findings` of every sample, without repeats: a (class, signal, reason) problem a
    later sample of one GPU (`gpu_key`) shows again is already its first sample's finding."""
    shown: dict = {}
    out = []
    for number, gpu in enumerate(gpus):
        seen = shown.setdefault(gpu_key(gpu.status) or ("row", number), set())
        found = gpu_findings(kind, gpu)
        out += [f for f in found if (f.class_, f.signal, f.reason) not in seen]
        seen.update((f.class_, f.signal, f.reason) for f in found)
    return out


def findings_from_reading(kind: str, reading: SmiReading, expect_gpus: int | None) -> list[Finding]:
    """Every finding for one nvidia-smi output (pure). Empty when the output held no GPU and no
    error: the caller reports that as nothing recognised (unknown). Every sample of a GPU is
    judged (a fault in any one is found); counts are of distinct GPUs (`distinct_gpus`)."""
    out = _sampled_findings(kind, reading.gpus)
    gpus = distinct_gpus(reading.gpus)
    if len(gpus) < len(reading.gpus):
        reading = replace(reading, gpus=gpus)
    out += missing(kind, reading, expect_gpus)
    out += cut_finding(kind, reading)
    out += faults_not_shown(kind, reading)
    out += error_lines(kind, reading)
    out += temperature_outliers(kind, [g.status for g in reading.gpus], identity)
    if out or reading.gpus:
        out += inventory(kind, reading.gpus, reading.driver_version)
        out += each_gpu_seen(kind, reading.gpus, out)
    return out
