"""Goodput from training logs: the shared corpus's facts, hand-computed goodput, the Recorder's
journal for the same events, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.errors import ConfigError, GpusloError, UsageError
from gpuslo.goodput import Recorder, compute_goodput, parse_journal
from gpuslo.goodput.journal import JournalReader
from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.parse import parse_lines
from gpuslo.goodput.logs.profiles import build_profiles, check_linear
from gpuslo.goodput.slowdown import Interval
from gpuslo.goodput.slowdown import sustained_slowdowns as detect_slowdowns

HERE = Path(__file__).resolve().parent
SHARED = next((p / "shared" / "training_logs" for p in HERE.parents
               if (p / "shared" / "training_logs" / "expected.yaml").is_file()), None)
HAND_LOG = HERE / "data" / "torchtitan_crash_restart.log"
PROFILES = load_profiles()


def _entries() -> list[dict]:
    if SHARED is None:
        return []
    return yaml.safe_load((SHARED / "expected.yaml").read_text(encoding="utf-8"))


def _value(x):
    return x.get("value") if isinstance(x, dict) else x


def _near(got, want, tol=0.05) -> bool:
    return got is not None and abs(float(got) - float(want)) <= tol * abs(float(want))


ENTRIES = _entries()


@pytest.mark.skipif(SHARED is None, reason="../shared/training_logs (the corpus) is not here")
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["case"] for e in ENTRIES])
def test_corpus_core_facts(entry: dict) -> None:
    files = sorted((SHARED / "cases").glob(f"{entry['case']}_*"))
    if not files:
        pytest.skip(f"{entry['case']} is held back (not in cases/)")
    doc = analyse_log(files[0], PROFILES, gpus=8).document
    facts = entry.get("facts") or {}
    steps = facts.get("steps_seen")
    if isinstance(steps, dict) and isinstance(steps.get("first"), int):
        assert (doc["steps"]["first"], doc["steps"]["last"]) == (steps["first"], steps["last"])
        if steps.get("total_planned"):
            assert doc["steps"]["total_planned"] == steps["total_planned"]
    for key, scale in (("median_step_time_s", 1), ("median_step_time_ms", 1e-3),
                       ("median_iter_time_s", 1)):
        if _value(facts.get(key)) is not None:
            assert _near(doc["step_time_s"]["median"], _value(facts[key]) * scale), key
    saves = facts.get("checkpoint_saves")
    if isinstance(saves, dict):
        assert len(doc["checkpoint_saves"]) == saves["count"]
        for step in saves.get("steps") or []:
            assert step in [s["step"] for s in doc["checkpoint_saves"]]
        for want in saves.get("save_time_s") or []:
            assert any(_near(s["seconds"], want) for s in doc["checkpoint_saves"])
    elif "checkpoint_saves" in facts and saves is None:
        assert doc["checkpoint_saves"] == []
    restarts = facts.get("restarts", facts.get("restores"))
    count = restarts if isinstance(restarts, int) else (
        restarts.get("count") if isinstance(restarts, dict) else None)
    if count is not None:
        assert len(doc["restarts"]) == count
    if facts.get("hang"):
        assert doc["hangs"]
    if any(facts.get(k) for k in facts if k.startswith("crash") or k == "failure"):
        assert doc["interruptions"]
    slowdown = facts.get("slowdown")
    if isinstance(slowdown, dict):
        assert any(abs(s["from_step"] - slowdown["from_step"]) <= 1
                   and abs(s["ratio"] - slowdown["ratio_after_over_before"]) <= 0.02
                   for s in doc["slowdowns"]), doc["slowdowns"]
    ratio = facts.get("ratio_after_over_before")
    if isinstance(ratio, float) and ratio < 1:
        assert not [s for s in doc["slowdowns"] if s["ratio"] > 1.02]
    span = facts.get("wall_clock_span")
    if isinstance(span, dict) and span.get("seconds"):
        assert doc["span_s"] == pytest.approx(span["seconds"], abs=0.01)
    # the journal the log amounts to is a valid one the Recorder's reader accepts
    reader = JournalReader(str(files[0]))
    for event in analyse_log(files[0], PROFILES, gpus=8).events:
        assert reader.feed_line(json.dumps(event)) is not None
    assert reader.problems == []


@pytest.mark.skipif(SHARED is None, reason="../shared/training_logs (the corpus) is not here")
def test_corpus_other_facts() -> None:
    """Quantities gpuslo reports beyond the core facts, against expected.yaml's numbers."""
    case = {p.name[:3]: p for p in (SHARED / "cases").glob("T*.log")}
    t02 = analyse_log(case["T02"], PROFILES).document
    assert t02["hangs"][0]["after_step"] == 45000 and t02["hangs"][0]["seconds"] == 7207
    t03 = analyse_log(case["T03"], PROFILES).document
    assert [(i["cause"], i["layer"]) for i in t03["interruptions"]] == [("time_limit", "platform")]
    t04 = analyse_log(case["T04"], PROFILES).document
    assert t04["interruptions"][0]["layer"] == names.LAYER_NODE
    assert t04["interruptions"][0]["after_step"] == 43680
    t11 = analyse_log(case["T11"], PROFILES).document
    assert len(t11["interruptions"]) == 1 and t11["interruptions"][0]["layer"] == "observability"
    assert t11["hangs"][0]["seconds"] == pytest.approx(25624.887, rel=0.001)
    t16 = analyse_log(case["T16"], PROFILES).document
    assert t16["hangs"][0]["seconds"] == pytest.approx(600.067) and t16["status"] == "unknown"
    t15 = analyse_log(case["T15"], PROFILES).document
    assert t15["checkpoint_saves"][0]["seconds"] == pytest.approx(216.814, rel=0.01)
    t17 = analyse_log(case["T17"], PROFILES).document
    assert [s["step"] for s in t17["checkpoint_saves"]] == [1, 2]
    t21 = analyse_log(case["T21"], PROFILES).document
    assert t21["restarts"][0]["resumed_from_step"] == 1250
    t10 = analyse_log(case["T10"], PROFILES).document
    assert t10["slowdowns"] == [] and t10["hangs"][0]["after_step"] == 24
    # the bar's elapsed time over its steps is preferred to its EMA rate (2.82 s/it)
    assert t10["step_time_s"]["median"] == pytest.approx(2.82, rel=0.05)


