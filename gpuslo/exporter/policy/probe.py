"""Judging the active probe (pure): is the GPU correct, is it fast enough, and may speed be
judged at all.

Rules (issue 26; the speed table is `policy.speeds`):
- busy: NVML lists a compute process that is not the probe's own on the GPU, before or after
  the measurement, or its utilisation before is at least `SpeedPolicy.busy_utilization`. A busy
  GPU is probed for correctness only and its speed is never judged: `ok`, "busy: speed not
  judged". A busy exclusive-process GPU (or one whose compute mode is PROHIBITED) is not probed
  at all (a second context cannot be created), and one where the probe could not create a
  context or a small allocation is busy too, never failed;
- NVML reporting neither the GPU's processes nor its utilisation: speed not judged either
  ("activity unknown"), correctness still judged;
- wrong results fail whatever else runs on the GPU: a float32 product off by more than
  `MAX_RELATIVE_ERROR` of the float64 reference, or a memory pattern that did not read back →
  `fail` `probe_failed`, action drain_and_reset;
- an idle GPU below its speed thresholds fails `probe_failed` too (a job there would crawl);
  a model without thresholds has its speed reported, not judged;
- a GPU the probe's deadline ran out on is `unknown` `check_timeout`; an error in the workload
  (a CUDA error) `unknown` `tool_error`: never ok.

`probe_pids` finds the probe's own process among NVML's: NVML reports PIDs of the host's PID
namespace, so inside a container the probe's `os.getpid()` is not among them; there the one PID
that is new on every probed GPU is the probe's (all GPUs are probed from one process).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuslo import names
from gpuslo.exporter.evidence.gpu_activity import GpuActivity
from gpuslo.exporter.evidence.probe.parallel import Outcome
from gpuslo.exporter.policy.speeds import SpeedThresholds
from gpuslo.verdict import CheckResult

CHECK = "gpu_probe"
SOURCE = "active probe"
MAX_RELATIVE_ERROR = 1e-3  # float32 on 512-term dot products errs ~1e-6; 1e-3 is a broken unit
BUSY, NO_CONTEXT, ACTIVITY_UNKNOWN = names.PROBE_NOT_JUDGED


@dataclass(frozen=True)
class Busy:
    """Why speed is not judged on a GPU (`why` one of `names.PROBE_NOT_JUDGED`, "" when it is
    judged), in words for the message; `skip` when the GPU is not probed at all."""

    why: str = ""
    words: str = ""
    skip: bool = False


def busy_before(gpu: GpuActivity, busy_utilization: float, own_pid: int) -> Busy:
    """What NVML said before the probe (see the module docstring). Pure."""
    foreign = [pid for pid in gpu.processes or () if pid != own_pid]
    held = f"pid {', '.join(map(str, foreign))}"
    if gpu.prohibited:
        return Busy(NO_CONTEXT, "compute mode PROHIBITED: no context may be created", skip=True)
    if foreign and gpu.exclusive:
        return Busy(NO_CONTEXT, f"exclusive-process GPU held by {held}", skip=True)
    if foreign:
        return Busy(BUSY, f"{held} on the GPU")
    if gpu.utilization is not None and gpu.utilization >= busy_utilization:
        return Busy(BUSY, f"utilisation {gpu.utilization:.0%}")
    if gpu.processes is None and gpu.utilization is None:
        return Busy(ACTIVITY_UNKNOWN, "NVML reports neither its processes nor its utilisation")
    return Busy()


def probe_pids(
    before: dict[str, GpuActivity], after: dict[str, GpuActivity], probed: list[str], own_pid: int
) -> set[int]:
    """The PIDs in `after` that are the probe itself (see the module docstring). Pure."""
    listed = {pid for gpu in after.values() for pid in gpu.processes or ()}
    if own_pid in listed:
        return {own_pid}
    new = [
        set(after[i].processes or ()) - set(before[i].processes or ())
        for i in probed
        if i in after and i in before
    ]
    common = set.intersection(*new) if new else set()
    return common if len(common) == 1 else set()


def busy_after(before: GpuActivity, after: GpuActivity | None, own: set[int]) -> Busy:
    """A process that appeared during the probe and is not the probe's own. Pure."""
    if after is None or after.processes is None:
        return Busy()
    new = sorted(set(after.processes) - set(before.processes or ()) - own)
    if not new:
        return Busy()
    return Busy(BUSY, f"pid {', '.join(map(str, new))} started on the GPU during the probe")


