"""The exporter reads training progress from container logs (`--job-log`): the CRI format, the
kubelet's /var/log/pods layout and rotation, and restarts that neither lose nor double a line.

The job: a Megatron-DeepSpeed 13B container that saves a checkpoint and exits to be requeued
(../shared/training_logs T03), restarted by the kubelet (restart 1: `1.log`) to crash on an
uncorrectable ECC error (T04). Every line goes through containerd's CRI format, long lines split
into `P` partials, stdout and stderr interleaved, one CRI line every 10 s from 2024-01-01.
"""

from __future__ import annotations

import calendar
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from conftest import SHARED, free_port
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from gpuslo.exporter.jobs.log_reading import restart_line
from gpuslo.exporter.jobs.logs import (
    JobLogTailer,
    decode,
    file_order,
    job_of,
    recompute,
)
from gpuslo.goodput.logs.cri_log import (
    CriJoiner,
    CriRecord,
    parse_cri_line,
    pod_log_identity,
)
from gpuslo.goodput.logs.read import physical_lines

CASES = SHARED / "training_logs" / "cases"
T03 = next(CASES.glob("T03_*.log"))
T04 = next(CASES.glob("T04_*.log"))
POD = "ml_llama-13b-0_8d4f6c2e-1b7a-4c3d-9e8f-0a1b2c3d4e5f"
JOB = "ml:llama-13b-0:trainer"
T0 = 1704067200.0  # 2024-01-01T00:00:00Z
T03_START = 1628384400.0  # 2021-08-08T01:00:00Z, T03's first printed time is 01:00:44
T04_START = 1628755200.0  # 2021-08-12T08:00:00Z, T04 prints 08:19:28 near its end


def cri_lines(text: str, start: float, split_at: int = 60) -> list[str]:
    """`text` as containerd writes it: one record per line, long lines as P…F pieces, every
    third line on stderr; the CRI time is the line's own time where it prints one (the runtime
    stamps a line when it is written), else 10 s after the previous line."""
    out = []
    t = start - 10
    for i, line in enumerate(text.splitlines()):
        own = re.search(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)", line)
        printed = calendar.timegm(time.strptime(" ".join(own.groups()), "%Y-%m-%d %H:%M:%S")
                                  ) if own else None  # fmt: skip
        t = printed if printed is not None and printed >= t else t + 10
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
        prefix = f"{stamp}.{i:09d}Z {'stderr' if i % 3 == 2 else 'stdout'}"
        pieces = [line[k:k + split_at] for k in range(0, len(line), split_at)] or [""]
        out += [f"{prefix} P {p}" for p in pieces[:-1]] + [f"{prefix} F {pieces[-1]}"]
    return out


# --- the format -------------------------------------------------------------------------------
def test_cri_records_times_streams_and_tags():
    record = parse_cri_line("2024-01-01T00:00:01.5Z stderr F boom")
    assert record == CriRecord(T0 + 1.5, "stderr", False, "boom")
    assert parse_cri_line("2024-01-01T01:00:00+01:00 stdout P a").t == T0
    assert parse_cri_line("2024-01-01T00:00:00.123456789Z stdout F ").message == ""
    assert parse_cri_line("2024-01-01T00:00:00Z stdout F:x y").message == "y"
    assert parse_cri_line(" iteration 10/ 100 |") is None
    assert parse_cri_line("2024-13-45T00:00:00Z stdout F x") is None


