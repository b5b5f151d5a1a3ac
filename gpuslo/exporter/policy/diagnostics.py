"""Judging DCGM's own verdicts (pure): `dcgmi diag` test results and `dcgmi health -c` incidents,
one finding per (test, GPU) and per entity.

Rules, from NVIDIA's DCGM user guide ("DCGM Diagnostics", "Health and Diagnostics"):
- a diag `Fail` means the GPU did not pass a test meant to show it can run work: class fatal,
  reason `diagnostic_failed`; the action is DCGM's own advice when the result text gives it
  (`Reset GPU` → reset_gpu, `drain` → drain_and_reset, `reboot` → reboot_node, `Run a field
  diagnostic on the GPU` — dcgm_errors.h's TRIAGE_RUN_FIELD_DIAG_MSG, the next step of a row-remap
  failure or a memory mismatch — → contact_support, except after an NVLink-down message, whose
  advice DCGM now gives as system triage and a reset (`_LINK_DOWN_ADVICE`): NVIDIA's field
  diagnostic is the service path, and its A100/H100 memory-error-management guide says a
  row-remap failure needs the GPU serviced, which a reset does not clear; gpuslo's own
  `row_remap_failure` says the same), else reset_gpu. A result for all GPUs whose text names
  exactly one GPU (`GPU 3 had uncorrectable memory errors ...`: DCGM's messages name the GPU
  they are about) is that GPU's;
- `Warn` is recorded (warn); `Pass` is inventory (ok); `Skip` / `Not Run` and an Info note
  are no evidence either way (noise); any other word is `unknown` (a future DCGM release must not
  turn a node green by renaming a status);
- an `Error` row (DCGM could not run a test: its deployment checks refused the GPU, a plugin
  failed) is fatal when its text carries a fatal-class word (`GPU 3 has uncorrectable memory
  errors and row remappings are pending`: DCGM refuses a GPU that needs a reset), else unknown
  (reason `tool_error`: the diagnostic did not run, which shows neither health nor fault);
- a `Fail` whose text is CUDA's `system not yet initialized` (cudaErrorSystemNotReady) is the
  fabric not being ready, not a failed test of the GPU (Fabric Manager user guide: on NVSwitch
  systems CUDA cannot initialise until Fabric Manager has configured the fabric): still fatal, with
  reason `fabric_unhealthy`;
- a `Fail` of a deployment check that tests the node's set-up (persistence mode, CUDA
  environment variables, a denylisted driver, device-file permissions: the checks whose DCGM error
  code has severity CONFIG, `gpuslo/data/dcgm_errors.yaml` `deployment_checks`) is a configuration
  matter, not a GPU fault, and DCGM ran no test of the GPUs: class unknown, reason `tool_error`,
  action none (fresh3 case 405: persistence mode disabled, DCGM 3.1);
- a `Fail` whose every text is CUDA saying the device is busy or unavailable
  (cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable": CUDA
  runtime API reference, "all CUDA devices are busy or unavailable at the current time ... due to
  use of cudaComputeModeProhibited, cudaComputeModeExclusiveProcess, or when long running CUDA
  kernels have filled up the GPU") is a test that did not run, not a failed GPU: DCGM's
  "Diagnostic Plugins" page says a Fail is either the defect found "or it could not complete
  because of a setup or execution error", its context_create plugin skips rather than "claim a
  hardware failure" when an exclusive-process GPU refuses a context, DCGM runs diagnostics "once
  the GPUs are idle", and its own error table gives DCGM_FR_CUDA_CONTEXT severity TRIAGE and
  DCGM_FR_CUDA_API MONITOR, never RESET (a `context is destroyed` of the same test is that
  refused context's follow-on, newcomer7 F19). Class unknown, reason `tool_error`, action none
  (rerun it on an idle GPU), as the active probe treats a busy GPU (`policy.probe`); a text that
  also carries a fatal-class word stays fatal. The same for a `Fail` (of any test, `Fail - All`
  included) whose every text is `context is destroyed` (CUDA_ERROR_CONTEXT_IS_DESTROYED, 709) on
  a GPU whose context CUDA refused as busy or unavailable in another result of the same run
  (`refused_gpus`): go-dcgm#52's `| Diagnostic | Fail - All |` whose only text is `GPU 0 API
  call cuMemGetInfo failed: 'context is destroyed'`, after GPU Memory's cuCtxCreate on GPU 0
  was refused: a call on a context that was never created, not a defect. A destroyed context on
  a GPU the run shows no refusal for is not explained and stays fatal;
- a health incident `Failure` is fatal (reason `diagnostic_failed`), `Warning` warn, and any
  other word than `Healthy` unknown (`Internal error`).
"""

