"""Lines newcomer evaluation #4 (/work/wt/newcomer4_findings.md) showed misread, each on the
newcomer's real line shapes with a negative beside it: a paste's indentation must not change what
a line means (#8); a duration on lines k steps apart is the k steps' or one step's, and
where the lines cannot tell, unknown (#3); a save's parts inside its printed time are one save,
and no step, no productive time (#4)."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


# t06: Caffe's MNIST run as pasted, indented 9 spaces, in a markdown file (find_string id
# 27691349631), lines cut at their end where long
CAFFE = [
    "I0321 17:37:29.109046 14186 solver.cpp:258]     Train net output #0: loss = 0.0189934 "
    "(* 1 = 0.0189934 loss)",
    "I0321 17:37:29.109053 14186 sgd_solver.cpp:112] Iteration 4800, lr = 0.00745253",
    "I0321 17:37:29.796532 14186 solver.cpp:239] Iteration 4900 (145.463 iter/s, "
    "0.687461s/100 iters), loss = 0.00938809",
    "I0321 17:37:29.796571 14186 solver.cpp:258]     Train net output #0: loss = 0.00938809 "
    "(* 1 = 0.00938809 loss)",
    "I0321 17:37:29.796578 14186 sgd_solver.cpp:112] Iteration 4900, lr = 0.00741498",
    "I0321 17:37:30.475172 14186 solver.cpp:464] Snapshotting to binary proto file "
    "examples/mnist/lenet/lenet_solver_iter_5000.caffemodel",
    "I0321 17:37:30.489665 14186 sgd_solver.cpp:284] Snapshotting solver state to binary proto "
    "file examples/mnist/lenet/lenet_solver_iter_5000.solverstate",
    "I0321 17:37:30.492760 14186 solver.cpp:347] Iteration 5000, Testing net (#0)",
    "I0321 17:37:30.697100 14194 data_layer.cpp:73] Restarting data prefetching from start.",
    "I0321 17:37:30.704600 14186 solver.cpp:414]     Test net output #0: accuracy = 0.9898",
]


def _facts(doc: dict) -> tuple:
    return (doc["steps"]["first"], doc["steps"]["last"], doc["step_time_s"]["median"],
            doc["span_s"], [(s["step"], s["seconds"]) for s in doc["checkpoint_saves"]],
            doc["goodput"]["goodput"])


@pytest.mark.parametrize("lead", [" " * 9, "\t", "> ", ">     ", "- "])
def test_a_paste_lead_on_every_line_changes_nothing(lead: str) -> None:
    plain = read(CAFFE)
    assert plain["checkpoint_saves"][0]["step"] == 5000 and plain["span_s"] == pytest.approx(1.596)
    assert _facts(read([lead + line for line in CAFFE])) == _facts(plain)


def test_the_learnt_lead_is_the_common_one_and_keeps_deeper_indentation() -> None:
    norm = Normaliser(PROFILES)
    norm.learn_indent(["    Epoch 1", "      loss: 2.0", "    Epoch 2", "      loss: 1.9", ""])
    assert norm.indent == "    "
    cut = norm.strip  # (text, rank, prefixed)
    assert cut("      loss: 1.9")[0] == "  loss: 1.9"  # the metrics' own indentation stays
    # then a launcher's prefix, as on the line unindented
    assert cut("    [rank3]: step 5") == cut("[rank3]: step 5")[:2] + (True,)
    assert cut("    [rank3]: step 5")[1] == "3"


def test_indentation_on_some_lines_only_is_no_paste_lead() -> None:
    """Negative: a log whose continuation lines alone are indented (a metrics block under a
    header, a wrapped message) keeps them as they are."""
    norm = Normaliser(PROFILES)
    norm.learn_indent(["Epoch 1", "    loss: 2.0", "    acc: 0.5", "Epoch 2", "    loss: 1.9",
                       "    acc: 0.6"])
    assert norm.indent == ""
    cut = norm.strip
    assert cut("    loss: 1.9")[0] == "    loss: 1.9"


# t01: Barber0/LLM-pretrain's custom loop, one line per 20 batches, `time` reset at each print
# (`time_period = time() - stime` in its train_epoch.py): the 20 batches' time, not a step's
CUSTOM = [
    "ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513, loss: 10.984375",
    "ep: 0, batch: 40, time: 8.38, ntokens: 431.70/513, loss: 10.976562",
    "ep: 0, batch: 60, time: 8.35, ntokens: 428.90/513, loss: 10.984375",
    "ep: 0, batch: 80, time: 8.46, ntokens: 513.00/513, loss: 10.914062",
    "ep: 0, batch: 100, time: 8.55, ntokens: 438.20/513, loss: 10.312500",
    "ep: 0, batch: 120, time: 8.59, ntokens: 438.20/513, loss: 10.078125",
]


def test_a_duration_on_lines_k_steps_apart_with_no_clock_is_unknown_never_k_fold() -> None:
    doc = read(CUSTOM)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (20, 120)
    assert doc["step_time_s"]["median"] is None and doc["span_s"] is None
    assert doc["goodput"]["progress_gpu_s"] is None  # not 8 GPUs x 6 x 8.5 s


def test_a_duration_on_lines_one_step_apart_is_each_steps_time() -> None:
    """Negative: the same lines printed every batch leave no doubt: each is its step's time."""
    lines = [line.replace(f"batch: {20 * (k + 1)},", f"batch: {k + 1},")
             for k, line in enumerate(CUSTOM)]
    doc = read(lines)
    assert doc["step_time_s"]["median"] == pytest.approx(8.46, abs=0.1)


