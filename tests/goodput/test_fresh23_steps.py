"""Step-time classes the fresh23 first-contact batch showed misread (13/19 at first contact,
tests/data/first_contact/training_logs_fresh23_2026-12-07.txt), each on the case's real lines
(tests/data/training_logs/fresh23, SOURCES_aa.md) with a negative beside it: a near-miss that
must not be read that way.

- `A (B): a (b)` names each value by its own name: BasicSR's `time (data): 0.326 (0.002)` is
  the iteration's time, then the data loading's (AA19, Flare7K);
- a step printed again by its own template with no later stamp (absl's line, then the same
  record on stdout) is one step's lines, no other work in the next window (AA01, TF Model
  Garden's Orbit);
- a rate printed to one figure (`steps/sec:    0.1`) only bounds the step time that the stamps
  of the same records measure (AA01);
- finished tqdm bars of two totals drawn in turn (training, then validation) count steps, and
  `Epoch 6 complete.` closes the epoch of the bar above it (AA17, FoodSeg_mask2former).
"""

from __future__ import annotations

from types import SimpleNamespace

from gpuslo.goodput.logs.coarserate import coarse_rates
from gpuslo.goodput.logs.epochs import closing_markers
from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from gpuslo.goodput.logs.tokens import values
from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh23", name)


def _median(doc: dict) -> float | None:
    return doc["step_time_s"]["median"]


def _roles(lines: list[str]) -> dict[str, str]:
    """Field key → role of the one template `lines` make."""
    (tpl,) = group([SampleRecord(k, t, None, None) for k, t in enumerate(lines, 1)])
    reading = read_template(tpl)
    return {f.key: reading.roles[f.index].role for f in tpl.fields}


# -- `time (data): a (b)` (Flare7K's BasicSR logger, ykdai/Flare7K#25, fresh23 AA19) ------------
_AA19 = ("[debug..][epoch:  0, iter:  15,848, lr:(1.000e-04,)] [eta: 2 days, 12:42:48, "
         "time (data): 0.326 (0.002)] l1_flare: 7.9467e-02 l1_base: 7.2548e-02")


def test_a_paired_name_gives_each_value_its_own_name() -> None:
    found = values(_AA19)
    keys = {v.key: v.number for v in found}
    assert keys["time"] == 0.326 and keys["data"] == 0.002
    assert _roles([_AA19, _AA19.replace("15,848", "15,868").replace("0.326", "0.331")])[
        "time"] == "step_s"


def test_the_echoed_basicsr_record_gives_the_step_time() -> None:
    doc = read(case("AA19"))
    assert abs(_median(doc) - 0.326) < 1e-6
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (15848, 15848)


def test_a_bracketed_unit_or_a_lone_bracket_pairs_nothing() -> None:
    # negative: `(ms)` is the unit of one value; a bracket with no value after it names no pair
    found = values("elapsed time per iteration (ms): 1234.5 (1200.1) | loss 2.1")
    assert found[0].key == "elapsed time per iteration (ms)" and found[1].key == ""
    assert values("time (data): 0.326 | loss 1.2")[0].key == "time (data)"
    assert values("time (data): 0.326 (0.002, 3)")[1].key == ""


