"""dcgm-exporter and DCGM findings for `gpuslo inspect`.

The entries registered in `gpuslo.exporter.inspect.registry.KINDS`: `looks_like_metrics` /
`inspect_metrics` (dcgm-exporter `/metrics` pages), `looks_like_dcgmi` / `inspect_dcgmi`
(`dcgmi dmon`, `dcgmi health -c`, `dcgmi diag`, `dcgmi nvlink -s` / `-e`, text or JSON) and
`looks_like_exporter_log` / `inspect_exporter_log` (`exporter_log`). Parsing is
`gpuslo.exporter.evidence.dcgm` (page, dcgmi, diag, links); one page GPU is judged by
`gpuslo.exporter.policy.dcgm.gpu_findings`,
shared with the live `dcgm` check, NVLink states and counters by the shared GPU rules
(`policy.gpu.evaluate_gpu`), diag results and health incidents by `policy.diagnostics`.
"""

from __future__ import annotations

from dataclasses import replace

from gpuslo import names
from gpuslo.exporter.evidence.dcgm import dcgmi
from gpuslo.exporter.evidence.dcgm.dcgmi import (
    looks_like_exporter_log,
    parse_dmon,
    parse_health,
    parse_health_incidents,
)
from gpuslo.exporter.evidence.dcgm.diag import looks_like_diag, parse_diag, run_gpus, table_cut
from gpuslo.exporter.evidence.dcgm.discovery import looks_like_discovery, parse_discovery
from gpuslo.exporter.evidence.dcgm.health_text import health_mentions, links_down
from gpuslo.exporter.evidence.dcgm.links import (
    looks_like_link_errors,
    looks_like_link_status,
    parse_link_errors,
    parse_link_status,
)
from gpuslo.exporter.evidence.dcgm.modules import looks_like_modules, parse_modules
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.inspect.detectors import looks_like_dcgmi, looks_like_metrics
from gpuslo.exporter.inspect.exporter_log import inspect_exporter_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.dcgm import gpu_findings, missing_families
from gpuslo.exporter.policy.diagnostics import (
    cut_findings,
    diag_findings,
    health_findings,
    mention_findings,
)
from gpuslo.exporter.policy.gpu import evaluate_gpu, gpus_missing
from gpuslo.exporter.policy.nvlink_links import unlinked_node, unlinked_problem
from gpuslo.verdict import Finding

__all__ = [
    "inspect_dcgmi",
    "inspect_exporter_log",
    "inspect_metrics",
    "looks_like_dcgmi",
    "looks_like_exporter_log",
    "looks_like_metrics",
]

KIND = "dcgm-metrics"