from __future__ import annotations

import functools
import re

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.dcgmi import HealthIncident
from gpuslo.exporter.evidence.dcgm.diag import DiagResult
from gpuslo.exporter.evidence.dcgm.health_text import HealthMention
from gpuslo.exporter.policy.health_event import PACKAGED, packaged_error_table
from gpuslo.exporter.policy.hostengine import packaged_hostengine_policy
from gpuslo.exporter.policy.severity_words import is_fatal_text
from gpuslo.packaged import packaged_yaml
from gpuslo.verdict import Finding

STATUS_CLASS = {
    "pass": names.CLASS_OK,
    "fail": names.CLASS_FATAL,
    "warn": names.CLASS_WARN,
    "warning": names.CLASS_WARN,
    "skip": names.CLASS_NOISE,
    "skipped": names.CLASS_NOISE,
    "not run": names.CLASS_NOISE,
    "info": names.CLASS_NOISE,
}
HEALTH_CLASS = {
    "healthy": names.CLASS_OK,
    "warning": names.CLASS_WARN,
    "failure": names.CLASS_FATAL,
}
# DCGM's advice in a result text -> our action, most severe first.
ADVICE = (
    ("field diagnostic", names.ACTION_CONTACT_SUPPORT),
    ("reboot", names.ACTION_REBOOT_NODE),
    ("drain", names.ACTION_DRAIN_AND_RESET),
    ("reset gpu", names.ACTION_RESET_GPU),
)


_GPU_NAMED = re.compile(r"\bGPU[ :#]*(\d{1,3})\b")


def named_gpu(texts: tuple[str, ...]) -> str | None:
    """The one GPU index `texts` name (`GPU 3 GPU 3 had ...` names one), None when they name
    none or several."""
    found = {m.group(1) for text in texts for m in _GPU_NAMED.finditer(text)}
    return found.pop() if len(found) == 1 else None


# DCGM_FR_NVLINK_DOWN's message with the field-diagnostic advice older DCGM printed after it
# (holdout case 133: `GPU 0's NvLink link 0 is currently down Run a field diagnostic on the GPU.`).
# DCGM's dcgm_errors.h now gives that code DCGM_FR_NVLINK_DOWN_NEXT = SYSTEM_TRIAGE_MSG ("Check
# DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics.") and dcgm_errors.c
# severity TRIAGE (gpuslo/data/dcgm_errors.yaml): a link down is triaged and the GPU reset, not
# sent for service; the field diagnostic stays the next step of the codes that name it
# (ROW_REMAP_FAILURE, MEMORY_MISMATCH, NVLINK_CRC_ERROR_THRESHOLD, NVLINK_ERROR_CRITICAL, ...).
_LINK_DOWN_ADVICE = re.compile(
    r"(NvLink link \d{1,2} is currently down)[\s.,;]{0,8}Run a field diagnostic on the GPU\.?",
    re.IGNORECASE,
)


def advised_action(texts: tuple[str, ...]) -> str:
    """Our action for DCGM's advice in `texts` (reset_gpu when it gives none); the
    field-diagnostic advice an NVLink-down message carried in older DCGM is that code's current
    system triage, a reset (`_LINK_DOWN_ADVICE`)."""
    joined = _LINK_DOWN_ADVICE.sub(r"\1", " ".join(texts)[:65536]).lower()
    return next((action for word, action in ADVICE if word in joined), names.ACTION_RESET_GPU)


@functools.cache
def config_checks() -> frozenset[str]:
    """The deployment checks (lower-case test names) whose failure is a set-up matter: those whose
    DCGM error code has severity CONFIG (`gpuslo/data/dcgm_errors.yaml`)."""
    table = packaged_error_table()
    checks = packaged_yaml(PACKAGED).get("deployment_checks", {})
    return frozenset(
        test for test, code in checks.items()
        if getattr(table.get(f"DCGM_FR_{code}"), "severity", "") == "CONFIG"
    )


FABRIC_NOT_READY = re.compile(r"system not yet initiali[sz]ed|cudaErrorSystemNotReady", re.I)
# CUDA's cudaErrorDevicesUnavailable / CUDA_ERROR_DEVICE_UNAVAILABLE, as DCGM quotes them.
DEVICE_BUSY = re.compile(
    r"busy or unavailable|cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE", re.I
)