# -- a record printed twice, and a rate to one figure (Orbit, hiertext#6, fresh23 AA01) ----------
def test_orbit_records_printed_twice_are_timed_by_their_absl_stamps() -> None:
    doc = read(case("AA01"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (140, 180)
    # step 160 at 22:45:08.585, step 180 at 22:51:21.874: 373.29 s / 20 steps
    assert abs(_median(doc) - 18.66) < 0.01


def _record(step: int, step_s: float, source: str, role: str, scale: float = 1.0,
            matcher: object | None = None) -> SimpleNamespace:
    reading = SimpleNamespace(roles={0: SimpleNamespace(role=role, scale=scale)})
    matcher = matcher or SimpleNamespace(reading=reading)
    rate = step_s if source == "rate" else None
    prog = SimpleNamespace(bar=False, rate_s=rate, matcher=matcher)
    return SimpleNamespace(glob=step, step_s=step_s, source=source, warm=False, run=0,
                           prog=prog)


def test_a_one_figure_rate_is_kept_out_where_the_stamps_measure_inside_it() -> None:
    matcher = SimpleNamespace(reading=SimpleNamespace(
        roles={0: SimpleNamespace(role="rate_ips", scale=1.0)}))
    recs = [_record(140, 10.0, "rate", "rate_ips", matcher=matcher),  # `steps/sec: 0.1`
            _record(160, 10.0, "rate", "rate_ips", matcher=matcher),
            _record(180, 18.66, "stamps", "rate_ips", matcher=matcher)]
    coarse_rates(recs)
    assert [r.warm for r in recs] == [True, True, False]


def test_a_finer_rate_or_one_the_stamps_contradict_stays() -> None:
    # negative: `global_step/sec: 3.77893` is printed finely; `0.1` with stamps at 30 s a step
    # (outside 6.7-20 s) is no rounding of the same time; no stamps: the rate is all there is
    matcher = SimpleNamespace(reading=SimpleNamespace(
        roles={0: SimpleNamespace(role="rate_ips", scale=1.0)}))
    fine = [_record(70, 1 / 3.77893, "rate", "rate_ips", matcher=matcher),
            _record(80, 0.2646, "stamps", "rate_ips", matcher=matcher)]
    far = [_record(140, 10.0, "rate", "rate_ips", matcher=matcher),
           _record(160, 30.0, "stamps", "rate_ips", matcher=matcher)]
    alone = [_record(140, 10.0, "rate", "rate_ips", matcher=matcher),
             _record(160, 10.0, "rate", "rate_ips", matcher=matcher)]
    for recs in (fine, far, alone):
        coarse_rates(recs)
        assert not any(r.warm for r in recs)


def test_a_copy_stamped_later_still_holds_other_work() -> None:
    # negative: Caffe's `Iteration 7000, Testing net (#0)` and, 105 s later, its `Iteration 7000,
    # loss = …` (fresh C04): the window to 7100 held the test, and stays out of the median
    doc = read(batch_case("fresh", "C04"))
    assert abs(_median(doc) - 1.394) < 0.01


# -- finished bars in turn, closed by `Epoch N complete.` (FoodSeg_mask2former#3, AA17) ----------
_TRAIN_BAR = ("100%|" + "\u2588" * 40 + "| 2492/2492 [20:50<00:00,  1.99it/s]")
_VALID_BAR = ("100%|" + "\u2588" * 40 + "| 1068/1068 [03:35<00:00,  4.95it/s]")


def test_finished_training_bars_between_validation_bars_give_the_batch_time() -> None:
    doc = read(case("AA17"))
    assert abs(_median(doc) - 0.5016) < 0.001  # 20:50 = 1,250 s / 2,492 batches
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (6, 8)
    # `Saving model at epoch 6` commits the bar above `Epoch 6 complete.`, not epoch 7's
    assert [s["step"] for s in doc["checkpoint_saves"]] == [doc["steps"]["first"]]


def test_bars_drawn_finished_in_turn_count_their_steps() -> None:
    lines = [_TRAIN_BAR, "Epoch 6 complete. Avg Training Loss: 16.8108", _VALID_BAR,
             _TRAIN_BAR, "Epoch 7 complete. Avg Training Loss: 15.4615", _VALID_BAR]
    doc = read(lines)
    assert abs(_median(doc) - 0.5016) < 0.001
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (6, 7)
    # negative: a bar caught short of its N, whose n goes back and forth, counts no steps
    short = _TRAIN_BAR.replace("2492/2492", "1200/2492")
    assert read([short, _VALID_BAR, short, _VALID_BAR, short])["steps"]["first"] is None


def test_closing_markers_open_the_next_epoch() -> None:
    markers = [(4, 6, "Epoch 6 complete. Avg Training Loss: 16.8108"),
               (8, 6, "Saving model at epoch 6"),
               (10, 7, "Epoch 7 complete. Avg Training Loss: 15.4615")]
    assert closing_markers(markers) == [(-1, 6), (4, 7), (8, 7), (10, 8)]


def test_opening_or_save_only_markers_stay_as_printed() -> None:
    # negative: `Epoch 7/10` opens its epoch; tensorflow-yolov3's `=> Epoch:  1 … Saving …`
    # alone says no epoch is over (fresh21 Y06)
    mixed = [(1, 7, "Epoch 7/10"), (5, 7, "Epoch 7 complete.")]
    saves = [(3, 1, "=> Epoch:  1 Time: 2020-03-15 07:54:53 Train loss: 24.01 Test loss: "
                    "19.03 Saving ./checkpoint/yolov3_test_loss=19.0295.ckpt ...")]
    assert closing_markers(mixed) == [(1, 7), (5, 7)]
    assert closing_markers(saves) == [(3, 1)]
