"""Fatal Xid -> /metrics latency on the file-follow path: `gpuslo exporter --kernel-log FILE`
(every check at its default 30 s interval), 20 Xid lines appended one at a time; the time from
the write to the first scrape whose `gpuslo_xid_events_total` counts it. Prints p50, p99 and
max, and that each Xid is counted once, also after the next whole-file xid run (up to 30 s
later). Goal (issue 30): p99 < 0.1 s. The anchor in the issue is the xid check's 30 s polling, and
0.45 s for the file follower that checked the size every 0.2 s (before inotify).

The exporter runs on the NVML replay (one H200) and a copy of the real H200 node's dmesg
(shared/fixtures), loopback only. /metrics is scraped every 2 ms while waiting, so the figure
includes up to 2 ms of scrape spacing and one scrape's time.

The follower alone (the watcher thread, no check run) is timed too, by inotify and by the
polling it falls back to (the follower before issue 30), in the same run.

Measured on the shared 2-core development machine, load average 15 (eight sessions at work),
`python bench/xid_follow_latency.py` (20 injections each):
  exporter write -> /metrics     p50 652 ms, p99 1472 ms (goal p99 < 100 ms: missed here)
  follower alone, inotify        p50 0.2 ms, p99 0.3 ms
  follower alone, 0.2 s polling  p50 116 ms, p99 197 ms
The follower is no longer the delay: what remains is the xid check's run once woken (a
forkserver child, the log read and classified, the snapshot collected) on two loaded cores;
instrumented, one wake-up's cycle took 420-810 ms, ~0.3 s of it importing the xid check in the
child. With the xid check in the forkserver's preload, two back-to-back runs at load 11.5:
  before: p50 349 ms, p99 1027 ms;  after: p50 221 ms, p99 859 ms (another run: 106 / 345 ms).

2026-12-05 07:58 UTC, load average 5.6, `python bench/xid_follow_latency.py` (20 injections
each), after 98d6a34 (the xid check's fallback scan of the log through literals: the real H200
dmesg's `_scan_file` 4.0 ms -> 0.9 ms, in process, 20 runs):
  exporter write -> /metrics     p50 96.0 ms, p99 251.8 ms (goal p99 < 100 ms: missed)
  follower alone, inotify        p50 0.2 ms, p99 1.3 ms
  follower alone, 0.2 s polling  p50 116.2 ms, p99 194.3 ms
  Left: what remains after the wake is the runner's isolation — a forkserver child per check
  run (the check and context pickled, sys.path and the environment sent), then the snapshot
  and the collector — on two loaded cores; the scan itself is ~1 ms.

The fast path (gpuslo/exporter/xid_fast.py): on the watcher's wake the exporter judges the file
in process — the xid run's own scan, resumed from where its last whole-file run stopped
(`checks.xid_file.FileResume`), fed the appended bytes, judged by the check's pure
`judge_scan` — and swaps the xid results and counts into the published snapshot (the counter
save, an fsync of ~10 ms, is left to the loop). No child, no cycle, no gate; the whole-file run
still runs every 30 s in its child, and a rotated, truncated or broken file, or a run that
failed, is left to it. In process: resume + judge 0.8 ms on the H200 dmesg, publish 0.7 ms.
2026-12-05 08:17-08:19 UTC, back to back, `python bench/xid_follow_latency.py --injections 50`
(before: d7ce643 extracted beside the checkout; the same machine, two cores shared):
  before  load 2.5   exporter write -> /metrics  p50 83.6 ms, p99 132.9 ms (goal: missed)
  after   load 2.1   exporter write -> /metrics  p50  4.9 ms, p99  10.5 ms (goal p99 < 100 ms: met)
  anchor, same runs: follower alone, 0.2 s polling p50 113.6 ms, p99 195-200 ms; inotify p50 0.2 ms
At load 4.8-4.9 (20 injections): before p50 95.7 ms, p99 185.4 ms; after p50 4.0 ms, p99 8.3 ms.
08:20 UTC, load 1.1, 50 injections, after: p50 4.0 ms, p99 9.0 ms; 50 of 50 Xids counted, 50
after the next whole-file xid run (each once).
08:26-08:28 UTC, back to back again, 50 injections, nearly idle (the child path then just makes
the goal, with no margin for load):
  before  load 1.4   p50 45.8 ms, p99 87.3 ms
  after   load 1.3   p50  3.7 ms, p99  9.8 ms; 50 of 50 counted, 50 after the next run

usage: python bench/xid_follow_latency.py [--injections N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from gpuslo.exporter.evidence.kernel_log import watch
from gpuslo.exporter.evidence.kernel_log.inotify import open_inotify

REPO = Path(__file__).resolve().parent.parent
DMESG = REPO.parent.parent / "shared" / "fixtures" / "h200" / "dmesg.txt"
XID = (
    "[{t:12.6f}] NVRM: Xid (PCI:0000:00:06): 79, pid=0, name=python, "
    "GPU has fallen off the bus.\n"
)
METRIC = "gpuslo_xid_events_total{"
RUNS = 'gpuslo_check_runs_total{check="xid"}'


def xid_total(url: str, metric: str = METRIC) -> float | None:
    """Sum of `metric` (gpuslo_xid_events_total) on /metrics; None when the exporter does not
    answer."""
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(metric))


def start_exporter(work: Path) -> tuple[subprocess.Popen, str]:
    log = work / "kern.log"
    shutil.copy(DMESG, log)
    for sub in ("sys/class", "proc", "state"):
        (work / sub).mkdir(parents=True)
    replay = REPO / "gpuslo" / "data" / "nvml_replay"
    env = {**os.environ, "GPUSLO_NVML_PATH": str(replay),
           "GPUSLO_FAKE_NVML": str(replay / "h200x1.json")}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{port}",
            "--kernel-log", str(log), "--path.sysfs", str(work / "sys"),
            "--path.procfs", str(work / "proc"), "--state-dir", str(work / "state"),
            "--expect-gpus", "1"]
    process = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
    return process, f"http://127.0.0.1:{port}/metrics"


def inject(log: Path, url: str, number: int, timeout_s: float = 60) -> float:
    """Seconds from appending Xid `number` to a scrape that counts it."""
    before = xid_total(url) or 0.0
    with log.open("a") as handle:
        handle.write(XID.format(t=5000.0 + number))
        handle.flush()
        written = time.perf_counter()
    while (xid_total(url) or 0.0) <= before:
        if time.perf_counter() - written > timeout_s:
            sys.exit(f"Xid {number} not on /metrics after {timeout_s:.0f} s")
        time.sleep(0.002)
    return time.perf_counter() - written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--injections", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gpuslo-follow-"))
    process, url = start_exporter(work)
    try:
        deadline = time.monotonic() + 120
        while xid_total(url) is None:
            if time.monotonic() > deadline:
                sys.exit("the exporter never answered")
            time.sleep(0.2)
        time.sleep(2.0)  # the first cycle is done; the next xid run is 30 s away
        start = xid_total(url) or 0.0
        seconds = sorted(inject(work / "kern.log", url, n) for n in range(args.injections))
        counted = (xid_total(url) or 0.0) - start
        runs, until = xid_total(url, RUNS), time.monotonic() + 40
        while xid_total(url, RUNS) == runs and time.monotonic() < until:
            time.sleep(0.5)  # the next whole-file xid run reads the same Xids again
        recounted = (xid_total(url) or 0.0) - start
        follower = {how: follower_seconds(work, args.injections, how) for how in FOLLOWERS}
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{len(seconds)} injections each, load average {load:.1f}, {os.cpu_count()} CPUs")
    p99 = show("exporter: write -> /metrics", seconds)
    for how, figures in follower.items():
        show(f"follower alone ({how}): write -> wake", figures)
    print(f"goal p99 < 100 ms write -> /metrics: {'met' if p99 < 0.1 else 'MISSED'}")
    once = "yes" if counted == recounted == args.injections else "NO"
    print(f"Xids counted on /metrics: {counted:.0f} of {args.injections}, {recounted:.0f} after "
          f"the next whole-file xid run (each once: {once})")
    return 0


def show(label: str, seconds: list[float]) -> float:
    """Print p50/p99/max of sorted `seconds` in ms; returns p99."""
    p50 = seconds[len(seconds) // 2]
    p99 = seconds[min(len(seconds) - 1, round(0.99 * (len(seconds) - 1)))]
    print(f"{label:52} p50 {p50 * 1000:6.1f} ms  p99 {p99 * 1000:6.1f} ms  "
          f"max {seconds[-1] * 1000:6.1f} ms")
    return p99


FOLLOWERS = ("inotify", "polling every 0.2 s")


def follower_seconds(work: Path, count: int, how: str) -> list[float]:
    """Seconds from an append to the watcher's wake-up, the watcher alone (no check run):
    inotify, or the polling it falls back to (the follower before issue 30), in the same run."""
    log = work / f"follow-{how.split()[0]}.log"
    log.write_text("[ 1.0] boot\n")
    fired = threading.Event()
    if how != "inotify":
        watch.open_inotify = lambda path: None  # the fallback, as where inotify is not there
    watcher = watch.KernelLogWatcher(log, fired.set, is_kmsg=False, poll_s=0.2).start()
    watcher.ready.wait(10)
    out = []
    try:
        for number in range(count):
            fired.clear()
            time.sleep(0.05 + 0.013 * number)  # not in step with the poll
            with log.open("a") as handle:
                handle.write(XID.format(t=100.0 + number))
                handle.flush()
                written = time.perf_counter()
            if not fired.wait(10):
                sys.exit(f"the {how} follower missed append {number}")
            out.append(time.perf_counter() - written)
    finally:
        watcher.close()
        watch.open_inotify = open_inotify
    return sorted(out)


if __name__ == "__main__":
    sys.exit(main())
