"""`gpuslo goodput` lists the slowdowns it files (issue 27, item 2): the JSON listed a x1.05
slowdown worth 87.76 GPU-s for T01 but filed 0 GPU-s under `slowdown`, and filed 48 GPU-s under
`slowdown` for T10 with no slowdown listed. The listing, `slowdown_gpu_s` and the `slowdown`
category now come from one calculator run; and the calculator reads the first interval after a
start when the event states its step time (it dropped it, so T01's reference was seeded from
the slow steps and the 5 % slowdown of the corpus' expected facts went unseen)."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, SHARED

from gpuslo import names
from gpuslo.cli import main
from gpuslo.goodput.calculator import compute_goodput
from tests.test_goodput_batch import _assert_same

FOLDERS = (SHARED / "training_logs" / "cases",
           REPO / "tests" / "data" / "training_logs" / "dev" / "cases",
           REPO / "tests" / "data" / "training_logs" / "holdout" / "cases")
LOGS = sorted(p for folder in FOLDERS for p in folder.iterdir() if p.is_file())
# shared/training_logs expected.yaml, T01 (BLOOM-176B, one iteration a line): seconds per step.
T01 = [(42780, 105.16), (42781, 105.17), (42782, 106.25), (42783, 110.17), (42784, 111.14)]


@pytest.mark.parametrize("log", LOGS, ids=[p.stem[:40] for p in LOGS])
def test_goodput_lists_every_slowdown_it_files(log, capsys):
    main(["goodput", "--gpus", "8", "--format", "json", str(log)])
    doc = json.loads(capsys.readouterr().out)
    if doc["goodput"] is None:
        return
    filed = doc["goodput"]["gpu_seconds"][names.CATEGORY_SLOWDOWN]
    listed = sum(s["gpu_seconds"] for s in doc["slowdowns"])
    assert listed == pytest.approx(filed, abs=1e-3), doc["slowdowns"]
    assert doc["goodput"]["slowdown_gpu_s"] == pytest.approx(filed, abs=1e-3)
    assert bool(doc["slowdowns"]) == (filed > 0)


def test_the_first_interval_after_a_start_seeds_the_reference():
    """T01 as a journal whose steps events state their step time: the reference is the median
    of 105.16, 105.17, 106.25 (105.17 s); 110.17 and 111.14 s are one sustained slowdown."""
    t0 = 1_700_000_000.0
    events = [{"v": 1, "t": t0, "event": "job_start", "job": "t01", "node": "n", "gpus": 8}]
    clock = t0
    for step, seconds in T01:
        clock += seconds
        events.append({"v": 1, "t": clock, "event": "steps", "step": step,
                       "step_time_s": seconds})
    result = compute_goodput(events)
    _assert_same([events])  # the batch form the SLO engine uses reads it the same way
    (episode,) = result.slowdowns
    assert (episode.from_step, episode.to_step, episode.reference_s) == (42783, 42784, 105.17)
    assert episode.gpu_seconds == pytest.approx((110.17 - 105.17 + 111.14 - 105.17) * 8)
