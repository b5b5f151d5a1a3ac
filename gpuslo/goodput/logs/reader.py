"""The training-log reader: learn a log's shape on its head, then read every line fast (pure).

`LogReader(profiles, framework=None, reference=None)`: `feed(line, ts=None)` one physical line
at a time (`reference`: when the log was last written, Unix seconds, the year of stamps that
print none: `clock.Clock`),
`parsed()` what the lines so far say (for a log still being written), `finish()` at the end.
Both return a `ParsedLog`: the event observations (`Obs`), the progress records (`Prog`) and
what was learnt.

Stages. The first `SAMPLE_LINES` lines (or `SAMPLE_BYTES`) are kept and learnt from: their stamp
layouts (`stamps.learn_shapes`, dateutil on the sample only), the terminal wrap width
(`pipe.wrap_width`), then the records' templates and field roles (`learn.learn`), compiled into
matchers. Then the sample and every later line go through `pipe.RecordPipe` (prefixes, stamps,
joins) and, per record, the event wording (`wording.Wording`: a prefilter, then rules) and the
progress matchers (a literal prefilter, then one regex); a timing line (a rate with no counter,
`learn`) gives its time to the progress record beside it. A record printed by another rank than
the first that printed progress is not read as progress (ranks once). Records that nothing read
are sampled (one in `UNREAD_EVERY`); a template with digits that recurs `RELEARN_AFTER` times in
that sample is learnt again with its examples, so a shape that first appears late (a resumed
run's other bar) is read from then on, and a recurring shape still unread is reported
(`relearn.Relearning`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import gpuslo.goodput.logs.aside as aside
from gpuslo.goodput.logs.bartime import fits
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.fast import FastPath
from gpuslo.goodput.logs.learn import Learnt, learn
from gpuslo.goodput.logs.matchers import Matcher, Prog, own_line
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.opening import Opening
from gpuslo.goodput.logs.parsedlog import Obs, ParsedLog
from gpuslo.goodput.logs.perstep import Tally
from gpuslo.goodput.logs.pipe import Rec, RecordPipe, wrap_width
from gpuslo.goodput.logs.profiles import Profiles
from gpuslo.goodput.logs.relearn import UNREAD_EVERY, Relearning
from gpuslo.goodput.logs.stamps import StampShape, TransportTime, learn_shapes
from gpuslo.goodput.logs.templates import SampleRecord
from gpuslo.goodput.logs.thinning import prog as made
from gpuslo.goodput.logs.thinning import settle, thin
from gpuslo.goodput.logs.windowlines import OTHER_WORK, SPREAD_MAX, per_step, tail
from gpuslo.goodput.logs.wording import Wording, rule_progress

SAMPLE_LINES = 5000
SAMPLE_BYTES = 2 << 20
MAX_PROGRESS = 200_000  # records kept; beyond, every other one is merged (`thinning.thin`)


def _own(ts: float | None) -> float | None:
    """A stamp the trainer printed, None for a transport's time."""
    return None if isinstance(ts, TransportTime) else ts


