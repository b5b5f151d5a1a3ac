"""bench/attack.py's scenarios on the files a user hands gpuslo (issue 25 #3 and #5): `config`
(every option naming a config file x every bad file, and fuzzed policies and specs),
`bad_files` (every other file option x a directory, an empty, a binary, a Latin-1 and a missing
path) and `training_clock` (training logs whose clock goes back). Each returns (target met,
figures); the targets are in bench/attack.py's docstring."""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

from attack_common import REPO, one_line_error, run_cli

SPEC = (b"objectives:\n  usable_gpu: 0.95\n  job_goodput: 0.9\nperiod_days: 28\n"
        b"price_per_gpu_hour: 2.5\nretired_nodes: [a, b]\nslowdown_threshold: 1.2\n")


# --- config -------------------------------------------------------------------------------------


def config(work: Path, fuzz: int) -> tuple[bool, str]:
    from test_config_file import bad_files, options

    files, commands = bad_files(work / "bad"), options(work)
    cases = failed = slowest = 0
    for argv in commands.values():
        for path, _ in files.values():
            began = time.monotonic()
            code, _, err = run_cli([str(path) if a == "FILE" else a for a in argv])
            slowest = max(slowest, time.monotonic() - began)
            cases += 1
            failed += not (one_line_error(code, err) and str(path) in err)
    rng = random.Random(25)
    texts = {"--policy": (REPO / "gpuslo" / "data" / "xid_policy.yaml").read_bytes(),
             "--slo": SPEC}
    fuzzed = raised = 0
    kernel_log = commands["inspect --policy"][1]
    for flag, text in texts.items():
        for n in range(fuzz):
            data = bytearray(text)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.choice(b"[]{}:-&*!|>'\"\n \t\x00\xff#")
            path = work / f"fuzz-{n}.yaml"
            path.write_bytes(bytes(data))
            argv = (["inspect", kernel_log, "--policy", str(path)] if flag == "--policy" else
                    ["rules", "--slo", str(path), "--out", str(work / "rules")])
            code, _, err = run_cli(argv)
            fuzzed += 1
            raised += code not in (0, 1, 2) or "Traceback" in err or (code == 2 and
                                                                       err.count("\n") != 1)
    figures = (f"bad files: {cases - failed}/{cases} (option x file) one-line exit 2 naming "
               f"the file, slowest {slowest:.2f} s; fuzz: {raised}/{fuzzed} mutated files "
               "raised or said more than one line")
    return not failed and not raised, figures


def bad_files(work: Path) -> tuple[bool, str]:
    """Issue 25 #3: every file option of tests/test_bad_files.py a command needs, and every
    output directory, x a directory, an empty, a binary, a Latin-1 and a missing path."""
    from test_bad_files import ERRORS, KINDS, OUTPUTS, bad_input

    cert, key = work / "c.pem", work / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    runs = [(argv, kind) for argv in ERRORS.values() for kind in KINDS]
    runs += [(argv, kind) for argv, valid, slow in OUTPUTS.values() for kind in KINDS
             if kind not in valid + slow]
    failed = []
    for n, (template, kind) in enumerate(runs):
        root = work / f"bad-{n}"
        root.mkdir()
        path = bad_input(root, kind)
        names = {"FILE": str(path), "OUT": str(root / "out"), "CERT": str(cert), "KEY": str(key)}
        argv = [names.get(a, a) for a in template]
        argv += ["--state-dir", str(root / "s")] if argv[0] in ("check", "exporter") \
            and "--state-dir" not in argv else []
        code, _, err = run_cli(argv)
        if not (one_line_error(code, err) and str(path) in err):
            failed.append(f"{argv[0]} {template[template.index('FILE') - 1]} {kind}")
    said = f"; failed: {', '.join(failed[:8])}" if failed else ""
    return not failed, (f"{len(runs) - len(failed)}/{len(runs)} (option x kind) one-line exit "
                        f"2 naming the path{said}")


# --- training clock (issue 25 #5, fixed by the training-log issue) ------------------------------


def _clock_log(path: Path, stamp) -> None:
    """A torchtitan log of 200 steps, step N stamped `stamp(N)` (a datetime)."""
    start = stamp(0)
    lines = [f"{start:%Y-%m-%d %H:%M:%S},000 - root - INFO - Starting job: clock"]
    lines += [f"{stamp(step):%Y-%m-%d %H:%M:%S},000 - root - INFO - step: {step:2d}  loss:  "
              "1.0000  memory: 1.00GiB(1.00%)  tps: 1,000  tflops: 1.0  mfu: 1.00%"
              for step in range(1, 201)]
    path.write_text("\n".join(lines) + "\n")


def training_clock(work: Path) -> tuple[bool, str]:
    """Issue 25 #5's reproducers: a torchtitan log of 200 steps of 10 s on 8 GPUs (16,000 GPU-s;
    15,920 from the first step's stamp to the last) whose clock goes back one day at step 100
    (before: half the GPU-seconds, status ok), and one whose stamps run backwards (before: 3.6
    GPU-s for a 2,000 s run). Target: the day-back log accounts 98-100 % of 16,000 GPU-s with a
    note naming the line; the reversed one accounts that too or says its goodput is unknown
    with a reason — never a made-up figure."""
    import datetime as dt

    start = dt.datetime(2025, 1, 1)
    cases = {"day back": lambda n: start + dt.timedelta(seconds=10 * n, days=-(n > 100)),
             "reversed": lambda n: start + dt.timedelta(seconds=10 * (201 - n) if n else 0)}
    texts, ok = [], True
    for name, stamp in cases.items():
        log = work / f"clock-{name.replace(' ', '-')}.log"
        _clock_log(log, stamp)
        code, out, err = run_cli(["goodput", str(log), "--gpus", "8", "--format", "json"])
        try:
            said = json.loads(out)
            block = said["goodput"]
            accounted, status = float(block["accounted_gpu_s"]), block["status"]
            noted = any("clock goes back" in note for note in said["notes"])
        except (ValueError, KeyError, TypeError):
            texts.append(f"{name}: exit {code}: {' '.join((err or out).split())[:200]}")
            ok = False
            continue
        right = 0.98 * 16_000 <= accounted <= 16_000
        ok &= code in (0, 1) and noted and (right or (name == "reversed" and status == "unknown"
                                                      and bool(block.get("reason"))))
        texts.append(f"{name}: exit {code}, {accounted:,.0f} GPU-s accounted, goodput "
                     f"{status}, clock noted {'yes' if noted else 'NO'}")
    return ok, "; ".join(texts) + " (true: 16,000 GPU-s)"
