"""Steps and step times read on the fresh15 first-contact batch's real lines, each with a
negative that must not be read that way: icefall's two stamped records glued on one pasted line
and its `utt_duration=599.6 frames` (R15), and so-vits-svc 3.0's step inside a bare list of
losses, saved again at the step each relaunch loaded (R18).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def span(doc: dict) -> tuple[int, int]:
    return doc["steps"]["first"], doc["steps"]["last"]


# -- icefall (k2-fsa/k2#1288, fresh15 R15) -------------------------------------------------------
def _icefall(batch: int, stamp: str, frames: str) -> str:
    return (f"{stamp} INFO [train_phone_kaldi.py:979] Epoch 1, batch {batch}, loss[otc_loss=2.869, "
            f"loss=2.869, over 3893.00 frames. utt_duration={frames} frames, utt_pad_proportion="
            f"0.2326, over 26.00 utterances.], tot_loss[otc_loss=2.866, loss=2.866, over 33329.54 "
            f"frames. utt_duration=609.2 frames, utt_pad_proportion=0.1548, over 219.07 "
            f"utterances.], batch size: 27, lr: 3.00e-03")


GLUED = (_icefall(7, "2024-05-31 15:42:22,402", "599.6") + " "
         + _icefall(8, "2024-05-31 15:42:23,249", "718.2")
         + " [F] /var/www/k2/csrc/intersect_dense.cu:174:k2::MultiGraphDenseIntersect::"
           "MultiGraphDenseIntersect(k2::FsaVec&) Check failed: is_decreasing Sequences")


def test_a_stamped_record_glued_after_another_on_one_line_is_read_as_its_own() -> None:
    doc = read([GLUED])
    assert span(doc) == (7, 8)
    assert abs(doc["step_time_s"]["median"] - 0.847) < 1e-3


def test_a_stamp_quoted_inside_a_message_does_not_cut_the_line() -> None:
    # negative: the same layout inside the message, followed by other words than the level
    lines = [f"2024-05-31 15:42:{10 + k:02d},000 INFO Epoch 1, batch {k}, loss 2.8, data from "
             f"2024-05-30 10:00:00,000 snapshot tables" for k in range(1, 6)]
    doc = read(lines)
    assert span(doc) == (1, 5)
    assert abs(doc["step_time_s"]["median"] - 1.0) < 1e-6


def test_a_length_counted_in_frames_is_no_duration_whatever_its_name() -> None:
    lines = [_icefall(k, f"2024-05-31 15:42:{20 + 2 * k:02d},000", "599.6") for k in (1, 2, 3)]
    doc = read(lines)
    assert abs(doc["step_time_s"]["median"] - 2.0) < 1e-6  # from the stamps, not 599.6


def test_a_duration_named_so_with_a_time_unit_after_it_is_still_one() -> None:
    # negative: `duration=1.5 s` is a time (the unit word after it is a time unit)
    lines = [f"2024-05-31 15:42:{10 + 2 * k:02d},000 INFO step {k}, loss 2.1, step_duration=1.5 s"
             for k in range(1, 5)]
    assert abs(read(lines)["step_time_s"]["median"] - 1.5) < 1e-6


# -- so-vits-svc 3.0 (SKwths/so-vits-svc-dodo logs/32k/train.log, fresh15 R18) -----------------
def _svc(clock: str, epoch: int, step: int) -> list[str]:
    return [f"2023-02-18 {clock},251\t32k\tINFO\tTrain Epoch: {epoch} [0%]",
            f"2023-02-18 {clock},251\t32k\tINFO\t[2.4390528202056885, 2.216291904449463, "
            f"5.347744941711426, 18.449054718017578, 0.8107398152351379, {step}, "
            f"9.86096681355974e-05]"]


def _svc_save(clock: str, epoch: int, step: int) -> list[str]:
    return [f"2023-02-18 {clock},406\t32k\tINFO\tSaving model and optimizer state at iteration "
            f"{epoch} to ./logs\\32k\\{x}_{step}.pth" for x in "GD"]


def _svc_load(clock: str, epoch: int, step: int) -> list[str]:
    return [f"2023-02-18 {clock},296\t32k\tINFO\tLoaded checkpoint './logs\\32k\\{x}_{step}.pth' "
            f"(iteration {epoch})" for x in "GD"]


def test_the_one_steady_integer_of_a_bare_list_of_losses_is_the_step() -> None:
    lines = (_svc("19:07:57", 113, 5600) + _svc("19:11:11", 117, 5800)
             + _svc("19:14:17", 121, 6000) + _svc_save("19:14:20", 121, 6000)
             + _svc("19:17:38", 125, 6200))
    doc = read(lines)
    assert span(doc) == (5600, 6200)
    assert 0.9 < doc["step_time_s"]["median"] < 1.05  # 200 steps between the list stamps


def test_a_bare_list_with_two_steady_integers_names_no_step() -> None:
    # negative: which of two steadily rising integers is the step is not settled
    lines = [f"2023-02-18 19:0{k}:00,000\tINFO\t[2.43, {100 * k}, 0.81, {50 * k}]"
             for k in range(1, 6)]
    assert read(lines)["steps"]["last"] is None


def test_a_bare_list_printed_all_at_once_names_no_step() -> None:
    # negative: a table printed in one second is no loop
    lines = [f"2023-02-18 19:00:00,000\tINFO\t[2.43, 1.1, 0.81, {k}]" for k in range(1, 6)]
    assert read(lines)["steps"]["last"] is None


def test_a_save_again_at_the_step_a_relaunch_loaded_is_another_save() -> None:
    lines = (_svc("20:24:22", 193, 9600) + _svc("20:27:36", 197, 9800)
             + _svc("20:30:51", 201, 10000) + _svc_save("20:30:54", 201, 10000)
             + _svc_load("21:14:56", 201, 10000)
             + _svc("21:15:15", 201, 10000) + _svc_save("21:15:19", 201, 10000)
             + _svc("21:18:09", 205, 10200) + _svc("21:20:57", 209, 10400))
    doc = read(lines)
    saves = [c["step"] for c in doc["checkpoint_saves"]]
    assert saves == [10000, 10000]


def test_a_save_line_printed_twice_with_no_load_between_is_one_save() -> None:
    # negative: the G and D lines, or the same start printed twice, are one save
    lines = (_svc("20:24:22", 193, 9600) + _svc("20:27:36", 197, 9800)
             + _svc("20:30:51", 201, 10000) + _svc_save("20:30:54", 201, 10000)
             + _svc_save("20:30:56", 201, 10000)
             + _svc("21:18:09", 205, 10200) + _svc("21:20:57", 209, 10400))
    assert [c["step"] for c in read(lines)["checkpoint_saves"]] == [10000]


# -- fairseq via hydra, wav2vec 2.0 (fresh15 R02) -----------------------------------------------
def _inner(clock: str, update: int) -> str:
    return (f"[2022-04-08 {clock},100][train_inner][INFO] - {{\"epoch\": 10, \"update\": 9.6, "
            f"\"loss\": \"3.922\", \"ups\": \"0.5\", \"num_updates\": \"{update}\", "
            f"\"lr\": \"0.0005\", \"train_wall\": \"400\", \"wall\": \"9000\"}}")


def _fairseq_save(clock: str, words: str) -> list[str]:
    return [f"[2022-04-08 {clock},000][fairseq.trainer][INFO] - Saving checkpoint to {words}",
            f"[2022-04-08 {clock},900][fairseq.checkpoint_utils][INFO] - Saved checkpoint "
            f"{words}"]


def test_a_save_after_the_last_step_line_naming_a_later_step_is_the_last_step() -> None:
    lines = [_inner("20:00:00", 4200), _inner("20:06:40", 4400), _inner("20:13:20", 4600)]
    lines += _fairseq_save("20:20:00", "checkpoints/checkpoint_best.pt (epoch 10 @ 4791 updates, "
                                       "score 3.792) (writing took 2.43 seconds)")
    assert span(read(lines)) == (4200, 4791)


def test_a_save_whose_step_only_its_path_names_does_not_extend_the_steps() -> None:
    # negative: a file name is no count the run printed
    lines = [_inner("20:00:00", 4200), _inner("20:06:40", 4400), _inner("20:13:20", 4600)]
    lines += _fairseq_save("20:20:00", "checkpoints/checkpoint-4791.pt")
    assert span(read(lines)) == (4200, 4600)


def test_a_save_one_step_past_a_log_printed_every_step_does_not_extend_the_steps() -> None:
    # negative (shared T03): Megatron saves `at iteration 33241` after printing 33240
    lines = [f"[2021-08-08 00:{k:02d}:00,000] iteration    {33230 + k}/  311541 | elapsed time per "
             f"iteration (ms): 23491.4 | lm loss: 2.722675E+00 |" for k in range(11)]
    lines += ["saving checkpoint at iteration   33241 to /gpfsscratch/checkpoints/tr1-13B",
              "  successfully saved checkpoint at iteration   33241 to /gpfsscratch/checkpoints"]
    assert span(read(lines)) == (33230, 33240)
