"""Training-log lines the newcomer of tests/data/newcomer7/FINDINGS.md showed misread (F6, F7),
each on the real lines of the thread named there, with a negative beside it."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int = 8) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


# -- F7: torch_xla's `Time=` is test_utils.now(), datetime.now().strftime('%H:%M:%S') ---------
# pytorch/xla#4324 "TF pin for 12/15/2022" (ManfeiBai's test output), verbatim
_XLA = "| Training Device=xla:{} Epoch=1 Step={} Loss={} Rate={} GlobalRate={} Time={}"
XLA_4324 = [_XLA.format(*row) for row in [
    ("0/2", 280, "0.00499", "555.68", "287.48", "22:00:10"),
    ("0/3", 280, "0.00499", "555.19", "278.12", "22:00:10"),
    ("0/1", 280, "0.00499", "555.28", "279.57", "22:00:10"),
    ("0/5", 280, "0.00499", "555.02", "279.23", "22:00:10"),
    ("0/6", 280, "0.00499", "555.32", "278.77", "22:00:10"),
    ("0/4", 280, "0.00499", "554.86", "280.02", "22:00:10"),
    ("1/0", 280, "0.00499", "554.84", "275.50", "22:00:10"),
    ("0/7", 280, "0.00499", "554.52", "278.43", "22:00:10"),
    ("0/2", 300, "0.00449", "560.43", "297.15", "22:00:15"),
    ("1/0", 300, "0.00449", "560.44", "285.20", "22:00:15"),
    ("0/5", 300, "0.00449", "560.11", "288.92", "22:00:15"),
    ("0/1", 300, "0.00449", "560.15", "289.25", "22:00:15"),
    ("0/3", 300, "0.00449", "560.06", "287.80", "22:00:15"),
]]


def test_a_time_of_day_clock_is_no_time_before_the_log():
    """newcomer7 F7: 22:00:10 is the time of day; its differences time the steps (20 steps in
    5 s), and nothing of the job is said to lie before the log."""
    doc = read(XLA_4324)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (280, 300)
    assert doc["span_s"] == pytest.approx(5.0)
    assert not any("before the log" in n for n in doc["notes"])


def test_an_unpadded_hours_clock_first_seen_mid_run_is_still_time_before_the_log():
    """Negative: `str(timedelta)` prints hours unpadded (`1:02:03`): a time since the start, so
    the job's 3723 s before step 280 are noted, as for fairseq's `train_wall`."""
    lines = [line.replace("22:00:10", "1:02:03").replace("22:00:15", "1:02:08")
             for line in XLA_4324]
    doc = read(lines)
    assert any("before the log, not accounted" in n for n in doc["notes"])


# -- F6: parameter-golf's compile warm-up (`warmup_step:k/20`), then its loop from step 0 ------
# openai/parameter-golf#839 "Struggling to reproduce reference performance, much longer step
# times" (alat-rights), verbatim
PGOLF_839 = [
    "tie_embeddings:True embed_lr:0.05 head_lr:0.0 matrix_lr:0.04 scalar_lr:0.04",
    "train_batch_tokens:524288 train_seq_len:1024 iterations:20000 warmup_steps:20 "
    "max_wallclock_seconds:600.000",
    "seed:1337",
    *[f"warmup_step:{k}/20" for k in range(1, 21)],
    "step:0/20000 val_loss:6.9357 val_bpb:4.1077 train_time:0ms step_avg:0.02ms",
    *[f"step:{n}/20000 train_loss:{loss} train_time:{t}ms step_avg:{avg}ms" for n, loss, t, avg in [
        (1, "6.9370", 41, "41.14"), (2, "16.8366", 93, "46.31"), (3, "8.7609", 147, "48.87"),
        (4, "6.6385", 205, "51.23"), (5, "6.6117", 262, "52.38"), (6, "7.4221", 321, "53.47"),
        (7, "6.3509", 403, "57.57"), (8, "6.1585", 470, "58.76"), (9, "6.0680", 541, "60.06"),
        (10, "5.9747", 613, "61.34"), (50, "4.1046", 2364, "47.29")]],
]


def test_a_warm_up_counter_is_not_the_run_the_loop_after_it_is():
    """newcomer7 F6: train_gpt.py primes the compiled graph for `warmup_steps`, restores the
    initial weights and optimizer states, and starts its loop at step 0: the run is steps
    0..50 (0.058 s median), the warm-up's 20 lines are said, not read as steps."""
    doc = read(PGOLF_839)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 50)
    assert doc["step_time_s"]["median"] == pytest.approx(0.058, abs=0.002)
    assert any("a warm-up's steps" in n for n in doc["notes"])
    assert not any("later run or job" in n for n in doc["notes"])


def test_a_warm_up_counter_alone_is_still_read():
    """Negative: with no other loop in the log the warm-up's counter is all there is: read."""
    doc = read([line for line in PGOLF_839 if not line.startswith("step:")])
    assert doc["steps"]["last"] == 20


def test_warmup_named_beside_the_counter_is_no_warm_up_loop():
    """Negative: `warmup` naming another value on the line (a learning-rate warm-up's factor),
    not the counter, leaves the family as it is: the more printed loop is the run."""
    lines = [f"step:{n}/300 warmup_factor:{min(1.0, n / 100):.2f} loss:2.0 train_time:{n * 50}ms"
             for n in range(10, 310, 10)]
    lines += [f"eval_step:{k}/5 val_loss:1.9" for k in range(1, 6)]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (10, 300)
