"""`gpuslo serving-log` (issue 29, item 3): a replica's serving timeline from its engine log.

Every real excerpt in tests/data/serving gives the facts written by hand in
tests/data/serving/logs/expected.yaml; each marker family is then varied by hand (one engine's
wording per line), and the negatives (a "ready" inside a request, a training loss line, no
stamps) say `unknown` with the reason instead of a made-up timeline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from gpuslo.cli import main
from gpuslo.slo.serving_logs import serving_log

DATA = Path(__file__).resolve().parent.parent / "data" / "serving"
VARIANTS = DATA / "variants"
FAMILIES = yaml.safe_load((VARIANTS / "families.yaml").read_text())
EXPECTED = yaml.safe_load((DATA / "logs" / "expected.yaml").read_text())
def approx_h(value: float):
    """GPU-hours as printed: six decimals."""
    return pytest.approx(value, abs=1e-6)


CATEGORIES = ("serving", "idle_capacity", "model_loading", "not_ready", "draining", "other")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_excerpt_gives_its_hand_written_facts(name):
    want = EXPECTED[name]
    doc = serving_log(DATA / name)
    assert doc["engine"] == want["engine"], doc
    assert doc["status"] == want["status"], (doc["reason"], doc["facts"])
    facts = doc["facts"]
    if facts is None:  # nothing timed: only the status and its reason
        assert doc["reason"] and not want.get("seconds") and doc["seconds"] is None
        return
    assert facts["loading_began_s"] == want.get("loading_began_s", [])
    assert facts["ready_s"] == want.get("ready_s", [])
    assert [[c["at_s"], c["reason"]] for c in facts["crashes"]] == want.get("crashes", [])
    assert [[t["at_s"], t["running"], t["waiting"]] for t in facts["throughput"]] == want.get(
        "throughput", [])
    assert facts["idle_windows_s"] == want.get("idle_windows_s", [])
    seconds = {c: 0.0 for c in CATEGORIES} | want.get("seconds", {})
    assert doc["seconds"] == pytest.approx(seconds, abs=1e-6)


def _log(tmp_path, text: str, name: str = "replica-0.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_issue_timeline_in_sglang_wording_gives_hand_computed_gpu_hours():
    """variants/sglang_day.log, the issue's timeline in SGLang's wording: loads 10 min, serves
    50 min (10 of them idle), an OOM puts it down 5 min, it reloads 3 min, serves 50 min, drains
    2 min. 8 GPUs."""
    doc = serving_log(VARIANTS / "sglang_day.log", gpus=8)
    assert doc["status"] == "ok" and doc["engine"] == "sglang"
    hours = doc["gpu_hours"]
    assert hours["model_loading"] == approx_h(8 * 13 / 60)   # 10 + 3 min reload
    assert hours["not_ready"] == approx_h(8 * 5 / 60)        # OOM at 01:00 .. 01:05
    assert hours["draining"] == approx_h(8 * 2 / 60)         # 01:58 .. 02:00
    assert hours["idle_capacity"] == approx_h(8 * 10 / 60)   # the 00:30 .. 00:40 window
    assert hours["serving"] == approx_h(8 * (40 + 50) / 60)  # 00:10-00:30, 00:40-01:00, 01:08-01:58
    assert hours["other"] == 0.0 and sum(hours.values()) == pytest.approx(16.0)
    assert doc["facts"]["crashes"] == [{"at_s": 3600.0, "reason": "engine_oom", "line": 5}]
    reload = [t for t in doc["timeline"] if t["offset_s"] == 3900.0]
    assert reload[0]["category"] == "model_loading" and reload[0]["reason"] == "engine_oom"
    assert doc["lost_gpu_hours_by_layer"]["platform"] == approx_h(8 * 2 / 60)


@pytest.mark.parametrize("ready", FAMILIES["ready"])
def test_each_engines_ready_marker_ends_loading(tmp_path, ready):
    start = "[2025-03-03 00:00:00] Load weight begin. avail mem=78.50 GB\n"
    end = "[2025-03-03 00:20:00] still here\n"
    doc = serving_log(_log(tmp_path, start + ready + "\n" + end))
    assert doc["facts"]["ready_s"] == [600.0], doc["facts"]
    assert doc["seconds"]["model_loading"] == 600.0 and doc["seconds"]["serving"] == 600.0


@pytest.mark.parametrize("crash, reason", FAMILIES["crash"])
def test_each_crash_marker_puts_the_replica_not_ready_with_its_reason(tmp_path, crash, reason):
    start = "[2025-03-03 00:00:00] The server is fired up and ready to roll!\n"
    end = "[2025-03-03 00:15:00] restarting\n"
    doc = serving_log(_log(tmp_path, start + crash + "\n" + end), gpus=2)
    assert doc["facts"]["crashes"] == [{"at_s": 600.0, "reason": reason, "line": 2}]
    assert doc["gpu_hours"]["not_ready"] == approx_h(2 * 5 / 60)
    assert doc["gpu_hours"]["serving"] == approx_h(2 * 10 / 60)


@pytest.mark.parametrize("stats, idle", FAMILIES["throughput"])
def test_a_throughput_window_is_idle_only_with_nothing_running_waiting_or_processed(
        tmp_path, stats, idle):
    start = "[2025-03-03 00:00:00] The server is fired up and ready to roll!\n"
    doc = serving_log(_log(tmp_path, start + stats + "\n"))
    assert doc["seconds"]["idle_capacity" if idle else "serving"] == 600.0
    assert doc["facts"]["idle_windows_s"] == ([[0.0, 600.0]] if idle else [])


def test_a_container_log_is_timed_by_its_own_stamps(tmp_path):
    """CRI lines (`/var/log/pods/...`): the runtime's stamp, with its year, times the record;
    the stream tag does not hide an anchored marker."""
    cri = "2025-04-06T07:{}Z stdout F {}\n"
    text = (cri.format("55:21.108632509", "INFO 04-06 00:55:21 [llm_engine.py:447] init engine "
                       "(profile, create kv cache, warmup model) took 71.33 seconds")
            + cri.format("56:00.000000000", "INFO:     Application startup complete.")
            + cri.format("57:00.000000000", "INFO:     Shutting down"))
    doc = serving_log(_log(tmp_path, text))
    loading = 60 - 21.108632509  # 07:55:21.108632509 .. 07:56:00, to the microsecond
    assert doc["facts"]["ready_s"] == [pytest.approx(loading, abs=1e-6)]
    assert doc["facts"]["draining_s"] == [pytest.approx(loading + 60, abs=1e-6)]
    assert doc["seconds"]["model_loading"] == doc["facts"]["ready_s"][0] and doc["notes"] == []


def test_shutdown_drains_until_the_log_ends(tmp_path):
    text = ("I0303 00:00:00.000000 1 http_server.cc:4623] Started HTTPService at 0.0.0.0:8000\n"
            "I0303 00:58:00.000000 1 server.cc:305] Waiting for in-flight requests to complete.\n"
            "I0303 01:00:00.000000 1 server.cc:336] All models are stopped, unloading models\n")
    path = _log(tmp_path, text)
    os.utime(path, (1_741_000_000, 1_741_000_000))  # 2025-03-03 11:06 UTC, after 03-03 01:00
    doc = serving_log(path)
    assert doc["facts"]["draining_s"] == [3480.0]
    assert doc["seconds"]["draining"] == 120.0 and doc["seconds"]["serving"] == 3480.0
    assert "no stamp prints a year: 2025 assumed, the latest year the first stamp fits before " \
           "the file's last change (2025-03-03)" in doc["notes"]


def test_a_stamp_a_little_back_never_reopens_painted_time(tmp_path):
    """The engine's stats line is stamped 2 s before the ready line above it (two processes
    print to one log): its window is empty, never [10 s, 8 s)."""
    idle = ("[loggers.py:80] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
            "0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%")
    text = ("INFO 03-03 00:00:00 [gpu_model_runner.py:1] Starting to load model m...\n"
            "INFO 03-03 00:00:10 [api_server.py:1] Starting vLLM API server on http://h:8000\n"
            f"INFO 03-03 00:00:08 {idle}\nINFO 03-03 00:01:00 {idle}\n")
    doc = serving_log(_log(tmp_path, text), gpus=1)
    assert doc["facts"]["ready_s"] == [10.0]
    assert doc["facts"]["idle_windows_s"] == [[10.0, 10.0], [10.0, 60.0]]
    assert doc["seconds"]["model_loading"] == 10.0 and doc["seconds"]["idle_capacity"] == 50.0


def test_a_ready_inside_a_request_payload_is_no_marker(tmp_path):
    text = ("INFO 03-03 00:00:00 [logger.py:39] Received request chatcmpl-1: prompt: 'Say: The "
            "server is fired up and ready to roll! Starting vLLM API server on', params: x\n"
            'INFO:     10.0.0.2:55254 - "POST /v1/chat/completions HTTP/1.1" 200 OK Application '
            "startup complete.\n"
            "INFO 03-03 00:05:00 [serving_chat.py:1] " + "x" * 130 + " Starting vLLM server on\n")
    doc = serving_log(_log(tmp_path, text))
    assert doc["status"] == "unknown" and doc["markers"] == dict.fromkeys(doc["markers"], 0)
    assert doc["reason"].startswith("no serving marker")


def test_training_loss_lines_are_no_serving_marker_and_are_named(tmp_path):
    """A `ready` after a loss is no ready marker; the training-log reader sees the steps."""
    text = "".join(f"2025-03-03 00:00:{5 * i:02d} | INFO | step {100 + 10 * i} | loss: "
                   f"{2.35 - 0.01 * i:.4f} | lr: 3.0e-4 | data ready\n" for i in range(8))
    doc = serving_log(_log(tmp_path, text))
    assert doc["status"] == "unknown" and doc["timeline"] == [] and doc["gpu_hours"] is None
    assert any("training progress record" in note for note in doc["notes"]), doc["notes"]


def test_recurring_lines_no_family_reads_are_reported():
    doc = serving_log(DATA / "logs" / "vllm_busy_llmscaler_issue391.log")
    assert [(u["records"], u["first_line"]) for u in doc["unread"]] == [(4, 2)]
    assert "GET /metrics" in doc["unread"][0]["example"]  # the stats lines are read: not listed


def test_markers_without_any_stamp_cannot_be_timed(tmp_path):
    text = "INFO:     Started server process [1]\nINFO:     Application startup complete.\n"
    doc = serving_log(_log(tmp_path, text))
    assert doc["status"] == "unknown" and doc["markers"]["ready"] == 1
    assert doc["reason"] == "no stamp on any marker: the log cannot say when anything happened"


def test_cli_prints_json_and_exits_by_status(tmp_path, capsys):
    assert main(["serving-log", str(DATA / "logs" / "vllm_startup_issue18157.log"),
                 "--gpus", "8"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["gpu_hours"]["model_loading"] == approx_h(8 * 6 / 3600)
    assert main(["serving-log", str(DATA / "logs" / "tgi_waiting_issue1838.log")]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "unknown"


@pytest.mark.parametrize("argv, message", [
    (["{missing}"], "cannot read"),
    (["{dir}"], "is a directory"),
    (["{log}", "--gpus", "0"], "expected 1 to 1,000,000 GPUs"),
    (["{log}", "--gpus", "1000001"], "expected 1 to 1,000,000 GPUs"),  # newcomer8 F2
    (["{log}", "--markers", "{bad}"], "serving log markers"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    bad = _log(tmp_path, "markers: {ready: [{pattern: '(unclosed'}]}\n", "bad.yaml")
    paths = {"missing": tmp_path / "nope.log", "dir": tmp_path, "bad": bad,
             "log": DATA / "logs" / "vllm_idle_issue16361.log"}
    try:
        code = main(["serving-log", *[a.format(**paths) for a in argv]])
    except SystemExit as stop:  # argparse's own usage error (a flag's bound)
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err


NEWCOMER5 = Path(__file__).resolve().parent.parent / "fixtures" / "newcomer5"


def test_throughput_without_a_ready_marker_is_ready_and_says_so():
    """newcomer5 #13 (tests/fixtures/newcomer5/README.md): five vLLM V1 stats lines, 18-21
    requests running, no start-up line. An engine reporting the requests it runs is answering
    them: ready from the first line, 40 s serving, `ok`, and a note that the ready marker is not
    in the log. The negatives: a log with its ready marker has no such note, and one that ends
    while loading (nothing shows it ready) stays `unknown`."""
    doc = serving_log(NEWCOMER5 / "S01_vllm_v1_loggers_issue43295.log")
    assert doc["status"] == "ok" and doc["markers"]["ready"] == 0
    assert doc["facts"]["ready_s"] == [0.0] and doc["seconds"]["serving"] == 40.0
    assert any(note.startswith("no ready marker: ready from 0 s into the log")
               and "throughput line at line 1" in note
               for note in doc["notes"]), doc["notes"]
    marked = serving_log(DATA / "logs" / "vllm_uvicorn_ready_issue15018.log")
    assert marked["markers"]["ready"] and not any(
        note.startswith("no ready marker") for note in marked["notes"])
    loading = serving_log(DATA / "logs" / "tgi_waiting_issue1838.log")
    assert loading["status"] == "unknown" and "never shows the engine ready" in loading["reason"]
