"""A FIFO, socket or device matched by `--job-log` is never opened for reading: it is counted
(`gpuslo_journal_errors_total{reason="not_regular_file"}`) and named once in the log, and every
other job is still read. `gpuslo goodput` and `report --training-log` name it as not a regular
file. A stop is prompt even while a reader is blocked in the kernel. Found by newcomer12
(tests/fixtures/newcomer12/README.md): `mkfifo DIR/slurm-9.out` beside a real `slurm-8.out` hung
`exporter --once --job-log 'DIR/*'` for ever, and SIGTERM did not stop a serving exporter."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from conftest import REPO, free_port

from gpuslo.cli import main
from gpuslo.exporter.jobs.logs import JobLogTailer

LOG = REPO / "tests" / "fixtures" / "newcomer12" / "hf_crash_restart.log"
ENV = {**os.environ, "PYTHONPATH": str(REPO),
       "GPUSLO_NVML_PATH": str(REPO / "gpuslo" / "data" / "nvml_replay"),
       "GPUSLO_FAKE_NVML": str(REPO / "gpuslo" / "data" / "nvml_replay" / "h200x1.json")}


def folder_with_a_fifo(tmp_path: Path) -> Path:
    folder = tmp_path / "joblog"
    folder.mkdir()
    (folder / "slurm-8.out").write_bytes(LOG.read_bytes())
    os.mkfifo(folder / "slurm-9.out")
    return folder


def polled(tailer: JobLogTailer, timeout_s: float = 20.0) -> bool:
    """Poll on a thread of its own; False when it did not return in time (blocked)."""
    worker = threading.Thread(target=tailer.poll, daemon=True)
    worker.start()
    worker.join(timeout_s)
    return not worker.is_alive()


def test_a_fifo_is_counted_and_the_other_jobs_are_read(tmp_path):
    folder = folder_with_a_fifo(tmp_path)
    tailer = JobLogTailer([str(folder / "*")], tmp_path / "state", default_gpus=8, settle_s=0)
    assert polled(tailer)
    assert tailer.errors["not_regular_file"] == 1
    assert tailer.facts("slurm-8") is not None  # the regular file was read
    assert polled(tailer) and tailer.errors["not_regular_file"] == 1  # counted once per file


def test_a_socket_is_counted_a_regular_file_is_not(tmp_path):
    """The negative: only what is not a regular file is refused."""
    folder = tmp_path / "joblog"
    folder.mkdir()
    (folder / "slurm-8.out").write_bytes(LOG.read_bytes())
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "slurm-7.out"))
    try:
        tailer = JobLogTailer([str(folder / "*")], tmp_path / "state", default_gpus=8)
        assert polled(tailer)
        assert tailer.errors["not_regular_file"] == 1
        tailer = JobLogTailer([str(folder / "slurm-8.out")], tmp_path / "state2",
                              default_gpus=8)
        assert polled(tailer) and set(tailer.errors.values()) == {0}
    finally:
        server.close()


def test_exporter_once_with_a_fifo_answers(tmp_path):
    folder = folder_with_a_fifo(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", "--job-log", str(folder / "*"),
         "--job-log-gpus", "8", "--state-dir", str(tmp_path / "state"), "--kernel-log",
         str(REPO / "tests" / "fixtures" / "newcomer12" / "rotate_after_kern.log")],
        env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'gpuslo_journal_errors_total{reason="not_regular_file"} 1.0' in done.stdout
    assert 'gpuslo_job_step{job="slurm-8"}' in done.stdout


def test_goodput_and_report_name_a_fifo(tmp_path, capsys):
    folder = folder_with_a_fifo(tmp_path)
    assert main(["goodput", str(folder / "slurm-9.out")]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "slurm-9.out: not a regular file (a FIFO): not read")
    os.unlink(folder / "slurm-8.out")
    assert main(["report", "--training-log", str(folder), "--gpus", "8", "--out",
                 str(tmp_path / "out")]) == 2
    assert "slurm-9.out: skipped: not a regular file" in capsys.readouterr().err


def test_a_pipe_from_a_process_is_still_read(tmp_path):
    """The negative: `gpuslo goodput <(cat LOG)` reads an anonymous pipe, never refused."""
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m gpuslo goodput <(cat {LOG})"],
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert "not a regular file" not in done.stderr and "steps 1.." in done.stdout, done.stderr


STUCK = textwrap.dedent("""
    import sys, threading
    from gpuslo.exporter.server import Exporter, serve
    from gpuslo.exporter.snapshot import NodeSnapshot

    class Stuck:  # a job-log reader blocked in the kernel for good
        errors = {}
        def poll(self):
            print("blocked", flush=True)
            threading.Event().wait()
        def jobs(self, n):
            return []

    exporter = Exporter(lambda: NodeSnapshot("n1"), None, job_logs=Stuck())
    sys.exit(serve(exporter, "127.0.0.1", int(sys.argv[1]), 1.0))
""")


def test_sigterm_stops_the_exporter_while_a_reader_is_blocked(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", STUCK, str(free_port())], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "blocked"
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        assert child.wait(20) == 0
        assert time.monotonic() - started < 10
    finally:
        child.kill()
        child.wait()
