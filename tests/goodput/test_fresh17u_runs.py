"""Restarts read on the fresh17 first-contact batch's real lines, each with a negative that must not
be read that way: the script's opening printed again after a traceback, its later start-up lines
printed on inside the new launch (U14); an epoch counter printed every few that starts again after
its N, a new model of one process (U18); stamped epoch markers alone that fall to epoch 1 after a
pause a new process needs (U11).
"""

from __future__ import annotations

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh17", name)


# -- the opening printed again after a traceback (hhd_failure_prediction, fresh17 U14) -----------
def test_an_opening_printed_again_after_a_traceback_is_a_relaunch_and_the_crash_an_interruption(
        ) -> None:
    doc = read(case("U14"))
    assert len(doc["restarts"]) == 1
    assert [i["cause"] for i in doc["interruptions"]] == ["python_exception"]


def test_start_up_lines_printed_on_with_the_loop_going_on_are_no_relaunch() -> None:
    # negative: the same opening printed twice, but the counter goes on after it: a status pair
    lines = ["2025-01-05 20:38:57,191 [INFO] Loading data from disks.csv",
             "2025-01-05 20:39:02,483 [INFO] Loaded 7320142 rows",
             "2025-01-05 20:39:42,292 [INFO] Fold 1/4",
             "2025-01-05 20:40:42,292 [INFO] Fold 2/4",
             "2025-01-05 20:41:57,183 [INFO] Loading data from disks.csv",
             "2025-01-05 20:42:03,116 [INFO] Loaded 7320142 rows",
             "2025-01-05 20:42:42,292 [INFO] Fold 3/4",
             "2025-01-05 20:43:42,292 [INFO] Fold 4/4"]
    assert read(lines)["restarts"] == []


# -- per-model epoch counters printed every 5 (GoDaddy density forecasting, fresh17 U18) -----------
def test_a_counter_printed_every_few_that_starts_again_after_its_n_is_a_new_phase() -> None:
    doc = read(case("U18"))
    assert doc["restarts"] == []
    assert doc["interruptions"] == []


def test_a_counter_resumed_mid_way_after_its_n_stays_a_restart() -> None:
    # negative: after [30/30] the counter comes back at 15 and goes on by 1: not from its start
    lines = [f"[{e}/30] Training loss: 18.{e:02d}\t Validation loss: 38.1239" for e in range(1, 31)]
    lines += [f"[{e}/30] Training loss: 17.{e:02d}\t Validation loss: 37.1239"
              for e in range(15, 20)]
    assert len(read(lines)["restarts"]) == 1


# -- epoch markers alone, four launches days apart (PPI-predictor, fresh17 U11) -------------------
def test_stamped_epoch_markers_falling_to_1_after_a_long_pause_are_relaunches() -> None:
    doc = read(case("U11"))
    assert [r["line"] for r in doc["restarts"]] == [42, 82, 86]


def _markers(start_s: int, epochs: int) -> list[str]:
    out = []
    for e in range(1, epochs + 1):
        t = start_s + 5 * e
        out.append(f"2024-11-19 19:{t // 60:02d}:{t % 60:02d},018 - INFO - Epoch {e}/{epochs}, "
                   f"Train Loss: 0.09{e:02d}")
    return out


def test_epoch_markers_falling_at_the_runs_own_pace_or_unstamped_are_no_relaunch() -> None:
    # negatives: a second model trained at once in one process (5 s later, its own pace), and
    # the same markers with no stamps (nothing tells a new process)
    assert read(_markers(0, 5) + _markers(25, 5))["restarts"] == []
    bare = [line.split(" - INFO - ")[1] for line in _markers(0, 5) + _markers(3000, 5)]
    assert read(bare)["restarts"] == []
    assert len(read(_markers(0, 5) + _markers(3000, 5))["restarts"]) == 1
