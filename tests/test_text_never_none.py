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
