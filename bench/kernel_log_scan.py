"""Kernel-log scan throughput against grep, on the same generated file in the same run.

Generates a kernel log (default 1 GiB; `--size-mb` for less) in a temporary directory: ordinary
kernel noise (the real H200 node's dmesg and the hung-task case 029 from shared/) with one real
event block from shared/corpus/kernel_log_lines.txt every ten thousand lines. Then, with the file
in the page cache, times

  anchor: LC_ALL=C grep -E -c 'NVRM: (Xid|GPU)|SXid|fallen off the bus' FILE
  ours:   gpuslo.exporter.evidence.kernel_log.read.scan_kernel_log_file(FILE)
          (prefilter + full parser)

and prints both throughputs (MB/s), their ratio (target >= 0.5), grep's matching lines against
the lines our scan matched with the same pattern, and the events we found against the events
implanted (each block parsed on its own). Exits 1 when a count differs.

usage: python bench/kernel_log_scan.py [--size-mb N] [--dir DIR] [--keep] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log, scan_kernel_log_file

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
PATTERN = "NVRM: (Xid|GPU)|SXid|fallen off the bus"
GPU_KINDS = ("xid", "sxid", "fallen_off_bus")
EVENT_EVERY = 10_000


def noise_lines() -> list[str]:
    """Real kernel lines with no event in them, re-stamped with uptimes."""
    sources = [
        SHARED / "fixtures/h200/dmesg.txt",
        *sorted((SHARED / "corpus/cases").glob("029_*.txt")),
    ]
    bodies = []
    for path in sources:
        for line in path.read_text(errors="replace").splitlines():
            body = re.sub(r"^\[[^\]]*\]\s?", "", line)
            # Event lines are implanted separately; a driver load happens once per boot.
            if body.strip() and not re.search(PATTERN + "|NVRM: loading", body):
                bodies.append(body)
    return [f"[{10_000 + i * 0.001:14.6f}] {bodies[i % len(bodies)]}" for i in range(EVENT_EVERY)]


def event_blocks() -> list[list[str]]:
    """The event blocks of kernel_log_lines.txt (split at `# source:` comments)."""
    blocks: list[list[str]] = []
    for line in (SHARED / "corpus/kernel_log_lines.txt").read_text().splitlines():
        if line.startswith("# source:"):
            blocks.append([])
        elif blocks and line.strip() and not line.startswith("#"):
            blocks[-1].append(line)
    return [b for b in blocks if b]


def generate(path: Path, size_bytes: int) -> tuple[int, int]:
    """Write the log; return (events implanted, lines grep will match)."""
    noise = "\n".join(noise_lines()) + "\n"
    blocks = event_blocks()
    per_block = [
        len([e for e in parse_kernel_log("\n".join(b)) if e.kind in GPU_KINDS]) for b in blocks
    ]
    grep_lines = [sum(1 for line in b if re.search(PATTERN, line)) for b in blocks]
    events = matched = written = index = 0
    with path.open("w") as handle:
        while written < size_bytes:
            block = blocks[index % len(blocks)]
            text = noise + "\n".join(block) + "\n"
            handle.write(text)
            written += len(text.encode())
            events += per_block[index % len(blocks)]
            matched += grep_lines[index % len(blocks)]
            index += 1
        handle.flush()
        os.fsync(handle.fileno())  # no writeback competing with the timed runs
    return events, matched


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def grep_count(path: Path) -> int:
    grep = shutil.which("grep")
    if grep is None:
        sys.exit("grep not found: the anchor is missing")
    done = subprocess.run(
        [grep, "-E", "-c", PATTERN, str(path)],
        capture_output=True,
        text=True,
        env={"LC_ALL": "C"},
        check=False,
    )
    return int(done.stdout.strip() or 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="log size in MiB (default 1024)")
    parser.add_argument("--dir", help="where to write the log (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (best counts)")
    args = parser.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="gpuslo-bench-"))
    path = workdir / "kern.log"
    try:
        implanted, implanted_lines = generate(path, args.size_mb * 1024 * 1024)
        size_mb = path.stat().st_size / 1e6
        grep_count(path)  # warm the page cache: both read from memory
        grep_s = ours_s = float("inf")
        for _ in range(args.repeat):  # interleaved, best of N for each (noisy shared machines)
            (grep_lines, seconds) = timed(lambda: grep_count(path))
            grep_s = min(grep_s, seconds)
            (scan, seconds) = timed(lambda: scan_kernel_log_file(str(path)))
            ours_s = min(ours_s, seconds)
        events = len([e for e in scan.finish() if e.kind in GPU_KINDS])
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"file: {size_mb:.0f} MB, {scan.records} lines, one event block per {EVENT_EVERY} lines")
    print(f"best of {args.repeat} interleaved runs each")
    print(f"grep -E (LC_ALL=C): {size_mb / grep_s:8.1f} MB/s  ({grep_s:.2f} s)")
    print(f"gpuslo scan:        {size_mb / ours_s:8.1f} MB/s  ({ours_s:.2f} s)")
    print(f"ratio gpuslo/grep:  {grep_s / ours_s:.2f}  (target >= 0.50)")
    print(f"matching lines: grep {grep_lines}, gpuslo {scan.matched}, implanted {implanted_lines}")
    print(f"events: gpuslo {events}, implanted {implanted} (multi-line events count once)")
    same = grep_lines == scan.matched == implanted_lines and events == implanted
    print("counts identical" if same else "COUNTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
