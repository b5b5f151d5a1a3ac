"""The silence after an idle stats line is idle (newcomer3 #5): vLLM prints its stats line
every interval while requests run and stops once idle, so 27 minutes between `Running: 0 reqs`
and the next `Running: 8 reqs` were idle, not serving. The line after the silence served in its
own stats interval only (the shortest gap after a busy line)."""

from __future__ import annotations

from gpuslo.slo.serving_logs import serving_log

HEAD = ("INFO 11-03 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
        "INFO 11-03 10:01:30 [gpu_model_runner.py:1347] Model loading took 15.5 GiB and 80.1 "
        "seconds\n"
        "INFO 11-03 10:02:00 [api_server.py:1090] Starting vLLM API server on "
        "http://0.0.0.0:8000\n")
STATS = ("INFO 11-03 {} [loggers.py:111] Engine 000: Avg prompt throughput: {} tokens/s, Avg "
         "generation throughput: {} tokens/s, Running: {} reqs, Waiting: {} reqs, GPU KV cache "
         "usage: 5.0%, Prefix cache hit rate: 0.0%\n")
BUSY = STATS.format("10:02:10", "100.0", "500.0", 4, 0)
IDLE = STATS.format("10:02:20", "0.0", "0.0", 0, 0)
LATER = STATS.format("10:30:00", "100.0", "500.0", 8, 2)
OOM = ("ERROR 11-03 10:30:05 [core.py:400] torch.OutOfMemoryError: CUDA out of memory. Tried "
       "to allocate 1.00 GiB.\n")


def log(tmp_path, text: str):
    path = tmp_path / "vllm.log"
    path.write_text(text)
    return serving_log(path, gpus=4)


def test_the_silence_after_an_idle_line_is_idle(tmp_path):
    doc = log(tmp_path, HEAD + BUSY + IDLE + LATER + OOM)
    # 10:02:20 .. 10:29:50 idle; the last line's own 10 s interval and the 5 s to the OOM served
    assert doc["seconds"]["idle_capacity"] == 10.0 + 1650.0
    assert doc["seconds"]["serving"] == 10.0 + 15.0


def test_a_silence_after_an_idle_line_until_the_log_ends_is_idle(tmp_path):
    doc = log(tmp_path, HEAD + BUSY + IDLE + "INFO 11-03 11:02:20 [api_server.py:1] GET /health\n")
    assert doc["seconds"]["idle_capacity"] == 10.0 + 3600.0


def test_a_silence_after_a_busy_line_is_still_serving(tmp_path):
    """The negative: a gap after a line with requests running is not read as idle."""
    busy_again = STATS.format("10:30:00", "100.0", "500.0", 8, 2)
    doc = log(tmp_path, HEAD + BUSY + busy_again + OOM)
    assert doc["seconds"]["idle_capacity"] == 0.0
    assert doc["seconds"]["serving"] == 1685.0  # ready at 10:02:00 to the OOM at 10:30:05
