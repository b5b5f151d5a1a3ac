"""Line kinds the fresh12 first-contact batch (O01-O09) showed missing, each read on the case's
real lines and on a negative beside it: PaddlePaddle's loop index `batch_id` as the counter and
each epoch's first mean over the print interval (O04), a per-epoch counter with no N across
epochs kept as printed (O03), an evaluation bar run once between two iteration lines (O05), a
log that opens with a run of NUL bytes (O07).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- PaddleRec's tools/trainer.py (BamLubi/Paddle-SIGN train.log, fresh12 O04) ------------------
def _paddlerec(epoch: int, stamps: list[str], costs: list[str], done: str) -> list[str]:
    lines = []
    for batch, (stamp, cost) in enumerate(zip(stamps, costs, strict=True)):
        samples = "2.04800" if batch == 0 else "1024.00000"
        lines.append(f"2022-04-12 {stamp} - INFO - epoch: {epoch}, batch_id: {500 * batch}, "
                     f"AUC:0.905023, ACC:0.890625, loss:0.13951969, avg_reader_cost: 0.00025 sec,"
                     f" avg_batch_cost: {cost} sec, avg_samples: {samples}, ips: 1186.63338 ins/s")
    lines.append(f"2022-04-12 {done} - INFO - epoch: {epoch} done, AUC: 0.916897,ACC: 0.885012,"
                 "loss:0.13309471, epoch time: 1104.06 s")
    lines.append(f"2022-04-12 {done[:-3]}474 - INFO - Already save model in "
                 f"output_model_sign/{epoch}")
    return lines


PADDLEREC = (
    _paddlerec(0, ["17:06:10,849", "17:10:51,909", "17:15:26,908", "17:20:18,636"],
               ["0.00205", "0.56199", "0.54988", "0.58333"], "17:24:35,400")
    + _paddlerec(1, ["17:24:36,273", "17:29:16,416", "17:33:57,542", "17:38:36,780"],
                 ["0.00173", "0.56016", "0.56213", "0.55836"], "17:42:59,469")
    + _paddlerec(2, ["17:43:00,457", "17:47:38,444", "17:52:16,605", "17:56:57,455"],
                 ["0.00195", "0.55585", "0.55620", "0.56158"], "18:01:17,519"))


def test_a_loop_index_named_batch_id_is_the_step_counter() -> None:
    doc = read(PADDLEREC)
    assert doc["steps"]["printed_first"] == 0 and doc["steps"]["printed_last"] == 1500
    assert doc["steps"]["epoch_last"] == 2


def test_an_id_of_another_thing_is_no_counter() -> None:
    # negative: `shard_id` names a data shard, not a loop's count
    lines = [line.replace("batch_id", "shard_id") for line in PADDLEREC]
    assert read(lines)["steps"]["printed_last"] != 1500


def test_each_epochs_first_mean_over_the_interval_is_not_a_step_time() -> None:
    doc = read(PADDLEREC)
    assert doc["step_time_s"]["min"] > 0.5  # the 0.002 s of each batch_id 0 left out
    # of the nine others, on the stamps: a little longer than `avg_batch_cost` on every window
    # (the logging between the batches' timers), so the clock is the step time (wholestep.py)
    assert doc["step_time_s"]["median"] == 0.560286
    assert doc["slowdowns"] == []


def test_an_epochs_first_time_like_the_others_is_a_step_time() -> None:
    # negative: a first batch whose mean is within the run's spread counts
    lines = [line.replace("avg_batch_cost: 0.00", "avg_batch_cost: 0.55") for line in PADDLEREC]
    assert read(lines)["step_time_s"]["count"] == 12


# -- prednet-paddle's kitti_train.py (IcarusWizard/prednet-paddle logs/train.log, fresh12 O03) --
PREDNET = ["Start training!"] + [
    line for e, times in enumerate([(7.178, 14.060, 20.905, 27.777, 34.653),
                                    (47.733, 54.582, 61.403, 68.194, 75.030),
                                    (87.514, 94.661, 101.454, 108.293, 115.115)])
    for line in [f"Starting epoch {e} current lr is 0.001"] + [
        f"Epoch {e}, Step {25 * k}, total used time {t} (s), avg loss so far is 0.0{k}"
        for k, t in enumerate(times, start=1)] + [
        f"Epoch {e}, val loss is 0.0477195605635643, val mse is 0.024224352091550827.",
        f"Epoch {e}, test mse is 0.017013896256685257."]]


def test_a_per_epoch_counter_with_no_n_is_kept_as_printed() -> None:
    doc = read(PREDNET)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (25, 125)
    assert doc["steps"]["global_last"] == 425  # the estimate, said as such
    assert any("never prints an epoch's length" in n for n in doc["notes"])
    assert doc["step_time_s"]["median"] == 0.27368  # (6.839 + 6.845) / 2 / 25


def test_a_per_epoch_counter_with_its_n_is_counted_job_wide() -> None:
    # negative: `Step 125/150` prints the epoch's length, so the job-wide count is a count
    lines = [line.replace(", total", "/150, total") for line in PREDNET]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (25, 425)
    assert not any("never prints an epoch's length" in n for n in doc["notes"])


def test_a_per_epoch_counter_printed_at_every_batch_is_counted_job_wide() -> None:
    # negative: icefall's `Epoch 0, batch 66` is the epoch's last batch (printed at every one),
    # so `Epoch 1, batch 2` is job-wide step 69, a count, not an estimate (fresh C22)
    lines = [f"2022-04-28 21:16:{31 + 2 * k:02d},929 INFO [train.py:755] Epoch {e}, batch {b}, "
             f"loss[loss=0.455, over 2490.00 frames.]"
             for k, (e, b) in enumerate([(0, 63), (0, 64), (0, 65), (0, 66), (1, 0), (1, 1),
                                         (1, 2)])]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (63, 69)


# -- HDRUNet_Paddle's mmsr-style train.py and mmcv's ProgressBar (fresh12 O05) ------------------
def _iters(first: int, stamps: list[str]) -> list[str]:
    return [f"23-05-06 {s} - INFO: [epoch: 19, iter: {first + 100 * k:,}, lr:(1.729e-04,)] "
            "l_pix: 7.8969e-03 " for k, s in enumerate(stamps)]


VALIDATION = ["[                              ] 0/117, elapsed: 0s, ETA:", "Start..."] + [
    f"\x1b[2F\x1b[J[{'>' * (k // 4):<30}] {k}/117, 1.9 task/s, elapsed: {k // 2}s, ETA:    1s"
    f"\nTest {k:03d}_bicx2" for k in range(1, 118)]
HDRUNET = (_iters(119700, ["20:33:49.560", "20:35:01.857", "20:36:14.155", "20:37:26.973"])
           + "\n".join(VALIDATION).split("\n")
           + ["23-05-06 20:38:28.495 - INFO: # Validation # PSNR: 3.7349e+01",
              "23-05-06 20:38:28.496 - INFO: Saving models and training states."]
           + _iters(120100, ["20:39:40.277", "20:40:52.629", "20:42:05.530", "20:43:18.326"]))


def test_a_bar_run_once_between_two_iteration_lines_is_not_the_training() -> None:
    doc = read(HDRUNET)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (119700, 120400)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [120000]


def test_a_bar_drawn_between_every_two_lines_is_still_read() -> None:
    # negative: bar records in every gap of the line family are not one inner run
    lines = []
    for k in range(6):
        lines.append(f"2023-05-06 20:3{k}:00 - INFO: [epoch: 1, iter: {10 * k}] l_pix: 0.1")
        lines += [f"{'#' * j}| {10 * k + j}/60 [00:{k}{j}<00:10, 1.2it/s]" for j in range(1, 10)]
    doc = read(lines)
    assert doc["steps"]["last"] == 59


# -- neuroslm's training.log (269652/neuroslm, fresh12 O07): NULs, then CRLF lines --------------
NEUROSLM = [f"step {s:>5} | loss 4.5105 | lm 6.1508 | ppl 469.1 | lr 2.99e-04 | 427 tok/s | "
            "mesoLG 0.58" for s in range(700, 1010, 10)] + [
    "[train] saved checkpoints\\neuroslm_small_chat_1000.pt | genome=g6411ad76 gen=2"]


def test_a_log_opening_with_nul_bytes_is_read_after_them(tmp_path: Path) -> None:
    path = tmp_path / "training.log"
    path.write_bytes(b"\x00" * 11363 + "\r\n".join(NEUROSLM).encode() + b"\r\n")
    doc = analyse_log(path).document
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (700, 1000)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1000]
    # the leading hole is NUL padding (read.strip_nul_runs), skipped and said
    assert any("11363 NUL byte(s) of padding" in n for n in doc["not_read"])


def test_nul_bytes_inside_the_text_are_still_binary(tmp_path: Path) -> None:
    # negative: control bytes throughout (not a leading hole) are a binary file
    path = tmp_path / "model.bin"
    path.write_bytes(b"step 1 | loss 2\n" + bytes(range(32)) * 400)
    doc = analyse_log(path).document
    assert doc["read"]["binary"] is True and doc["steps"]["first"] is None


# -- TRL's SFTTrainer on transformers 5 (Ishihara-Masabumi/Llama_SFT train_log.txt, fresh12 O08) -
def _bar(n: int, total: int, clock: str, rate: str) -> str:
    return f"{100 * n // total:3d}%|{'█' * (10 * n // total):<10}| {n}/{total} [{clock}, {rate}]"


TRL = (["\r".join(_bar(n, 1677, f"{45 + (n - 1580) * 5 // 180}:{(25 + n - 1580) % 60:02d}<02:41",
                       "1.67s/it") for n in range(1580, 1678))]
       + [_bar(n, 280, f"00:{n // 10:02d}<00:15", "9.45it/s") + "\x1b[A" for n in range(281)]
       + ["\r" + _bar(1677, 1677, "48:37<00:00", "1.53s/it"),
          "\r" + _bar(280, 280, "00:29<00:00", "9.45it/s") + "\x1b[A",
          "\r" + _bar(1677, 1677, "48:38<00:00", "1.74s/it"),
          "{'eval_loss': '0.7206', 'eval_runtime': '29.78', 'epoch': '3'}",
          "Saving model...", "Training complete!",
          "Model saved to: /home/ubuntu/Llama_SFT/output/final"])


def test_an_evaluation_bar_drawn_once_inside_the_training_bar_is_not_the_steps() -> None:
    lines = "\n".join(TRL).replace("\r", "\n").split("\n")
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1580, 1677)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1677]


def test_two_bars_drawn_turn_about_keep_the_most_drawn() -> None:
    # negative: an N drawn in every gap of the other is not an inner loop run once
    lines = []
    for k in range(1, 7):
        lines += [_bar(j + 10 * (k - 1), 60, f"00:{j + 10 * k:02d}<00:40", "1.0it/s")
                  for j in range(1, 11)]
        lines.append(_bar(k, 6, f"00:{k:02d}<00:05", "2.0it/s"))
    assert read(lines)["steps"]["last"] == 60


# -- accelerate's device map under a QLoRA wrapper (Phi2 fine-tuning training.log, fresh12 O06) --
PHI2 = [
    "2025-09-28 20:44:50,101 - INFO - [accelerate.utils.modeling] - We will use 90% of the memory "
    "on device 0 for storing the model, and 10% for the buffer to avoid OOM. You can set "
    "`max_memory` in to a higher value to use more memory (at your own risk).",
    "2025-10-02 14:29:20,550 - INFO - [__main__] - 💾 Saving final model...",
    "2025-10-02 14:29:20,764 - INFO - [__main__] - 💾 Model saved to: G:/phi2-finetuned-large"]


def test_a_purpose_for_storing_the_model_is_no_save() -> None:
    saves = read(PHI2)["checkpoint_saves"]
    assert [s["seconds"] for s in saves] == [0.214]


def test_storing_the_model_as_an_action_is_a_save() -> None:
    # negative: the same gerund as the action of the line, between two steps
    lines = [f"2025-09-28 20:44:5{k},101 - INFO - step {k} loss 2" for k in (1, 2, 4)]
    lines.insert(2, "2025-09-28 20:44:53,101 - INFO - Storing the model to /ckpt/step_2")
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [2]
    lines[2] = "2025-09-28 20:44:53,101 - INFO - Memory for storing the model: 90%"
    assert read(lines)["checkpoint_saves"] == []


def test_a_single_epochs_setting_is_no_progress() -> None:
    lines = ["2025-09-28 20:44:51,000 - INFO - [__main__] - 📚 Epochs: 1"] + PHI2[1:]
    assert read(lines)["steps"]["first"] is None


def test_a_single_epoch_in_progress_is_still_read() -> None:
    # negative: VITS's one `====> Epoch: 23084` names the epoch it is in, not a plan
    lines = ["[INFO] ====> Epoch: 23084"] + PHI2[1:]
    assert read(lines)["steps"]["first"] == 23084


# -- OLMo's scripts/train.py (AntonioLopardo/OLMo train.log, fresh12 O09): tab-separated ---------
OLMO = [f"2025-12-27 {t}\tfine-work-echoes-fin-03:0\t{src}\tINFO\t{msg}" for t, src, msg in [
    ("22:11:57.335", "olmo.data.iterable_dataset:79", "Saving global data order indices..."),
    ("22:11:57.452", "olmo.data.iterable_dataset:88", "Global data order indices saved to "
     "'/home/vec_norm/OLMo/checkpoints/OLMo-150M-tied-emb-1000/train_data/global_indices.npy'"),
    ("22:11:57.556", "train:335", "Saving pre-train checkpoint..."),
    ("22:11:57.557", "olmo.checkpoint:796", "Saving model state..."),
    ("22:11:57.854", "olmo.checkpoint:811", "Saving optim state..."),
    ("22:11:57.855", "olmo.checkpoint:669", "Saving trainer state..."),
    ("22:11:57.856", "olmo.checkpoint:607", "Saving config..."),
    ("22:11:58.076", "train:337", "Checkpoint saved to "
     "/home/vec_norm/OLMo/checkpoints/OLMo-150M-tied-emb-1000/step0-unsharded"),
    ("22:11:58.599", "olmo.train:1193", "Gradient provenance CSV will be saved to "
     "/home/vec_norm/OLMo/checkpoints/OLMo-150M-tied-emb-1000/gradient_provenance.csv")]]


def test_a_save_named_only_by_a_folder_of_its_path_is_no_checkpoint() -> None:
    saves = read(OLMO)["checkpoint_saves"]
    assert [(s["step"], s["seconds"]) for s in saves] == [(0, 0.52)]


def test_a_checkpoint_named_in_the_words_is_still_a_save() -> None:
    # negative: `Checkpoint saved to /…/checkpoints/…` names it in the words
    lines = [OLMO[7], OLMO[7].replace("22:11:58.076", "22:12:58.076").replace("step0", "step5")]
    assert len(read(lines)["checkpoint_saves"]) == 2


# -- PostTraining-LLM-Small's run_train.py (its logs/train_grpo_gemma2_1.log, fresh12 O01) ------
def _grpo(step: int, eval_answer: list[str]) -> list[str]:
    lines = []
    for k in range(step - 24, step + 1):
        lines += [f"grpo_loss is -0.0{k} and kl is 0.0{k}", f"[timing] sample processed in {k}.12s"]
    return lines + [f"[step {step}] avg_loss=-0.0784 acc=0.0600"] + eval_answer


ANSWER = ["**Step 1: Calculate the distance traveled at 62 km/h**", "Distance = Speed x Time",
          "Distance = 62 km/h * 2 h = 124 km", "Distance = 124 km/h * 3 h = 372 km",
          "Total Distance = 124 km + 372 km = 596 km"]


def doc_lines() -> list[str]:
    return [line for s in (25, 50, 75, 100) for line in _grpo(s, ANSWER)]


def test_a_duration_inside_a_worked_sum_is_no_step_time() -> None:
    doc = read(doc_lines())
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (25, 100)
    # the `[timing]` lines' seconds, one per step (`perstep`: 1.12 .. 100.12 s), not 3 h or 2 h
    assert doc["step_time_s"]["median"] == 50.62
    # and with no per-step line, none at all
    bare = [line for line in doc_lines() if not line.startswith("[timing]")]
    assert read(bare)["step_time_s"]["median"] is None


def test_a_named_duration_beside_other_fields_is_still_a_time() -> None:
    # negative: `time=2 h step=…` is a field of the log, no sum
    lines = [f"iter {10 * k} | loss=0.5 time={k} h step={10 * k}" for k in range(1, 6)]
    assert read(lines)["step_time_s"]["median"] is not None
    # nor is llama.cpp's `dt=` before `eta=` (train_opt_callback, fresh8 K13)
    lines = [f"train_opt_callback: iter=    {k} sample={k + 2}/5608 sched=0.700000 "
             f"loss=4.948237 dt=00:04:5{k % 10} eta=03:29:33 |--->" for k in range(70, 76)]
    assert read(lines)["step_time_s"]["median"] is not None


def test_a_file_of_nothing_but_nul_bytes_reads_nothing(tmp_path: Path) -> None:
    # negative: no text after the NULs: padding skipped and said, no step, never a figure
    path = tmp_path / "train.log"
    path.write_bytes(bytes(4096))
    doc = analyse_log(path).document
    assert doc["steps"]["first"] is None and doc["goodput"] is None
    assert any("4096 NUL byte(s) of padding" in n for n in doc["not_read"])
