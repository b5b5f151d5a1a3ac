"""A collector's envelope (`envelope`) and launcher prefixes around real trainer lines.

Real lines: so-vits-svc 3.0's (tests/data/training_logs/fresh15 R18), icefall's (fresh15 R15,
two records glued on one line), darknet's iteration line (fresh C06), open_clip's (fresh2 D17),
modded-nanogpt's `train_time:` (dev A01), InnerEye's own RFC 3339 stamps (fresh2 D20); the
envelopes are the collectors' documented forms (kubectl/docker RFC3339Nano, CRI `stdout F|P`,
journald `short`, moreutils `ts`), the prefix SageMaker's MPI launcher prints (fresh16 S14).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.envelope import Envelope
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.pipe import RecordPipe
from gpuslo.goodput.logs.stamps import learn_shapes

SOVITS = "2023-02-18 19:07:57,251\t32k\tINFO\tTrain Epoch: 113 [0%]"
REF = 1_800_000_000.0  # 2027-01-15: a year-less stamp of Dec 07 is 2026's


def test_kubectl_and_docker_stamps_are_an_envelope():
    head = [f"2026-12-07T06:54:0{i}.250000000Z {SOVITS}" for i in range(4)]
    envelope = Envelope.detect(head, REF)
    assert envelope.kind == "rfc3339"
    assert envelope.unwrap(head[1]) == [(1796626441.25, SOVITS)]
    assert envelope.unwrap("step 5\r")[0] == (1796626441.25, "step 5\r")  # a redraw: same time


def test_cri_pieces_are_joined_and_a_redraw_ends_the_piece_before_it():
    head = ["2026-12-07T06:54:01.000000000Z stdout F epoch 1",
            "2026-12-07T06:54:02.000000000Z stdout P Train Epoch: 1",
            "2026-12-07T06:54:02.500000000Z stdout F 13 [0%]",
            "2026-12-07T06:54:03.000000000Z stdout P  10%|█  | 1/10",
            " 20%|██ | 2/10",  # after a `\r` inside the record (`read` splits there)
            "2026-12-07T06:54:04.000000000Z stdout F  [00:01<00:09]"]
    envelope = Envelope.detect(head)
    assert envelope.kind == "cri"
    # each record is given once the next begins (a bare line after it may be its redraw)
    out = [pair for line in head for pair in envelope.unwrap(line)] + envelope.flush()
    assert [text for _, text in out] == ["epoch 1", "Train Epoch: 113 [0%]", " 10%|█  | 1/10",
                                         " 20%|██ | 2/10 [00:01<00:09]"]
    assert out[1][0] == 1796626442.5


def test_journald_and_ts_leave_the_trainers_own_stamp():
    journal = [f"Dec 07 06:54:0{i} gpu-node-3 python[48211]: {SOVITS}" for i in range(4)]
    stamped = [f"Dec 07 06:54:0{i} {SOVITS}" for i in range(4)]
    for head, kind in ((journal, "journald"), (stamped, "ts")):
        envelope = Envelope.detect(head, REF)
        assert envelope.kind == kind
        assert envelope.unwrap(head[1]) == [(1796626441.0, SOVITS)]


def test_a_trainers_own_lines_are_no_envelope():
    # its own stamps (no `T`, no zone), a date only on the first line, a `N: ` step label
    assert Envelope.detect([SOVITS] * 5).kind is None
    assert Envelope.detect(["2026-12-07T06:54:01Z start", "step 1", "step 2", "step 3"]
                           ).kind is None
    # a trainer that stamps every line in RFC 3339 itself (InnerEye, fresh2 D20): seconds or
    # microseconds, never a collector's nanoseconds
    for stamp in ("2021-03-19T14:41:07Z", "2021-03-19T14:41:07.123456+00:00"):
        assert Envelope.detect([f"{stamp} INFO     Epoch 0 training took 6.86sec"] * 4
                               ).kind is None
    assert Envelope.detect(["4: 285.326599, 289.835968 avg, 0.001000 rate"] * 5).kind is None
    # a log of one line (fresh15 R15: two icefall records glued on it) is wrapped all the same
    assert Envelope.detect(["2026-12-07T06:54:01.250318Z " + ICEFALL]).kind is None
    assert Envelope.detect(["2026-12-07T06:54:01.2503187Z " + ICEFALL]).kind == "rfc3339"
    bare = Envelope.detect([])
    assert bare.unwrap("12: loss 0.3") == [(None, "12: loss 0.3")]


def test_the_trainers_clock_wins_over_the_collectors(tmp_path: Path):
    """Own stamps 60 s apart, collector stamps 1 s apart: the step time is 60 s; without own
    stamps the collector's 1 s dates the steps."""
    own = [f"2026-12-07T06:54:{i:02d}.000000000Z 2023-02-18 19:0{i}:00,000 INFO step {i}/100"
           for i in range(1, 8)]
    none = [f"2026-12-07T06:54:{i:02d}.000000000Z step {i}/100 loss 0.{i}" for i in range(1, 8)]
    times = []
    for name, lines in (("own.log", own), ("none.log", none)):
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        doc = analyse_log(path, gpus=1).document
        assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 7)
        times.append(doc["step_time_s"]["median"])
    assert times == [60.0, 1.0]


