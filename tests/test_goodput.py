"""The goodput calculator on timelines a reviewer can redo by hand, and the journal's bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.journal import parse_journal, validate_job_id


def ev(t: float, event: str, **fields: object) -> dict[str, object]:
    return {"v": 1, "t": t, "event": event, **fields}


def steps(first: int, last: int, t0: float, step_s: float) -> list[dict[str, object]]:
    """One coalesced line per step: step n finishes at t0 + (n - first + 1) * step_s."""
    return [ev(t0 + (n - first + 1) * step_s, "steps", step=n) for n in range(first, last + 1)]


def worked_example(gpus: int = 1) -> list[dict[str, object]]:
    """Issue 4: 60 s steps, checkpoint at step 80, failure after step 100, restart 600 s later."""
    return [
        ev(0, "job_start", job="j1", node="n1", gpus=gpus),
        *steps(1, 80, 0, 60),  # step 80 ends at 4800
        ev(4800, "checkpoint", step=80),
        *steps(81, 100, 4800, 60),  # step 100 ends at 6000
        ev(6000, "job_end", status="failed"),
        ev(6600, "restart", from_step=80),
    ]


def test_worked_example_per_gpu() -> None:
    g = compute_goodput(worked_example())
    assert g.gpu_seconds["wasted_progress"] == 1200.0  # steps 81..100: 20 × 60 s
    assert g.gpu_seconds["recovery"] == 600.0  # 6000 → 6600
    assert g.gpu_seconds["productive"] == 4800.0  # steps 1..80 committed
    assert g.committed_step == 80 and g.last_step == 80
    assert g.interruptions[names.LAYER_TRAINING] == 1
    assert g.status == "running"


def test_worked_example_scales_with_gpus() -> None:
    g = compute_goodput(worked_example(gpus=8))
    assert (g.gpu_seconds["wasted_progress"], g.gpu_seconds["recovery"]) == (9600.0, 4800.0)


def test_phases_crash_without_job_end_and_completion() -> None:
    # 2 GPUs. init 0–100, restore none, 10 steps of 10 s (100–200), checkpoint save 200–230,
    # 5 more steps to 280, then the journal stops (kill -9); restart at 400 from step 10,
    # restore 400–450, steps 11..15 again to 500, job completes at 500.
    events = [
        ev(0, "job_start", job="j2", node="n1", gpus=2),
        ev(0, "phase_start", category="initialization"),
        ev(100, "phase_end", category="initialization"),
        *steps(1, 10, 100, 10),
        ev(200, "phase_start", category="checkpoint_save"),
        ev(230, "phase_end", category="checkpoint_save"),
        ev(230, "checkpoint", step=10),
        *steps(11, 15, 230, 10),
        ev(400, "restart", from_step=10),
        ev(400, "phase_start", category="checkpoint_restore"),
        ev(450, "phase_end", category="checkpoint_restore"),
        *steps(11, 15, 450, 10),
        ev(500, "job_end", status="completed"),
    ]
    g = compute_goodput(events)
    s = g.gpu_seconds
    assert s["initialization"] == 2 * 100
    assert s["checkpoint_save"] == 2 * 30
    assert s["checkpoint_restore"] == 2 * 50
    assert s["productive"] == 2 * (100 + 50)  # 100–200 committed at 230; 450–500 by completion
    assert s["wasted_progress"] == 2 * 50  # 230–280, after the last checkpoint
    assert s["recovery"] == 2 * 120  # last event 280 → restart 400
    assert g.interruptions[names.LAYER_OBSERVABILITY] == 1  # cause not seen by the journal
    assert g.status == "completed" and g.last_progress_t == 500
    assert sum(s.values()) == 2 * 500  # every second of the 500 s accounted once


def test_until_ignores_later_events_and_open_progress_is_uncommitted() -> None:
    g = compute_goodput(worked_example(), until=5000)
    assert g.gpu_seconds["productive"] == 4800.0
    assert g.uncommitted_gpu_s == 180.0  # steps 81..83 end at 4980
    assert g.gpu_seconds["wasted_progress"] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["steps", "checkpoint", "phase", "fail", "restart"]),
                          st.integers(1, 500)), max_size=40))
def test_counters_never_go_down_and_never_exceed_wall_time(plan: list[tuple[str, int]]) -> None:
    events, t, step = [ev(0, "job_start", job="p", node="n", gpus=4)], 0, 0
    for kind, dt in plan:
        t += dt
        if kind == "steps":
            step += 1
            events.append(ev(t, "steps", step=step))
        elif kind == "checkpoint":
            events.append(ev(t, "checkpoint", step=step))
        elif kind == "phase":
            events += [ev(t, "phase_start", category="data_loading"),
                       ev(t + 1, "phase_end", category="data_loading")]
            t += 1
        elif kind == "fail":
            events.append(ev(t, "job_end", status="failed"))
        else:
            events.append(ev(t, "restart", from_step=0))
            step = 0
    previous = dict.fromkeys(names.JOB_CATEGORIES, 0.0)
    for i in range(1, len(events) + 1):
        g = compute_goodput(events[:i])
        assert all(g.gpu_seconds[c] >= previous[c] for c in names.JOB_CATEGORIES)
        previous = g.gpu_seconds
    total = sum(previous.values()) + g.uncommitted_gpu_s
    assert total <= 4 * t + 1e-6


def lines(*events: object) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_parse_journal_reports_each_problem_once_and_reads_the_rest() -> None:
    text = lines(
        ev(0, "job_start", job="j", node="n", gpus=1),
        ev(10, "steps", step=5),
        {"v": 2, "t": 11, "event": "steps", "step": 6},
        {"v": 2, "t": 12, "event": "steps", "step": 7},
        ev(9, "steps", step=6),
        ev(13, "steps", step=3),
        ev(14, "steps", step=2),
        ev(15, "checkpoint", step=5),
    ) + '{"v":1,"t":16,"ev'
    events, problems = parse_journal(text, "j.jsonl")
    assert [e["t"] for e in events] == [0, 10, 15]
    found = sorted((p.line, p.detail.split(" (")[0].split(";")[0]) for p in problems)
    assert found == [
        (3, "unknown schema version 2"),
        (5, "event out of order"),
        (6, "step goes backwards without a restart"),
        (9, "truncated last line"),
    ]
    assert all(str(p).startswith("j.jsonl:") for p in problems)


@pytest.mark.parametrize("job", ["../etc/passwd", "a/b", "x" * 2048, "", "bad\x00id", ".hidden"])
def test_bad_job_ids_are_refused(job: str) -> None:
    with pytest.raises(ValueError):
        validate_job_id(job)
    events, problems = parse_journal(lines(ev(0, "job_start", job=job, node="n", gpus=1)), "f")
    assert events == [] and len(problems) == 1 and "job id" in problems[0].detail
    assert len(str(problems[0])) < 200  # a 2 KB id does not become a 2 KB message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parse_journal_never_raises(text: str) -> None:
    events, problems = parse_journal(text, "fuzz")
    assert all(e["v"] == 1 for e in events)
    compute_goodput(events)


@pytest.mark.parametrize("module", ["gpuslo.goodput.calculator", "gpuslo.goodput.journal"])
def test_calculator_and_journal_never_load_opentelemetry(module):
    """The SLO engine and the exporter import these; only the Recorder needs OpenTelemetry."""
    code = (
        f"import sys, {module}\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_package_names_load_on_first_use():
    """`from gpuslo.goodput import Recorder` (and the other names) keep working (PEP 562)."""
    code = ("import sys, gpuslo.goodput as g\n"
            "assert 'opentelemetry' not in sys.modules\n"
            "from gpuslo.goodput import JobGoodput, compute_goodput, parse_journal, journal_path\n"
            "assert 'opentelemetry' not in sys.modules\n"
            "from gpuslo.goodput import Recorder\n"
            "assert 'opentelemetry' in sys.modules\n"
            "assert Recorder.__module__ == 'gpuslo.goodput.recorder'\n"
            "assert set(g.__all__) <= set(dir(g))\n")
    subprocess.run([sys.executable, "-c", code], check=True)
