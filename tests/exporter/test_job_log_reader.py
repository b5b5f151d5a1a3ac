"""`exporter --job-log` reads a container log with the same reader as `gpuslo goodput` reads a
file (issue 23 item 6): real training logs, wrapped as the kubelet keeps them and followed while
they grow, give the facts the plain file gives.

The wrapping is containerd's: one CRI record per `\\n`-ended message (a tqdm bar redrawn with
`\\r` stays one message), messages over `PIECE` characters split into `P` pieces and an `F`,
every third message on stderr. The runtime stamps a piece when it writes it, so its CRI time is
the time the log itself says that piece's last line was printed: the timeline `gpuslo goodput`
builds from the plain file (its stamps, else its step and elapsed times), from 2024-01-01 when
the log prints no date. The file then grows in chunks cut anywhere (mid-record, mid-character of
UTF-8), polled as it grows.
"""

from __future__ import annotations

import subprocess
import sys
import time
from bisect import bisect_left, bisect_right
from pathlib import Path

import pytest
import requests
from conftest import REPO, SHARED, free_port
from prometheus_client.parser import text_string_to_metric_families

from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.items import group_events
from gpuslo.goodput.logs.progress import build_records
from gpuslo.goodput.logs.read import ReadStats, physical_lines, read_lines
from gpuslo.goodput.logs.reader import LogReader
from gpuslo.goodput.logs.timeline import place

POD = "ml_trainer-0_8d4f6c2e-1b7a-4c3d-9e8f-0a1b2c3d4e5f"
JOB = "ml:trainer-0:trainer"
T0 = 1704067200.0  # 2024-01-01T00:00:00Z: where a log without a date starts
PIECE = 16 * 1024  # containerd splits a longer message into P pieces of this size
SHARED_LOGS = SHARED / "training_logs"
DEV = REPO / "tests" / "data" / "training_logs" / "dev" / "cases"
LOGS = [
    SHARED_LOGS / "h200" / "lightning-tqdm-crash-resume-h200.log",  # \r bar, crash, resume
    SHARED_LOGS / "h200" / "lightning-rich-bar-h200.log",  # one rich bar line
    *sorted(SHARED_LOGS.glob("cases/T0[348]_*.log")),  # Megatron save/requeue, ECC; nanoGPT
    *sorted(SHARED_LOGS.glob("cases/T1[0269]_*.log")),  # tqdm + NCCL hang, torchtitan, nnU-Net
    *sorted(SHARED_LOGS.glob("cases/T21_*.log")),  # Lightning restore, rich bar
    *sorted(DEV.glob("A0[3]_*.log")), *sorted(DEV.glob("A1[04]_*.log")),  # K/G values, levanter
    *sorted(DEV.glob("B0[29]_*.log")),  # mmdet doubled resume, YOLOX wrapped lines
]


def content_clock(path: Path) -> list[float]:
    """Unix seconds at which each physical line of the log was printed, as the log itself
    says: the end of the latest progress record at or before the line on `gpuslo goodput`'s
    timeline, T0-based when the log gives no date."""
    profiles = load_profiles()
    reader = LogReader(profiles)
    for line in read_lines(path, ReadStats()):
        reader.feed(line)
    parsed = reader.finish()
    epochs = [(o.seq, int(o.data["epoch"])) for o in parsed.observations if o.kind == "epoch"]
    records, _ = build_records(parsed.progress, epochs)
    timeline = place(group_events(parsed.observations, records, profiles.checkpoint_step))
    placed = sorted((item.line, item.t1) for item in timeline.placed if hasattr(item, "line"))
    base = T0 if timeline.relative else 0.0
    lines, times = [n for n, _ in placed], [t for _, t in placed]
    first = times[0] if times else 0.0
    return [base + (times[k - 1] if (k := bisect_right(lines, n)) else first)
            for n in range(1, reader.lines + 1)]


def cri_log(path: Path) -> bytes:
    """The log as containerd writes it (see the module docstring)."""
    text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    clock = content_clock(path)
    messages = text.split("\n")
    if messages and not messages[-1]:
        messages.pop()
    out, start = [], 0
    for i, message in enumerate(messages):
        stream = "stderr" if i % 3 == 2 else "stdout"
        breaks = [k for k, ch in enumerate(message) if ch == "\r"]
        count = len(physical_lines(message))
        pieces = [message[k:k + PIECE] for k in range(0, len(message), PIECE)] or [""]
        for k, piece in enumerate(pieces):
            last = k * PIECE + len(piece) - 1  # the piece's last character is in this line:
            line = start + min(bisect_left(breaks, last), count - 1)
            t = clock[min(line, len(clock) - 1)]
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))
            tag = "P" if k < len(pieces) - 1 else "F"
            out.append(f"{stamp}.{round((t % 1) * 1e9):09d}Z {stream} {tag} {piece}\n")
        start += count
    return "".join(out).encode("utf-8")


