"""`gpuslo goodput` on a big training log, against grep and wc on the same file in the same run.

    python bench/training_log_read.py [--mib 1024 ...] [--shape h200|megatron|titan|all]
                                      [--keep DIR]

Builds each log in a temporary directory by repeating a real log's shape with rising steps: its
head (the lines before the first progress record) once, then its real progress records over and
over, each with the job-wide step and the time rewritten so that the run goes on (step n at
n × the real step time):
- `h200`: the Lightning tqdm bar of ../shared/training_logs/h200 (run A's 5,700 redraws, `\\r`
  between them, no newline: one physical line per redraw), `n/100000000 [h:mm:ss<...]`;
- `megatron`: Megatron-LM's stamped iteration lines of dev case A14 (`[2024-04-06 02:59:36]
  iteration n/ N | ... elapsed time per iteration (ms): ...`, about 400 bytes a line);
- `titan`: torchtitan's `[rank0]:[titan] <stamp> - root - INFO - step: n  loss: ...` lines of
  ../shared/training_logs T12 (step stride 10).
Then, with the file in the page cache, times the anchors `LC_ALL=C grep -c <word> FILE` and
`wc -l FILE`, and `python -m gpuslo goodput --gpus 8 --format json FILE` as a child process
(start-up included), whose peak resident memory (ru_maxrss) and CPU time come from `wait4` on
that child alone. Prints MB/s by the wall clock and by the child's CPU time (the figure a loaded
machine disturbs least), the ratio of gpuslo's time to grep's, peak RSS, and the facts read
(steps, median step time, status), one JSON line per shape and size. Run it at two sizes to see
that memory does not grow with the file (`--mib 256 --mib 1024`). The child imports gpuslo from
the working directory first (`python -m` puts it on sys.path before PYTHONPATH): to time another
checkout, run the bench from that checkout's root.

Figures, this machine (2 cores shared by 8 sessions), 2026-12-05, `uptime` load average 1.0-2.3
during the runs (0.05 after), `python bench/training_log_read.py --mib 64 --mib 256` then
`--mib 1024 --shape h200` and `--shape megatron` (megatron 1024 after the family merge of
thinning; megatron 64/256 before it):
  shape     MiB   MB/s wall  MB/s CPU  peak RSS MiB  grep -c MB/s  gpuslo/grep  steps read
  h200       64      3.4       3.8        237          267          79x      0..854,289
  h200      256      4.3       4.3        249          233          55x      0..3,354,345
  h200     1024      4.5       4.5        238          211          47x      0..13,219,261
  megatron   64      5.6       5.5        267         4605         824x      1..202,746
  megatron  256      5.5       5.5        808 (*)     5043         911x      1..810,983
  megatron 1024      9.2       9.2        291         4750         517x      1..3,243,933
  titan      64      4.6       4.6        231         2177         472x      10..4,422,360
  titan     256      5.1       5.1        242         1996         395x      10..17,617,420
(`wc -l`: 4,500-7,200 MB/s.) Median step times read right at every size (h200 0.0136 s,
megatron 5.53-5.72 s, titan 1.4 s). Memory is bounded: peak RSS is the same at 64 MiB and 1 GiB
(the reader keeps at most 200,000 progress records and merges pairs beyond). (*) Before thinning
merged records of one progress family across templates, A14's two iteration templates alternate
and could not be merged; the bound rose and RSS grew with the file; at 1 GiB after the fix: 291.
Before this round's fixes a 32 MiB h200 log did not finish in 4 CPU minutes (thinning ran once
per record past the bound) and the bar's first template failed its regex on every redraw.

Round 8, 2026-12-06: reading by blocks (`read.read_blocks`, `fast.FastPath.block`): one
Vectorscan pass a 1 MiB block finds the lines that may hold an event word or a control byte
(`blockscan`), and the other lines skip the four searches for them that each progress line
made (the alternation of ~25 event words, tried at every position of a 400-byte line, cost more
than the template's own match); a day's midnight remembered (`stamps.Clock`); additivity asked
once a template per thinning pass. Documents unchanged (JSON of every case of the six halves
compared, and these logs). Before (main 74129fa) and after, interleaved shape by shape, each
run from its own checkout, `python bench/training_log_read.py --mib 64 --shape S --keep DIR`,
load average 5.4-6.4 (other sessions; wall times are theirs as much as ours, CPU figures hold):
  shape     MiB   MB/s CPU before -> after   CPU s before -> after   steps read (same)
  h200       64        3.4 -> 3.8              19.45 -> 17.57          0..854,289
  megatron   64        7.0 -> 9.2               9.57 -> 7.33           1..202,746
  titan      64        4.8 -> 5.4              14.09 -> 12.41          10..4,422,360
Per line after learning (`LogReader.feed` vs `feed_block` on the same lines, best of 3, load
~10): megatron 23.9 -> 12.2 us, titan 15.9 -> 10.3 us, h200 7.0 -> 7.0 us (its 70-byte bar
lines held no event word search worth saving). Where a 64 MiB run's CPU goes after (h200,
`analyse_log` split, load ~15, so slow): start-up 0.5 s, head and learning 0.7 s, the per-line
fast path and thinning 12 s (854,313 lines), reading the 154,263 kept records 0.7 s, assembling them
(`progress`, `timeline`, `walk`) 3.9 s; megatron: per line 2.7 s (202,747 lines), assembling
3.2 s.
Then (before round 10): the goal of issue 23 (>= 20 MB/s on 1 GiB) was not met, 3.8-9.2 MB/s
by CPU: per-line Python on short lines (about 7 us a bar redraw) and assembling up to 200,000
kept records (3-4 s, the same on 1 GiB).

Round 10, 2026-12-06: profiled first (`python -m cProfile -s tottime -m gpuslo goodput --gpus 8
--format json FILE` and the reading split from assembling in-process). Two costs the earlier
figures did not separate: (1) CPython's full garbage collections: 22 on the 64 MiB bar log, each
walking the ~6 x 10^5 tracked objects of the kept records (`Prog` and its match), ~40 % of the
read's CPU, finding nothing (the records are freed by reference count): none runs now while one
log is read and assembled (`gcscope.young_collections_only`; young collections still run); (2)
the template's regex itself, ~3.8 us a bar redraw (each number and duration pattern backtracks):
where no template holds an ASCII digit of its own, the fast path masks a block's digits once
(`bytes.translate`) and runs the regexes on the first line of each masked shape only, the others
taking its group spans (`matchers.Found`; exact: such a regex treats the ten digits alike, so it
cannot tell two lines of one shape apart; the real h200 log's 7,479 lines have 107 masked
shapes). Smaller cuts: the prefix's masked shape taken from the line's, no save-word search on a
line the block prefilter found clean, thinning's comparisons inline. Not done: records kept by
stride (it would change which records thinning keeps) and a `finditer` over the block (the
per-line cost is no longer the loop nor the match).
Documents unchanged: the JSON of every case of every half (302, with fresh7 and ../shared's
cases and h200) byte-identical to main's, and every progress record and event (all fields) the
reader gives the same on all 287 case logs repeated to >= 12,000 lines (189 reach the fast path)
and on the three 64 MiB logs; first contact and the shared checker unchanged. Main (ac16d2c)
then this tree (main merged), interleaved, `python bench/training_log_read.py --mib 64 --shape
S --keep DIR` from each checkout, load average 1.3-1.6 (status `unknown` in both: main now fails
closed on a log without saves):
  shape     MiB   MB/s CPU before -> after   CPU s before -> after   peak RSS MiB   steps read
  h200       64        4.3 -> 8.4              15.68 -> 8.03          247 -> 212    0..854,289
  megatron   64        9.9 -> 12.4              6.75 -> 5.40          260 -> 233    1..202,746
  titan      64        6.1 -> 8.4              11.03 -> 7.95          223 -> 210    10..4,422,360
Per line read (`feed_block` timed in-process, young-only collections in both, load ~5): h200
7.99 -> 4.25 us, megatron 13.92 -> 9.64 us, titan 11.19 -> 7.88 us. After, larger (this tree
before the merge, `--mib 256` then `--mib 1024 --shape S`, load average 3-5, other sessions'):
  shape     MiB   MB/s CPU   CPU s   peak RSS MiB   steps read        median step s
  h200      256     13.7     19.66       213        0..3,354,345      0.0136
  megatron  256     23.0     11.69       249        1..810,983        5.5338
  titan     256     13.3     20.19       254        10..17,617,420    1.4
  megatron 1024     30.2     35.61       254        1..3,243,933      5.5338
  h200     1024     15.0     71.44       214        0..13,219,261     0.0136
  titan    1024     15.0     71.57       215        10..70,251,820    1.4
Memory stays bounded (peak RSS 210-254 MiB from 64 MiB to 1 GiB). The goal (>= 20 MB/s on
1 GiB) is met for Megatron's 400-byte lines (30 MB/s by CPU), not yet for 70-byte bar redraws
nor torchtitan's stamped lines (15 MB/s). What remains a line (from cProfile shares, so
roughly): for a bar ~4.3 us, of which the young collections of the `Prog` and `Found` kept
0.7 (measured: collector off), decoding each line in `read.read_blocks` ~0.5, the `Prog`,
`add_progress` and thinning ~1.5; for a stamped line about half is its stamp (`_prefix`: the
stamp's regex search, `groupdict`, `Clock.seconds`). Next: a stamp's date read once per
day rather than per line, one decode per chunk, and fewer objects kept per record.

Round 11, 2026-12-06: profiled first (cProfile of the read alone, `LogReader.feed_block` and
`finish`, 64 MiB). On torchtitan's stamped lines about half of a line's cost was its stamp
(`FastPath._prefix`: the stamp regex's `search`, `groupdict`, `Clock._raw`); on the bar,
`Prog`'s construction, `add_progress`, `_known`/`_read` and each line's own decode. Done:
(1) a stamp read from its place in the prefix's digit-masked shape (`stampspans`: the spans of
the shape's first match, the date and hour worked out once by the `Clock`, then per line only
the minute, second and fraction sliced and added, the same float operations as `Clock._raw`;
only layouts with a printed year); (2) one UTF-8 decode per chunk, not per line; (3) smaller
cuts: `_unsure` not called for a clean line with no `[` after its match, the step's digits read
by `int` at once, `Prog` given its fields in its constructor (each slot set once), `dated`
comparing instead of calling `min`/`max`, thinning not asking `_additive` again for a template
known not to be. Tried and dropped: thinning by a regex over a bytes string of the records'
links (the same records kept, but 2-3x slower than the loop: building the links costs more).
Documents unchanged: every case document of every half (302 files with ../shared's cases and
h200, `analyse_log` with `--gpus 1` and explain, and `--gpus 8`, and the journal events) and
every progress record and event (all fields) on the 302 case logs repeated to >= 12,000 lines
and on the three 64 MiB logs byte-identical to main's (881c789). Main then this tree,
interleaved, `python bench/training_log_read.py --mib 64 --shape S --keep DIR` from each
checkout, load average 11.6-14.8 (other sessions' tests; wall figures meaningless, CPU ones
disturbed too):
  shape     MiB   MB/s CPU before -> after   CPU s before -> after   peak RSS MiB    steps read
  titan      64        8.3 -> 9.2               8.07 -> 7.30         205 -> 205     10..4,422,360
  h200       64        7.2 -> 8.1               9.34 -> 8.27         207 -> 237 (*) 0..854,289
  megatron   64       12.8 -> 14.3              5.24 -> 4.69         229 -> 229     1..202,746
Read alone in-process (`feed_block` and `finish`, CPU s, main / this tree, two rounds
interleaved, load 9-19): titan 5.00, 4.46 / 3.47, 3.37; h200 5.43-6.03 / 4.91-5.42 (before
the `Prog` constructor change). The 64 MiB figures are half assembling (3.5-4 s by CPU under
this load: `progress`, `walk` and its journal checks, the calculator), which does not grow
with the file. (*) +30 MiB on the bar at 64 MiB and at 1 GiB alike (bounded): the decode per
chunk accounts for 5 of it (a child reading the 64 MiB bar log's blocks only: 110 -> 115 MiB,
twice each), the rest is not explained this round (the records and their slots are the same).
At 1 GiB, `python bench/training_log_read.py --mib 1024 --shape S --keep DIR` (the same facts
read: steps, 102,494 / 122,905 records after thinning, median step 0.013672 / 1.4 s):
  shape     MiB   checkout (load during the run)        MB/s CPU   CPU s   peak RSS MiB
  titan    1024   main, round 10 (load 3-5)                15.0     71.57       215
  titan    1024   this tree (load 10-14, 4 other runs)     20.4     52.76       200
  h200     1024   main (load 11-15)                        15.9     67.71       210
  h200     1024   this tree (load 10-14, 4 other runs)     13.7     78.13       237
  h200     1024   this tree again (load 10.5-11.5, alone)  17.0     63.20       237
(titan's baseline at 1 GiB was not rerun at this load: ~10 min of wall clock a run.)
Left: the goal (>= 20 MB/s on 1 GiB by CPU) is met for titan (20.4, under load), not for the
bar (15.9 -> 17.0 by CPU at a like load: the first run beside four others' reads less, so the
CPU figures of a loaded 2-core machine move by 10-20 %). What remains a bar line is its
`Prog` (a slotted object of 18 fields), `add_progress` and the two calls of `_known`/`_read`,
the young collections of the records kept, and thinning (0.04-0.1 s a pass of 200,000
records, a pass every ~100,000 records); a columnar store of progress records (arrays of
step, seq, since, family, rank; the match read only for the records kept) would remove most
of it, and with it the per-record assembling.

Round 12, 2026-12-07: profiled first (cProfile of the read alone, 64 MiB bar log, and the
feed timed by parts in-process). Per bar redraw the read cost ~4.2-4.5 us at load 5-9: making
its `Prog` and `Found` (~0.7 us with the young collections they cause), the calls of `_known`,
`_read`, `stamp_column` and `add_progress` with their attribute traffic, and thinning (~0.58 us
a line, 7 passes on 64 MiB). Done: (1) `fast.FastPath._plain` reads a block's run of clean lines
of remembered shapes in one loop, the reader's counters in locals and a shape's checks made once
for the lines that share it (`_plain_shape`), the same checks, order and effects as `_read`
(a line it does not take goes to `_read` before any effect); (2) each record that `add_progress`
would only append is kept as a row, a 10-field list (`thinning`), its `Prog` made only where it
is used (the reader's output: the ~150,000 records left, a timing line's record, a relearn);
thinning takes rows and `Prog`s alike, a row merged into with no time to add staying a row.
Same records: a test reads a tqdm bar, torchtitan's stamped lines and lit-gpt's per-line times
(merged by adding) past a bound of 300, by lines (`Prog`s) and by blocks (rows), and finds every
field the same; first contact and the shared checker unchanged. The feed alone (`feed_block` on
blocks already read, `--mib 64`, load ~9): 3.07-4.15 -> 2.25-2.32 us a redraw, of which block
preparation 0.3 and thinning 0.58 remain. Main (7ff3435, `python bench/training_log_read.py
--mib 64 --shape h200 --keep DIR` from each checkout), then this tree, interleaved, twice,
load average 14.7-20.1 (other sessions' test runs: wall figures meaningless, CPU ones inflated
by ~15-40 % against a quiet machine, where main read this log in 7.57 CPU s at load 0.3):
  shape     MiB   MB/s CPU before -> after   CPU s before -> after   peak RSS MiB   steps read
  h200       64     6.4, 6.7 -> 7.8, 8.1     10.57, 9.95 -> 8.55, 8.29   235 -> 243   0..854,289
(median step 0.013602 s and 154,262 progress lines in all four.) The +8 MiB of peak: the rows
and their `Prog`s side by side once, when the reader's output is made (bounded: 200,000 rows).
At 1 GiB, `python bench/training_log_read.py --mib 1024 --shape h200 --keep DIR`, this tree
(2a01e7c) then main (7ff3435), one after the other (~12 min of wall clock each at this load):
  shape     MiB   checkout (load during the run)     MB/s CPU   CPU s   peak RSS MiB
  h200     1024   this tree (load 14.7 -> 11.8)         17.4     61.58       225
  h200     1024   main (load 11.8 -> 12.2)              13.2     81.22       236
(steps 0..13,219,261, 102,494 records after thinning, median step 0.013672 s in both; grep -c
read 19-26 MB/s during them, 211-267 on a quiet machine.) 24 % less CPU on the bar at 1 GiB.
Left: the goal (>= 20 MB/s on 1 GiB by CPU) is not shown for the bar at this load (17.4); main
read 64 MiB in 7.57 CPU s at load 0.3 and 9.95-10.57 at load 15-20, so a quiet machine would
likely put this tree over it (61.58 / 1.3 = 47 s, ~23 MB/s), but that is an estimate, not a
measurement: rerun `--mib 1024 --shape h200` when the load average is under 2. What a redraw
still costs: thinning (~0.6 us: a Python pass over 200,000 records every 100,000 new ones),
the loop itself (~1.4 us), block preparation (~0.3 us) and reading the chunks (~0.5 us).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "training_logs"
DEV = REPO / "tests" / "data" / "training_logs" / "dev" / "cases"
TOTAL = 100_000_000


def _clock(seconds: float) -> str:
    """tqdm's elapsed time: mm:ss, h:mm:ss past an hour."""
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60:02d}:{s % 60:02d}"


