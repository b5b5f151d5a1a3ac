"""The demo's training job and the NVML record of the node that interrupts it.

The job is written through the real `gpuslo.goodput.Recorder` with an injected clock, so its
journal is exactly what a training loop would leave: 120 s of initialisation, 30 s steps, a 30 s
checkpoint save every 20 steps, the fatal Xid after step 50 (the last checkpoint being step 40),
600 s until the scheduler restarts it, a 60 s checkpoint restore, and steps again up to a few
seconds before `now`. Hand-computed per GPU: 10 steps × 30 s = 300 s of wasted progress and 600 s
of recovery.
"""

from __future__ import annotations

import copy
from pathlib import Path

from gpuslo import goodput

JOB_ID = "demo-pretrain"
STEP_S, INIT_S, SAVE_S, RESTORE_S, RECOVERY_S = 30.0, 120.0, 30.0, 60.0, 600.0
CHECKPOINT_EVERY, FAIL_AFTER_STEP, LAST_STEP = 20, 50, 90


def blackwell_dbe_record(h200_record: dict) -> dict:
    """An NVML record for the GPU of shared/corpus case 026/027 (RTX PRO 6000 Blackwell at PCI
    0000:55:00 after a DBE: 2 uncorrectable errors, one row remap pending, recovery action
    Drain and Reset), built on the shape of the real H200 record so every call the checks make
    has an answer."""
    record = copy.deepcopy(h200_record)
    gpu = record["gpus"][0]
    gpu["nvmlDeviceGetName"] = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    gpu["nvmlDeviceGetUUID"] = "GPU-55555555-0000-4000-8000-000000000001"
    gpu["nvmlDeviceGetArchitecture"] = 10  # NVML_DEVICE_ARCH_BLACKWELL
    gpu["nvmlDeviceGetPciInfo_v3"] = {
        **gpu["nvmlDeviceGetPciInfo_v3"],
        "bus": 0x55,
        "device": 0,
        "busId": "00000000:55:00.0",
        "busIdLegacy": "0000:55:00.0",
    }
    gpu["ecc_uncorr_vol"] = gpu["ecc_uncorr_agg"] = 2
    gpu["nvmlDeviceGetRemappedRows"] = [0, 1, 1, 0]  # correctable, uncorrectable, pending, failure
    fields = gpu["fields"]
    fields.update(
        {
            "NVML_FI_DEV_ECC_DBE_VOL_TOTAL": 2,
            "NVML_FI_DEV_ECC_DBE_AGG_TOTAL": 2,
            "NVML_FI_DEV_REMAPPED_UNC": 1,
            "NVML_FI_DEV_REMAPPED_PENDING": 1,
            "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION": 4,
        }
    )
    return record


def _timeline() -> list[tuple[float, str, int]]:
    """(seconds from the job's start, what happens, step) for the whole job."""
    events: list[tuple[float, str, int]] = [
        (0.0, "start", 0),
        (0.0, "init", 0),
        (INIT_S, "init_end", 0),
    ]
    t = INIT_S

    def run_steps(first: int, last: int) -> None:
        nonlocal t
        for step in range(first, last + 1):
            t += STEP_S
            events.append((t, "step", step))
            if step % CHECKPOINT_EVERY == 0:
                events.append((t, "save", step))
                t += SAVE_S
                events.append((t, "checkpoint", step))

    run_steps(1, FAIL_AFTER_STEP)
    events.append((t, "failed", FAIL_AFTER_STEP))
    t += RECOVERY_S
    restart_step = FAIL_AFTER_STEP - FAIL_AFTER_STEP % CHECKPOINT_EVERY
    events += [(t, "restart", restart_step), (t, "restore", 0)]
    t += RESTORE_S
    events.append((t, "restore_end", 0))
    run_steps(restart_step + 1, LAST_STEP)
    return events


def record_job(journal_dir: Path, now: float, gpus: int = 1) -> dict:
    """Write the job's journal so its last step lands 5 s before `now`; returns its summary
    (`job`, `restart_step`, `goodput_ratio`, and `productive_s`, `wasted_progress_s`,
    `recovery_s`, `allocated_s` in GPU-seconds, and `badput_s`: GPU-seconds per non-productive
    category with time in it)."""
    timeline = _timeline()
    start = now - 5.0 - timeline[-1][0]
    clock = [start]
    journal = goodput.journal_path(journal_dir, JOB_ID)
    journal.unlink(missing_ok=True)
    recorder = goodput.Recorder(journal_dir, JOB_ID, node="blackwell-dbe", clock=lambda: clock[0])
    phases: dict[str, object] = {}
    for offset, what, step in timeline:
        clock[0] = start + offset
        if what == "start":
            recorder.job_start(gpus)
        elif what in ("init", "save", "restore"):
            category = {
                "init": "initialization",
                "save": "checkpoint_save",
                "restore": "checkpoint_restore",
            }[what]
            phases[what] = recorder.phase(category)
            phases[what].__enter__()
        elif what in ("init_end", "restore_end"):
            phases.pop(what.removesuffix("_end")).__exit__(None, None, None)
        elif what == "checkpoint":
            phases.pop("save").__exit__(None, None, None)
            recorder.checkpoint(step)
        elif what == "step":
            recorder.step(step)
        elif what == "failed":
            recorder.job_end("failed", layer="node")
            recorder = goodput.Recorder(
                journal_dir, JOB_ID, node="blackwell-dbe", clock=lambda: clock[0]
            )
        elif what == "restart":
            recorder.restart(step, gpus=gpus, layer="node")
            restart_step = step
    recorder.close()
    result = recorder.goodput
    seconds = result.gpu_seconds
    allocated = sum(seconds.values())
    return {
        "job": JOB_ID,
        "restart_step": restart_step,
        "goodput_ratio": seconds["productive"] / allocated if allocated else 0.0,
        "productive_s": seconds["productive"],
        "wasted_progress_s": seconds["wasted_progress"],
        "recovery_s": seconds["recovery"],
        "allocated_s": allocated,
        # every non-productive category with time in it, so the headline's parts add up to the
        # allocated GPU-seconds the ratio divides by (newcomer8 F9)
        "badput_s": {c: v for c, v in seconds.items() if c != "productive" and v > 0},
    }