def test_partials_join_per_stream_and_redraws_split():
    joiner = CriJoiner()
    lines = ["2024-01-01T00:00:00Z stdout P iteration   ", "2024-01-01T00:00:01Z stderr F warn",
             "2024-01-01T00:00:02Z stdout F 10/ 100 |", "plain line\r redrawn"]
    decoded = [out for raw in lines for out in decode(raw, joiner)]
    # a joined line is dated by the piece it ends in: it was printed when its end was written
    assert decoded == [(T0 + 1, "warn"), (T0 + 2, "iteration   10/ 100 |"), (None, "plain line"),
                       (None, " redrawn")]
    # a bar redrawn with \r and no newline: one message in 16 KiB pieces; each redraw takes the
    # time of the piece its last character came in
    bar = "".join(f" {n}%|█| {n}/100\r" for n in range(100))
    pieces = [bar[k:k + 500] for k in range(0, len(bar), 500)]
    raw = [f"2024-01-01T00:00:0{k}Z stdout {'P' if k < len(pieces) - 1 else 'F'} {p}"
           for k, p in enumerate(pieces)]
    got = [out for line in raw for out in decode(line, joiner)]
    assert [text for _, text in got] == physical_lines(bar)
    ends = [bar.index(f" {n}/100\r") + len(f" {n}/100") for n in range(100)]
    assert [t for t, _ in got] == [T0 + min(end // 500, len(pieces) - 1) for end in ends]
    assert physical_lines(" 10%|█| 1/10\r 20%|██| 2/10\r") == [" 10%|█| 1/10", " 20%|██| 2/10"]


def test_pod_log_paths_name_the_job():
    identity = pod_log_identity(f"/var/log/pods/{POD}/trainer/0.log")
    assert (identity.namespace, identity.pod, identity.container) == ("ml", "llama-13b-0",
                                                                      "trainer")
    assert job_of(f"/var/log/pods/{POD}/trainer/3.log")[0] == JOB
    assert job_of("/shared/logs/slurm-4242.out") == ("slurm-4242", None)
    names = ["1.log", "0.log", "0.log.20240101-000500", "0.log.20240101-000100"]
    assert sorted(names, key=file_order) == ["0.log.20240101-000100", "0.log.20240101-000500",
                                             "0.log", "1.log"]


@given(st.text(max_size=300))
def test_any_line_decodes_without_raising(line: str):
    decode(line, CriJoiner())


# --- restart-safety, in process ---------------------------------------------------------------
def write(path: Path, lines: list[str], tail: str = "") -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines) + tail)


def expected_lines(folder: Path) -> list:
    """A container's decoded lines in reading order, with `restart_line(n)` before the first
    line of each restart count n (`<n>.log`) above the first one read."""
    joiner = CriJoiner()
    out: list = []
    seen = None
    for path in sorted(folder.iterdir(), key=lambda p: file_order(p.name)):
        count = file_order(path.name)[0]
        lines = [line for raw in path.read_text(encoding="utf-8").splitlines()
                 for line in decode(raw, joiner)]
        if lines and seen is not None and count > seen:
            out.append(restart_line(count, lines[0][0]))
        if lines:
            seen = count if seen is None else max(seen, count)
        out += lines
    return out


# --- a container restart: the kubelet's <n+1>.log --------------------------------------------
T08 = next(CASES.glob("T08_*.log")).read_text().splitlines()  # nanoGPT, checkpoint at 3000
T08_START = 1679477430.0  # 2023-03-22T09:30:30Z


def _printed(line: str) -> float:
    found = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", line)
    return float(calendar.timegm(time.strptime(found.group(1), "%Y-%m-%d %H:%M:%S")))


def _shifted(lines: list[str], seconds: float) -> list[str]:
    """`lines` with every printed time `seconds` later (the restarted container's run)."""
    out = []
    for line in lines:
        found = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", line)
        if found:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(_printed(line) + seconds))
            line = line.replace(found.group(0), stamp)
        out.append(line)
    return out


def _iteration(step: int) -> int:
    return next(k for k, line in enumerate(T08) if f"iter {step}:" in line)


def restarted_container(folder: Path, cut: int, resume: int) -> tuple[float, float]:
    """0.log: T08 up to `iter {cut}` (the container is killed mid-training: no error line);
    1.log: the restarted container, 900 s later, from `iter {resume}` on. Returns (time of the
    last step 0.log prints, time of 1.log's first line)."""
    folder.mkdir(parents=True, exist_ok=True)
    zero = T08[: _iteration(cut) + 1]
    one = _shifted(T08[_iteration(resume):], 900)
    write(folder / "0.log", cri_lines("\n".join(zero), T08_START))
    write(folder / "1.log", cri_lines("\n".join(one), T08_START + 900))
    return _printed(zero[-1]), _printed(one[0])


def _tailed_once(tmp_path):
    """The job's counters after one poll of a fresh tailer over tmp_path/pods."""
    tailer = JobLogTailer([str(tmp_path / "pods" / "*" / "*" / "*.log")], tmp_path / "state",
                          default_gpus=8)
    tailer.poll()
    return dict(tailer.jobs(5))[JOB]