def followed(tmp_path: Path, data: bytes, polls: int = 7) -> dict:
    """The tailer's facts after following `data` written in `polls` chunks cut anywhere."""
    folder = tmp_path / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    tailer = JobLogTailer([str(tmp_path / "pods" / "*" / "*" / "*.log")], tmp_path / "state",
                          default_gpus=1)
    size = len(data) // polls + 13  # an odd size: cuts fall mid-record and mid-character
    with open(folder / "0.log", "ab") as f:
        for k in range(0, len(data), size):
            f.write(data[k:k + size])
            f.flush()
            tailer.poll()
    facts = tailer.facts(JOB)
    assert facts is not None
    return facts


def summary(doc: dict) -> dict:
    """What must agree: steps, step time, saves, restarts, interruptions, goodput status."""
    goodput = doc["goodput"] or {}
    return {
        "status": doc["status"], "steps": doc["steps"],
        "saves": [save["step"] for save in doc["checkpoint_saves"]],
        "restarts": doc["restarts"],
        "interruptions": [(i["after_step"], i["cause"], i["layer"]) for i in doc["interruptions"]],
        "goodput_status": goodput.get("status"), "has_goodput": goodput.get("goodput") is not None,
    }


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:40])
def test_a_followed_container_log_reads_as_the_plain_file(tmp_path: Path, path: Path):
    plain = analyse_log(path, gpus=1).document
    live = followed(tmp_path, cri_log(path))
    assert summary(live) == summary(plain)
    want, got = plain["step_time_s"]["median"], live["step_time_s"]["median"]
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, rel=0.02)


def test_the_exporter_serves_what_the_reader_read(tmp_path: Path):
    """The H200 Lightning run (crash at 2869, resumed from the checkpoint of step 2532, to
    3376) as a container log, through `gpuslo exporter --job-log` and its /metrics: the
    counters are the in-process tailer's, the committed step is the restored one (2532: no
    later save is printed), the last progress is the end of the log."""
    path = SHARED_LOGS / "h200" / "lightning-tqdm-crash-resume-h200.log"
    data = cri_log(path)
    folder = tmp_path / "var" / "log" / "pods" / POD / "trainer"
    folder.mkdir(parents=True)
    (folder / "0.log").write_bytes(data[: len(data) // 3 + 7])  # the job is still running
    tailer = JobLogTailer([str(folder / "*.log")], tmp_path / "mine", default_gpus=8)
    port = free_port()
    exporter = start_exporter(tmp_path, port)
    try:
        with open(folder / "0.log", "ab") as f:
            f.write(data[len(data) // 3 + 7:])
        tailer.poll()
        want = dict(tailer.jobs(5))[JOB]
        assert want.committed_step == 2532 and want.gpu_seconds["wasted_progress"] > 0

        def served() -> dict | None:
            got = metrics(port)
            done = got.get(("gpuslo_job_last_progress_timestamp_seconds", ""))
            return got if done == pytest.approx(want.last_progress_t) else None

        deadline = time.monotonic() + 60
        while (got := served()) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert got is not None, "the exporter never served the whole log's counters"
        assert got[("gpuslo_job_step", "")] == 2532
        for category, seconds in want.gpu_seconds.items():
            assert got[("gpuslo_job_gpu_seconds_total", category)] == pytest.approx(seconds)
    finally:
        exporter.kill()
        exporter.wait(10)


def start_exporter(tmp_path: Path, port: int) -> subprocess.Popen:
    """`gpuslo exporter` on loopback following tmp_path/var/log/pods, 8 GPUs a job."""
    (tmp_path / "kern.log").touch()
    return subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{port}",
         "--interval", "1", "--kernel-log", str(tmp_path / "kern.log"), "--path.sysfs",
         str(tmp_path), "--state-dir", str(tmp_path / "state"), "--job-log",
         str(tmp_path / "var" / "log" / "pods" / "*" / "*" / "*.log"), "--job-log-gpus", "8",
         "--job-log-settle", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def metrics(port: int) -> dict:
    """The job's samples on /metrics, by (name, category or layer)."""
    try:
        text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    except requests.RequestException:  # not listening yet
        return {}
    return {(s.name, s.labels.get("category") or s.labels.get("layer") or ""): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.labels.get("job") == JOB}
