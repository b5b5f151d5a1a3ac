"""A CRI file reads the same through `gpuslo goodput` (`feed_log` on `read_blocks`, the
`Envelope`) as through the exporter's `--job-log` tailer (`cri_log.decode` on each raw line, as
`logs.JobLogTailer._read_job` splits them): one joiner (`cri_log.CriJoiner`) serves both. The
lines are the kubelet's CRI format (Kubernetes `parseCRILog`): `P` pieces of a long message,
tqdm's `\\r` redraws inside a record and across pieces, stdout and stderr interleaved."""

from __future__ import annotations

import json
from itertools import accumulate
from pathlib import Path

import pytest

from gpuslo.goodput.logs import cri_log, feed_log
from gpuslo.goodput.logs.cri_log import CriJoiner, decode
from gpuslo.goodput.logs.read import ReadStats, read_blocks

T = "2026-12-07T06:54:{:02d}.{:09d}Z"
LINES = [
    f"{T.format(1, 0)} stdout F epoch 1 begins",
    f"{T.format(2, 0)} stdout P Train Epoch: 1 [",
    f"{T.format(2, 250_000_000)} stderr F a warning between the pieces",
    f"{T.format(2, 500_000_000)} stdout F 0%] loss 2.1",
    f"{T.format(3, 0)} stdout P  10%|█  | 1/10 [00:01<00:09]\r 20%|██ | 2/10 [00:",
    f"{T.format(4, 0)} stdout P 02<00:08]\r 30%|███| 3/10",
    f"{T.format(5, 0)} stdout F  [00:03<00:07]\r 40%|████| 4/10 [00:04<00:06]",
    f"{T.format(6, 0)} stdout F step 10 loss 1.9\r step 11 loss 1.8",
    f"{T.format(7, 123_456_789)} stdout F ",
]


class Fed:
    """A stand-in for `LogReader` that keeps what `feed_log` gives it."""

    def __init__(self) -> None:
        self.lines: list[tuple[float | None, str]] = []

    def feed(self, text: str, ts: float | None = None) -> None:
        self.lines.append((ts, text))

    def feed_block(self, block: list[str]) -> None:
        self.lines += [(None, text) for text in block]


def file_path(path: Path) -> list[tuple[float | None, str]]:
    fed = Fed()
    feed_log(fed, read_blocks(str(path), ReadStats()), None)
    return fed.lines


def live_path(path: Path) -> list[tuple[float | None, str]]:
    joiner = CriJoiner()
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [line for raw in text.split("\n")[:-1] for line in decode(raw, joiner)]


def test_the_file_and_the_job_log_give_the_same_lines_and_times(tmp_path: Path):
    path = tmp_path / "0.log"
    path.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    live = live_path(path)
    assert file_path(path) == live
    t0 = 1796626441.0  # 2026-12-07T06:54:01Z
    assert live[:3] == [(t0, "epoch 1 begins"), (t0 + 1.25, "a warning between the pieces"),
                        (t0 + 1.5, "Train Epoch: 1 [0%] loss 2.1")]
    # each redraw dated by the piece its last character came in
    assert live[3:7] == [(t0 + 2, " 10%|█  | 1/10 [00:01<00:09]"),
                         (t0 + 3, " 20%|██ | 2/10 [00:02<00:08]"),
                         (t0 + 4, " 30%|███| 3/10 [00:03<00:07]"),
                         (t0 + 4, " 40%|████| 4/10 [00:04<00:06]")]
    assert live[7:] == [(t0 + 5, "step 10 loss 1.9"), (t0 + 5, " step 11 loss 1.8"),
                        (t0 + 6.123456789, "")]


def test_a_bar_longer_than_the_join_limit_is_read_in_full(tmp_path: Path, monkeypatch):
    """Only an unfinished line waits in the joiner: a bar redrawn without a newline for more
    than `MAX_JOINED` characters loses none of its redraws on either path; one unbroken line
    past the limit is still cut (the negative)."""
    monkeypatch.setattr(cri_log, "MAX_JOINED", 400)
    bar = "".join(f" {n}%|#| {n}/100 [00:{n:02d}<00:00]\r" for n in range(100))
    pieces = [bar[k:k + 173] for k in range(0, len(bar), 173)]
    # a piece ending in `\r` is stored as `\r\n`, one line end to `read` (envelope docstring)
    assert not any(piece.endswith("\r") for piece in pieces[:-1])
    lines = [f"{T.format(k % 60, 0)} stdout {'P' if k < len(pieces) - 1 else 'F'} {piece}"
             for k, piece in enumerate(pieces)] + [f"{T.format(59, 0)} stdout P {'x' * 300}",
                                                   f"{T.format(59, 1)} stdout F {'y' * 300}"]
    path = tmp_path / "0.log"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    live = live_path(path)
    assert [text for _, text in live[:100]] == [f" {n}%|#| {n}/100 [00:{n:02d}<00:00]"
                                               for n in range(100)]
    assert live[100:] == [(1796626499.000000001, "x" * 300 + "y" * 100)]
    assert file_path(path) == live


