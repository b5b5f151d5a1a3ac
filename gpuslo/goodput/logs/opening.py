"""The script's start-up lines printed again: where a log may have been launched again (pure).

`Opening.see(text, line, seq, ts, prev_ts, marker, stepped)` is fed every record the reader
reads the slow way (progress lines the fast path takes are never start-up lines). A training
script's start-up (its banner, configuration or parameter block, opening notices, load line)
is a template printed once a launch, before its loop: the start-up lines are the records with a
letter before the first progress record, and that record itself (`startup`, at most
`MAX_STARTUP`; a configuration dump a learnt template reads as a step, `'epochs': 100,
'batch_size': 32`, is the second line of fresh13 P04's start-up; the log's first two are
`first` and `second`, their seqs `seqs`; a log that opens with an epoch marker has none).
A later record that prints start-up line k again (`same`) is kept as a `Reopened` (`at` k), with
`pair` True when the record right after it prints line k+1 (two start-up lines again, in
order); a run printing the block on is one place, and so are later start-up lines printed
again, other lines between, before any progress (Lightning's relaunch prints its AMP line, a
restore, then `LOCAL_RANK: 0 …` and its parameter table again: shared h200). Kept (`places`):
the pairs, and the first line printed again alone. Not start-up lines, nor places: a Python
traceback's header, indented frames and exception line (a chained traceback, or several pool
workers', prints the same frames again: fresh14 Q19). Whether a place is a relaunch is decided
with the items around it (`relaunch.reopenings`): this only finds the places, at the cost of a
dict look-up per record.
The pair anywhere in the start-up, not only its first two lines, is from fresh14: Q01's two
notices (`trained model saved at :…`, `best model saved at :…`, so alike that the old rule took
them for one line printed twice) printed again 15 s later; Q05's configuration block printed
again without its first line (`Loaded configuration from …` is printed once a kernel); Q08's
`Parameters:` and its dictionary before `Training epoch: 0` again; Q19's unstamped `Device:` ..
`Training window:` block printed before each `Resuming from checkpoints/best.pt`.

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
MAX_STARTUP = 64  # start-up lines kept (records before the first progress record)
MAX_REOPENED = 1000  # places kept (a log printing its first line thousands of times is a loop)
_TRACEBACK = "Traceback (most recent call last)"
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
    at: int = 0  # the start-up line it prints again (0: the first)
    startup: str = ""  # that start-up line as first printed
    first: tuple[int, int, float | None, float | None] | None = None  # that print's line, seq,
    # stamp and the stamp before it (`firstlaunch.first_launch`)


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
        self.startup: list[str] = []  # the start-up lines, in order (at most `MAX_STARTUP`)
        self.printed: list[tuple[int, int, float | None, float | None]] = []  # where each was
        self.seqs: tuple[int, int] = (0, 0)  # the seqs of the first and the second line
        self.found: list[Reopened] = []
        self._index: dict[str, list[int]] = {}  # a start-up line's prefix -> its places
        self._stepped = False  # a progress record was seen: the start-up is over
        self._run: tuple[int, int] | None = None  # (seq, start-up index) the last record printed
        self._high: int | None = None  # the highest start-up line printed again since a place
        self._traceback = False  # inside a Python traceback's frames

    @property
    def first(self) -> str | None:
        return self.startup[0] if self.startup else None

    @property
    def second(self) -> str | None:
        return self.startup[1] if len(self.startup) > 1 else None

    def see(self, text: str, line: int, seq: int, ts: float | None,
            prev_ts: float | None, marker: bool, stepped: bool = False) -> None:
        """One record, read the slow way; `marker`: it was read as an epoch marker; `stepped`:
        as a progress record (the start-up ends at the first)."""
        run, self._run = self._run, None
        if marker and not self.startup:
            self._stepped = True  # the log opens with an epoch marker: no start-up lines
        if self._in_traceback(text) or not _LETTER.search(text):
            self._step(stepped)
            return
        at = self._match(text)
        if run is not None and run[0] == seq - 1 and run[1] + 1 in at:
            self._run = (seq, run[1] + 1)  # the start-up printed on, in order
            self._high = max(self._high or 0, run[1] + 1)
            if self.found and self.found[-1].seq == seq - 1:
                self.found[-1].pair = True
        elif stepped:
            if not at and not self._stepped:
                self._keep(text, (line, seq, ts, prev_ts))  # the first progress record: the
                # start-up's last line
        elif on := [k for k in at if self._high is not None and k > self._high]:
            self._run, self._high = (seq, on[0]), on[0]  # later start-up lines, others between
        elif at:
            self._run, self._high = (seq, at[0]), at[0]
            if len(self.found) < MAX_REOPENED:
                self.found.append(Reopened(line, seq, ts, prev_ts, text[:300], at=at[0],
                                           startup=self.startup[at[0]][:300],
                                           first=self.printed[at[0]]))
        elif not self._stepped:
            self._keep(text, (line, seq, ts, prev_ts))
            self._high = None  # a new start-up line: no launch printed again is open
        self._step(stepped)

    def _keep(self, text: str, where: tuple[int, int, float | None, float | None]) -> None:
        """`text` is a start-up line, printed at `where` (line, seq, stamp, stamp before)."""
        if len(self.startup) >= MAX_STARTUP:
            return
        seq = where[1]
        self._index.setdefault(text[:PREFIX], []).append(len(self.startup))
        self.startup.append(text)
        self.printed.append(where)
        if len(self.startup) <= 2:
            self.seqs = (self.seqs[0] or seq, seq if len(self.startup) == 2 else 0)

    def _step(self, stepped: bool) -> None:
        """After a progress record the start-up is over, a launch's included."""
        if stepped:
            self._stepped, self._high = True, None

    def places(self) -> list[Reopened]:
        """The places a start-up is printed again: two of its lines in order (`pair`), or its
        first line alone."""
        return [p for p in self.found if p.pair or p.at == 0]

    def _in_traceback(self, text: str) -> bool:
        """Whether `text` belongs to a Python traceback (its header, its indented frames and the
        exception line that ends it): a chained traceback prints the same frames again, which
        are no start-up (fresh14 Q19), and so does a wrapper that recurses inside one stack
        (sklearn's `inner_f` twice, the header logged as `… __main__ ERROR Traceback (most
        recent call last):`: fresh17 U03)."""
        if _TRACEBACK in text:  # at the line's start or after a logger's prefix (`… ERROR    `)
            self._traceback = True
        elif self._traceback and not text[:1].isspace():
            self._traceback = False  # the exception line, the traceback's last
            return True
        return self._traceback

    def _match(self, text: str) -> list[int]:
        """The start-up lines `text` prints again (their indices, in order)."""
        return [k for k in self._index.get(text[:PREFIX], ()) if same(self.startup[k], text)]