# -- goodput by hand -------------------------------------------------------------------------
# The hand log (2 GPUs): init 0–30 s, steps 1–3 end at 30/40/50, save 50–55 commits step 3,
# steps 4–5 end at 65/75, CUDA unknown error (node) at 75, job restarts at 135, init 135–140,
# restore of step 3 140–145, steps 4–5 end at 155/165, the log ends.
HAND_GPU_S = {"initialization": 70.0, "productive": 40.0, "checkpoint_save": 10.0,
              "checkpoint_restore": 10.0, "recovery": 120.0, "wasted_progress": 40.0}


def test_goodput_by_hand() -> None:
    doc = analyse_log(HAND_LOG, PROFILES, gpus=2).document
    g = doc["goodput"]
    for category in names.JOB_CATEGORIES:
        assert g["gpu_seconds"][category] == HAND_GPU_S.get(category, 0.0), category
    assert g["uncommitted_gpu_s"] == 40.0  # steps 4–5 of the second run, not yet committed
    assert g["interruptions"] == {"node": 1}
    assert doc["restarts"] == [{"resumed_from_step": 3, "lost_steps": 2, "line": 11,
                               "opens_log": False}]
    assert doc["checkpoint_saves"] == [{"step": 3, "seconds": 5.0, "line": 5}]
    assert doc["interruptions"][0]["cause"] == "cuda_unknown_error"


def test_goodput_equals_the_recorders_journal(tmp_path: Path) -> None:
    """The Recorder, driven through the same events with a fake clock, writes a journal whose
    goodput is the log's."""
    now = [0.0]
    rec = Recorder(tmp_path, "demo", node="log", clock=lambda: now[0])

    def at(t: float) -> None:
        now[0] = t

    rec.job_start(2)
    with rec.phase("initialization"):
        at(30)
    rec.step(1)
    for t, n in ((40, 2), (50, 3)):
        at(t)
        rec.step(n)
    with rec.phase("checkpoint_save"):
        at(55)
    rec.checkpoint(3)
    for t, n in ((65, 4), (75, 5)):
        at(t)
        rec.step(n)
    rec.job_end("failed", layer="node")
    rec2 = Recorder(tmp_path, "demo", node="log", clock=lambda: now[0])
    at(135)
    rec2.restart(3)
    with rec2.phase("initialization"):
        at(140)
    with rec2.phase("checkpoint_restore"):
        at(145)
    for t, n in ((155, 4), (165, 5)):
        at(t)
        rec2.step(n)
    rec2.close()
    journal, problems = parse_journal(rec2.path.read_text(), str(rec2.path))
    assert problems == []
    from_recorder = compute_goodput(journal)
    from_log = compute_goodput(analyse_log(HAND_LOG, PROFILES, gpus=2).events)
    assert from_log.gpu_seconds == pytest.approx(from_recorder.gpu_seconds)
    assert from_log.uncommitted_gpu_s == pytest.approx(from_recorder.uncommitted_gpu_s)
    assert from_log.interruptions == from_recorder.interruptions


