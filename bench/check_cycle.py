"""Benchmark: one full check cycle on an 8-GPU node, and how fast a fatal Xid reaches a verdict.

1. Cycle time: every default check on the recorded H200 repeated 8 times (fake NVML,
   gpuslo/data/nvml_replay/h200x8.json), the xid check following a copy of the real H200 boot log
   (shared/fixtures/h200/dmesg.txt), sysfs/procfs the real ones of this machine, no dcgm-exporter.
   Median of REPEATS forced cycles; target under 1 s. Anchor, measured in the same run: a cycle of
   as many no-op checks through the same runner (what isolation in child processes costs alone).
2. Detection latency: the exporter's loop with the xid check at its default 30 s interval and the
   kernel-log watcher following the log (gpuslo/exporter/kernel_log_watch.py); an Xid 79 (GPU
   fallen off the bus) is appended; time until the node verdict is unhealthy. Target under 2 s,
   printed beside the 30 s polling interval it improves on.

Run: python bench/check_cycle.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ["GPUSLO_NVML_PATH"] = str(REPO / "gpuslo" / "data" / "nvml_replay")

from noop_check import NoOp  # noqa: E402

from gpuslo.exporter.checks.base import CheckContext  # noqa: E402
from gpuslo.exporter.checks.registry import load_checks  # noqa: E402
from gpuslo.exporter.runner import Runner  # noqa: E402
from gpuslo.exporter.server import Exporter, start_watcher  # noqa: E402
from gpuslo.verdict import node_verdict  # noqa: E402

REPEATS = 15
BOOT_LOG = REPO.parent / "shared" / "fixtures" / "h200" / "dmesg.txt"
XID_79 = (
    "[ 4242.123456] NVRM: Xid (PCI:0000:00:06): 79, pid=0, name=python, "
    "GPU has fallen off the bus.\n"
)
POLL_INTERVAL_S = 30.0


def median_cycle(runner: Runner) -> float:
    runner.cycle(force=True)  # warm: forkserver started, first-run state written
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        runner.cycle(force=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def boot_log(path: Path) -> None:
    """Copy the recorded H200 boot log to `path` (an empty log where ../shared is absent)."""
    if BOOT_LOG.exists():
        shutil.copy(BOOT_LOG, path)
    else:
        path.write_text("")


def cycle_time(work: Path) -> None:
    log = work / "kern.log"
    boot_log(log)
    context = CheckContext(state_dir=work / "state", kernel_log=log, timeout_s=10.0, expect_gpus=8)
    checks = load_checks()
    full = Runner(checks, context)
    anchor = Runner([NoOp(f"noop{i}") for i in range(len(checks))], context)
    try:
        snapshot = full.cycle(force=True)
        full_s, anchor_s = median_cycle(full), median_cycle(anchor)
    finally:
        full.close()
        anchor.close()
    gpu_verdict = node_verdict(r for r in snapshot.results if r.gpu)
    print(
        f"full cycle, {len(checks)} checks, 8 GPUs: median {full_s:.3f} s over {REPEATS} "
        f"(target < 1 s: {'met' if full_s < 1 else 'MISSED'}); GPU checks {gpu_verdict}"
    )
    print(
        f"anchor, {len(checks)} no-op checks in the same runner: median {anchor_s:.3f} s; "
        f"ratio full/anchor {full_s / anchor_s:.2f}"
    )


def detection_latency(work: Path) -> float:
    """The exporter's own loop and kernel-log watcher with the xid check at its default 30 s
    interval: time from appending Xid 79 to the followed log to an unhealthy node verdict."""
    log = work / "followed.log"
    boot_log(log)
    context = CheckContext(state_dir=work / "state-xid", kernel_log=log, timeout_s=5.0)
    runner = Runner(load_checks(["xid"]), context)
    exporter = Exporter(runner.cycle, None)
    stop = threading.Event()
    loop = threading.Thread(target=exporter.loop, args=(stop, 5.0), daemon=True)
    loop.start()
    watcher = start_watcher(exporter, runner, context)
    while exporter.snapshot is None:  # the first, healthy cycle
        time.sleep(0.05)
    time.sleep(0.5)
    with log.open("a") as handle:
        handle.write(XID_79)
    appended = time.monotonic()
    latency = float("inf")
    while time.monotonic() - appended < 10:
        if node_verdict(exporter.snapshot.results) == "unhealthy":
            latency = time.monotonic() - appended
            break
        time.sleep(0.02)
    stop.set()
    exporter.wake.set()
    loop.join(10.0)
    watcher.close()
    runner.close()
    return latency


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cycle_time(work)
        runs = [work / f"run{i}" for i in range(3)]
        for run in runs:
            run.mkdir()
        latencies = sorted(detection_latency(run) for run in runs)
        median = latencies[1]
        print(
            f"detection latency, Xid 79 appended to a followed kernel log -> node unhealthy: "
            f"median {median:.2f} s of 3 (target < 2 s: {'met' if median < 2 else 'MISSED'}) vs "
            f"{POLL_INTERVAL_S:.0f} s polling interval (worst case {POLL_INTERVAL_S:.0f} s, "
            f"mean {POLL_INTERVAL_S / 2:.0f} s): {POLL_INTERVAL_S / 2 / median:.0f}x sooner on "
            "average"
        )


if __name__ == "__main__":
    # multiprocessing re-runs a __main__ that has a file in every child it starts; run as an
    # imported module under `python -c` instead, as children start under the `gpuslo` command
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
    code += "import check_cycle; check_cycle.main()"
    os.execv(sys.executable, [sys.executable, "-c", code])