def test_a_duration_named_per_step_on_lines_k_steps_apart_stays_per_step() -> None:
    """Negative: a name that says per step settles it (the counter's stride does not)."""
    doc = read([line.replace("time:", "time/step:") for line in CUSTOM])
    assert doc["step_time_s"]["median"] == pytest.approx(8.46, abs=0.1)


def test_a_clock_between_the_prints_settles_the_intervals_time() -> None:
    """Negative: stamps 8.4 s apart over 20 steps show the printed 8.4 s is the interval's:
    0.42 s a step, span from the stamps."""
    lines = [f"2024-05-01 10:00:{8 * k + 10:02d} " + line for k, line in enumerate(CUSTOM)]
    doc = read(lines)
    assert doc["step_time_s"]["median"] == pytest.approx(0.42, abs=0.03)


def test_a_meters_latest_value_beside_its_running_average_is_each_steps_time() -> None:
    """The PyTorch ImageNet example's AverageMeter, `Time val (avg)` every 5 batches
    (imagenet18, fresh11 N11): the latest batch's time, not the 5 batches'."""
    lines = [f"Epoch: [34][{5 * k}/53]       Time {t} ({a})      Loss 1.1164 (1.0954)    "
             f"Data 0.030 (0.572)"
             for k, (t, a) in enumerate([(0.396, 1.135), (0.410, 0.784), (0.398, 0.654),
                                         (0.384, 0.589), (0.361, 0.546)], start=1)]
    assert read(lines)["step_time_s"]["median"] == pytest.approx(0.39, abs=0.02)
    # even on a line that sums up its interval (an averaged count), the meter settles it
    summed = [line + "  ntokens: 485.20/513" for line in lines]
    assert read(summed)["step_time_s"]["median"] == pytest.approx(0.39, abs=0.02)


def test_a_bare_duration_on_lines_k_steps_apart_with_whole_counts_is_a_steps() -> None:
    """Negative: every printer of this kind scored times one step (torchvision's MetricLogger
    `time: 0.5645` every 20 iterations); without a count averaged over the interval the line
    does not sum up its interval and the duration stays a step's."""
    lines = [line.replace(line[line.index("ntokens"):line.index(", loss")], "ntokens: 485/513")
             for line in CUSTOM]
    assert read(lines)["step_time_s"]["median"] == pytest.approx(8.46, abs=0.1)


