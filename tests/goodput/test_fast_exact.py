"""The fast path's shortcuts give exactly what the long way gives: thinning (`thinning.thin`,
against the pass as first written), the rows a run of plain lines is kept as (`fast._plain`,
`thinning`), stamps read from their place in a prefix (`stampspans`), one decode per chunk
(`read._split`)."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest

import gpuslo.goodput.logs.reader as reader
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.matchers import Prog
from gpuslo.goodput.logs.read import ReadStats, read_lines
from gpuslo.goodput.logs.stamps import learn_shapes
from gpuslo.goodput.logs.stampspans import StampSpans, digit_blind
from gpuslo.goodput.logs.thinning import thin
from tests.goodput.feeding import by_blocks, by_lines

FIELDS = ("line", "seq", "ts", "rank", "printed", "family", "since", "window_s", "line_s")


def _thin_one_by_one(progress: list[Prog]) -> list[Prog]:
    """The pass as first written (a record at a time), with no additive templates."""
    out: list[Prog] = []
    last: Prog | None = None
    count, i = len(progress), 0
    while i < count:
        a = progress[i]
        i += 1
        if i < count and last is not None:
            b = progress[i]
            if (a.since == last.seq + 1 and b.since == a.seq + 1
                    and last.family == a.family == b.family
                    and last.printed <= a.printed <= b.printed and last.rank == a.rank == b.rank):
                b.since = a.since
                out.append(b)
                last = b
                i += 1
                continue
        out.append(a)
        last = a
    return out


def _records(rng: random.Random, count: int) -> list[Prog]:
    out, seq, step = [], 0, 0
    for n in range(count):
        seq += 1 if rng.random() < 0.8 else 2  # an event printed between two records
        step += rng.choice((1, 1, 1, 0, -3))
        prog = Prog(n, seq, None, rng.choice((None, None, None, "1")))
        prog.printed, prog.family = step, rng.choice(("a", "a", "a", "b"))
        out.append(prog)
    return out


def _state(progress: list[Prog]) -> list[tuple]:
    return [tuple(getattr(p, name) for name in FIELDS) for p in progress]


def test_thinning_keeps_and_merges_what_the_one_by_one_pass_does():
    rng = random.Random(7)
    for count in (0, 1, 2, 3, 4, 5, 17, 400):
        for _ in range(30):
            records = _records(rng, count)
            seed = _state(records)
            twin = [Prog(*s[:4]) for s in seed]
            for p, s in zip(twin, seed, strict=True):
                p.printed, p.family, p.since = s[4], s[5], s[6]
            assert _state(thin(records)) == _state(_thin_one_by_one(twin))


def test_thinning_a_steady_run_halves_it_and_keeps_its_first_record():
    records = _records(random.Random(1), 0)
    for n in range(1, 11):
        prog = Prog(n, n, None, None)
        prog.printed, prog.family = n, "a"
        records.append(prog)
    kept = thin(records)
    assert [p.printed for p in kept] == [1, 3, 5, 7, 9, 10]
    assert [p.since for p in kept] == [1, 2, 4, 6, 8, 10]


CASES = Path(__file__).resolve().parents[1] / "data" / "training_logs" / "dev" / "cases"
ALL_FIELDS = tuple(s for s in Prog.__slots__ if s not in ("matcher", "found"))


def _bar(tmp_path: Path) -> Path:
    """A tqdm bar redrawn with carriage returns, an event line now and then."""
    redraws = []
    for n in range(1, 6001):
        clock = f"{n // 75 // 60:02d}:{n // 75 % 60:02d}"
        redraws.append(f"Epoch 0:  {n * 100 // 6000:3d}%|###  | {n}/6000 "
                       f"[{clock}<00:10, {70 + n % 9}.{n % 97:02d}it/s]")
        if n % 1733 == 0:
            redraws.append(f"Saving checkpoint to /ckpt/epoch=0-step={n}.ckpt")
    path = tmp_path / "bar.log"
    path.write_text("GPU available: True (cuda)\n" + "\r".join(redraws) + "\n")
    return path


def _titan(tmp_path: Path) -> Path:
    """torchtitan's stamped step lines, a rank and a stamp in each line's prefix."""
    lines = ["[rank0]:[titan] 2025-06-16 22:30:00,000 - root - INFO - Training starts at step 1"]
    for n in range(1, 6001):
        t = 1750113000 + n * 1.4
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(t)))
        lines.append(f"[rank0]:[titan] {stamp},{int(t * 1000) % 1000:03d} - root - INFO - step: "
                     f"{n:5d}  loss: {2 + n % 7 / 10:.4f}  memory: 31.2GiB(40.1%)  tps: "
                     f"{5000 + n % 13}")
        if n % 1999 == 0:
            lines.append(f"[rank0]:[titan] {stamp},000 - root - INFO - Saving a checkpoint "
                         f"at step {n}.")
    path = tmp_path / "titan.log"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("case", ["bar", "titan", "A07_"])
def test_rows_thin_and_read_as_the_records_of_the_line_by_line_path(tmp_path, monkeypatch, case):
    """Past a bound lowered to 300 records: the same records, every field, whether each line
    was kept as a `Prog` (`feed`) or runs of them as rows (`feed_block`, `_plain`), thinned
    several times; an additive template (A07's per-line times, merged by adding) included."""
    monkeypatch.setattr(reader, "MAX_PROGRESS", 300)
    monkeypatch.setattr("gpuslo.goodput.logs.read.CHUNK", 8192)
    if case in ("bar", "titan"):
        path = _bar(tmp_path) if case == "bar" else _titan(tmp_path)
    else:
        text = next(CASES.glob(f"{case}*.log")).read_text(encoding="utf-8")
        path = tmp_path / "case.log"
        path.write_text(text * max(1, 6000 // (text.count("\n") + 1)), encoding="utf-8")
    one, other = by_lines(path), by_blocks(path)
    assert other.fast is not None and other.fast.maskable
    rows = len(other.progress) - sum(isinstance(p, Prog) for p in other.progress)
    first, second = one.finish(), other.finish()
    assert rows > 100 and any(p.since != p.seq for p in first.progress)  # rows, thinned
    assert [tuple(getattr(p, f) for f in ALL_FIELDS) for p in first.progress] == [
        tuple(getattr(p, f) for f in ALL_FIELDS) for p in second.progress]
    assert [(o.kind, o.line, o.seq) for o in first.observations] == [
        (o.kind, o.line, o.seq) for o in second.observations]
    assert (first.lines, first.matched) == (second.lines, second.matched)


TITAN = "[rank0]:[titan] 2025-06-16 22:31:32,322 - root - INFO - "


def _spans(pre: str) -> tuple[StampSpans | None, re.Pattern[str]]:
    shape = learn_shapes([pre[len("[rank0]:[titan] "):] if "titan" in pre else pre])[0]
    return StampSpans.of(shape, shape.regex.search(pre)), shape.regex


def test_a_stamp_read_from_its_place_is_the_clocks_own_reading():
    spans, regex = _spans(TITAN)
    assert spans is not None
    fast, slow = Clock(), Clock()
    times = [1750113050.322 + k * 1.4 for k in range(6000)] + [1750113050.0 + 86400 * 3]
    for number, t in enumerate(times):
        text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(t)))
        pre = TITAN.replace("2025-06-16 22:31:32,322", f"{text},{int(t * 1000) % 1000:03d}")
        want = slow.seconds(regex.search(pre).groupdict(), number)
        got = spans.read(pre, fast, number)
        if got is None:
            got = fast.seconds(regex.search(pre).groupdict(), number)
            spans.learn(regex.search(pre), fast)
        assert got == want
        assert (fast.year, fast.day_start, fast.last) == (slow.year, slow.day_start, slow.last)
    assert len(spans.hours) < 200  # read by slicing, not learnt again, within an hour


def test_a_stamp_the_clock_refuses_is_not_read_from_its_place():
    spans, regex = _spans(TITAN)
    clock = Clock()
    assert clock.seconds(regex.search(TITAN).groupdict()) is not None
    spans.learn(regex.search(TITAN), clock)
    assert spans.read(TITAN, clock, 1) == clock.last
    assert spans.read(TITAN.replace(":32,", ":75,"), clock, 2) is None  # second 75: the long way
    assert spans.read(TITAN.replace("22:31", "22:71"), clock, 2) is None


def test_a_layout_without_a_year_or_naming_a_digit_is_not_read_from_its_place():
    glog = "I0213 12:07:20.086 train.py:10] "
    shape = [s for s in learn_shapes([glog] * 3) if "glog" in s.label][0]
    assert StampSpans.of(shape, shape.regex.search(glog)) is None  # the year is the clock's
    assert digit_blind(r"(?P<Y>\d{4})-(?P<m>\d{1,2})")
    assert not digit_blind(r"(?P<Y>20\d\d)-(?P<m>[01]\d)")


def test_one_decode_per_chunk_gives_the_lines_decoded_one_by_one(tmp_path):
    raw = b"ok \xe2\x82\n\xff bad\r\n\xc3\xa9t\xc3\xa9\n" + b"x" * 70000 + b"\xe2\x82\xac\nend"
    path = tmp_path / "mixed.log"
    path.write_bytes(raw)
    stats = ReadStats()
    lines = list(read_lines(path, stats))
    parts = raw.replace(b"\r\n", b"\n").split(b"\n")
    assert lines == [p[:65536].decode("utf-8", errors="replace") for p in parts]
    assert stats.long_lines == 1
