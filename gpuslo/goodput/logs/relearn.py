"""Re-learning shapes that first appear late: the unread records of a `reader.LogReader` (pure).

`Relearning` is a mixin of `LogReader`: `_note_unread(rec, ts)` samples a record with digits that
nothing read (every one of the first `4 * UNREAD_EVERY`, then one in `UNREAD_EVERY`), counted by
its template (`MAX_UNREAD_KINDS` templates, `MAX_EXAMPLES` examples each); a template seen
`RELEARN_AFTER` times in that sample is learnt again with its examples (`_relearn`), so a shape
that first appears late (a resumed run's other bar) is read from then on.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.learn import Learnt, learn
from gpuslo.goodput.logs.pipe import Rec
from gpuslo.goodput.logs.profiles import Profiles
from gpuslo.goodput.logs.templates import SampleRecord
from gpuslo.goodput.logs.thinning import settle
from gpuslo.goodput.logs.tokens import template

UNREAD_EVERY = 16
RELEARN_AFTER = 24
MAX_UNREAD_KINDS = 512
MAX_EXAMPLES = 64


class Relearning:
    """The unread-record sampling and re-learning of `LogReader` (its attributes below)."""

    profiles: Profiles
    learnt: Learnt | None
    progress: list[Any]
    _unread: dict[str, list[Any]]
    _unread_seen: int
    _unread_counted: int
    _seq: int

    def _note_unread(self, rec: Rec, ts: float | None) -> None:
        self._unread_seen += 1
        if self._unread_seen % UNREAD_EVERY and self._unread_seen > 4 * UNREAD_EVERY:
            return
        shape = template(rec.text)
        entry = self._unread.get(shape)
        if entry is None:
            if len(self._unread) >= MAX_UNREAD_KINDS:
                return
            entry = self._unread[shape] = [0, rec.line, rec.text, []]
        entry[0] += 1
        self._unread_counted += 1
        if len(entry[3]) < MAX_EXAMPLES:
            entry[3].append((rec, ts, self._seq))
        if entry[0] == RELEARN_AFTER:
            self._relearn(entry[3])

    def _relearn(self, examples: list[tuple[Rec, float | None, int]]) -> None:
        """Learn the examples of a recurring unread template; a new progress template of a
        family already read, or a bar (a resumed run's), is read from now on, and the
        examples kept are read as progress too."""
        assert self.learnt is not None
        fresh = learn([SampleRecord(r.line, r.text, ts, r.rank) for r, ts, _ in examples],
                      self.profiles.pins)
        known = {m.family for m in self.learnt.progress}
        added = []
        for matcher in fresh.progress:
            if (not known or matcher.family in known or matcher.bar) and (
                    matcher.family not in self.learnt.inner):  # (an evaluation's bar: never)
                matcher.reading.why += f" (learnt at line {examples[-1][0].line})"
                added.append(matcher)
        self.learnt.progress += added
        self.progress = settle(self.progress)
        self.learnt.markers += fresh.markers
        self.learnt.readings += fresh.readings
        for rec, ts, seq in examples:
            for matcher in added:
                prog = matcher.read(rec.text, rec.line, seq, ts, rec.rank)
                if prog is not None:
                    self.progress.append(prog)
                    break
        if added:
            self.progress.sort(key=lambda p: p.seq)
