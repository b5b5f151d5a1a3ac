"""Benchmark: reading a big training log with the learning reader, against plain line iteration.

    python bench/training_log_read.py [--mib 1024] [--shape tqdm|megatron|titan|all] [--keep DIR]

Writes a log of about `--mib` MiB by repeating real lines with rising steps (the H200 Lightning
tqdm bar of ../shared/training_logs/h200, Megatron-DeepSpeed's iteration line of T01 with its
save lines, torchtitan's stamped step line of T12), then times, in the same run:
- the anchor: Python reading the same file line by line (`for line in f: pass`, binary, 1 MiB
  buffer) and `grep -c .` when grep is there;
- `gpuslo goodput` on it (`analyse_log`: learn on the head, then a prefilter and a match per line,
  progress thinned to a bounded number of records),
and prints MB/s, the ratio to the anchor and the peak resident memory (ru_maxrss) of the process.
Each shape runs in a child process so its peak memory is its own.

Figures (this machine: 2 cores shared by up to 8 sessions; run of 2026-12-04, `--mib 1024`):
  filled in by the commit that measured them (see the git log of this file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

_MEGATRON = (" iteration {step:8d}/ 115311 | consumed samples: {samples:12d} | consumed tokens: "
             "{tokens:13d} | elapsed time per iteration (s): {dt:.2f} | learning rate: 4.475E-05 | "
             "global batch size:  2048 | lm loss: 2.117073E+00 | grad norm: 0.150 | num zeros: 0.0 "
             "| number of skipped iterations:   0 | number of nan iterations:   0 | samples per "
             "second: 19.474 | TFLOPs: 149.10 |\n")
_TQDM = "Epoch 0:  42%|████▏     | {step}/{total} [{m:02d}:{s:02d}<00:25, 75.{r:02d}it/s]\r"
_TITAN = ("[rank0]:[titan] 2025-06-16 {h:02d}:{m:02d}:{s:02d},{ms:03d} - root - INFO - step: "
          "{step:5d}  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  "
          "mfu: 34.29%\n")


def _megatron(handle, size: int) -> None:
    step, written = 1, 0
    while written < size:
        text = _MEGATRON.format(step=step, samples=step * 2048, tokens=step * 4194304,
                                dt=105 + (step % 7) / 10)
        if step % 1000 == 0:
            text += (f"saving checkpoint at iteration {step:8d} to /ckpt\n  successfully saved "
                     f"checkpoint at iteration {step:8d} to /ckpt\ntime (ms) | save-checkpoint: "
                     "57514.53\n")
        handle.write(text)
        written += len(text)
        step += 1


def _tqdm(handle, size: int) -> None:
    step, written, total = 0, 0, 10**9
    while written < size:
        seconds = step * 0.0139
        text = _TQDM.format(step=step, total=total, m=int(seconds // 60) % 60,
                            s=int(seconds) % 60, r=step % 100)
        handle.write(text)
        written += len(text.encode())
        step += 1


def _titan(handle, size: int) -> None:
    step, written = 10, 0
    while written < size:
        t = step * 1.4
        text = _TITAN.format(h=int(t // 3600) % 24, m=int(t // 60) % 60, s=int(t) % 60,
                             ms=int(t * 1000) % 1000, step=step % 100000)
        handle.write(text)
        written += len(text)
        step += 10


SHAPES = {"megatron": _megatron, "tqdm": _tqdm, "titan": _titan}


def _anchor(path: str) -> float:
    began = time.perf_counter()
    with open(path, "rb", buffering=1 << 20) as handle:
        for _ in handle:
            pass
    return time.perf_counter() - began


def _grep(path: str) -> float | None:
    if shutil.which("grep") is None:
        return None
    began = time.perf_counter()
    subprocess.run(["grep", "-c", ".", path], capture_output=True, check=False)
    return time.perf_counter() - began


def measure(path: str) -> dict:
    """Time the anchor and the reader on `path` (run in a child: its own peak memory)."""
    from gpuslo.goodput.logs import analyse_log

    size = os.path.getsize(path) / 1e6
    anchor = _anchor(path)
    began = time.perf_counter()
    doc = analyse_log(path, gpus=8).document
    took = time.perf_counter() - began
    grep = _grep(path)
    return {"mb": round(size, 1), "seconds": round(took, 2), "mb_per_s": round(size / took, 1),
            "anchor_s": round(anchor, 2), "anchor_mb_per_s": round(size / anchor, 1),
            "ratio_to_anchor": round(took / anchor, 2),
            "grep_mb_per_s": round(size / grep, 1) if grep else None,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "steps": [doc["steps"]["first"], doc["steps"]["last"]],
            "progress_lines": doc["read"]["progress_lines"],
            "median_step_s": doc["step_time_s"]["median"], "status": doc["status"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--shape", choices=[*SHAPES, "all"], default="all")
    parser.add_argument("--keep", help="write the logs in this folder and keep them")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    folder = args.keep or tempfile.mkdtemp(prefix="gpuslo-bench-")
    try:
        for shape in SHAPES if args.shape == "all" else [args.shape]:
            path = os.path.join(folder, f"{shape}.log")
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as handle:
                    SHAPES[shape](handle, args.mib << 20)
            out = subprocess.run([sys.executable, __file__, "--measure", path],
                                 capture_output=True, text=True, check=True).stdout
            print(shape, out.strip())
            if not args.keep:
                os.unlink(path)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