def test_the_lines_after_an_unbroken_line_past_the_join_limit_are_kept(tmp_path: Path,
                                                                         monkeypatch):
    """The limit cuts one unbroken line, not the record: redraws that follow it after a `\\r`
    in later pieces are read on both paths (they were dropped until the record's `F`). Its
    negative: the unbroken line itself stays cut at the limit, and its text past the limit
    never joins the next line."""
    monkeypatch.setattr(cri_log, "MAX_JOINED", 400)
    lines = [f"{T.format(1, 0)} stdout P {'x' * 300}", f"{T.format(2, 0)} stdout P {'y' * 300}",
             f"{T.format(3, 0)} stdout P \r step 5/10", f"{T.format(4, 0)} stdout F \r step 6/10"]
    path = tmp_path / "0.log"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    t0 = 1796626441.0
    live = live_path(path)
    assert live == [(t0 + 1, "x" * 300 + "y" * 100), (t0 + 2, " step 5/10"),
                    (t0 + 3, " step 6/10")]
    assert file_path(path) == live


def _records(pieces: list[str], last: str = "F") -> list[str]:
    """CRI lines of one stdout message in `pieces`, one a millisecond: `P` but the `last`."""
    return [f"{T.format(1 + k // 1000, (k % 1000) * 1_000_000)} stdout "
            f"{'P' if k < len(pieces) - 1 else last} {piece}" for k, piece in enumerate(pieces)]


def _cut(text: str, width: int, count: int) -> list[str]:
    """`count` pieces of `text`, `width` characters each, one more where a piece would end in a
    `\\r` (a file stores a record ending in `\\r` as `\\r\\n`, one line end to `read`)."""
    pieces, at = [], 0
    while len(pieces) < count:
        end = at + width + (text[at + width - 1] == "\r")
        pieces.append(text[at:end])
        at = end
    return pieces


def test_a_long_run_of_partial_records_joins_to_the_whole_message(tmp_path: Path):
    """A bar redrawn with `\\r` and never a newline, cut into 5000 `P` records of about 7
    characters (a runtime cuts at 16 KiB; the run is as long), reads as its redraws, each dated
    by the record its last character came in, on both paths; a joiner rebuilt from its `pending`
    halfway (the tailer's cursor, through JSON) reads the same; an unbroken line of 4000 `P`
    records joins to one line."""
    pieces = _cut("\r".join(f" {n:4d}/9999 [#]" for n in range(4000)), 7, 5000)
    bar = "".join(pieces)
    path = tmp_path / "0.log"
    path.write_text("".join(line + "\n" for line in _records(pieces)), encoding="utf-8")
    live = live_path(path)
    assert [text for _, text in live] == bar.split("\r")
    record_of = [k for k, piece in enumerate(pieces) for _ in piece]  # by character
    lasts = [end - 1 for end in accumulate(len(t) + 1 for t in bar.split("\r"))]  # at its `\r`
    t0 = 1796626441.0
    assert [t for t, _ in live] == [t0 + record_of[k - 1] * 0.001 for k in lasts]
    assert file_path(path) == live
    joiner, halves = CriJoiner(), []
    for k, raw in enumerate(_records(pieces)):
        if k == 2500:
            joiner = CriJoiner(json.loads(json.dumps(joiner.pending)))
        halves += decode(raw, joiner)
    assert halves == live
    path.write_text("".join(line + "\n" for line in _records(["ab"] * 4000)), encoding="utf-8")
    assert [text for _, text in live_path(path)] == ["ab" * 4000]


def test_a_log_ending_inside_a_run_of_partial_records_gives_what_waits(tmp_path: Path):
    """The file path reads the unfinished message at the end of the log (`Envelope.flush`), the
    live path keeps it waiting for its `F` (negative: nothing read yet)."""
    path = tmp_path / "0.log"
    path.write_text("".join(line + "\n" for line in _records(["step 1"] + ["0"] * 3000, "P")),
                    encoding="utf-8")
    assert [text for _, text in file_path(path)] == ["step 1" + "0" * 3000]
    assert live_path(path) == []


def test_a_cursor_entry_without_its_pieces_is_one_piece_and_a_broken_one_is_refused():
    """An older cursor's [time, text] waits as one piece dated by its time; anything else is a
    ValueError, which the tailer's cursor load turns into reading the log again (`spool`)."""
    joiner = CriJoiner({"stdout": [5.0, "Train Epoch: 1 ["]})
    record = cri_log.parse_cri_line(f"{T.format(9, 0)} stdout F 0%] loss 2.1")
    assert joiner.feed(record) == ([[16, 5.0], [28, record.t]], "Train Epoch: 1 [0%] loss 2.1")
    for broken in ([], [5.0], [5.0, 7, []], "text"):
        with pytest.raises(ValueError):
            CriJoiner({"stdout": broken})
