"""The learning training-log reader (issue 23) on real lines, and what it must never say.

Real lines below are verbatim excerpts of the dev corpora collected for issue 23 (sources and
dates in tests/data/training_logs/SOURCES_a.md / SOURCES_b.md of the collectors' branches, cited
per case), and of ../shared/training_logs (the H200 Lightning logs of 2026-12-04).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.stamps import learn_shapes
from gpuslo.goodput.logs.tokens import template, values

HERE = Path(__file__).resolve().parent
SHARED = next((p / "shared" / "training_logs" for p in HERE.parents
               if (p / "shared" / "training_logs" / "expected.yaml").is_file()), None)
H200 = SHARED / "h200" if SHARED is not None else None
PROFILES = load_profiles()


def read(lines: list[str], gpus: int | None = 1) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


# -- the masker and the stamp learner --------------------------------------------------------
def test_values_keep_units_keys_and_suffixes() -> None:
    # nanotron, huggingface/nanotron#390 (2025-10-17): K/G suffixes, unit in the key
    line = ("iteration: 327281 / 378950 | consumed_tokens: 85.8G | "
            "elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K")
    found = {v.key: v for v in values(line)}
    assert found["elapsed_time_per_iteration_ms"].number == 11500.0
    assert found["consumed_tokens"].number == 85.8e9
    assert found["iteration"].integer and found["iteration"].after.startswith(" / ")
    # ms-swift, modelscope/ms-swift#4146 (2025-05): durations written as "1h 54m 53s"
    hms = values("'elapsed_time': '1h 54m 53s', 'remaining_time': '2h 27m 26s'")
    assert [v.number for v in hms] == [6893.0, 8846.0]


def test_bars_of_one_loop_share_one_template() -> None:
    a = "Epoch 0:   0%|          | 1/3376 [00:00<00:39, 85.18it/s]"
    b = "Epoch 0:  42%|████▏     | 1429/3376 [00:18<00:25, 75.75it/s]"
    assert template(a) == template(b)


@pytest.mark.parametrize(("line", "want"), [
    ("10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281", "2025-10-17 16:31:56"),
    ("[05/10 04:48:34] d2.utils.events INFO:  eta: 0:56:30  iter: 4359", "2000-05-10 04:48:34"),
    ("INFO 09-15 14:42:21 [executor_base.py:188] It took 1.460260 seconds", "2000-09-15 14:42:21"),
    ("[2024/06/22 06:28:25] ppocr INFO: epoch: [4/500], global_step: 172", "2024-06-22 06:28:25"),
    ("2021-04-12T14:02:15 | mmf.utils.general: Total Parameters", "2021-04-12 14:02:15"),
    ("I0811 21:54:55.531340 138304841739136 metric_logger.py:226] completed",
     "2000-08-11 21:54:55"),
])
def test_stamp_layouts_are_learnt_from_the_lines(line: str, want: str) -> None:
    import calendar
    import time

    from gpuslo.goodput.logs.clock import Clock

    shape = learn_shapes([line])[0]
    found = shape.regex.search(line)
    got = Clock().seconds(found.groupdict())
    assert int(got) == calendar.timegm(time.strptime(want, "%Y-%m-%d %H:%M:%S"))


# -- real formats, read by shape ---------------------------------------------------------------
def test_duplicated_lines_count_once_and_sec_per_step_is_read() -> None:
    # TF-Slim, tensorflow/models#2980 (2018): every line printed twice by two handlers
    lines = []
    for step, loss, sec in ((1, "79.3501", "57.126"), (2, "72.8609", "17.053"),
                            (3, "67.3308", "16.534"), (4, "64.2655", "16.926")):
        lines += [f"INFO:tensorflow:global step {step}: loss = {loss} ({sec} sec/step)"] * 2
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 4)
    assert doc["read"]["progress_lines"] == 4
    assert doc["step_time_s"]["median"] == pytest.approx(16.926, rel=0.02)


def test_epoch_batch_pairs_and_a_wrapped_record() -> None:
    # YOLOX, Megvii-BaseDetection/YOLOX#1701 (2023-08-10): the console cut the record after
    # "cls_loss:"; the save wording has no "checkpoint"; per-epoch iterations (12 an epoch)
    lines = [
        "2023-08-10 08:54:40 | INFO     | yolox.core.trainer:203 - ---> start train epoch1",
        "                                                        - epoch: 1/300, iter: 10/12, "
        "mem: 2956Mb, iter_time: 0.771s, data_time: 0.001s, total_loss: 5.5, iou_loss: 2.4, "
        "l1_loss: 0.0, conf_loss: 2.0, cls_loss:",
        "1.1, lr: 4.340e-04, size: 640, ETA: 0:46:06",
        "2023-08-10 08:54:49 | INFO     | yolox.core.trainer:352 - Save weights to "
        "./YOLOX_outputs\\yolox_voc_s",
        "2023-08-10 08:54:53 | INFO     | yolox.core.trainer:253 - epoch: 2/300, iter: 10/12, "
        "mem: 2956Mb, iter_time: 0.383s, data_time: 0.001s, total_loss: 4.8, iou_loss: 2.3, "
        "l1_loss: 0.0, conf_loss: 1.8, cls_loss:",
        "0.7, lr: 6.250e-04, size: 576, ETA: 0:34:23",
        "2023-08-10 08:54:53 | INFO     | yolox.core.trainer:352 - Save weights to "
        "./YOLOX_outputs\\yolox_voc_s",
    ]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (10, 22)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [12, 24]
    assert doc["goodput"]["status"] == "ok"


def test_a_save_printed_by_every_host_is_one_save() -> None:
    # levanter, marin-community/levanter#486 (2024-02-24): six hosts, two wordings
    path = "gs://levanter-checkpoints/llama2/run/step-9485"
    lines = [f"2024-02-24T13:38:44 - 14 - levanter.checkpoint - checkpoint.py:221 - INFO :: "
             f"Saving checkpoint at step 9485 to {path}"]
    lines += [f"2024-02-24T13:38:44 - {h} - levanter.checkpoint - checkpoint.py:246 - INFO :: "
              f"Saving checkpoint to {path} for step 9485" for h in (3, 1, 8, 7, 2)]
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [9485]


def test_restore_lines_printed_twice_are_one_restart() -> None:
    # MMDetection 2.x, open-mmlab/mmdetection#8513 (2022-08-07): two handlers, the file name
    # says epoch 17 while the state restored is iteration 49231
    lines = [
        "2022-08-07 01:03:00,220 - mmdet - INFO - load checkpoint from "
        "./work_dirs/res50_cam_radar/epoch_17.pth",
        "INFO:mmdet:load checkpoint from ./work_dirs/res50_cam_radar/epoch_17.pth",
        "2022-08-07 01:03:00,656 - mmdet - INFO - resumed epoch 7, iter 49231",
        "INFO:mmdet:resumed epoch 7, iter 49231",
    ]
    doc = read(lines)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [49231]


def test_failures_that_are_not_nccl() -> None:
    # OpenRLHF#621 (2024-12-24): an InfiniBand completion error printed by a Ray actor
    lines = [
        "Train epoch [1/1]: 100%|██████████| 128/128 [23:32<00:00, 26.11s/it, pg=-0.0683]",
        "(LLMRayActor pid=90738, ip=172.19.24.110) mlx5: host_unknown: got completion with "
        "error:",
    ]
    doc = read(lines)
    assert doc["steps"]["last"] == 128 and doc["step_time_s"]["median"] == pytest.approx(11.03,
                                                                                        rel=0.05)
    assert [i["cause"] for i in doc["interruptions"]] == ["network_error"]
    # Ray Train, ray-project/ray#51527 (2025-03-05): a signal line behind the actor prefix
    crash = read(["(TorchTrainer pid=439, ip=10.212.157.221) *** SIGSEGV received at "
                  "time=1741149596 on cpu 63 ***"])
    assert crash["interruptions"][0]["cause"] == "signal"
    # MMDetection on Colab, open-mmlab/mmdetection#9759 (2023-02-12): IPython's traceback
    box = read(["OutOfMemoryError                          Traceback (most recent call last)"])
    assert box["interruptions"][0]["cause"] == "cuda_oom"


def test_ranks_are_read_once() -> None:
    lines = []
    for step in range(1, 6):
        for rank in range(4):
            lines.append(f"{rank}: 2025-01-01 00:00:{10 * step:02d},000 - root - INFO - step: "
                         f"{step}  loss:  1.0000  tps: 1,000")
    lines += [f"{rank}: 2025-01-01 00:00:55,000 - root - INFO - Saving checkpoint at step 5"
              for rank in range(4)]
    doc = read(lines)
    assert doc["read"]["progress_lines"] == 5 and len(doc["checkpoint_saves"]) == 1
    assert doc["step_time_s"]["median"] == pytest.approx(10.0)


# -- what cannot be known ----------------------------------------------------------------------
_SHAPES = [
    "step: {n}  loss:  {loss}  tps: 1,000",
    "iteration {n:6d}/ 100000 | elapsed time per iteration (ms): {ms} | lm loss: {loss} |",
    "Epoch 0:  5%|▌         | {n}/50000 [00:{s:02d}<10:00, 7.5it/s, loss={loss}]",
    "Iter {n}: Train loss {loss}, It/sec 1.1, Tokens/sec 601.667",
    "{{'loss': {loss}, 'global_step/max_steps': '{n}/9000', 'elapsed_time': '{s}s'}}",
]


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(_SHAPES), first=st.integers(0, 10_000),
       count=st.integers(1, 40), stride=st.integers(1, 50),
       end=st.sampled_from(["", "`Trainer.fit` stopped: `max_steps=9` reached.",
                            "Traceback (most recent call last):"]))
def test_without_commit_evidence_goodput_is_unknown_never_zero(shape, first, count, stride,
                                                               end) -> None:
    lines = [shape.format(n=first + i * stride, loss=f"{2 + (i % 7) / 10:.4f}",
                          ms=f"{100 + i % 5}.5", s=(i * 3) % 60) for i in range(count)]
    doc = read(lines + ([end] if end else []), gpus=8)
    if not doc["read"]["progress_lines"]:
        assert doc["status"] == "unknown" and doc["goodput"] is None
        return
    g = doc["goodput"]
    assert g["goodput"] is None and g["status"] == "unknown" and "commit" in g["reason"]
    assert doc["status"] == "unknown"  # the goodput asked for is unknown: so is the log's
    assert doc["steps"]["first"] is not None  # progress is still given


def _titan(stamps: list[str]) -> list[str]:
    lines = [f"{ts} - root - INFO - step: {10 * (i + 1):4d}  loss:  6.1384  tps: 5,856"
             for i, ts in enumerate(stamps)]
    half = len(lines) // 2
    return lines[:half] + [f"{stamps[half - 1]} - root - INFO - Saving checkpoint at step "
                           f"{10 * half}"] + lines[half:]


def test_a_clock_that_goes_back_a_day_does_not_halve_the_gpu_seconds() -> None:
    """Issue 25 item 5: 200 steps 10 s apart (1990 s); after step 1000 the stamps fall back one
    day. The GPU-seconds must stay those of 1990 s, with a note, not about half of it."""
    stamps = [f"2025-01-02 {(10 * i) // 3600:02d}:{(10 * i) // 60 % 60:02d}:{10 * i % 60:02d}"
              ",000" for i in range(200)]
    stamps = stamps[:100] + [s.replace("2025-01-02", "2025-01-01") for s in stamps[100:]]
    doc = read(_titan(stamps), gpus=8)
    g = doc["goodput"]
    assert g["accounted_gpu_s"] == pytest.approx(8 * 1990, rel=0.02)
    assert any("goes back" in n for n in doc["notes"])


def test_stamps_in_reverse_order_are_not_used() -> None:
    """Issue 25 item 5: reversed stamps gave 3.6 GPU-s for a 2,000 s run; now they are noted
    and not used, and with no other clock the goodput is unknown, not a small number."""
    stamps = [f"2025-01-02 {(10 * i) // 3600:02d}:{(10 * i) // 60 % 60:02d}:{10 * i % 60:02d}"
              ",000" for i in reversed(range(200))]
    doc = read(_titan(stamps), gpus=8)
    assert any("do not order the log" in n for n in doc["notes"])
    assert doc["goodput"]["goodput"] is None and doc["goodput"]["status"] == "unknown"


# -- the H200 Lightning logs (../shared/training_logs/h200/README.md) -------------------------
@pytest.mark.skipif(H200 is None, reason="../shared/training_logs/h200 is not here")
def test_h200_crash_and_resume_reads_right() -> None:
    doc = analyse_log(H200 / "lightning-tqdm-crash-resume-h200.log", PROFILES, gpus=1).document
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 3376)
    assert doc["restarts"] == [{"resumed_from_step": 2532, "lost_steps": 336, "line": 5767,
                               "opens_log": False}]
    g = doc["goodput"]["gpu_seconds"]
    # the README: wasted about 336 x 0.0136 = 4.6 GPU-s; productive about 34 GPU-s with run B's
    # steps uncommitted (no line proves its final save) - the rule this reader states
    assert g["wasted_progress"] == pytest.approx(4.6, abs=0.5)
    assert g["productive"] == pytest.approx(34.0, abs=1.5)
    assert doc["goodput"]["goodput"] > 0.5 and doc["goodput"]["uncommitted_gpu_s"] > 0
    assert doc["step_time_s"]["median"] == pytest.approx(0.0136, rel=0.05)


@pytest.mark.skipif(H200 is None, reason="../shared/training_logs/h200 is not here")
def test_h200_rich_bar_line_and_checkpoint_files(tmp_path: Path) -> None:
    log = H200 / "lightning-rich-bar-h200.log"
    doc = analyse_log(log, PROFILES, gpus=1).document
    assert doc["steps"]["last"] == 2960 and doc["restarts"] == []
    assert doc["step_time_s"]["median"] == pytest.approx(0.0134, rel=0.03)
    assert doc["goodput"]["goodput"] is None  # Lightning printed no save line
    (tmp_path / "epoch=0-step=2960.ckpt").write_bytes(b"weights")  # not empty: a finished save
    with_files = analyse_log(log, PROFILES, gpus=1, checkpoint_dir=str(tmp_path)).document
    assert with_files["goodput"]["goodput"] == pytest.approx(1.0)
    assert with_files["goodput"]["gpu_seconds"]["productive"] == pytest.approx(39.0, abs=1.0)


# -- --explain ---------------------------------------------------------------------------------
def test_explain_says_what_was_read_and_what_was_not(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    lines = [f" iteration {n:8d}/  250000 | consumed samples: {n * 1024:12d} | elapsed time per "
             f"iteration (ms): 126995.3 | learning rate: 1.365E-05 | lm loss: 2.382640E+00 |"
             for n in range(182, 190)]
    lines += [f"custom gauge reading {n} of {n * 7} units" for n in range(5)]
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, "-m", "gpuslo", "goodput", str(path), "--explain",
                          "--format", "json"], capture_output=True, text=True, timeout=120)
    ex = json.loads(out.stdout)["explain"]
    progress = ex["progress"][0]
    assert progress["fields"]["iteration"].startswith("step")
    assert progress["fields"]["elapsed time per iteration (ms)"].startswith("step_s")
    assert progress["fields"]["consumed samples"].startswith("metric")
    assert any("custom gauge" in u["template"] for u in ex["unread"])


def test_explain_says_when_its_counts_rest_on_a_sample(tmp_path: Path, capsys) -> None:
    """Issue (a newcomer's `--explain` on a long log): the counts were the first 5,000 lines'
    with nothing saying so. A log longer than the sample says how many lines of how many; one
    shorter says nothing about sampling."""
    from gpuslo.cli import main
    from gpuslo.goodput.logs.reader import SAMPLE_LINES

    path = tmp_path / "train.log"
    total = SAMPLE_LINES + 1000
    path.write_text("".join(f"step {n} loss 2.5 time 0.5s\n" for n in range(1, total + 1)))
    # no save line: the goodput is unknown, exit 1 with or without --gpus (newcomer4 finding 9)
    assert main(["goodput", str(path), "--explain"]) == 1
    text = capsys.readouterr().out
    assert f"sampled: shapes learnt from the first {SAMPLE_LINES:,} of {total:,} lines" in text
    assert main(["goodput", str(path), "--explain", "--format", "json"]) == 1
    sample = json.loads(capsys.readouterr().out)["explain"]["sample"]
    assert sample["lines"] == SAMPLE_LINES and sample["of_lines"] == total
    assert sample["whole"] is False
    short = tmp_path / "short.log"
    short.write_text("".join(f"step {n} loss 2.5 time 0.5s\n" for n in range(1, 50)))
    assert main(["goodput", str(short), "--explain"]) == 1
    assert "sampled:" not in capsys.readouterr().out


def test_a_pinned_role_is_used(tmp_path: Path) -> None:
    overlay = tmp_path / "mine.yaml"
    overlay.write_text(yaml.safe_dump({"roles": {"lat": "step_s"}}))
    profiles = load_profiles(str(overlay))
    lines = [f"step {n} lat {1.5 + (n % 2) / 10} loss 3.2" for n in range(1, 9)]
    parsed = parse_lines(lines, profiles)
    doc = assemble(parsed, job="t", gpus=None).document
    assert doc["step_time_s"]["median"] == pytest.approx(1.55, rel=0.05)