def _correctness(outcome: Outcome) -> list[str]:
    m = outcome.measurement
    wrong = []
    if m is not None and not m.max_relative_error <= MAX_RELATIVE_ERROR:
        wrong.append(f"matrix product off by {m.max_relative_error:.2g} (relative)")
    if m is not None and not m.pattern_ok:
        wrong.append(f"memory pattern over {m.pattern_bytes >> 20} MiB did not read back")
    return wrong


def _speed(outcome: Outcome, limits: SpeedThresholds | None) -> tuple[str, list[str]]:
    m = outcome.measurement
    assert m is not None and m.bf16_tflops is not None and m.copy_tbps is not None
    figures = f"bf16 {m.bf16_tflops:.0f} TFLOPS, copy {m.copy_tbps:.2f} TB/s"
    if limits is None:
        return f"{figures} (no speed known for this model: not judged)", []
    slow = []
    if m.bf16_tflops < limits.min_bf16_tflops:
        slow.append(f"bf16 {m.bf16_tflops:.0f} TFLOPS below {limits.min_bf16_tflops:.0f}")
    if m.copy_tbps < limits.min_copy_tbps:
        slow.append(f"copy {m.copy_tbps:.2f} TB/s below {limits.min_copy_tbps:.2f}")
    bar = f"{limits.min_bf16_tflops:.0f} TFLOPS, {limits.min_copy_tbps:.2f} TB/s"
    return f"{figures} (at least {bar}: {limits.describe()})", slow


def judge_probe(
    gpu: GpuActivity,
    outcome: Outcome | None,
    busy: Busy,
    limits: SpeedThresholds | None,
    deadline_s: float,
) -> CheckResult:
    """The result for one GPU (see the module docstring); `outcome` None when not probed."""
    common = {"check": CHECK, "scope": gpu.uuid, "gpu": gpu.index, "source": SOURCE}
    if outcome is None or outcome.no_context:
        why = busy.words if outcome is None else f"no CUDA context: {outcome.error}"
        return CheckResult(**common, status=names.STATUS_OK,
                           message=f"busy: speed not judged ({why}); not probed")
    if outcome.timed_out:
        return CheckResult(**common, status=names.STATUS_UNKNOWN, reason="check_timeout",
                           message=f"no answer within the probe's deadline of {deadline_s:.1f} s")
    if outcome.error or outcome.measurement is None:
        return CheckResult(**common, status=names.STATUS_UNKNOWN, reason="tool_error",
                           message=f"probe error: {outcome.error}")
    wrong = _correctness(outcome)
    m = outcome.measurement
    if busy.why or not m.full:
        label = "activity unknown" if busy.why == ACTIVITY_UNKNOWN else "busy"
        checked = f"matrix product and a {m.pattern_bytes >> 20} MiB memory pattern"
        said = f"{label}: speed not judged ({busy.words}); checked the {checked}"
        if m.full and m.bf16_tflops is not None:
            said += f"; measured bf16 {m.bf16_tflops:.0f} TFLOPS beside it"
    else:
        said, slow = _speed(outcome, limits)
        wrong += slow
    if wrong:
        return CheckResult(**common, status=names.STATUS_FAIL, reason="probe_failed",
                           action=names.ACTION_DRAIN_AND_RESET,
                           message=f"{'; '.join(wrong)}; {said}")
    message = said if busy.why or not m.full else f"correct; {said}"
    return CheckResult(**common, status=names.STATUS_OK, message=message)
