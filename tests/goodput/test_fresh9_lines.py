"""Line kinds the fresh9 first-contact batch showed missing, each read on the case's real lines
and on a negative beside it (tests/data/training_logs/fresh9, issue 23).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.tokens import values

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def span(doc: dict) -> tuple:
    return doc["steps"]["first"], doc["steps"]["last"]


# -- an undefined time glued to its unit (modded-nanogpt, KellerJordan/modded-nanogpt PR#65, L06) -
NANOGPT = ["step:0/1480 val_loss:7.7109 train_time:0ms step_avg:nanms",
           "step:125/1480 val_loss:4.3719 train_time:29736ms step_avg:258.57ms",
           "step:250/1480 val_loss:3.9992 train_time:62563ms step_avg:260.68ms",
           "step:375/1480 val_loss:3.8241 train_time:96107ms step_avg:263.31ms",
           "step:500/1480 val_loss:3.7067 train_time:130164ms step_avg:265.64ms",
           "step:625/1480 val_loss:3.6328 train_time:164680ms step_avg:267.77ms"]


def test_nan_glued_to_its_unit_is_a_missing_value_of_the_same_line_kind() -> None:
    # `step_avg:nanms` (0 ms / 0 timed steps) keeps the step-0 line in the template of the
    # others, so its lone `train_time:0ms` is not taken for a per-step time
    assert [(v.text, v.number, v.unit) for v in values("step_avg:nanms")] == [("nanms", None,
                                                                                "ms")]
    doc = read(NANOGPT)
    assert span(doc) == (0, 625)
    assert abs(doc["step_time_s"]["median"] - 0.268) < 0.005


def test_a_word_starting_with_nan_is_no_value() -> None:
    # negative: `nans`, `nanoseconds`, `infos` are words, not an undefined number and its unit
    for text in ("skipped 3 batches with nans", "timer in nanoseconds", "infos: 2"):
        assert all(v.text not in ("nans", "nanoseconds", "infos") for v in values(text)), text


# -- a job-wide `total step` beside steps counted within a unit (FunASR#2006, L01) -------------
FUNASR = ("[2024-08-12 23:04:07,255][root][INFO] - train, rank: {rank}, epoch: 0/500, data_slice: "
          "0/5, step_in_slice: {n}/81081, step_in_epoch: {n}, total step: {n}, (loss_avg_rank: "
          "0.886), (lr: 5.729e-04), {{'data_load': '0.000', 'forward_time': '0.294', "
          "'backward_time': '0.279', 'optim_time': '0.099', 'total_time': '0.673'}}, GPU, "
          "memory: usage: 1.165 GB, peak: 64.227 GB")


def test_total_step_beside_an_in_epoch_step_is_the_job_wide_counter() -> None:
    doc = read([FUNASR.format(rank=9, n=32900), FUNASR.format(rank=15, n=32900)])
    assert span(doc) == (32900, 32900)
    assert doc["step_time_s"]["median"] == 0.673


def test_step_in_epoch_is_no_epoch_and_a_planned_total_is_no_step() -> None:
    from gpuslo.goodput.logs.counters import is_epoch_name, within
    assert within("step_in_epoch") and not is_epoch_name("step_in_epoch")
    assert is_epoch_name("epoch") and not within("epoch")
    # negative: `Total steps: 512` alone (a plan printed at the start) counts nothing
    doc = read(["Total steps: 512", "Epoch 1 step 10 loss 2.1", "Epoch 1 step 20 loss 2.0",
                "Epoch 1 step 30 loss 1.9"])
    assert span(doc) == (10, 30)


# -- the index a named value is reported at, between the name and the value (tacotron2, L04) ------
TACOTRON = ["Train loss 0 48.220909 Grad Norm 13.484264 5.71s/it",
            "Train loss 1 35.229748 Grad Norm 25.020286 3.79s/it",
            "Train loss 2 16.508032 Grad Norm 17.146819 3.99s/it",
            "Train loss 3 9.564240 Grad Norm 13.827114 3.99s/it",
            "Saving model and optimizer state at iteration 3 to outdir/checkpoint_3",
            "Train loss 4 5.843519 Grad Norm 6.745416 3.99s/it"]


def test_an_integer_between_a_name_and_its_value_is_the_step() -> None:
    doc = read(TACOTRON)  # NVIDIA/tacotron2#368
    assert span(doc) == (0, 4)
    assert doc["step_time_s"]["median"] == 3.99
    assert [s["step"] for s in doc["checkpoint_saves"]] == [3]


def test_a_constant_integer_before_a_value_is_no_step() -> None:
    # negative: `recall at 5 0.91` names the cut-off, the same on every line: no counter
    lines = [f"Recall at 5 0.9{i} loss {i}.5" for i in range(4)]
    assert read(lines)["steps"]["first"] is None


# -- an n / N beside a rate of iterations, drawn with no glyphs (text-generation-webui, L13) -------
WEBUI = ["# Log on UI",
         "Running… 128 / 7296 … 1.10 s/it, 2 minutes / 2 hours … 2 hours remaining",
         "# Log on Console",
         "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 68.00 MiB (GPU 0; "
         "23.99 GiB total capacity; 22.07 GiB already allocated; 0 bytes free)"]


def test_n_of_n_beside_a_rate_of_iterations_is_the_step_on_one_line() -> None:
    doc = read(WEBUI)  # oobabooga/text-generation-webui#1490
    assert span(doc) == (128, 128)
    assert doc["step_time_s"]["median"] == 1.1
    assert len(doc["interruptions"]) == 1


def test_n_of_n_beside_a_throughput_alone_is_no_step() -> None:
    # negative: a count of files beside samples a second, once, is no training step
    assert read(["Converted 128 / 7296 … 35.2 samples/s"])["steps"]["first"] is None


# -- `N: ` opening every line, counting: a step, not srun's label (audiolm-pytorch, L16) -----------
SOUNDSTREAM = ("{n}: soundstream total loss: 4.872, soundstream recon loss: 0.001 | discr "
               "(scale 1) loss: 2.284 | discr (scale 0.5) loss: 1.894 | discr (scale 0.25) "
               "loss: 1.829")


def soundstream(head: str = "25000: saving model to results") -> list[str]:
    return [head] + [SOUNDSTREAM.format(n=25001 + i) for i in range(8)]


def test_a_leading_count_that_never_repeats_is_the_step_and_its_saving_line_a_save() -> None:
    doc = read(soundstream())  # lucidrains/audiolm-pytorch (SoundStreamTrainer.train_step)
    assert span(doc) == (25000, 25008)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [25000]


def test_srun_labels_that_repeat_stay_rank_prefixes() -> None:
    # negative: srun --label's ranks label every line of their task, so they repeat
    from gpuslo.goodput.logs.normalise import Normaliser
    norm = Normaliser(PROFILES)
    lines = ["0: step 10 loss 2.1", "1: step 10 loss 2.1", "0: step 20 loss 2.0",
             "1: step 20 loss 2.0"]
    norm.learn_labels(lines)
    assert norm.strip(lines[0]) == ("step 10 loss 2.1", "0", True)
    doc = read(lines + ["0: step 30 loss 1.9", "1: step 30 loss 1.9"])
    assert span(doc) == (10, 30)


def test_a_step_line_saving_samples_is_no_save() -> None:
    # negative: the trainer's sample dump (`saving to results`, `saving samples to …`) is no
    # checkpoint, on a step line or not
    assert read(soundstream("25000: saving samples to results"))["checkpoint_saves"] == []


# -- a loop stopping itself on a non-finite loss (torchvision references' train_one_epoch, L21) ----
DETECTION = ("Epoch: [0]  [{n:>4}/1985]  eta: 0:08:12.110000  lr: 0.005000  loss: 0.6686 (1.0468)  "
             "time: 0.2467  data: 0.0103  max mem: 1212")


def test_loss_is_nan_stopping_training_is_an_interruption() -> None:
    lines = [DETECTION.format(n=n) for n in (0, 50, 100, 150)]
    doc = read(lines + ["Loss is nan, stopping training"])  # WZMIAOMIAO/…#244
    assert [i["cause"] for i in doc["interruptions"]] == ["non_finite_loss"]
    keras = read(lines + ["Batch 151: Invalid loss, terminating training"])
    assert [i["cause"] for i in keras["interruptions"]] == ["non_finite_loss"]


def test_a_nan_loss_skipped_is_no_stop() -> None:
    # negative: a loop that drops the batch and goes on has not stopped
    lines = [DETECTION.format(n=n) for n in (0, 50)] + ["Loss is nan, skipping this batch"]
    assert read(lines + [DETECTION.format(n=100)])["interruptions"] == []


# -- the command line echoed again after progress: a new process (YolactEdge train.py, L23) --------
YOLACT = ["[03/30 14:56:38] yolact.train INFO: Args: train.py --config=yolact_edge_config "
          "--resume=weights/yolact_edge_54_800000.pth",
          "[03/30 14:56:41] yolact.train INFO: Begin training!",
          "[03/30 14:56:55] yolact.train INFO: eta: 0:00:00  epoch: 0  iter: 0  B: 8.468  "
          "T: 26.414  time: 13.673  data_time: 0.000  lr: 0.000100  max_mem: 7811M",
          "[03/30 14:59:29] yolact.train INFO: Args: train.py --config=yolact_edge_config "
          "--resume=weights/yolact_edge_54_800000.pth"]


def test_the_command_line_echoed_after_progress_is_a_restart() -> None:
    assert len(read(YOLACT)["restarts"]) == 1  # WisconsinAIVision/yolact_edge#80
    assert read(YOLACT[:3])["restarts"] == []


def test_args_that_are_no_command_line_are_no_start() -> None:
    # negative: a settings dump (`args: lr=0.1`) names no script: no new process
    lines = YOLACT[:3] + ["[03/30 14:59:29] yolact.train INFO: args: lr=0.1, batch=8"]
    assert read(lines)["restarts"] == []


# -- `[e] n ||`: the integer after an opening bracket is the step, the bracket its epoch (L22) -----
YOLACT_ITERS = ("[  0] {n:>7} || B: 6.872 | C: 22.219 | M: 10.292 | S: 65.478 | T: 104.861 || "
                "ETA: 30 days, 18:40:57 || timer: {t}")
TIMERS = ["39.889", "1.618", "1.614", "2.174", "1.583", "1.898"]


def test_an_integer_after_an_opening_bracket_is_the_step_and_timer_its_time() -> None:
    doc = read([YOLACT_ITERS.format(n=10 * i, t=t) for i, t in enumerate(TIMERS)])
    assert span(doc) == (0, 50)  # dbolya/yolact#318
    assert doc["steps"]["epoch_first"] == 0
    assert 1.6 <= doc["step_time_s"]["median"] <= 1.9


def test_a_constant_integer_after_the_bracket_is_no_step() -> None:
    # negative: `[  3]       8 || …` with the 8 the same on every line (a setting, a rank) and
    # the bracket rising: the bracket is the counter
    lines = [f"[{n:>3}]       8 || loss: 1.{n} | lr: 0.1" for n in range(1, 5)]
    assert span(read(lines)) == (1, 4)


# -- an RL loop's episode counter where no step is printed (yao-jason/MLDS2018SPRING#3, L19) -------
PONG = "Episode: {n}, Actions: {a}, reward: -18, Avg. reward: -19.900, Time: {t}, T/A: 1.82ms"
EPISODES = [(2351, "4.28"), (1738, "3.09"), (1840, "3.30"), (2210, "3.93"), (1683, "2.93")]


def test_an_episode_counter_alone_is_the_step_and_its_time_the_episode_time() -> None:
    doc = read([PONG.format(n=59 + i, a=a, t=t) for i, (a, t) in enumerate(EPISODES)])
    assert span(doc) == (59, 63)
    assert doc["step_time_s"]["median"] == 3.3


def test_an_episode_beside_a_step_counter_is_not_the_step() -> None:
    # negative: where the loop prints its steps, they are the counter, not the episode
    lines = [f"Episode: {e}, step: {100 * (i + 1)}, loss: 0.{i}"
             for i, e in enumerate((3, 3, 4, 4))]
    assert span(read(lines)) == (100, 400)
