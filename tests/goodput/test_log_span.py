"""Time accounting of a training log against the time the log shows (a newcomer's round-10
report on the shared logs): every epoch or step the log shows is accounted, never more than
its span, and the GPU count scales GPU-seconds only. The real logs of ../shared/training_logs;
each class has a negative beside it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import gpuslo.goodput.logs.reader as reader
from gpuslo.goodput.logs import analyse_log
from tests.goodput.test_log_classes import PROFILES, read

HERE = Path(__file__).resolve().parent
SHARED = next((p / "shared" / "training_logs" / "cases" for p in HERE.parents
               if (p / "shared" / "training_logs" / "cases").is_dir()), None)
needs_shared = pytest.mark.skipif(SHARED is None, reason="../shared/training_logs is not here")


def _case(name: str) -> Path:
    assert SHARED is not None
    return next(SHARED.glob(f"{name}_*"))


def _accounted(doc: dict) -> float:
    return doc["goodput"]["accounted_gpu_s"] / doc["goodput"]["gpus"]


# -- epochs as the steps, each timed by an epoch-duration line (nnU-Net, T17) ----------------
@needs_shared
def test_every_epoch_of_an_epoch_log_is_accounted_its_saves_as_saves() -> None:
    doc = analyse_log(_case("T17"), PROFILES, gpus=8).document
    # three epochs of 661.8 + 634.1 + 632.0 s (the last two each hold a save): the whole span
    assert doc["span_s"] == pytest.approx(1927.917)
    assert _accounted(doc) == pytest.approx(1927.917, abs=0.5)
    # by the stamps of the save lines (2.59 s and 0.33 s; the lines print 2.62 and 0.37)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == pytest.approx(2.92 * 8, rel=0.01)
    assert doc["step_time_s"]["median"] == pytest.approx(634.078703)


@needs_shared
def test_explain_says_the_epoch_lines_are_the_steps_and_the_epoch_time_times_them() -> None:
    doc = analyse_log(_case("T17"), PROFILES, with_explain=True).document
    read = {p["template"]: p for p in doc["explain"]["progress"]}
    assert read["epoch: <n>"]["why"] == "epoch lines and no step lines: the epoch is the step"
    assert read["epoch: <n>"]["fields"] == {"epoch": "step (the epoch counts the progress)"}
    assert read["This epoch took <n> s"]["family"] == "timing"
    assert all("epoch took" not in u["template"] for u in doc["explain"]["unread"])


def _stamp(t: float) -> str:
    return f"2020-12-21 {19 + int(t) // 3600:02d}:{int(t) // 60 % 60:02d}:{t % 60:09.6f}"


def _epochs(took: str) -> list[str]:
    """nnU-Net's shape: a stamped blank line, an unstamped `epoch:  N`, stamped metric lines, a
    10 s save, then the epoch's duration, save included (`took` names it, or something else)."""
    lines, t = [], 0.0
    for epoch in range(4):
        lines += [f"{_stamp(t)}: ", f"epoch:  {epoch}",
                  f"{_stamp(t + 50)}: train loss : 1.{epoch}",
                  f"{_stamp(t + 100)}: saving checkpoint...",
                  f"{_stamp(t + 110)}: done, saving took 10.00 seconds",
                  f"{_stamp(t + 110.5)}: {took} 110.5 s"]
        t += 110.5
    return lines


def test_an_epoch_duration_line_times_the_epoch_before_it() -> None:
    doc = read(_epochs("This epoch took"), gpus=1)
    assert doc["step_time_s"]["median"] == pytest.approx(110.5)
    assert doc["span_s"] == pytest.approx(4 * 110.5)
    assert _accounted(doc) == pytest.approx(4 * 110.5, abs=0.6)  # every epoch, no more
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == pytest.approx(40.0, abs=0.01)


def test_negative_a_duration_not_named_for_the_epoch_is_not_set_apart_as_its_time() -> None:
    doc = read(_epochs("validation took"), gpus=1)
    assert doc["step_time_s"]["median"] is None


# -- never more than the span; the GPU count scales GPU-seconds only (llama2-accessory, T15) ---
@needs_shared
def test_the_first_lines_steps_before_the_first_stamp_grow_the_span_and_say_so() -> None:
    doc = analyse_log(_case("T15"), PROFILES, gpus=8).document
    # its first line (05:19:47) prints 10 steps of 4.39 s: they ran, and end where it is stamped
    assert doc["span_s"] == pytest.approx(456.46) and doc["lead_in_s"] == pytest.approx(43.916)
    assert _accounted(doc) == pytest.approx(456.46 + 43.916, abs=0.01)
    assert any("43.916 s before the first stamp are accounted" in n for n in doc["notes"])


@needs_shared
def test_a_runs_only_iteration_before_the_first_stamp_is_productive_not_cut() -> None:
    doc = analyse_log(_case("T03"), PROFILES, gpus=8).document  # Megatron: unstamped iteration
    assert doc["goodput"]["gpu_seconds"]["productive"] == pytest.approx(8 * 23.4914, abs=0.01)
    assert doc["goodput"]["goodput"] > 0.2
    assert _accounted(doc) <= doc["span_s"] + doc["lead_in_s"] + 1e-3