def _stamp(seconds: float, ms: bool = False) -> str:
    text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    return f"{text},{int(seconds * 1000) % 1000:03d}" if ms else text


def _h200() -> tuple[list[str], list[str], str, Callable[[str, int], str]]:
    text = (SHARED / "h200" / "lightning-tqdm-crash-resume-h200.log").read_text(encoding="utf-8")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    bar = re.compile(r"(Epoch 0: .*\| )(\d+)/3376 \[([\d:]+)<")
    first = next(i for i, line in enumerate(lines) if bar.match(line))
    records = [line for line in lines[first:] if bar.match(line)]

    def rewrite(record: str, n: int) -> str:
        return bar.sub(lambda m: f"{m[1]}{n}/{TOTAL} [{_clock(n * 0.0136)}<", record, count=1)

    return lines[:first], records, "\r", rewrite


def _megatron() -> tuple[list[str], list[str], str, Callable[[str, int], str]]:
    lines = next(DEV.glob("A14_*.log")).read_text(encoding="utf-8").splitlines()
    it = re.compile(r" \[[\d :-]+\] iteration +\d+/ +\d+ \|")
    first = next(i for i, line in enumerate(lines) if it.match(line))
    records = [line for line in lines[first:] if it.match(line)]
    t0 = 1712372376.0  # 2024-04-06 02:59:36

    def rewrite(record: str, n: int) -> str:
        head = f" [{_stamp(t0 + n * 5.5)}] iteration {n:8d}/{TOTAL:9d} |"
        return it.sub(lambda _: head, record, count=1)

    return lines[:first], records, "\n", rewrite