# -- slowdown ---------------------------------------------------------------------------------
def test_slowdown_needs_two_consecutive_intervals() -> None:
    steady = [Interval(i, i, 1.0) for i in range(1, 6)]
    spike = [*steady, Interval(6, 6, 5.0), *[Interval(i, i, 1.0) for i in range(7, 10)]]
    assert detect_slowdowns(spike) == []
    shift = [*steady, Interval(6, 6, 1.1), Interval(7, 7, 1.1), Interval(8, 8, 1.0)]
    (found,) = detect_slowdowns(shift)
    assert (found.from_step, found.to_step, round(found.ratio, 3)) == (6, 7, 1.1)
    assert found.extra_s == pytest.approx(0.2)
    assert detect_slowdowns(shift, min_intervals=3) == []
    assert detect_slowdowns(shift, threshold=1.2) == []
    with pytest.raises(ValueError):
        detect_slowdowns(shift, threshold=0.9)


# -- profiles ---------------------------------------------------------------------------------
@pytest.mark.parametrize("pattern", [r"(a+)+b", r"(\w{0,9}\.){0,8}x", r"(a)\1", r"(?:x*y)*"])
def test_super_linear_regexes_are_refused(pattern: str) -> None:
    with pytest.raises(ConfigError, match="f.regex"):
        check_linear(pattern, "f.regex")


def test_overlay_is_merged_and_checked(tmp_path: Path) -> None:
    overlay = tmp_path / "mine.yaml"
    overlay.write_text(yaml.safe_dump({"frameworks": {"myloop": {"label": "in-house", "rules": [
        {"kind": "step", "contains": "STEP", "unit": "s",
         "regex": r"STEP (?P<step>\d+) took (?P<step_time>[\d.]+)"}]}}}))
    profiles = load_profiles(str(overlay))
    assert "myloop" in profiles.frameworks and "megatron" in profiles.frameworks
    parsed = parse_lines(["STEP 1 took 2.0", "STEP 2 took 2.0"], profiles)
    assert parsed.framework == "myloop"
    overlay.write_text(yaml.safe_dump({"frameworks": {"myloop": {"rules": [
        {"kind": "step", "regex": r"(\d+)+ (?P<step>\d+)"}]}}}))
    with pytest.raises(ConfigError, match=r"mine.yaml: frameworks.myloop.rules\[0\].regex"):
        load_profiles(str(overlay))
    overlay.write_text(yaml.safe_dump({"common": [{"kind": "interruption", "cause": "x",
                                                   "layer": "gpu", "regex": "boom"}]}))
    with pytest.raises(ConfigError, match=r"common\[0\].layer"):
        load_profiles(str(overlay))
    with pytest.raises(ConfigError, match="missing.yaml: cannot read log-profile overlay"):
        load_profiles(str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError, match="unknown top-level"):
        build_profiles({"framworks": {}}, "x.yaml")


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    " " * 1_000_000, "iteration " * 100_000, "step: 1 " * 125_000, "{'loss': " * 100_000,
    "Epoch 0: " * 100_000, "a" * 1_000_000, "1%|" * 300_000, "[default0]:" * 90_000,
    "completed step: 1, " * 50_000, "Watchdog caught collective " * 40_000,
])
def test_a_pathological_megabyte_line_is_fast(line: str) -> None:
    began = time.monotonic()
    parse_lines([line, line], PROFILES)
    assert time.monotonic() - began < 5.0


def test_binary_file_is_unknown_not_made_up(tmp_path: Path) -> None:
    path = tmp_path / "core.bin"
    path.write_bytes(bytes(range(256)) * 4096)
    doc = analyse_log(path, PROFILES, gpus=8).document
    assert doc["status"] == "unknown" and doc["read"]["binary"] is True
    assert doc["goodput"] is None and doc["steps"]["first"] is None
    assert "binary" in doc["not_read"][0]