# CUDA_ERROR_CONTEXT_IS_DESTROYED (709, "context is destroyed"): a later call of the test on the
# context CUDA refused to create; beside a busy-or-unavailable text it is that same failure, not a
# defect (go-dcgm#52: cuCtxCreate busy or unavailable, then cuMemGetInfo 'context is destroyed',
# newcomer7 F19). DCGM files both as DCGM_FR_CUDA_CONTEXT / DCGM_FR_CUDA_API, never RESET.
CONTEXT_GONE = re.compile(
    r"context is destroyed|CUDA_ERROR_CONTEXT_IS_DESTROYED|cudaErrorContextIsDestroyed", re.I
)


def refused_gpus(results: list[DiagResult]) -> frozenset[str]:
    """The GPUs (DCGM gpuIds) whose context CUDA refused as busy or unavailable somewhere in one
    diag run's results: the GPU a `DEVICE_BUSY` text names, else its result's own."""
    refused = set()
    for result in results:
        for text in result.messages:
            gpu = (named_gpu((text,)) or result.gpu) if DEVICE_BUSY.search(text) else None
            if gpu is not None:
                refused.add(gpu)
    return frozenset(refused)


def did_not_run(result: DiagResult, refused: frozenset[str] = frozenset()) -> bool:
    """True when a result's texts say CUDA found the GPU busy or unavailable (each text that,
    or the destroyed context that follows from it, `CONTEXT_GONE`), none carries a fatal-class
    word, and either one is the busy text or every destroyed context is on a GPU in `refused`
    (`refused_gpus` of the same run; the text's GPU, else the result's): the test could not
    run on it (module docstring)."""
    texts = result.messages
    if not texts or is_fatal_text(" ".join(texts)):
        return False
    if not all(DEVICE_BUSY.search(m) or CONTEXT_GONE.search(m) for m in texts):
        return False
    if any(DEVICE_BUSY.search(m) for m in texts):
        return True
    return all((named_gpu((m,)) or result.gpu) in refused for m in texts)


def judge_result(
    result: DiagResult, refused: frozenset[str] = frozenset()
) -> tuple[str, str | None]:
    """(class, reason) of one result (see the module docstring; `refused`: `refused_gpus` of
    the run's results); the live `dcgm_diag` validator judges by it too."""
    status = result.status.strip().lower()
    if status == "error":
        if is_fatal_text(" ".join(result.messages)):
            return names.CLASS_FATAL, "diagnostic_failed"
        return names.CLASS_UNKNOWN, "tool_error"
    class_ = STATUS_CLASS.get(status, names.CLASS_UNKNOWN)
    if class_ == names.CLASS_FATAL and (
        result.test.strip().lower() in config_checks() or did_not_run(result, refused)
    ):
        return names.CLASS_UNKNOWN, "tool_error"
    if class_ == names.CLASS_FATAL:
        texts = " ".join(result.messages)
        return class_, "fabric_unhealthy" if FABRIC_NOT_READY.search(texts) else "diagnostic_failed"
    return class_, "parse_error" if class_ == names.CLASS_UNKNOWN else None


def not_run_why(result: DiagResult) -> str:
    """Why a result `did_not_run` (its own busy text, or a destroyed context after a refusal)."""
    if any(DEVICE_BUSY.search(m) for m in result.messages):
        return "the GPU was busy or unavailable to CUDA (another process, an exclusive-process " \
            "compute mode): rerun it on an idle GPU"
    return "its CUDA context is destroyed (CUDA 709) because CUDA refused to create it, busy " \
        "or unavailable, earlier in this run: rerun it on an idle GPU"


def diag_findings(kind: str, results: list[DiagResult], source: str = "") -> list[Finding]:
    """One `diagnostic_result` finding per (test, GPU) result (see the module docstring); an
    unknown one names `source` and the line."""
    out = []
    refused = refused_gpus(results)
    for result in results:
        class_, reason = judge_result(result, refused)
        fatal = class_ == names.CLASS_FATAL
        gpu = result.gpu if result.gpu is not None else named_gpu(result.messages)
        where = f"GPU {gpu}" if gpu is not None else "all GPUs"
        test = result.test or result.category or "(test not shown)"
        detail = f": {' '.join(result.messages)}" if result.messages else ""
        if reason == "tool_error" and did_not_run(result, refused):
            where = f"{where}; the test did not run: {not_run_why(result)}"
        if reason == "parse_error":
            where = f"{where}; status not a DCGM word, in {source}" + (
                f":{result.line}" if result.line else ""
            )
        out.append(
            Finding(
                kind=kind,
                class_=class_,
                signal="diagnostic_result",
                gpu=gpu,
                reason=reason,
                layer=None if reason else names.LAYER_NODE,
                action=advised_action(result.messages) if fatal else names.ACTION_NONE,
                message=f"{test} {result.status} ({where}){detail}"[:300],
                line=result.line,
                extra={"test": test, "status": result.status},
            )
        )
    return out