@needs_shared
@pytest.mark.parametrize("name", ["T01", "T02", "T03", "T07", "T11", "T15", "T17", "T20"])
def test_the_gpu_count_scales_gpu_seconds_and_nothing_else(name: str) -> None:
    one, eight = (analyse_log(_case(name), PROFILES, gpus=g).document for g in (1, 8))
    bare = analyse_log(_case(name), PROFILES).document
    same = [(s["from_step"], s["to_step"], s["ratio"], s["extra_s"]) for s in bare["slowdowns"]]
    for doc in (one, eight):
        assert [(s["from_step"], s["to_step"], s["ratio"], s["extra_s"])
                for s in doc["slowdowns"]] == same
    for category, seconds in one["goodput"]["gpu_seconds"].items():
        assert eight["goodput"]["gpu_seconds"][category] == pytest.approx(8 * seconds, abs=0.01)
    assert _accounted(eight) <= eight["span_s"] + eight.get("lead_in_s", 0) + 1e-3


def _steady(started: bool) -> list[str]:
    """Stamped lines every 30 s of 10 steps of 3 s each, with or without a start-up line."""
    lines = ["[2026-12-01 10:00:00] using world size: 8"] if started else []
    for k, step in enumerate(range(10, 110, 10)):
        t = 60 + 30 * k
        lines.append(f" [2026-12-01 10:{t // 60:02d}:{t % 60:02d}] iteration {step:>8}/    1000 "
                     "| elapsed time per iteration (ms): 3000.0 | lm loss: 5.1E+00 |")
    return lines + ["saving checkpoint at iteration     100 to /ckpt",
                    "  successfully saved checkpoint from iteration     100 to /ckpt"]


def test_steps_begun_before_the_first_stamp_are_accounted_within_a_grown_span() -> None:
    doc = read(_steady(False), gpus=2)  # the first line's 30 s began before the log does
    assert doc["span_s"] == pytest.approx(9 * 30) and doc["lead_in_s"] == pytest.approx(30)
    assert _accounted(doc) == pytest.approx(10 * 30)
    assert any("30 s before the first stamp are accounted" in n for n in doc["notes"])


def test_negative_steps_inside_the_span_are_all_accounted_and_nothing_noted() -> None:
    doc = read(_steady(True), gpus=2)
    assert _accounted(doc) == pytest.approx(doc["span_s"]) == pytest.approx(60 + 9 * 30)
    assert not any("before the first stamp" in n for n in doc["notes"])


# -- a hang the log shows is `other`, and the window is the whole log (T02, T11) ---------------
@needs_shared
def test_a_hang_under_scheduler_pulses_is_booked_other_over_the_whole_log() -> None:
    doc = analyse_log(_case("T02"), PROFILES, gpus=8).document
    assert doc["hangs"][0]["seconds"] == 7207
    assert doc["goodput"]["gpu_seconds"]["other"] == pytest.approx(7207 * 8)
    # the hang, and before it the first line's printed 111 s iteration (unstamped: it ends where
    # the first pulse is stamped: a lead-in before the span)
    assert doc["span_s"] == pytest.approx(7207) and doc["lead_in_s"] == pytest.approx(111)
    assert _accounted(doc) == pytest.approx(7207 + 111)


@needs_shared
def test_a_watchdogs_wait_is_booked_other_before_the_job_ends() -> None:
    result = analyse_log(_case("T11"), PROFILES, gpus=8)
    doc = result.document
    assert doc["goodput"]["gpu_seconds"]["other"] == pytest.approx(25625.613 * 8, rel=1e-4)
    assert _accounted(doc) == pytest.approx(doc["span_s"], abs=0.01)
    assert result.events[-1]["event"] == "job_end"
    assert result.events[-1]["t"] - result.events[0]["t"] == pytest.approx(doc["span_s"], abs=0.01)


def _pulsed(every_s: int) -> list[str]:
    """Megatron lines with no stamp of their own, then three scheduler pulses `every_s` apart."""
    lines = [f"[default7]: iteration {s:>8}/  115311 | elapsed time per iteration (s): 111.00 | "
             "lm loss: 2.1E+00 |" for s in range(44997, 45001)]
    for k in range(3):
        t = 3 * 3600 + k * every_s
        lines.append(f"[2022-05-01 {t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}] PULSE: "
                     "tr11-176B-ml is running for 1-07:27:33 since 2022-04-29T20:28:38 (1528763 "
                     "on 'gpu_p5' partition (node-[01-34,36-49])")
    return lines


def test_pulses_long_after_the_last_step_are_a_hang_booked_other() -> None:
    doc = read(_pulsed(3600), gpus=1)
    assert doc["goodput"]["gpu_seconds"]["other"] == pytest.approx(7200)