def test_a_duration_printed_with_its_unit_on_lines_k_steps_apart_is_a_steps() -> None:
    """nanoGPT's `time {dt*1000:.2f}ms` (dt reset each iteration) every log_interval steps, and
    modded-llama2's bare `40 | loss 6.6875 | lr 3.000000e-04 | 13808.97ms` (fresh C35); t01's
    bare `time: 8.38` stays unknown (above); a name that says per batch settles it too."""
    lines = [f"{10 * k} | loss 6.6875 | lr 3.000000e-04 | {ms}ms"
             for k, ms in enumerate([13808.97, 13771.78, 13814.18, 13814.19, 13785.61], start=4)]
    assert read(lines)["step_time_s"]["median"] == pytest.approx(13.81, abs=0.01)
    # CSRA's `Epoch 1[1616/5011]: … batch time:0.3074` every 1600 samples (fresh14 Q13)
    batch = [line.replace("time:", "batch time:") for line in CUSTOM]
    assert read(batch)["step_time_s"]["median"] == pytest.approx(8.46, abs=0.1)


# t08: fairseq's MoE run stopped at max_update, then its one save: `Preparing to save` starts
# the write timer (checkpoint_utils.save_checkpoint), two shards are written, and `Saved
# checkpoint … (writing took 49.16 seconds)` counts from it
FAIRSEQ = [
    "2022-10-18 04:40:58 | INFO | fairseq_cli.train | Stopping training due to num_updates: "
    "25 >= max_update: 25",
    "2022-10-18 04:40:58 | INFO | fairseq.checkpoint_utils | Preparing to save checkpoint for "
    "epoch 1 @ 25 updates",
    "2022-10-18 04:41:08 | INFO | fairseq.trainer | Saving checkpoint to "
    "./checkpoint_last-rank-0-shard0.pt",
    "2022-10-18 04:41:26 | INFO | fairseq.trainer | Finished saving checkpoint to "
    "./checkpoint_last-rank-0-shard0.pt",
    "2022-10-18 04:41:26 | INFO | fairseq.trainer | Saving checkpoint to "
    "./checkpoint_last-shared-shard0.pt",
    "2022-10-18 04:41:48 | INFO | fairseq.trainer | Finished saving checkpoint to "
    "./checkpoint_last-shared-shard0.pt",
    "2022-10-18 04:41:48 | INFO | fairseq.checkpoint_utils | Saved checkpoint "
    "./checkpoint_last-rank-0-shard0.pt (epoch 1 @ 25 updates, score None) (writing took "
    "49.164279436998186 seconds)",
    "2022-10-18 04:41:48 | INFO | fairseq_cli.train | end of epoch 1 (average epoch stats below)",
]


def test_a_save_with_its_shard_writes_inside_its_printed_time_is_one_save() -> None:
    doc = read(FAIRSEQ)
    assert [(s["step"], s["seconds"]) for s in doc["checkpoint_saves"]] == [(25, 49.164279)]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["productive"] == 0.0  # no step ran: the 10 s of preparing are the save's
    assert seconds["checkpoint_save"] == pytest.approx(8 * 50.0)


def test_a_save_before_a_later_saves_printed_time_stays_apart() -> None:
    """Negative: a save (one shard, 04:41:08-26) that ended before the next save's printed
    5 s began (04:41:30) is no part of it: two saves."""
    lines = [FAIRSEQ[0], *FAIRSEQ[2:5],
             "2022-10-18 04:41:35 | INFO | fairseq.checkpoint_utils | Saved checkpoint "
             "./checkpoint_last-shared-shard0.pt (epoch 1 @ 25 updates, score None) (writing "
             "took 5.0 seconds)"]
    doc = read(lines)
    assert [(s["step"], s["seconds"]) for s in doc["checkpoint_saves"]] == [(25, 18.0),
                                                                            (25, 5.0)]
