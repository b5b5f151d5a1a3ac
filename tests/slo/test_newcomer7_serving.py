"""Newcomer 7 F2 and F8 (tests/data/newcomer7/FINDINGS.md), `gpuslo serving-log`.

F2: a vLLM engine printing `Running: 1 reqs` at 0.0 prompt and 0.0 generation tokens/s stats
line after stats line was booked `serving` although its own facts said `busy: false`. Lines
copied from vllm-project/vllm #17972 "[Bug]: vLLM server hangs and timeouts after initial
requests" (2025-05-11) and #6614 "No available block found in 60 second in shm" (comment
2024-07-29), as the newcomer saved them (newcomer7-inputs/serving/). Two or more such lines
reporting ≥ 20 s without a token are a stall: not_ready, `engine_stall`; one such line, a line
with tokens, or one with nothing running are not (the negatives).

F8: vLLM V1's `EngineCore encountered a fatal error.` (vllm-project/vllm #17965, comment
2025-05-20) is the engine core's death: a crash marker (`engine_crash`)."""

from __future__ import annotations

from gpuslo.slo.serving_logs import serving_log

V1 = ("DEBUG 05-11 {} [loggers.py:111] Engine 000: Avg prompt throughput: {} tokens/s, Avg "
      "generation throughput: {} tokens/s, Running: {} reqs, Waiting: 0 reqs, GPU KV cache usage: "
      "0.0%, Prefix cache hit rate: 0.0%\n")
HEALTH = ("DEBUG 05-11 18:07:16 [async_llm.py:467] Called check_health.\n"
          'INFO:     10.101.56.92:35104 - "GET /health HTTP/1.1" 200 OK\n'
          "DEBUG 05-11 18:07:16 [async_llm.py:467] Called check_health.\n"
          'INFO:     10.101.56.92:35102 - "GET /health HTTP/1.1" 200 OK\n')
HANG_17972 = HEALTH + "".join(V1.format(t, "0.0", "0.0", 1)
                              for t in ("18:07:24", "18:07:34", "18:07:44", "18:07:54",
                                        "18:08:04"))
V0 = ("INFO 07-28 {} metrics.py:295] Avg prompt throughput: 0.0 tokens/s, Avg generation "
      "throughput: 0.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache "
      "usage: 9.1%, CPU KV cache usage: 0.0%.\n")
STUCK_6614 = V0.format("21:00:40") + V0.format("21:00:50")


def read(tmp_path, text: str) -> dict:
    path = tmp_path / "vllm.log"
    path.write_text(text)
    return serving_log(path, gpus=8)


def test_f2_a_hung_engine_is_not_serving(tmp_path):
    doc = read(tmp_path, HANG_17972)
    assert doc["seconds"]["serving"] == 0.0
    assert doc["seconds"]["not_ready"] == 48.0  # 18:07:16 .. 18:08:04, the whole log
    assert [(e["category"], e["reason"]) for e in doc["timeline"]] == [
        ("not_ready", "engine_stall")]
    assert doc["lost_gpu_hours_by_layer"]["training"] == round(48 * 8 / 3600, 6)
    assert doc["facts"]["stalls"] == [{"from_s": 0.0, "to_s": 48.0, "line": 5}]
    assert any("no token processed for 50 s" in n for n in doc["notes"])


def test_f2_two_stalled_v0_lines_report_twenty_seconds(tmp_path):
    doc = read(tmp_path, STUCK_6614)  # each line reports the 10 s before it
    assert (doc["seconds"]["serving"], doc["seconds"]["not_ready"]) == (0.0, 10.0)


def test_f2_a_stall_that_ends_serves_again(tmp_path):
    doc = read(tmp_path, HANG_17972 + V1.format("18:08:14", "120.0", "35.5", 1))
    assert doc["seconds"]["not_ready"] == 48.0 and doc["seconds"]["serving"] == 10.0


def test_f2_negative_one_zero_line_tokens_or_nothing_running_is_no_stall(tmp_path):
    one = read(tmp_path, HEALTH + V1.format("18:07:24", "0.0", "0.0", 1))
    assert one["facts"]["stalls"] == [] and one["seconds"]["not_ready"] == 0.0
    tokens = read(tmp_path, "".join(V1.format(t, "0.0", "5.4", 1)
                                    for t in ("18:07:24", "18:07:34", "18:07:44")))
    assert tokens["seconds"]["serving"] == 20.0 and tokens["facts"]["stalls"] == []
    idle = read(tmp_path, "".join(V1.format(t, "0.0", "0.0", 0)
                                  for t in ("18:07:24", "18:07:34", "18:07:44")))
    assert idle["seconds"]["idle_capacity"] == 20.0 and idle["facts"]["stalls"] == []


DEAD_17965 = ("ERROR 05-16 03:38:10 [core.py:398] EngineCore encountered a fatal error.\n"
              "ERROR 05-16 03:38:10 [core.py:398] Traceback (most recent call last):\n")


def test_f8_enginecore_fatal_error_is_a_crash(tmp_path):
    doc = read(tmp_path, V1.format("03:37:50", "10.0", "20.0", 1).replace("05-11", "05-16")
               + DEAD_17965)
    assert doc["markers"]["crash"] == 1
    assert doc["facts"]["crashes"] == [{"at_s": 20.0, "reason": "engine_crash", "line": 2}]


def test_f8_negative_a_request_that_quotes_the_words_is_no_crash(tmp_path):
    doc = read(tmp_path, "INFO 05-16 03:38:10 [logger.py:39] Received request cmpl-1: prompt: "
               "'why does EngineCore encountered a fatal error appear?'\n")
    assert doc["markers"]["crash"] == 0


def test_f17_the_ready_note_names_when_the_booked_ready_begins(tmp_path):
    """newcomer7 F17: #17972's lines with tokens made (a served window): the replica is ready
    from the start of the 10 s window the first stats line (18:07:24, line 5) reports on, cut
    at the log's first stamp (18:07:16): 0 s, and the note says so, not `at line 5` alone."""
    doc = read(tmp_path, HEALTH + "".join(V1.format(t, "12.0", "35.2", 1) for t in (
        "18:07:24", "18:07:34", "18:07:44")))
    assert doc["facts"]["ready_s"] == [0.0] and doc["seconds"]["serving"] == 28.0
    (note,) = [n for n in doc["notes"] if n.startswith("no ready marker")]
    assert note.startswith("no ready marker: ready from 0 s into the log, the start of the 10 s "
                           "stats window the throughput line at line 5 reports on")


def test_f17_silence_long_before_the_first_stats_window_is_not_serving(tmp_path):
    """Negative: /health lines 118 s before the first stats line's window are not that window:
    `other` (no_data), and ready from 118 s, as the note says."""
    early = HEALTH.replace("18:07:16", "18:05:16")
    doc = read(tmp_path, early + "".join(V1.format(t, "12.0", "35.2", 1) for t in (
        "18:07:24", "18:07:34", "18:07:44")))
    assert doc["facts"]["ready_s"] == [118.0]
    assert doc["seconds"]["serving"] == 30.0 and doc["seconds"]["other"] == 118.0
    assert any(n.startswith("no ready marker: ready from 118 s into the log") for n in doc["notes"])