def inspect_metrics(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for a dcgm-exporter page: `gpus_seen` (count of GPU UUIDs, MIG instances
    folded), one `gpus_seen` per GPU (index, UUID, PCI address in NVML's form, model: the
    inventory) and `gpu_findings` per GPU. A page judges only what it shows: a field it lacks is
    no finding here (the live `dcgm` check reports missing families as unknown). Raises
    ParseError for text that is not exposition format."""
    page = parse_dcgm_page(text, source)
    if not page.gpus:
        return []
    hosts: dict[str, list] = {}
    for gpu in page.gpus.values():
        hosts.setdefault(gpu.hostname, []).append(gpu)
    several = len(hosts) > 1
    findings = []
    for host, gpus in hosts.items():
        models = sorted({gpu.model for gpu in gpus if gpu.model})
        said = ", ".join(models) or "GPU model not reported"
        if several:
            said = f"host {host or '(no Hostname label)'}: {said} (a page of {len(hosts)} hosts)"
        own = [Finding(kind=KIND, class_=names.CLASS_OK, signal="gpus_seen", count=len(gpus),
                       message=said)]
        own += missing_gpus(KIND, len(gpus), options.expect_gpus)
        own += [inventory_finding(gpu) for gpu in gpus]
        for gpu in gpus:
            own += gpu_findings(gpu, options.policy, options.gpu_family)
        findings += [_on_host(f, host) for f in own] if several else own
    return findings + fields_not_shown(page)


def fields_not_shown(page) -> list[Finding]:
    """A `health_fields_not_shown` finding (class ok) when the page lacks a family the live
    `dcgm` check requires (`policy.dcgm.missing_families`, the same rule): the live check reads
    such a scrape unknown; a captured page is judged on what it shows (an excerpt may leave the
    field out: corpus fresh9 case 1108 reads healthy), and this finding says what it did not."""
    missing = missing_families(page.families)
    if not missing:
        return []
    return [Finding(kind=KIND, class_=names.CLASS_OK, signal="health_fields_not_shown",
                    count=len(page.gpus),
                    message=f"the page has no {', '.join(missing)}: judged on the fields it "
                    "shows, not on the Xid faults it would carry (the live dcgm check reads such "
                    "a scrape unknown)")]


def _on_host(finding: Finding, host: str) -> Finding:
    """`finding` with the page's `Hostname` label in `extra["host"]`: a page that carries
    several hosts' GPUs (a federated or relabelled scrape) names whose GPU each finding is."""
    return replace(finding, extra={**finding.extra, "host": host})


def inventory_finding(gpu) -> Finding:
    """One page GPU as inventory (`gpus_seen`, count 1, with what the page's labels name)."""
    uuid = gpu.uuid if gpu.uuid.upper().startswith("GPU-") else None
    extra = {"model": gpu.model, "family": gpu.family} if gpu.model else {}
    return Finding(
        kind=KIND,
        class_=names.CLASS_OK,
        signal="gpus_seen",
        count=1,
        gpu=gpu.index or None,
        uuid=uuid,
        pci=gpu.pci_bus_id or None,
        message=gpu.model or "GPU model not reported",
        extra=extra,
    )


def missing_gpus(kind: str, seen: int, expected: int | None) -> list[Finding]:
    """A fatal `gpu_missing` finding (count = GPUs missing, `policy.gpu.gpus_missing`) when
    fewer GPUs are seen than `--expect-gpus`."""
    problem = gpus_missing(seen, expected)
    return [problem.finding(kind)] if problem else []


def inspect_dcgmi(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for dcgmi output: `dcgmi diag` results (`policy.diagnostics`; a table
    cut off before dcgmi finished it is unknown beside what it shows), NVLink
    link states and error counters, and `dcgmi dmon` / `dcgmi health` findings
    (`dmon_health_findings`)."""
    if looks_like_modules(text):
        return module_findings(text)
    if looks_like_discovery(text) and not dcgmi.looks_like_dcgmi(text):
        return discovery_findings(text, options)
    if looks_like_link_status(text):
        return link_status_findings(text, source, options)
    if looks_like_link_errors(text):
        return link_error_findings(text, source)
    if looks_like_diag(text) and not dcgmi.looks_like_dcgmi(text):
        results = diag_findings("dcgmi", parse_diag(text, source), source)
        results += cut_findings("dcgmi", table_cut(text), source)
        return results + diag_gpu_count(run_gpus(text), options.expect_gpus)
    return dmon_health_findings(text, options, source)


def _finding(**kw) -> Finding:
    return Finding(kind="dcgmi", **kw)


def diag_gpu_count(run: int | None, expected: int | None) -> list[Finding]:
    """`gpus_seen` (count = the GPUs the diag ran on, `evidence.dcgm.diag.run_gpus`) and, when
    fewer than `expected`, `gpu_missing` of class unknown (reason no_data, count = the GPUs not
    tested): a diag runs on a group (`-i 0,1`, `-g`), so a GPU it did not test may be present
    and untested or absent; either way its health was not read. No count shown: nothing here
    (`inspect.expectations` then reads the expectation as unchecked)."""
    if run is None:
        return []
    out = [_seen(run, f"dcgmi diag ran on {run} GPUs (GPU Device IDs Detected)")]
    if expected is not None and run < expected:
        out.append(_finding(
            class_=names.CLASS_UNKNOWN, signal="gpu_missing", reason="no_data",
            count=expected - run,
            message=f"the diag ran on {run} GPUs, {expected} expected: the other "
            f"{expected - run} were not tested (a -i or group subset, or GPUs DCGM does not "
            "see): their health was not read"))
    return out


def _problems(status: GpuStatus, line: int | None = None) -> list[Finding]:
    """Findings for the problems `evaluate_gpu` finds in one GPU's NVLink evidence."""
    return [p.finding("dcgmi", gpu=status.index, line=line) for p in evaluate_gpu(status)]


def _seen(count: int, message: str) -> Finding:
    return _finding(class_=names.CLASS_OK, signal="gpus_seen", count=count, message=message)


# Module states that are the host engine's trouble (a module DCGM could not load, or was told not
# to): recorded, never a GPU fault. `Not loaded` is DCGM's lazy loading: nothing.
MODULE_TROUBLE = ("failed to load", "denylisted")


def module_findings(text: str) -> list[Finding]:
    """`dcgmi modules -l`: a `hostengine_module_error` (warn, layer observability) per module that
    failed to load or is denylisted, and the modules as inventory (`log_read`, count)."""
    rows = parse_modules(text)
    findings = [
        _finding(
            class_=names.CLASS_WARN,
            signal="hostengine_module_error",
            layer=names.LAYER_OBSERVABILITY,
            line=line,
            message=f"DCGM module {module_id} ({name}): {state}",
        )
        for module_id, name, state, line in rows
        if state.strip().lower() in MODULE_TROUBLE
    ]
    if rows:
        loaded = sum(state.strip().lower() == "loaded" for _, _, state, _ in rows)
        findings.append(
            _finding(class_=names.CLASS_OK, signal="log_read", count=len(rows),
                     message=f"{len(rows)} DCGM modules listed, {loaded} loaded (the others load "
                     "when first used)")
        )
    return findings


def discovery_findings(text: str, options: InspectOptions) -> list[Finding]:
    """`dcgmi discovery -l`: `gpus_seen` (the count DCGM announced, else the rows), one
    inventory finding per GPU row, `gpu_missing` against `--expect-gpus`. A listing is inventory:
    zero NVSwitches is what a PCIe node has, and a name DCGM could not read (`<<<NULL>>>`) is a
    model not reported, not a fault."""
    listing = parse_discovery(text)
    seen = listing.gpus_found if listing.gpus_found is not None else len(listing.gpus)
    switches = listing.switches_found if listing.switches_found is not None else len(
        listing.switches)
    findings = [_seen(seen, f"dcgmi discovery: {seen} GPUs, {switches} NvSwitches found")]
    findings += missing_gpus("dcgmi", seen, options.expect_gpus)
    for gpu in listing.gpus:
        extra = {"model": gpu.name} if gpu.name else {}
        findings.append(
            _finding(class_=names.CLASS_OK, signal="gpus_seen", count=1, gpu=gpu.gpu,
                     uuid=gpu.uuid, pci=gpu.pci, line=gpu.line,
                     message=gpu.name or "GPU model not reported", extra=extra)
        )
    return findings


def link_status_findings(text: str, source: str, options: InspectOptions) -> list[Finding]:
    """`dcgmi nvlink -s`: per GPU, `nvlink_inactive` (fatal, with the links) for links Down or
    Disabled (`evaluate_gpu`) and `nvlink_active` inventory for links Up; links Not Supported
    are not links. Every link of every GPU down with no NVSwitch is unknown per GPU
    (`policy.nvlink_links.unlinked_node`: the grid names no model, and a PCIe board without a
    bridge reads so). NVSwitch links down are warn (a switch port may be unused by design). The
    grid lists every GPU DCGM sees: `gpu_missing` against `--expect-gpus`."""
    status = parse_link_status(text, source)
    findings = []
    grid = {gpu: {n: state == "up" for n, state in states.items() if state != "not_supported"}
            for gpu, states in status.gpus.items()}
    unlinked = unlinked_node(grid, len(status.switches))
    for gpu, links in grid.items():
        line = status.line.get(("gpuId", gpu))
        if unlinked:
            problem = unlinked_problem(sorted(links))
            findings.append(problem.finding("dcgmi", gpu=gpu, line=line))
            continue
        findings += _problems(GpuStatus(index=gpu, nvlink_states=links), line)
        up = sorted(n for n, active in links.items() if active)
        if up:
            findings.append(
                _finding(
                    class_=names.CLASS_OK,
                    signal="nvlink_active",
                    gpu=gpu,
                    links=up,
                    count=len(up),
                    line=line,
                    message=f"{len(up)} NVLink links up",
                )
            )
    for switch, states in status.switches.items():
        down = sorted(n for n, state in states.items() if state in ("down", "disabled"))
        if down:
            findings.append(
                _finding(
                    class_=names.CLASS_WARN,
                    signal="nvlink_inactive",
                    links=down,
                    device=f"nvswitch {switch}",
                    count=len(down),
                    layer=names.LAYER_NODE,
                    message=f"NVSwitch {switch}: {len(down)} links down or disabled",
                )
            )
    if status.gpus:
        findings.append(_seen(len(status.gpus), f"{len(status.gpus)} GPUs in dcgmi nvlink -s"))
        findings += missing_gpus("dcgmi", len(status.gpus), options.expect_gpus)
    return findings


def link_error_findings(text: str, source: str) -> list[Finding]:
    """`dcgmi nvlink -e`: `nvlink_errors` (warn, with the links) when a counter is non-zero
    (`evaluate_gpu`), unknown for counters dcgmi could not read, and the GPU as inventory."""
    report = parse_link_errors(text, source)
    findings = _problems(GpuStatus(index=report.gpu, nvlink_error_counts=report.counts))
    for link, counter in report.unreadable:
        findings.append(
            _finding(
                class_=names.CLASS_UNKNOWN,
                signal="nvlink_errors",
                gpu=report.gpu,
                links=[link],
                reason="tool_error",
                message=f"dcgmi could not read the {counter} count of link {link}",
            )
        )
    if report.counts:
        links = len(report.counts)
        findings.append(_seen(1, f"GPU {report.gpu}: NVLink error counters of {links} links"))
    return findings


def dmon_health_findings(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`dcgmi dmon` / `dcgmi health` output: an Xid finding per GPU whose XIDER is non-zero,
    `gpus_seen` from the dmon rows, the overall `health_report` finding and one per entity the
    health report lists (`policy.diagnostics.health_findings`)."""
    findings = []
    rows = [row for row in parse_dmon(text) if row["entity"] == "GPU"]
    for row in rows:
        xid = row.get("XIDER", "")
        if xid.isascii() and xid.isdigit() and int(xid) > 0:
            findings.append(
                xid_finding(
                    "dcgmi", int(xid), options.policy, family=options.gpu_family, gpu=row["id"]
                )
            )
    if rows:
        seen = len({row["id"] for row in rows})
        findings.append(_seen(seen, f"{seen} GPUs in dcgmi dmon"))
        findings += missing_gpus("dcgmi", seen, options.expect_gpus)
    health = parse_health(text, source)
    if health is not None:
        findings.append(
            _finding(
                class_=HEALTH_CLASS.get(health.lower(), names.CLASS_UNKNOWN),
                signal="health_report",
                reason=None if health.lower() in HEALTH_CLASS else "tool_error",
                message=f"dcgmi health overall: {health}"
                + ("" if health.lower() in HEALTH_CLASS else f" (not a DCGM word, in {source})"),
            )
        )
        incidents = parse_health_incidents(text, source)
        findings += health_findings("dcgmi", incidents, source)
        findings += mention_findings("dcgmi", health_mentions(text), incidents, health)
        for gpu, links in sorted(links_down(text).items()):
            status = GpuStatus(index=gpu, nvlink_states=dict.fromkeys(links, False))
            findings += _problems(status)
    return findings


HEALTH_CLASS = {
    "healthy": names.CLASS_OK,
    "warning": names.CLASS_WARN,
    "failure": names.CLASS_FATAL,
}