def test_a_new_restart_count_file_is_a_restart_with_wasted_progress_and_recovery(tmp_path):
    # 0.log ends at step 3050, after the checkpoint of step 3000 (its save line is dated 10 s
    # after the printed 09:32:42 eval line: 09:32:52); 1.log resumes from it 900 s later.
    folder = tmp_path / "pods" / POD / "trainer"
    last, first = restarted_container(folder, 3050, 3000)
    got = _tailed_once(tmp_path)
    saved = calendar.timegm(time.strptime("2023-03-22 09:32:52", "%Y-%m-%d %H:%M:%S"))
    # steps 3001–3050 were not committed: lost; the restart gap: recovery
    assert got.gpu_seconds["wasted_progress"] == pytest.approx(8 * (last - saved))
    assert got.gpu_seconds["recovery"] == pytest.approx(8 * (first - last))
    assert got.interruptions["observability"] == 1  # the old log printed no cause
    assert got.gpu_seconds == recompute(expected_lines(folder), JOB, 8).gpu_seconds


def test_a_restart_that_loses_no_step_is_recovery_not_a_slowdown(tmp_path):
    # killed right after step 3000 was saved, resumed at 3010: without the restart the 900 s gap
    # would read as one slow interval
    folder = tmp_path / "pods" / POD / "trainer"
    last, first = restarted_container(folder, 3000, 3010)
    got = _tailed_once(tmp_path)
    assert got.gpu_seconds["slowdown"] == 0 and got.gpu_seconds["wasted_progress"] == 0
    assert got.gpu_seconds["recovery"] > 0 and got.interruptions["observability"] == 1
    lines = [(None, text) for _, text in expected_lines(folder)]
    without = recompute([line for line in lines if "container restarted" not in line[1]],
                        JOB, 8)
    # what the log alone would have said: the gap its step times do not cover is no progress
    # (`other`, since the stamps jump past the printed step times), but no recovery either
    assert without.gpu_seconds["recovery"] == 0
    assert without.gpu_seconds["slowdown"] + without.gpu_seconds["other"] > 0


def test_a_restart_is_counted_once_across_exporter_restarts(tmp_path):
    folder = tmp_path / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    zero = T08[: _iteration(3050) + 1]
    write(folder / "0.log", cri_lines("\n".join(zero), T08_START))
    pattern = str(tmp_path / "pods" / "*" / "*" / "*.log")
    first = JobLogTailer([pattern], tmp_path / "state", default_gpus=8)
    first.poll()
    cursor = tmp_path / "state" / "job_logs" / f"{JOB}.cursor.json"
    before = cursor.read_bytes()
    write(folder / "1.log", cri_lines("\n".join(_shifted(T08[_iteration(3000):], 900)),
                                      T08_START + 900))
    first.poll()
    spool = tmp_path / "state" / "job_logs" / f"{JOB}.lines"
    assert spool.read_text().count("container restarted") == 1
    cursor.write_bytes(before)  # killed after the restart's lines were appended, before the cursor
    for _ in range(2):  # a restarted exporter replays its state: the restart is not added again
        again = JobLogTailer([pattern], tmp_path / "state", default_gpus=8)
        again.poll()
        again.poll()
        assert spool.read_text().count("container restarted") == 1
        assert dict(again.jobs(5))[JOB].gpu_seconds == recompute(
            expected_lines(folder), JOB, 8).gpu_seconds
        assert dict(again.jobs(5))[JOB].interruptions["observability"] == 1


def test_lines_after_the_last_cursor_are_read_again_not_twice(tmp_path: Path):
    folder = tmp_path / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    write(folder / "0.log", cri_lines(T03.read_text(), T03_START))
    pattern = str(tmp_path / "pods" / "*" / "*" / "*.log")
    first = JobLogTailer([pattern], tmp_path / "state", default_gpus=8)
    first.poll()
    state = tmp_path / "state" / "job_logs"
    with open(state / f"{JOB}.lines", "ab") as f:  # a crash after the append, before the cursor
        f.write(b"1704067200.0\tsaving checkpoint at iteration   99999 to /x\n")
    again = JobLogTailer([pattern], tmp_path / "state", default_gpus=8)
    again.poll()
    want = recompute(expected_lines(folder), JOB, 8)
    assert dict(again.jobs(5))[JOB].gpu_seconds == want.gpu_seconds
    assert want.gpu_seconds["productive"] > 0 and want.gpu_seconds["checkpoint_save"] > 0