class LogReader(Relearning):
    """Streaming reader of one training log (see the module docstring)."""

    def __init__(self, profiles: Profiles, framework: str | None = None,
                 reference: float | None = None) -> None:
        self.profiles, self.forced = profiles, framework
        self.wording = Wording(profiles, framework)
        self.norm = Normaliser(profiles)
        self.clock = Clock(reference=reference)
        self.pipe = RecordPipe(self.norm, self.clock)
        self.learnt: Learnt | None = None
        self._buffer: list[tuple[int, str, float | None]] = []
        self._buffered = 0
        self.lines = self.matched = 0
        self._seq = 0
        self._last_ts: float | None = None
        self.first_ts: float | None = None
        self.max_ts: float | None = None
        self.events: list[Obs] = []
        self.progress: list[Any] = []  # `Prog`s, and the fast path's rows (`thinning`)
        self._owner: tuple[bool, str | None] = (False, None)
        self._hits: Counter[str] = Counter()
        self._unread: dict[str, list[Any]] = {}
        self._unread_seen = self._unread_counted = 0
        self._sampled = 0
        self.other_progress = 0
        self.fast: FastPath | None = None
        self._timed = -1  # seq of the last progress record a timing line gave its time to
        self._pending: Prog | None = None  # a timing line's times with no record yet
        self._window: tuple[int, int | None] = (0, None)  # last window line, its record's step
        self._pace: float | None = None  # the last window's time per step that held no other work
        self.rates: list[float] = []  # timing lines' seconds per step before any progress
        self.tally: Tally | None = None  # lines that may come once per step (`perstep`)
        self._bound = MAX_PROGRESS
        self.opening = Opening()  # the script's first lines, and where they are printed again

    # -- input ---------------------------------------------------------------------------------
    def feed(self, line: str, ts: float | None = None) -> None:
        """One physical line (newline removed; any length and characters). `ts` is the time the
        transport recorded (a CRI container-log time, Unix seconds), used when the line carries
        no stamp of its own (kept as a `TransportTime`: not the trainer's clock)."""
        if ts is not None and type(ts) is not TransportTime:
            ts = TransportTime(ts)
        self.lines += 1
        if self.lines == 1 and line.startswith("\ufeff"):
            line = line[1:]  # a UTF-8 byte-order mark (Windows editors, PowerShell's Out-File)
        if self.learnt is None:
            self._buffer.append((self.lines, line, ts))
            self._buffered += len(line)
            if len(self._buffer) >= SAMPLE_LINES or self._buffered >= SAMPLE_BYTES:
                self._learn()
            return
        if self.fast is not None and self.pipe.idle() and self.fast.line(self, line, ts):
            return
        for rec in self.pipe.push(self.lines, line, ts):
            self._record(rec)

    def feed_block(self, lines: list[str]) -> None:
        """`feed` each of `lines` (one block of `read.read_blocks`), with no transport time;
        once learnt, the fast path reads the block (`fast.FastPath.block`)."""
        for index, line in enumerate(lines):
            if self.fast is not None:
                self.fast.block(self, lines[index:] if index else lines)
                return
            self.feed(line)

    def dated(self, ts: float | None) -> float | None:
        """Note a record's stamp; returns the stamp of the record before it."""
        prev_ts = self._last_ts
        if ts is not None:
            self._last_ts = ts  # (min and max as compared: no builtin called per line)
            if self.first_ts is None or ts < self.first_ts:
                self.first_ts = ts
            if self.max_ts is None or ts > self.max_ts:
                self.max_ts = ts
        return prev_ts

    def add_progress(self, prog: Prog, rank: str | None) -> None:
        """Keep a progress record unless another rank than the first one printed it. A record
        with no rank after the first one's named one is kept where it goes on from the last
        record kept: a launcher labels a line at its `\n` (`srun --label`, `mpirun`), so a
        bar's redraws after a `\r` (split into lines by `read`) carry no label and continue
        the labelled draw; another rank's restart below it (its labelled first draw not kept)."""
        owned, owner = self._owner
        if not owned:
            self._owner = (True, rank)
        elif rank != owner and (rank is not None or not self.progress or (
                made(self.progress[-1]).printed > prog.printed)):
            return  # another rank's copy of the same progress: read once
        self.progress.append(prog)
        if self.tally is not None and self.tally.pending is not None:
            prog.parts, self.tally.pending = self.tally.pending, None
        if self._pending is not None:
            aside.give(self._pending, prog)
            self._pending, self._timed = None, prog.seq
        if len(self.progress) >= self._bound:
            self.progress = thin(self.progress)
            # records that cannot be merged (an event between every two) raise the bound, so
            # that thinning stays amortised O(1) a record instead of once per record
            self._bound = max(MAX_PROGRESS, 2 * len(self.progress))

    def _learn(self) -> None:
        """Learn from the buffered head, then read it (see the module docstring)."""
        buffered, self._buffer = self._buffer, []
        self._sampled = len(buffered)
        cleaned = [c for _, line, _ in buffered if (c := self.norm.clean(line))]
        self.norm.learn_indent(cleaned)
        self.norm.learn_labels([self.norm.dedent(c) for c in cleaned])
        self.norm.shapes = self._stamp_shapes(buffered)
        wrap = wrap_width([c for _, line, _ in buffered if (c := self.norm.clean(line))])
        ahead = Clock(reference=self.clock.reference)
        scratch = RecordPipe(self.norm, ahead, wrap)
        sample: list[SampleRecord] = []
        # the roles are learnt on the trainer's own clock: a transport's times (a collector's,
        # a block-buffered pipe's arrival) would judge its printed durations (`learn`)
        for number, line, ts in buffered:
            sample += [SampleRecord(r.line, r.text, _own(r.ts), r.rank)
                       for r in scratch.push(number, line, ts)]
        sample += [SampleRecord(r.line, r.text, _own(r.ts), r.rank) for r in scratch.flush()]
        self.clock.ahead = ahead.first_dated  # dates the year-less stamps above it
        self.learnt = learn(sample, self.profiles.pins)
        self.tally = Tally(*self.learnt.counted) if self.learnt.counted else None
        self.pipe = RecordPipe(self.norm, self.clock, wrap)
        if wrap is None and not self.wording.steps and self.learnt.progress:
            self.fast = FastPath(self.learnt.progress, self.norm, self.wording, self.clock)
        for number, line, ts in buffered:
            for rec in self.pipe.push(number, line, ts):
                self._record(rec)

    def _stamp_shapes(self, buffered: list[tuple[int, str, float | None]]) -> list[StampShape]:
        texts = []
        for _, line, _ in buffered:
            cleaned = self.norm.clean(line)
            if cleaned:
                texts += [self.norm.strip(piece)[0] for piece in self.norm.split(cleaned)]
        overlay = [StampShape(p, "overlay", True) for p in self.profiles.timestamps]
        return overlay + learn_shapes(texts)

    # -- one logical record -------------------------------------------------------------------
    def _record(self, rec: Rec) -> None:
        ts = rec.ts
        if ts is None and ("datetime:" in rec.text or "CANCELLED AT" in rec.text):
            ts = self._inline_ts(rec.text, rec.line)
        prev_ts = self.dated(ts)
        if not rec.text:
            return
        self._seq += 1
        text = rec.text
        progress = self._progress(rec, ts)
        self.opening.see(text, rec.line, self._seq, ts, prev_ts, progress == "marker",
                         progress == "progress")
        found = self.wording.match(text, progress == "progress")
        for rule, groups, fw in found:
            if rule.kind != "detect":  # a `detect` line names the framework only: no event
                self.events.append(Obs(rule.kind, rec.line, ts, prev_ts, groups, rule,
                                       text[:300], fw, self._seq))
            if fw is not None:
                self._hits[fw] += 1
        last = self.progress[-1] if self.progress and not progress else None
        if type(last) is Prog and last.bar and last.line == rec.line:
            last.glued = True  # values after a bar on its line (`bars.opening_draw`)
        if progress or found:
            self.matched += 1
        elif any(ch.isdigit() for ch in text):
            self._note_unread(rec, ts)

    def _progress(self, rec: Rec, ts: float | None) -> str:
        """`progress`, `marker` (an epoch marker) or '' (neither) for one record."""
        assert self.learnt is not None
        for marker in self.learnt.markers:
            prog = marker.read(rec.text, rec.line, self._seq, ts, rec.rank)
            if prog is not None and prog.epoch is not None:
                step = self._read_progress(rec, ts)  # a marker's shape opening a step line
                if step is not None and (step.family != "epochs" or step.step_s is not None
                                         or step.elapsed is not None or own_line(
                                             step, marker, rec.text)):  # (MXNet's `Epoch[101]`
                    # before `Batch [250]`; an epoch summary read as the steps, its time with
                    # it; a line of the epoch steps' own template, `own_line`): a step, unless a
                    # marker's epoch is itself the step
                    self.add_progress(step, rec.rank)
                    return "progress"
                said = {"epoch": str(prog.epoch)} | ({"rank": rec.rank} if rec.rank else {})
                self.events.append(Obs("epoch", rec.line, ts, None, said, None, rec.text[:300],
                                       None, self._seq))
                return "marker"
        prog = self._read_progress(rec, ts)
        if prog is None:
            counted = self.tally is not None and self.tally.read(
                rec, self._seq, ts, self._owner, self.progress)
            return "progress" if self._timing(rec, ts) or counted else ""
        self.add_progress(prog, rec.rank)
        return "progress"

    def _read_progress(self, rec: Rec, ts: float | None) -> Prog | None:
        assert self.learnt is not None
        hand = self.wording.step_rule(rec.text) if self.wording.steps else None
        if hand is not None:
            if hand[2] is not None:
                self._hits[hand[2]] += 1
            return rule_progress(hand[0], hand[1], rec, self._seq, ts)
        for matcher in self.learnt.progress:
            prog = matcher.read(rec.text, rec.line, self._seq, ts, rec.rank)
            if prog is not None:
                return prog
        return None

    def _timing(self, rec: Rec, ts: float | None) -> bool:
        """A timing line (`learn`): its time goes to the progress record above it when that
        has none yet, else to the next one; a bar only to the record at its step (`bartime`)."""
        assert self.learnt is not None
        for matcher in self.learnt.timing:
            found = matcher.read(rec.text, rec.line, self._seq, ts, rec.rank)
            last = self.progress[-1] if self.progress else None
            if type(last) is list:  # a row of the fast path: its `Prog` from now on
                last = self.progress[-1] = made(last)
            if found is not None and matcher.reading.window_steps:
                self._windowed(found, last, rec.line, matcher.reading.window_steps)
            if found is None or not aside.times(found) or not fits(found, last):
                continue
            if aside.repeated(found, last):
                return True  # the clock the record above holds, printed again: no step ran
            if last is None and found.rate_s is not None and (
                    not self.rates or self.rates[-1] != found.rate_s):
                self.rates.append(found.rate_s)  # a value printed twice (tf and absl) once
            if last is not None and self._timed != last.seq:
                aside.give(found, last, after=True)
                self._timed = last.seq
            else:
                self._pending = found
            return True
        return False

    def _windowed(self, found: Prog, last: Prog | None, line: int, learnt: int) -> None:
        """A window line's time per step (`windowlines.per_step`): over the counter's advance
        since the last window line where there was one, else the `learnt` steps; none where
        other work was printed since. Each record since that line (`SPREAD_MAX` at most) with
        no time of its own gets it."""
        since, printed = self._window
        covered = learnt
        if last is not None:
            last.complete()
        if last is not None and printed is not None and last.printed > printed and (
                last.epoch is None):
            covered = last.printed - printed
        mixed = any(e.line > since and e.kind in OTHER_WORK for e in self.events[-64:])
        per_step(found, covered, mixed)
        self._window = (line, last.printed if last is not None else None)
        for k in range(len(self.progress) - 1, max(-1, len(self.progress) - SPREAD_MAX), -1):
            row = self.progress[k]
            if found.step_s is None or (row[0] if type(row) is list else row.line) <= since:
                break
            prog = self.progress[k] = made(row).complete()
            if not aside.times(prog) and prog.window_s is None:
                prog.step_s = found.step_s  # each record the window covers: its time per step
                prog.held = found.held
        if found.step_s is not None and not found.held:
            self._pace = found.step_s

    def _inline_ts(self, text: str, line: int) -> float | None:
        for pattern in self.profiles.inline_timestamps:
            found = pattern.search(text)
            if found:
                return self.clock.seconds(found.groupdict(), line)
        return None

    # -- output --------------------------------------------------------------------------------
    def finish(self) -> ParsedLog:
        """End of input: learn from what was buffered if the log was short, flush the joins."""
        if self.learnt is None:
            self._learn()
        for rec in self.pipe.flush():
            self._record(rec)
        if self._window[0]:  # the records after the last window line (`windowlines.tail`)
            self.progress = settle(self.progress)
            tail(self.progress, self._window[0], self._pace)
        return self.parsed()

    def parsed(self) -> ParsedLog:
        """What the lines so far say (a record still being joined is left out)."""
        if self.learnt is None:  # a log still being written, shorter than the sample so far
            pending = LogReader(self.profiles, self.forced, self.clock.reference)
            for number, line, ts in self._buffer:
                pending.lines = number - 1
                pending.feed(line, ts)
            return pending.finish()
        self.progress = settle(self.progress)
        for prog in self.progress:
            prog.complete()
        chosen = self.forced or self.profiles.choose(self._hits)
        events = [o for o in self.events if o.framework is None or o.framework == chosen]
        return ParsedLog(
            framework=chosen, detected=self.forced is None, observations=events,
            progress=list(self.progress), lines=self.lines, matched=self.matched,
            unreadable=self.pipe.unreadable, truncated=self.pipe.truncated,
            first_ts=self.first_ts, last_ts=self.max_ts, clock_back=list(self.clock.back_steps),
            clock_unreliable=self.clock.unreliable, year_assumed=self.clock.year_first,
            learnt=self.learnt,
            stamp_layouts=[s.label for s in self.norm.shapes],
            unread={k: (v[0], v[1], v[2][:200]) for k, v in self._unread.items() if v[0] >= 3},
            candidates=dict(self._hits), rates=list(self.rates), sampled=self._sampled,
            unread_seen=self._unread_seen, unread_counted=self._unread_counted,
            reopened=self.opening.places() if self.opening.second else [],
            opening_seqs=self.opening.seqs)


def parse_lines(lines: Any, profiles: Profiles, framework: str | None = None) -> ParsedLog:
    """Read every line of `lines` (strings without newlines); see `LogReader`."""
    reader = LogReader(profiles, framework)
    for line in lines:
        reader.feed(line)
    return reader.finish()


__all__ = ["UNREAD_EVERY", "LogReader", "Matcher", "Obs", "ParsedLog", "parse_lines"]
