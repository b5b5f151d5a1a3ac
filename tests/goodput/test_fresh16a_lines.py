"""Step lines the fresh16 first-contact batch showed misread, each on the case's real lines with a
negative: a Keras Progbar seen for two or three states only (S06, S12) and a message glued after
its last value (S12's `Killed`); finished sampling bars that stand at one value beside a global
step that moves (Sana, S02); an unnamed epoch and in-epoch counter opening a record (S04);
SageMaker's MPI tag with carriage returns and escapes written out as rsyslog text, and a tqdm bar
reset to 0 for its next pass (Lightning, S14); CNTK's `Minibatch[   1- 500]` range, printed once
per rank (S18).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.read import ReadStats, physical_lines, read_lines
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def steps(doc: dict) -> tuple[int | None, int | None]:
    got = doc.get("steps") or {}
    return got.get("first"), got.get("last")


# -- k210-yolo-framework issue, tf.keras Progbar states, fresh16 S06 -----------------------------
K210 = ["979/982 [============================>.] - ETA: 20s - loss: 39.1206 - l1_loss: 11.0472 - "
        "l2_loss: 27.5336 - l1_p: 0.1742 - l1_r: 0.0855 - l2_p: 0.0486 - l2_r: ",
        "0980/982 [============================>.] - ETA: 13s - loss: 39.1038 - l1_loss: 11.0427 - "
        "l2_loss: 27.5213 - l1_p: 0.1744 - l1_r: 0.0855 - l2_p: 0.0487 - l2_r: ",
        "0981/982 [============================>.] - ETA: 6s - loss: 39.0847 - l1_loss: 11.0408 - "
        "l2_loss: 27.5041 - l1_p: 0.1747 - l1_r: 0.0856 - l2_p: 0.0487 - l2_r: 0.0118"]


def test_a_keras_bar_of_two_or_three_states_is_read_as_steps() -> None:
    assert steps(read(K210)) == (979, 981)
    assert steps(read(K210[:2])) == (979, 980)


def test_an_n_of_n_without_keras_glyphs_needs_more_lines() -> None:
    # negative: the same two records with no drawn bar are no recurring progress yet
    plain = [line.replace(" [============================>.]", "") for line in K210[:2]]
    assert steps(read(plain)) == (None, None)


# -- keras-YOLOv3-model-set issue, a bar state with the shell's `Killed` glued on, fresh16 S12 ---
YOLO = ["248/441 [===============>..............] - ETA: 18:02 - loss: 26.6065 - location",
        "249/441 [===============>..............] - ETA: 17:56 - loss: 26.6288 - location_loss: "
        "5.6755 - confidence_loss: 12.4886 - class_loss: 2.3435Killed"]


def test_a_message_glued_after_a_keras_bar_is_read_as_its_own() -> None:
    doc = read(YOLO)
    assert steps(doc) == (248, 249)
    assert len(doc["interruptions"]) == 1 and doc["interruptions"][0]["after_step"] == 249


def test_a_keras_bar_whose_last_value_has_a_unit_keeps_it() -> None:
    # negative: `- 3s 134ms/step` after a finished bar is its time, no glued message
    doc = read(["438/441 [============================>.] - ETA: 2s - loss: 1.5",
                "441/441 [==============================] - 250s 567ms/step - loss: 1.4"])
    assert steps(doc) == (438, 441) and doc["interruptions"] == []


# -- NVlabs/Sana#206, global step lines then ten finished validation bars, fresh16 S02 ----------
def _sana(step: int, stamp: str) -> str:
    return (f"2025-03-18 {stamp} - [Sana] - INFO - Epoch: 2 | Global Step: {step} | Local Step: "
            f"{step - 1877} // 1877, total_eta: 6:23:44, epoch_eta:0:19:20, time: all:1.393, "
            "model:0.852, data:0.003, lm:0.076, vae:0.456, lr:4.330e-05, Cap: prompt, s:(26, 36), "
            "loss:0.6753, grad_norm:0.1536")


SANA = ([_sana(2956, "12:10:18"), _sana(2976, "12:10:46"), _sana(2996, "12:11:14"),
         "2025-03-18 12:11:18 - [Sana] - INFO - Running validation..."]
        + [f"100%|██████████| 19/19 [00:00<00:00, 24.{k:02d}it/s]" for k in range(10)])


def test_finished_bars_standing_at_one_value_are_not_the_steps() -> None:
    doc = read(SANA)
    assert steps(doc) == (2956, 2996) and doc["restarts"] == []
    assert abs(doc["step_time_s"]["median"] - 1.4) < 0.01


def test_a_bar_that_moves_still_wins_over_fewer_step_lines() -> None:
    # negative: ten bar states that advance (1/19 … 10/19) are a loop that moves, and more of them
    moving = SANA[:4] + [f" 50%|█████     | {k}/19 [00:0{k}<00:01, 1.00it/s]" for k in range(1, 11)]
    assert steps(read(moving)) == (1, 10)


# -- learning-to-see-in-the-dark issue, train_Sony.py's `%d %d Loss=%.3f Time=%.3f`, fresh16 S04 -
SONY = [f"333 {n} Loss=nan Time={t}" for n, t in zip(range(154, 162), (
    "0.040", "0.041", "0.043", "0.036", "0.042", "0.040", "0.036", "0.042"), strict=True)] + [
    "334 1 Loss=nan Time=0.044", "334 2 Loss=nan Time=0.042", "334 3 Loss=nan Time=0.036"]


def test_an_unnamed_epoch_and_counter_pair_gives_the_step_time() -> None:
    doc = read(SONY)
    assert doc["step_time_s"]["median"] == 0.041 and doc["restarts"] == []
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (333, 334)


def test_an_unnamed_pair_that_never_resets_is_not_an_epoch() -> None:
    # negative: a first number that stays while the second falls is no epoch and its counter
    wandering = [f"333 {n} Loss=nan Time=0.040" for n in (154, 160, 155, 161, 150)]
    assert steps(read(wandering)) == (None, None)


# -- aws-samples SageMaker workshop issue, Lightning under Open MPI with rsyslog escapes, S14 ----
TAG = "[1,mpirank:0,algo-1]<stdout>:"
SAGEMAKER = [
    f"{TAG}#015Epoch 0:  50% 1/2 [00:00<00:00,  6.54it/s, loss=2.29, v_num=0]", TAG,
    f"{TAG}#015Validation: 0it [00:00, ?it/s]#033[A", TAG,
    f"{TAG}#015Validation DataLoader 0: 100% 1/1 [00:00<00:00, 1113.73it/s]#033[A",
    f"{TAG}#015Epoch 0: 100% 2/2 [00:00<00:00, 12.33it/s, loss=2.29, v_num=0]",
    f"{TAG}#015Epoch 0: 100% 2/2 [00:00<00:00, 12.10it/s, loss=2.29, v_num=0, val_acc=0.166]",
    f"{TAG}#015                                                            #033[A",
    f"{TAG}#015Epoch 0: 100% 2/2 [00:00<00:00, 12.05it/s, loss=2.29, v_num=0, val_acc=0.166]",
    f"{TAG}#015Epoch 0:   0% 0/2 [00:00<?, ?it/s, loss=2.29, v_num=0, val_acc=0.166]        "
    "#015Epoch 1:   0% 0/2 [00:00<?, ?it/s, loss=2.29, v_num=0, val_acc=0.166]"]


def test_rsyslog_escapes_and_an_mpi_tag_are_read_as_a_bar_and_its_rank(tmp_path: Path) -> None:
    log = tmp_path / "sagemaker.log"
    log.write_text("\n".join(SAGEMAKER) + "\n")
    lines = list(read_lines(log, ReadStats()))
    assert "Epoch 1:   0% 0/2 [00:00<?, ?it/s, loss=2.29, v_num=0, val_acc=0.166]" in lines
    assert not any("#015" in line or "#033" in line for line in lines)
    doc = read(lines)
    assert steps(doc) == (1, 2) and doc["restarts"] == []


def test_a_hash_and_digits_that_name_no_control_character_stay_text() -> None:
    # negative: `#0150` is no rsyslog escape of CR followed by a 0, only `#015` is; an issue
    # number `#123` and a caret before a lowercase word (`^mask`) stay as they are
    assert physical_lines("see #123, #0150 and ^mask") == ["see #123, #0150 and ^mask"]
    assert physical_lines("a#015b") == ["a", "b"]


def test_a_trainers_own_numbers_after_a_hash_stay_text_where_no_router_escaped(
        tmp_path: Path) -> None:
    # negative: `#012`/`#015` after a blank and before one is a trainer's own numbering, in a
    # container message as in a file; only a stream showing a glued escape is read back
    for line in ("Epoch #012 step 5 loss 0.3", "checkpoint #015 saved"):
        assert physical_lines(line) == [line]
    plain, routed = tmp_path / "plain.log", tmp_path / "routed.log"
    plain.write_bytes(b"Epoch #012 step 5\ncheckpoint #015 saved\n")
    routed.write_bytes(b"a:#015Epoch 0: 1/2\n")
    assert list(read_lines(plain, ReadStats())) == ["Epoch #012 step 5", "checkpoint #015 saved"]
    assert list(read_lines(routed, ReadStats())) == ["a:", "Epoch 0: 1/2"]


def test_a_bar_drawn_at_0_before_its_pass_finished_is_no_reset() -> None:
    # negative: the same untimed draw at 0 after `1/2` (the pass not at its N) is no tqdm
    # reset: the counter went back, and the reader says so
    half = "Epoch 0:  50% 1/2 [00:00<00:00,  6.54it/s, loss=2.29, v_num=0]"
    zero = "Epoch 0:   0% 0/2 [00:00<?, ?it/s, loss=2.29, v_num=0]"
    full = "Epoch 0: 100% 2/2 [00:00<00:00, 12.05it/s, loss=2.29, v_num=0]"
    assert len(read([half, zero, half, full])["restarts"]) == 1


# -- CNTK BiDAF issue, ProgressPrinter's minibatch range printed by four ranks, fresh16 S18 ------
CNTK = ["NcclComm: initialized"] * 4 + [
    " Minibatch[   1- 500]: loss = 7.146891 * 22750, metric = 0.00% * 22750;"] * 4


def test_a_cntk_minibatch_range_is_read_once_from_its_lower_end() -> None:
    # ProgressPrinter's `Minibatch[a-b]` counts minibatches a..b from 1: the four ranks' copies
    # are one range, and the steps shown run from its lower end to its upper
    doc = read(CNTK)
    assert steps(doc) == (1, 500) and doc["restarts"] == []
    assert doc["steps"]["printed_first"] == 500 and doc["steps"]["global_first"] == 1
    more = CNTK + [" Minibatch[ 501-1000]: loss = 6.901234 * 22750, metric = 0.00% * 22750;"]
    assert steps(read(more)) == (1, 1000)


def test_ranges_from_the_last_reports_count_keep_their_upper_ends() -> None:
    # negative: MXNet's Speedometer prints `Batch [a-b]` from the count at its last report (the
    # lower end is no step of the range, fresh2's `[115980-116000]`), or from 0 with auto_reset
    # off; a CNTK excerpt that starts mid-way shows no range starting at 1
    mxnet = [f"Epoch[0] Batch [{n - 20}-{n}]\tSpeed: 3.24 samples/sec\tacc=0.5"
             for n in (116000, 116020, 116040)]
    assert steps(read(mxnet)) == (116000, 116040)
    kept = [f"Epoch[5] Batch [0-{n}]\tSpeed: 25.77 samples/sec\tacc=0.9" for n in (20, 40, 60)]
    assert steps(read(kept)) == (20, 60)
    mid = [" Minibatch[ 501-1000]: loss = 6.901234 * 22750, metric = 0.00% * 22750;"]
    assert steps(read(mid * 4)) == (1000, 1000)


def test_a_dash_with_a_blank_before_it_is_no_range() -> None:
    # negative: `step 5 - 500]` is a counter, a dash, then another number: no range of steps
    doc = read([f"[step {n} - {n * 100}] loss = 0.5" for n in (1, 2, 3)])
    assert steps(doc) == (1, 3)