def _titan() -> tuple[list[str], list[str], str, Callable[[str, int], str]]:
    lines = next((SHARED / "cases").glob("T12_*.log")).read_text(encoding="utf-8").splitlines()
    step = re.compile(r"(\[rank0\]:\[titan\] )[\d :,-]+( - root - INFO - step: +)\d+")
    first = next(i for i, line in enumerate(lines) if step.match(line))
    records = [line for line in lines[first:] if step.match(line)]
    t0 = 1750113050.322  # 2025-06-16 22:30:50,322

    def rewrite(record: str, n: int) -> str:
        return step.sub(lambda m: f"{m[1]}{_stamp(t0 + n * 1.4, ms=True)}{m[2]}{n}", record,
                        count=1)

    return lines[:first], records, "\n", rewrite


SHAPES = {"h200": (_h200, 1, "Epoch"), "megatron": (_megatron, 1, "iteration"),
          "titan": (_titan, 10, "step")}


def _records(shape: str) -> Iterator[str]:
    build, stride, _ = SHAPES[shape]
    head, records, sep, rewrite = build()
    yield "".join(line + "\n" for line in head)
    n = 0
    while True:
        for record in records:
            n += stride
            yield rewrite(record, n) + sep


def write_log(path: Path, shape: str, size: int) -> None:
    """A log of about `size` bytes of `shape` (see the module docstring)."""
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        batch: list[str] = []
        for text in _records(shape):
            batch.append(text)
            written += len(text.encode())
            if len(batch) >= 4096 or written >= size:
                handle.write("".join(batch))
                batch = []
            if written >= size:
                break
        handle.write("\n")


