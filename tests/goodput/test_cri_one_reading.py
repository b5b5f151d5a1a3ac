"""A CRI file reads the same through `gpuslo goodput` (`feed_log` on `read_blocks`, the
`Envelope`) as through the exporter's `--job-log` tailer (`cri_log.decode` on each raw line, as
`logs.JobLogTailer._read_job` splits them): one joiner (`cri_log.CriJoiner`) serves both. The
lines are the kubelet's CRI format (Kubernetes `parseCRILog`): `P` pieces of a long message,
tqdm's `\\r` redraws inside a record and across pieces, stdout and stderr interleaved."""

from __future__ import annotations

from pathlib import Path

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