def test_negative_pulses_soon_after_the_last_step_are_no_hang() -> None:
    doc = read(_pulsed(200), gpus=1)
    assert doc["hangs"] == [] and doc["goodput"]["gpu_seconds"]["other"] == 0.0


# -- a long steady log timed by whole-second stamps shows no slowdown (T20's line, 500k steps) --
def _fairseq(path: Path, steps: int, step_s: float, slower_from: int = 0) -> Path:
    """`steps` updates of fairseq's real `train_inner` line (T20's third line), one a line,
    each `step_s` seconds (× 1.1 from `slower_from` on), stamped to the whole second."""
    assert SHARED is not None
    head, _, line = _case("T20").read_text().splitlines()[:3]
    start = time.mktime(time.strptime(line[:19], "%Y-%m-%d %H:%M:%S"))
    for old, new in ((" 2 / 39 ", " {n} / {total} "), ("num_updates=2,", "num_updates={n},"),
                     ("ups=2.24,", "ups={ups:.2f},"), (", wall=6", ", wall={wall}")):
        assert old in line
        line = line.replace(old, new)
    t = start
    with path.open("w") as out:
        out.write(head + "\n")
        for n in range(1, steps + 1):
            seconds = step_s * (1.1 if slower_from and n >= slower_from else 1.0)
            t += seconds
            out.write(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(int(t)))
                      + line[19:].format(n=n, total=steps, ups=1 / seconds,
                                         wall=int(t - start) + 6) + "\n")
    return path


@needs_shared
def test_half_a_million_steady_steps_stamped_to_the_second_are_no_slowdown(
        tmp_path: Path) -> None:
    doc = analyse_log(_fairseq(tmp_path / "long.log", 500_000, 0.45), PROFILES, gpus=8).document
    assert doc["steps"]["last"] == 500_000
    assert doc["slowdowns"] == [] and doc["goodput"]["gpu_seconds"]["slowdown"] == 0.0


@needs_shared
@pytest.mark.parametrize("step_s", [0.1, 0.23, 0.7, 6.1])
def test_steady_steps_thinned_to_coarse_windows_are_no_slowdown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_s: float) -> None:
    """The same log shape past the reader's bound on records (`reader.MAX_PROGRESS`, lowered
    here to 2,000 of 8,000 lines): merged records span 8 or 16 steps in 3 to 7 whole seconds."""
    monkeypatch.setattr(reader, "MAX_PROGRESS", 2000)
    doc = analyse_log(_fairseq(tmp_path / "s.log", 8000, step_s), PROFILES, gpus=8).document
    assert doc["slowdowns"] == []


@needs_shared
def test_negative_a_ten_percent_slowdown_in_the_same_log_is_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_PROGRESS", 2000)
    doc = analyse_log(_fairseq(tmp_path / "s.log", 8000, 0.45, slower_from=5000), PROFILES,
                      gpus=8).document
    (slow,) = doc["slowdowns"]
    assert abs(slow["from_step"] - 5000) <= 250 and slow["ratio"] == pytest.approx(1.1, abs=0.01)


# -- two logs in one file: both runs accounted, or the one left out said (cat T20 T07) ---------
def _joined(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "joined.log"
    path.write_text("".join(_case(n).read_text() for n in names))
    return path


@needs_shared
@pytest.mark.parametrize(("order", "where"), [(("T20", "T07"), "an earlier run"),
                                              (("T07", "T20"), "a later run")])
def test_a_run_of_another_shape_in_the_same_file_is_said_to_be_left_out(
        tmp_path: Path, order: tuple[str, str], where: str) -> None:
    doc = analyse_log(_joined(tmp_path, *order), PROFILES, gpus=8, with_explain=True).document
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (182, 186)  # T07's, the longer
    (note,) = [n for n in doc["notes"] if "in the same file" in n]
    assert where in note and "train_inner" in note and "not accounted" in note
    (left,) = doc["explain"]["not_progress"]
    assert "train_inner" in left["template"] and "another run's or job's steps" in left["why"]


@needs_shared
def test_two_copies_of_one_log_are_two_runs_both_accounted(tmp_path: Path) -> None:
    doc = analyse_log(_joined(tmp_path, "T07", "T07"), PROFILES, gpus=8).document
    assert len(doc["restarts"]) == 1 and doc["step_time_s"]["count"] == 10
    assert _accounted(doc) == pytest.approx(doc["span_s"]) == pytest.approx(2 * 638.768, abs=0.01)
    assert not any("in the same file" in n for n in doc["notes"])


def test_negative_the_same_loops_line_written_otherwise_is_no_other_run() -> None:
    """lit-gpt prints `stEp` on its first three lines, then `step` (holdout A19)."""
    log = next((HERE.parent / "data" / "training_logs" / "holdout" / "cases").glob("A19_*"))
    doc = analyse_log(log, PROFILES, gpus=1).document
    assert not any("in the same file" in n for n in doc["notes"])