def _timed(command: list[str]) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s, peak RSS MiB, stdout) of one child process, its own rusage (wait4)."""
    began = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={**os.environ, "LC_ALL": "C"})
    out = child.stdout.read() if child.stdout else b""
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    wall = time.perf_counter() - began
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def measure(path: Path, word: str) -> dict:
    """Time the anchors and `gpuslo goodput` on `path`."""
    mb = path.stat().st_size / 1e6
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=False)  # page cache
    grep = _timed(["grep", "-c", word, str(path)])[0] if shutil.which("grep") else None
    wc = _timed(["wc", "-l", str(path)])[0] if shutil.which("wc") else None
    wall, cpu, rss, out = _timed([sys.executable, "-m", "gpuslo", "goodput", "--gpus", "8",
                                  "--format", "json", str(path)])
    doc = json.loads(out)
    return {"mb": round(mb, 1), "seconds": round(wall, 2), "mb_per_s": round(mb / wall, 1),
            "cpu_s": round(cpu, 2), "mb_per_cpu_s": round(mb / cpu, 1),
            "peak_rss_mib": round(rss, 1),
            "grep_mb_per_s": round(mb / grep, 1) if grep else None,
            "wc_mb_per_s": round(mb / wc, 1) if wc else None,
            "ratio_to_grep": round(wall / grep, 1) if grep else None,
            "steps": [doc["steps"]["first"], doc["steps"]["last"]],
            "progress_lines": doc["read"]["progress_lines"],
            "median_step_s": doc["step_time_s"]["median"], "status": doc["status"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, action="append",
                        help="log size in MiB (repeatable; default 1024)")
    parser.add_argument("--shape", choices=[*SHAPES, "all"], default="all")
    parser.add_argument("--keep", help="write the logs in this folder and keep them")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="gpuslo-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    try:
        for shape in SHAPES if args.shape == "all" else [args.shape]:
            for mib in args.mib or [1024]:
                path = folder / f"{shape}-{mib}.log"
                if not path.exists():
                    write_log(path, shape, mib << 20)
                figures = measure(path, SHAPES[shape][2])
                print(shape, mib, json.dumps(figures), flush=True)
                if not args.keep:
                    path.unlink()
        print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
