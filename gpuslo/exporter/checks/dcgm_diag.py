"""`dcgm_diag`: `dcgmi diag -r <level> -j` on the GPUs the return-to-service gate validates
(a validator, not a periodic check: it is not in the registry; `gpuslo.exporter.gate` runs it).

Evidence: DCGM's own diagnostic (NVIDIA DCGM user guide, "DCGM Diagnostics": level 2, "medium",
takes about two minutes and exercises memory, PCIe and the SMs), run with a deadline of 0.9 of
the check's, parsed with the dcgmi diag reader (`evidence.dcgm.diag`, DCGM 3.x and 4.x JSON and
text). Judged per GPU by `policy.diagnostics.judge_result`, as `inspect` judges a diag: a test
`Fail` naming the GPU (or all GPUs), or an `Error` with a fault word → `fail` (`diagnostic_failed`,
or `fabric_unhealthy` when CUDA says the system is not yet initialised) with DCGM's advice as the
action; an `Error` without one, or a `Fail` whose only text is CUDA finding the GPU busy or
unavailable (or the destroyed context that follows from a refusal elsewhere in the run,
`refused_gpus`) → `unknown` `tool_error` (the test did not run); a status word
DCGM does not use → `unknown` `parse_error`; otherwise `ok` (Warn recorded in the message). A
GPU the output does not mention at all is `unknown` `parse_error`: nothing tested is not a pass.

Context: `config["validate_gpus"]` the GPUs to test as {NVML index: UUID} (DCGM gpuIds are NVML
indices), `config["dcgm_diag_level"]` (default 2). No `dcgmi` → DependencyMissing (the gate
calls the validator unavailable); dcgmi exiting non-zero with no diag in its output → ToolError.
"""

from __future__ import annotations

import subprocess

from gpuslo import names
from gpuslo.errors import DeadlineExceeded, DependencyMissing, ToolError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.dcgm.diag import DiagResult, looks_like_diag, parse_diag
from gpuslo.exporter.policy.diagnostics import (
    advised_action,
    did_not_run,
    judge_result,
    not_run_why,
    refused_gpus,
)
from gpuslo.verdict import CheckResult

NAME = "dcgm_diag"
BUDGET = 0.9  # of the check's deadline, so dcgmi's own timeout fires before the runner's


def judge_gpu(index: str, uuid: str, results: list[DiagResult], source: str) -> CheckResult:
    """One GPU's result from every diag result naming it or all GPUs (pure)."""
    common = {"check": NAME, "scope": uuid, "gpu": index, "source": source}
    own = [r for r in results if r.gpu in (index, None)]
    if not own:
        return CheckResult(**common, status=names.STATUS_UNKNOWN, reason="parse_error",
                           message=f"dcgmi diag reported nothing about GPU {index}")
    refused = refused_gpus(results)
    judged = [(r, *judge_result(r, refused)) for r in own]
    failed = [(r, reason) for r, c, reason in judged if c == names.CLASS_FATAL]
    if failed:
        texts = tuple(m for r, _ in failed for m in r.messages)
        words = "; ".join(f"{r.test or 'a test'} {r.status}" for r, _ in failed)
        detail = f": {' '.join(texts)}" if texts else ""
        return CheckResult(**common, status=names.STATUS_FAIL, reason=failed[0][1],
                           action=advised_action(texts), message=f"{words}{detail}"[:300])
    odd = [(r, reason) for r, c, reason in judged if c == names.CLASS_UNKNOWN]
    if odd:
        r, reason = odd[0]
        said = "could not run" if reason == "tool_error" else "is not a DCGM word"
        if did_not_run(r, refused):
            said = f"did not run: {not_run_why(r)}"
        return CheckResult(**common, status=names.STATUS_UNKNOWN, reason=reason,
                           message=f"{r.test}: status {r.status!r} {said}: "
                           f"{' '.join(r.messages)}"[:300])
    warned = [r.test for r, c, _ in judged if c == names.CLASS_WARN]
    note = f" (Warn: {', '.join(warned)})" if warned else ""
    return CheckResult(**common, status=names.STATUS_OK,
                       message=f"{len(own)} diag results, no Fail{note}")


def run_diag(level: int, indices: list[str], timeout_s: float) -> tuple[str, str]:
    """(command, stdout) of `dcgmi diag -r LEVEL -j -i 0,3` (I/O). DependencyMissing without
    dcgmi, DeadlineExceeded past `timeout_s`, ToolError on a failure that printed no diag (a
    non-zero exit with a diag in it is DCGM saying a test failed)."""
    argv = ["dcgmi", "diag", "-r", str(level), "-j"]
    if indices:
        argv += ["-i", ",".join(indices)]
    command = " ".join(argv)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise DependencyMissing("dcgmi is not installed (DCGM)") from None
    except subprocess.TimeoutExpired:
        raise DeadlineExceeded(f"{command}: no answer within {timeout_s:g} s") from None
    if done.returncode != 0 and not looks_like_diag(done.stdout):
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[:1]
        raise ToolError(f"{command} exited {done.returncode}: {' '.join(said)[:200]}")
    return command, done.stdout


class DcgmDiagCheck:
    """The DCGM diagnostic validator (see the module docstring)."""

    name = NAME
    interval_s = 3600.0
    dependencies = ("dcgmi (DCGM)",)

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Run the diag on `config["validate_gpus"]` and judge each of them."""
        gpus: dict[str, str] = context.config.get("validate_gpus") or {}
        level = int(context.config.get("dcgm_diag_level", 2))
        command, text = run_diag(level, sorted(gpus, key=int), context.timeout_s * BUDGET)
        results = parse_diag(text, command)
        return [judge_gpu(index, uuid, results, command) for index, uuid in sorted(gpus.items())]
