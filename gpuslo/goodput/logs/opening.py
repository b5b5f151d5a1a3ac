"""The script's opening lines printed again: where a log may have been launched again (pure).

`Opening.see(text, line, seq, ts, prev_ts)` is fed every record the reader reads the slow way
(progress lines the fast path takes are never opening lines). The log's opening is its first two
records with a letter (`first`, `second`; an epoch marker opens none); whether they are lines
of the loop (a progress template that recurs) is judged later, with the records
(`relaunch.reopenings`); a later record that prints the first again (`same`) is kept as a
`Reopened`, with `pair` True when the record right after it prints the second again (the
script's first two lines in the same order). Whether one is a relaunch is decided with the
items around it (`relaunch.reopenings`): this only finds the places, at the cost of a prefix
test per record.

`same(a, b)`: the same line printed again: the same numbers in the same order (a relaunch prints
its own banner and configuration; a loop's status lines carry the iteration's numbers, `Epoch 2`
after `Epoch 1`), and the same text or nearly (difflib's ratio at least `SIMILAR`, 0.8, on the
digit-masked texts: a banner that gained a word, `（修复版）` → `（最终修复版）`, a configuration
that gained a key; fresh13 P04). A record with no letters (a rule of `=`, a blank) opens
nothing: the opening begins at the first record with a letter, and its second line must have
one too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

SIMILAR = 0.8
PREFIX = 24  # characters of the first opening line a record must start with to be compared
MAX_REOPENED = 1000  # places kept (a log printing its first line thousands of times is a loop)
_DIGITS = re.compile(r"\d+")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class Reopened:
    """A record that prints the log's first line again: its line, seq, stamp and the stamp of
    the record before it (Unix seconds or None); `pair`: the next record prints the second."""

    line: int
    seq: int
    ts: float | None
    prev_ts: float | None
    text: str = ""
    pair: bool = False


def same(a: str, b: str) -> bool:
    """Whether `b` prints the line `a` again (module docstring)."""
    if _DIGITS.findall(a) != _DIGITS.findall(b):
        return False
    masked_a, masked_b = _DIGITS.sub("#", a), _DIGITS.sub("#", b)
    if masked_a == masked_b:
        return True
    matcher = SequenceMatcher(None, masked_a, masked_b, autojunk=False)
    return matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR and (
        matcher.ratio() >= SIMILAR)  # (upper bounds first: most lines fail them cheaply)


class Opening:
    """See the module docstring."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.second: str | None = None
        self.closed = False  # the opening's two lines are known, or cannot be
        self.seqs: tuple[int, int] = (0, 0)  # the seqs of the first and the second line
        self.found: list[Reopened] = []
        self._last: Reopened | None = None  # the place the record before this one opened

    def see(self, text: str, line: int, seq: int, ts: float | None,
            prev_ts: float | None, marker: bool) -> None:
        """One record, read the slow way; `marker`: it was read as an epoch marker."""
        last, self._last = self._last, None
        if not self.closed:
            self._open(text, seq, marker)
            return
        if last is not None and last.seq == seq - 1 and same(self.second or "", text):
            last.pair = True
        first = self.first or ""
        if text[:PREFIX] == first[:PREFIX] and len(self.found) < MAX_REOPENED and same(
                first, text):
            self._last = Reopened(line, seq, ts, prev_ts, text[:300])
            self.found.append(self._last)

    def _open(self, text: str, seq: int, marker: bool) -> None:
        if self.first is None:
            if marker:
                self.closed = True  # the log opens with an epoch marker: no opening lines
            elif _LETTER.search(text):
                self.first, self.seqs = text, (seq, 0)
            return
        self.closed = True
        if not marker and _LETTER.search(text) and not same(self.first, text):
            self.second, self.seqs = text, (self.seqs[0], seq)
        else:
            self.first = None  # no second line: nothing is looked for