def test_a_job_without_a_gpu_count_is_read_but_not_exposed(tmp_path: Path):
    folder = tmp_path / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    write(folder / "0.log", cri_lines(T03.read_text(), T03_START))
    known: dict = {}
    tailer = JobLogTailer([str(tmp_path / "pods" / "*" / "*" / "*.log")], tmp_path / "s",
                          gpus_for=lambda identity: known.get(identity.pod))
    tailer.poll()
    assert tailer.jobs(5) == []
    known["llama-13b-0"] = 4  # the kubelet now names the container's GPUs
    tailer.poll()
    assert dict(tailer.jobs(5))[JOB].gpu_seconds == recompute(
        expected_lines(folder), JOB, 4).gpu_seconds
    (folder / "0.log").unlink()
    folder.rmdir()
    tailer.poll()  # the pod is gone: the job and its state go too
    assert tailer.jobs(5) == [] and not list((tmp_path / "s" / "job_logs").iterdir())


# --- the exporter, killed and restarted -------------------------------------------------------
def scrape(port: int) -> dict:
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    out: dict = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("job") == JOB:
                out[(s.name, s.labels.get("category") or s.labels.get("layer") or "")] = s.value
    return out


def start(tmp_path: Path, port: int) -> subprocess.Popen:
    (tmp_path / "kern.log").touch()
    return subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{port}",
         "--interval", "1", "--kernel-log", str(tmp_path / "kern.log"), "--path.sysfs",
         str(tmp_path), "--state-dir", str(tmp_path / "state"), "--job-log",
         str(tmp_path / "var" / "log" / "pods" / "*" / "*" / "*.log"), "--job-log-gpus", "8",
         "--job-log-settle", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = condition()
        except requests.RequestException:
            value = None
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def expected_metrics(folder: Path) -> dict:
    want = recompute(expected_lines(folder), JOB, 8)
    out = {("gpuslo_job_gpu_seconds_total", c): v for c, v in want.gpu_seconds.items()}
    out.update({("gpuslo_job_interruptions_total", k): v for k, v in want.interruptions.items()})
    return out


def job_metrics(port: int) -> dict:
    return {k: v for k, v in scrape(port).items()
            if k[0] in ("gpuslo_job_gpu_seconds_total", "gpuslo_job_interruptions_total")}


def test_exporter_killed_and_restarted_counts_every_line_once(tmp_path: Path):
    folder = tmp_path / "var" / "log" / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    first, second = cri_lines(T03.read_text(), T03_START), cri_lines(T04.read_text(), T04_START)
    half = len(first) // 2
    write(folder / "0.log", first[:half], tail=first[half][:25])  # a line still being written
    port = free_port()
    exporter = start(tmp_path, port)
    try:
        wait_for(lambda: job_metrics(port), 60, "the job from the first half of 0.log")
        # the kubelet rotates 0.log; the runtime finishes the line in the new file's place
        os.rename(folder / "0.log", folder / "0.log.20240101-000500")
        write(folder / "0.log.20240101-000500", [first[half][25:]])
        write(folder / "0.log", first[half + 1:])
        time.sleep(1.5)
        exporter.send_signal(signal.SIGKILL)  # mid-stream: no clean shutdown
        exporter.wait(10)
        write(folder / "1.log", second[:10])  # the container restarts while the exporter is down
        exporter = start(tmp_path, port)
        write(folder / "1.log", second[10:])
        want = expected_metrics(folder)
        got = wait_for(lambda: (lambda m: m if m == want else None)(job_metrics(port)), 60,
                       f"the counters to equal the recomputation {want}")
        assert got[("gpuslo_job_gpu_seconds_total", "productive")] > 0
        assert got[("gpuslo_job_gpu_seconds_total", "wasted_progress")] > 0
        assert got[("gpuslo_job_interruptions_total", "node")] == 1  # the ECC error
        time.sleep(2.5)  # more polls: nothing is added twice
        assert job_metrics(port) == want
        lines = (tmp_path / "state" / "job_logs" / f"{JOB}.lines").read_text().splitlines()
        assert len(lines) == len(expected_lines(folder))
        # 1.log appeared while the exporter was down: one container restart, counted once
        assert sum("gpuslo: container restarted (restart count 1)" in line
                   for line in lines) == 1
    finally:
        exporter.kill()
        exporter.wait(10)
