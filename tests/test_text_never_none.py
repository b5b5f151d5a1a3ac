"""Text for people never prints Python's `None`, and an interruption the log reader puts on the
observability layer says why (issue 27, item 5): `gpuslo goodput` on every training log of the
corpus and the new dev/holdout halves (text, and the `why` in its JSON), and `gpuslo report
--training-log` (Markdown, HTML and the summary it prints) over each half. Before: "hang after
step None: 600.067 s", "median step None s", "goodput None", and "nccl_timeout (observability)"
with nothing to say that an NCCL timeout names no culprit."""

from __future__ import annotations

import json
import re

import pytest
from conftest import REPO, SHARED

from gpuslo.cli import main

HALVES = {
    "shared": SHARED / "training_logs" / "cases",
    "dev": REPO / "tests" / "data" / "training_logs" / "dev" / "cases",
    "holdout": REPO / "tests" / "data" / "training_logs" / "holdout" / "cases",
}
LOGS = sorted(p for folder in HALVES.values() for p in folder.iterdir() if p.is_file())
NONE = re.compile(r"\bNone\b")
NCCL = HALVES["shared"] / "T10_hf-trainer-llamafactory-tqdm-then-nccl-watchdog-hang.log"
WHY = ("an NCCL watchdog timeout says a collective hung, not which rank, GPU or link held it "
       "up, so the time is blind until a node fault explains it")


@pytest.mark.parametrize("log", LOGS, ids=[p.stem[:40] for p in LOGS])
def test_goodput_text_never_prints_none(log, capsys):
    main(["goodput", "--gpus", "8", str(log)])
    out = capsys.readouterr().out
    assert out and not NONE.search(out), out


def test_goodput_says_why_an_nccl_timeout_is_observability(capsys):
    main(["goodput", "--gpus", "8", str(NCCL)])
    out = capsys.readouterr().out
    assert f"nccl_timeout (observability: {WHY})" in out, out
    main(["goodput", "--gpus", "8", "--format", "json", str(NCCL)])
    doc = json.loads(capsys.readouterr().out)
    assert [(i["cause"], i["layer"], i["why"]) for i in doc["interruptions"]] == [
        ("nccl_timeout", "observability", WHY)]


@pytest.mark.parametrize("half", sorted(HALVES))
def test_report_text_never_prints_none(half, tmp_path, capsys):
    assert main(["report", "--training-log", str(HALVES[half]), "--gpus", "8", "--out",
                 str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    for name, text in (("summary", printed), ("md", (tmp_path / "report.md").read_text()),
                       ("html", (tmp_path / "report.html").read_text())):
        assert not NONE.search(text), (name, NONE.search(text) and text[
            max(0, NONE.search(text).start() - 300):NONE.search(text).end() + 50])


def test_goodput_text_names_what_the_log_did_not_print():
    """Issue (a newcomer): "checkpoint save at step 300: not in the log" left them asking what
    was not - the save is in the log, its duration is not. Each missing figure is named."""
    from gpuslo.cli.goodput import render_text

    doc = {
        "file": "t.log", "framework": "generic", "status": "ok",
        "steps": {"first": 1, "last": None, "epoch_first": 0, "epoch_last": None},
        "step_time_s": {"median": None, "count": 0}, "span_s": None,
        "checkpoint_saves": [{"step": 300, "seconds": None}, {"step": None, "seconds": 4.5}],
        "restarts": [{"resumed_from_step": None, "lost_steps": None}],
        "interruptions": [{"after_step": None, "cause": "oom", "layer": "job", "line": 7}],
        "slowdowns": [{"from_step": None, "ratio": None}],
        "hangs": [{"after_step": None, "seconds": None, "cause": "no_progress"}],
        "goodput": None, "not_read": [], "notes": [],
    }
    text = render_text(doc)
    assert "not in the log" not in text and not NONE.search(text), text
    for said in ("checkpoint save at step 300: its duration not printed",
                 "checkpoint save (its step not printed): 4.5 s",
                 "restart (its step not printed) (lost an unknown number of steps)",
                 "interruption (before any printed step): oom (job), line 7",
                 "hang (before any printed step): duration unknown (no_progress)",
                 "steps 1..? (last step not printed) (epochs 0..? (last epoch not printed))"):
        assert said in text, text