def test_no_steps_and_unknown_framework(tmp_path: Path) -> None:
    path = tmp_path / "chatter.log"
    path.write_text("hello\nloading data\nsomething else entirely\n")
    doc = analyse_log(path, PROFILES, gpus=8).document
    assert doc["status"] == "unknown" and doc["framework"] is None and doc["goodput"] is None
    assert doc["not_read"] and doc["read"]["lines"] == 3
    with pytest.raises(UsageError, match="unknown framework"):
        analyse_log(path, PROFILES, framework="nosuch")


def test_huge_log_is_streamed(tmp_path: Path) -> None:
    """40 MB with a 20 MB line in the middle: read in chunks, the long line cut and counted."""
    path = tmp_path / "big.log"
    with path.open("w") as f:
        for i in range(1, 200_001):
            f.write(f"completed step: {i}, seconds: 1.000, TFLOP/s: 1.0, loss: 2.0\n")
            if i == 100_000:
                f.write("x" * 20_000_000 + "\n")
    doc = analyse_log(path, PROFILES).document
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 200_000)
    assert doc["step_time_s"]["median"] == 1.0
    assert any("64 KiB" in n for n in doc["not_read"])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpuslo", "goodput", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_exit_codes(tmp_path: Path) -> None:
    ok = _cli(str(HAND_LOG), "--gpus", "2", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["goodput"]["gpu_seconds"]["productive"] == 40.0
    text = _cli(str(HAND_LOG))
    assert text.returncode == 0 and "torchtitan" in text.stdout
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    unknown = _cli(str(empty), "--format", "json")
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["status"] == "unknown"
    missing = _cli(str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "nope.log" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = _cli(str(HAND_LOG), "--framework", "nosuch")
    assert bad.returncode == 2 and "nosuch" in bad.stderr
    both = _cli(str(HAND_LOG), str(empty), "--format", "json")
    assert both.returncode == 1 and len(json.loads(both.stdout)) == 2


# -- no untyped exception, whatever the text -------------------------------------------------
_FRAGMENTS = ["iteration", "  12/ 100 |", "elapsed time per iteration (ms): 3.5 |",
              "step: 3  loss:",
              "Epoch 1: ", "%|", "[00:01<00:02,  2.5s/it]", "Traceback (most recent call last):",
              "Watchdog caught collective operation timeout", "saving checkpoint at iteration 9",
              "Restoring states from the checkpoint path at x/0-9.ckpt", "[default1]:", "\r",
              "2025-01-01 00:00:00,000 ", "E0213 12:07:20.086000 ", "[05:19:47.352788] ",
              "completed step: 5, seconds: 0.1", "This epoch took 3 s", "epoch:  4",
              "will restart worker group", "slurmstepd: error: *** JOB 1 ON n CANCELLED AT",
              "nan", "-1", "\x00", "├", "9" * 30, "E9999 99:99:99.9 "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)),
                         max_size=8).map("".join), max_size=30))
def test_parser_raises_no_untyped_exception(lines: list[str]) -> None:
    try:
        parsed = parse_lines(lines, PROFILES)
        result = assemble(parsed, job="prop", gpus=2, checkpoint_step=PROFILES.checkpoint_step)
    except GpusloError:
        return
    json.dumps(result.document, allow_nan=False)
    compute_goodput(result.events)


# -- gpuslo report --training-log ------------------------------------------------------------
def test_report_from_a_training_log_gives_the_hand_values(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "demo.log").write_bytes(HAND_LOG.read_bytes())
    (logs / "noise.log").write_text("nothing a profile knows\n")
    for source in (str(HAND_LOG), str(logs)):
        out = tmp_path / ("out-" + Path(source).name)
        done = subprocess.run([sys.executable, "-m", "gpuslo", "report", "--training-log", source,
                               "--gpus", "2", "--out", str(out), "--format", "json"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        report = json.loads((out / "report.json").read_text())
        (job,) = report["jobs"]
        for category in names.JOB_CATEGORIES:
            assert job[category] == HAND_GPU_S.get(category, 0.0), category
        assert job["uncommitted"] == 40.0  # steps 4–5 of the second run, as goodput says
        # productive over categories + uncommitted: `gpuslo goodput`'s figure (newcomer #2)
        assert report["goodput_ratio"] == pytest.approx(40 / 330, abs=1e-6)
    missing = subprocess.run([sys.executable, "-m", "gpuslo", "report", "--training-log",
                              str(HAND_LOG), "--out", str(tmp_path / "x")],
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "--gpus" in missing.stderr