def test_the_trainers_own_measure_wins_over_the_collectors_stamps(tmp_path: Path):
    """modded-nanogpt's cumulative `train_time:` (dev A01) gives 200 ms a step; the collector's
    stamps, 1.25 s apart (a block-buffered pipe's arrival times), do not replace it. A bare
    trainer line that merely starts like a stamp with fewer digits is read as before."""
    lines = [f"step:{i}/6200 train_loss:7.5 train_time:{75000 + 200 * i}ms step_avg:nanms"
             for i in range(1, 60)]
    stamped = [f"2026-12-07T06:54:{i // 4 + 1:02d}.{i % 4 * 25:02d}0000000Z {line}"
               for i, line in enumerate(lines)]
    medians = []
    for name, text in (("raw.log", lines), ("kubectl.log", stamped)):
        path = tmp_path / name
        path.write_text("\n".join(text) + "\n")
        medians.append(analyse_log(path, gpus=1).document["step_time_s"]["median"])
    assert medians == [0.2, 0.2]


D17 = Path(__file__).resolve().parents[1] / "data" / "training_logs" / "fresh2" / "cases"


def test_roles_are_learnt_on_the_trainers_clock_not_the_collectors(tmp_path: Path):
    """open_clip's `Batch (t): 0.559` (fresh2 D17, a counter of samples, 6400 a line, and a
    date the reader does not take for a stamp) is each step's time; learnt beside a CRI file's
    times a second apart it was read as the time of the window's 6400 samples (7.5e-05 s each).
    Both reads now give the same 0.481 s."""
    raw = next(D17.glob("D17_*.log")).read_text()
    cri = "".join(f"2026-12-07T06:54:{i + 1:02d}.123456700Z stdout F {line}\n"
                  for i, line in enumerate(raw.splitlines()))
    medians = []
    for name, text in (("raw.log", raw), ("cri.log", cri)):
        path = tmp_path / name
        path.write_text(text)
        medians.append(analyse_log(path, gpus=1).document["step_time_s"]["median"])
    assert medians == [0.481, 0.481]


def _bar(rank: str) -> str:
    """One tqdm bar of 40 steps at 3 s/it (R08's shape: redraws after `\r`, one `\n` at the
    end), labelled the way `srun --label` labels a line: once, before its first byte."""
    draws = "".join(f"\rtrain: {i * 100 // 40:3d}%|###| {i}/40 [{i * 3 // 60:02d}:{i * 3 % 60:02d}"
                    f"<{(40 - i) * 3 // 60:02d}:{(40 - i) * 3 % 60:02d},  3.00s/it]"
                    for i in range(1, 41))
    return f"{rank}{draws}\n"


def test_a_labelled_bars_redraws_are_its_ranks_and_another_ranks_copy_is_not(tmp_path: Path):
    steps = []
    for name, text in (("raw.log", _bar("")), ("srun.log", _bar("0: ")),
                       ("two.log", _bar("0: ") + _bar("1: ")),
                       ("mpi.log", _bar("[1,mpirank:0,algo-1]<stdout>:"))):
        path = tmp_path / name
        path.write_text(text)
        doc = analyse_log(path, gpus=1).document
        steps.append((doc["steps"]["first"], doc["steps"]["last"], len(doc["restarts"])))
    # rank 1's copy: its labelled first draw is another rank's (not read), its unlabelled
    # redraws start again below rank 0's last step: not read either (no restart); main read
    # 1..1 on all three labelled logs (the redraws dropped as another rank's)
    assert steps == [(1, 40, 0)] * 4


def _records(lines: list[str]) -> list[tuple[str, str | None]]:
    norm = Normaliser(load_profiles())
    norm.shapes = learn_shapes([norm.strip(line)[0] for line in lines])
    pipe = RecordPipe(norm, Clock())
    recs = [r for n, line in enumerate(lines) for r in pipe.push(n, line)] + pipe.flush()
    return [(r.text, r.rank) for r in recs]


def test_sagemaker_mpi_tag_is_a_prefix_and_names_the_rank():
    line = "[1,mpirank:3,algo-2]<stdout>:Train Epoch: 113 [0%]"
    norm = Normaliser(load_profiles())
    strip = norm.strip
    assert strip(line) == ("Train Epoch: 113 [0%]", "3", True)
    assert strip("[1,3]<stderr>:step 5")[0:2] == ("step 5", "3")
    # a trainer's bracket is no tag: its content stays
    for text in ("[1,20] loss: 0.3", "[1,mpirank:0] step 5", "12:34 elapsed"):
        assert strip(text)[0] == text


ICEFALL = ("2024-05-31 15:42:22,402 INFO [train.py:979] Epoch 1, batch 7, loss[ctc_loss=1.2] "
           "2024-05-31 15:42:23,001 INFO [train.py:979] Epoch 1, batch 8, loss[ctc_loss=1.1]")


def test_records_glued_after_a_launcher_prefix_are_cut_and_keep_its_rank():
    head = ["2024-05-31 15:42:20,000 INFO [train.py:979] Epoch 1, batch 6, loss[ctc_loss=1.3]",
            ICEFALL]
    for prefix, rank in (("worker-0: ", "worker-0"), ("[rank2]:", "2")):
        recs = _records([prefix + line for line in head])
        assert [text.split(", loss")[0] for text, _ in recs] == [
            "INFO [train.py:979] Epoch 1, batch 6", "INFO [train.py:979] Epoch 1, batch 7",
            "INFO [train.py:979] Epoch 1, batch 8"]
        assert {r for _, r in recs} == {rank}
    # a stamp quoted inside a message is no second record
    quoted = "2024-05-31 15:42:22,402 INFO saved at 2024-05-31 15:42:22,402 to ckpt/epoch-1.pt" * 2
    assert len(_records(["worker-0: " + quoted[: len(quoted) // 2]])) == 1