def cut_findings(kind: str, cut: tuple[int, str] | None, source: str = "") -> list[Finding]:
    """One `diagnostic_result` finding of class unknown (reason no_data) for a diag table cut
    off before dcgmi finished it (`evidence.dcgm.diag.table_cut`): what it shows is judged (a
    Fail it shows still makes the verdict unhealthy), but the results after the cut were not
    seen, so nothing wrong there is not a pass."""
    if cut is None:
        return []
    line, what = cut
    where = f" ({source}:{line})" if source else ""
    return [Finding(kind=kind, class_=names.CLASS_UNKNOWN, signal="diagnostic_result",
                    reason="no_data", line=line,
                    message=f"dcgmi diag output cut off{where}: {what}; the results after it "
                    "(the rest of that test, the tests that follow) were not seen"[:300])]


def health_findings(
    kind: str, incidents: list[HealthIncident], source: str = ""
) -> list[Finding]:
    """One `health_report` finding per entity a `dcgmi health -c` report lists; an unknown one
    names `source`."""
    out = []
    for incident in incidents:
        class_ = HEALTH_CLASS.get(incident.health.lower(), names.CLASS_UNKNOWN)
        reason = {names.CLASS_FATAL: "diagnostic_failed", names.CLASS_UNKNOWN: "tool_error"}
        systems = "; ".join(
            f"{system} {health}" + (f": {' '.join(lines)}" if lines else "")
            for system, health, lines in incident.systems
        )
        messages = tuple(line for _, _, lines in incident.systems for line in lines)
        out.append(
            Finding(
                kind=kind,
                class_=class_,
                signal="health_report",
                gpu=incident.entity if incident.group.upper() == "GPU" else None,
                device=None if incident.group.upper() == "GPU" else f"{incident.group} "
                f"{incident.entity}",
                reason=reason.get(class_),
                layer=None if class_ in reason else names.LAYER_NODE,
                action=advised_action(messages) if class_ == names.CLASS_FATAL else None,
                message=(f"{source}: " if class_ == names.CLASS_UNKNOWN else "")
                + f"dcgmi health {incident.group} {incident.entity}: {incident.health}"
                + (f" ({systems})" if systems else ""),
            )
        )
    return out


def mention_findings(
    kind: str, mentions: list[HealthMention], incidents: list[HealthIncident], overall: str
) -> list[Finding]:
    """One `dcgm_health` finding per (GPU, system) the report's lines name (`evidence.dcgm.
    health_text`), so an NVLink failure's text reaches its GPU even when the report's tree did
    not survive: class from that GPU's incident health when the tree shows it, else from the
    overall result (Failure fatal, Warning warn; Healthy: not an incident, nothing); the reason
    is the health system's (`policy.hostengine`)."""
    by_gpu = {i.entity: i.health for i in incidents if i.group.upper() == "GPU"}
    systems = packaged_hostengine_policy()
    out: dict[tuple[str, str], Finding] = {}
    for mention in mentions:
        health = by_gpu.get(mention.gpu, overall).strip().lower()
        class_ = HEALTH_CLASS.get(health)
        if class_ in (None, names.CLASS_OK) or (mention.gpu, mention.system) in out:
            continue
        fatal = class_ == names.CLASS_FATAL
        out[(mention.gpu, mention.system)] = Finding(
            kind=kind,
            class_=class_,
            signal="dcgm_health",
            gpu=mention.gpu,
            reason=systems.system(mention.system)[1] if fatal else None,
            layer=None if fatal else names.LAYER_NODE,
            action=advised_action((mention.text,)) if fatal else names.ACTION_NONE,
            line=mention.line,
            message=f"dcgmi health {health}: {mention.text}"[:300],
            extra={"system": mention.system},
        )
    return list(out.values())
