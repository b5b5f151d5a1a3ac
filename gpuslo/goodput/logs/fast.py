"""The per-line fast path of the reader (pure).

After learning, most lines of a big log are progress lines of one template. `FastPath.line`
reads such a line whole: a literal prefilter (`anchor in line`), one regex `match` of the
template behind whatever prefix the line has (a rank, a stamp, a logger's name: `_pre`), the
step read at once and the other fields when the record is used (`Prog.complete`). The prefix is
read by the `Normaliser` once per shape (digits masked), then only its stamp is matched (or,
where the log learnt one, the Unix time that ends the line: `unixtime`). A line the fast path
is not sure of - a message glued to it, a word an event rule looks for (or that a save
finished, `wording.SAVED`), colour codes, a prefix that is not one - goes the whole way
(`RecordPipe`, wording, matchers); so does every other line.

`FastPath.block(reader, lines)` reads a block of lines (`read.read_blocks`: one chunk) the same
way, line by line, after one prefilter over the whole block (`BlockScan`) has found the lines
that may hold an event word, a control byte or a save's word; the other lines skip those
searches (a regex alternation of some 25 words, run at every position). And where no template
holds an ASCII digit (`Matcher.maskable`), the block's digits are masked (all `0`) once, and
only the first line of each masked shape runs the regexes: a line of a shape seen before
takes that line's group spans (`matchers.Found`), as its own regex would give them (a regex
that treats the ten digits alike cannot tell the two lines apart), and its prefix's shape.

A run of clean lines of remembered shapes is read in one loop (`_plain`), the reader's
counters in locals and each record kept as a row (`thinning`: a list, its `Prog` made when
it is used), where each line would be kept as it is: same effects, same records.
"""

from __future__ import annotations

import re
from typing import Any

import gpuslo.goodput.logs.unixtime as unixtime
from gpuslo.goodput.logs.blockscan import BlockScan, encode
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.matchers import Found, Matcher, Prog, spans_of, step_value
from gpuslo.goodput.logs.normalise import GLUED_MIN, Normaliser
from gpuslo.goodput.logs.pipe import STAMP_COLUMN_MIN, blank_column
from gpuslo.goodput.logs.stamps import StampShape
from gpuslo.goodput.logs.stampspans import StampSpans
from gpuslo.goodput.logs.wording import SAVED_HINTS, Wording, says_saved

_DIGITS = str.maketrans("0123456789", "0000000000")
_BAR_END = r"(?:it/s|s/it)(?:, [^\]\n]{0,400})?\](?=\S)"
_RESIDUE = " \t-|:>[]"
_CONTROL_BYTES = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x1b"
_CONTROL = re.compile("[\x00-\x08\x1b]")  # colour codes and control bytes (_CONTROL_BYTES)
MAX_SHAPES = 256
# a template's match on a line: (matcher, match, prefix end, match end, masked prefix or None,
# the step's text or None)
Hit = tuple[Matcher, Any, int, int, str | None, str | None]
MAX_MASKED = 1024  # digit-masked line shapes whose match is remembered (`FastPath._known`)
MAX_MASKED_BYTES = 4096  # a longer line's shape is not remembered: at most ~4 MiB of shapes
_MASK = bytes.maketrans(b"0123456789", b"0000000000")
_NONE = object()  # no entry yet (`_plain`)


class FastPath:
    """See the module docstring."""

    def __init__(self, matchers: list[Matcher], norm: Normaliser, wording: Wording,
                 clock: Clock) -> None:
        self.matchers = [(m.anchor, tuple(lit for lit in m.literals if lit != m.anchor),
                          m.fast(), m) for m in matchers]
        self.norm, self.clock = norm, clock
        self.glue = re.compile("|".join([p.pattern for p in norm.profiles.splits] + [_BAR_END]))
        words = sorted({r.contains for r, _ in wording.rules if len(r.contains) >= 4
                        and r.kind not in ("detect", "hint", "train_start")})
        # literals only, so that the regex engine skips to their first characters (a class
        # among them would make it try every alternative at every position: 3x slower)
        self.words = re.compile("|".join(re.escape(w) for w in words) or "(?!)")
        # and the save words' substrings, so that a clean line needs no `says_saved` either
        self.scan = BlockScan(tuple(dict.fromkeys((*words, *SAVED_HINTS))), _CONTROL_BYTES)
        self.prefixes: dict[str, tuple[bool, str | None, StampShape | None,
                                       StampSpans | None]] = {}
        self.tail = any(s.tail for s in norm.shapes)
        self.maskable = all(m.maskable for m in matchers)
        self.shapes: dict[bytes, tuple[Any, ...]] = {}  # masked line -> `Hit` parts, or ()

    def block(self, reader: Any, lines: list[str]) -> None:
        """Feed `lines` (one block, no transport times) to `reader` as `reader.feed` would,
        the event words and control bytes looked for once over the block (`BlockScan`) and
        each line's template match taken from the last line of its digit-masked shape
        (`_known`) where the templates allow it; a run of clean lines of shapes seen before is
        read in one loop (`_plain`). A `read.Block`'s bytes are scanned and masked as they were
        read (the same marks and shapes: its lines decoded from them; a byte that was not
        UTF-8 is no word, control byte nor digit, and a shape stays a shape)."""
        data = getattr(lines, "data", None)  # (`read.Block`: the bytes the lines came from)
        data = encode(lines) if data is None else data
        marked = self.scan.lines(lines, data)
        shapes = data.translate(_MASK).split(b"\n") if self.maskable else None
        if shapes is not None and len(shapes) != len(lines):
            shapes = None  # a line holding a newline (not one of `read_blocks`)
        if shapes is None:
            self._lines(reader, lines, None, marked, 0, None)
            return
        # each line's remembered match, looked up at once (a shape learnt or forgotten later in
        # the block changes nothing: every line of a shape has the same spans, `_known`)
        known = list(map(self.shapes.get, shapes)) if marked is not None and not (
            self.tail) else None
        start = 0
        while start < len(lines):
            start = self._plain(reader, lines, known, marked, start) if known else start
            if start < len(lines):
                start = self._lines(reader, lines, shapes, marked, start, known)

    def _lines(self, reader: Any, lines: list[str], shapes: list[bytes] | None,
               marked: set[int] | None, start: int, known: list[Any] | None) -> int:
        """Read `lines[start:]` one by one (`_known` or `_hit` and `_read`, else the pipe), up
        to the next clean line of a remembered shape (`known`: `_plain` reads it); returns
        where it stopped."""
        pipe = reader.pipe
        idle = pipe.idle()  # only a push changes it: the fast path reads without the pipe
        for index in range(start, len(lines)):
            line = lines[index]
            if idle and index > start and known is not None and known[index] and (
                    index not in marked):  # type: ignore[operator]  (known: marked is a set)
                return index
            reader.lines += 1
            if idle:
                hit = self._hit(line) if shapes is None else self._known(shapes[index], line)
                if hit is not None and self._read(reader, line, hit, None, marked is not None
                                                  and index not in marked):
                    continue
            for rec in pipe.push(reader.lines, line, None):
                reader._record(rec)
            idle = pipe.idle()
        return len(lines)

    def _plain(self, reader: Any, lines: list[str], known: list[Any], marked: set[int],
               start: int) -> int:
        """Read the run of clean lines (`marked`) of remembered shapes (`known`) from
        `lines[start]` on as `_read` reads each (the same checks in the same order, the same
        effects), the reader's counters kept in locals and a record that `add_progress` would
        only append kept as a row (`thinning`): a line this loop does not take (a `[` after
        the match, no step, a prefix shape not learnt yet) ends the run before any effect,
        one `_read` would leave to the pipe is pushed here and ends it. Returns the first line
        not done. Needs the pipe idle and a line with no Unix time to look for (`block`)."""
        pipe = reader.pipe
        if not pipe.idle() or not reader._owner[0] or reader._pending is not None or (
                reader.tally is not None and reader.tally.pending is not None):  # (`perstep`)
            return start  # (a timing line's times wait for the next record: `add_progress`)
        number, seq, matched = reader.lines, reader._seq, reader.matched
        progress, bound, owner = reader.progress, reader._bound - 1, reader._owner[1]
        width = pipe.column[0]
        # the last line's `known` entry, checked once for the lines that share it (most of a
        # run: `_plain_shape`)
        shape: Any = _NONE
        index = start
        for index in range(start, len(lines)):
            entry = known[index]
            if entry is not shape:
                plain = self._plain_shape(entry)
                if plain is None:
                    break  # (left to `_read`: no match, no step, a prefix shape not learnt)
                shape = entry
                matcher, family, spans, end, pre_end, masked, stamped, rank0, s0, s1 = plain
            line = lines[index]
            if index in marked or end < len(line) and line.find("[", end) >= 0:
                break  # (left to `_read`)
            ts, rank = None, rank0
            if stamped:
                got = self._prefix(line[:pre_end], number + 1, masked)
                if got is None:
                    return self._push(reader, line, (number + 1, seq, matched), index)
                ts, rank = got
            if ts is not None:
                pipe.column = (width, ts)  # (`pipe.stamp_column`)
            elif width >= STAMP_COLUMN_MIN and blank_column(line, width):
                # dated by the stamp above it: the pipe's (`_read`, after the prefix's effects)
                return self._push(reader, line, (number + 1, seq, matched), index)
            raw = line[s0:s1]
            printed = int(raw) if raw.isdigit() else step_value(raw)
            if printed is None:
                return self._push(reader, line, (number + 1, seq, matched), index)
            if ts is not None:
                reader.dated(ts)
            number += 1
            seq += 1
            matched += 1
            if rank == owner and len(progress) < bound:  # (`add_progress`: nothing else to do)
                progress.append([number, seq, ts, rank, printed, family, matcher, line, spans,
                                 seq])  # a row (`thinning`)
            else:
                reader.lines, reader._seq, reader.matched = number, seq, matched
                reader.add_progress(Prog(number, seq, ts, rank, printed, family, matcher.bar,
                                         matcher, Found(line, spans)), rank)
                progress, bound = reader.progress, reader._bound - 1
        else:
            index = len(lines)
        reader.lines, reader._seq, reader.matched = number, seq, matched
        return index

    def _plain_shape(self, entry: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        """What `_plain` needs of a remembered match (`known` entry): (matcher, family,
        spans, match end, prefix end, masked prefix, whether the prefix has a stamp to read,
        the prefix's rank when it has none, the step's span); None when `_read` must see the
        line (no match, no step, or a prefix whose shape is not learnt yet or is not only a
        prefix: `_prefix`, whose answer for a learnt shape does not change)."""
        if not entry:
            return None
        matcher, spans, pre_end, end, masked, step = entry
        if step is None:
            return None
        stamped, rank = False, None
        if pre_end:
            cached = self.prefixes.get(masked)
            if cached is None or not cached[0]:
                return None
            stamped, rank = cached[2] is not None, cached[1]
        return (matcher, matcher.family, spans, end, pre_end, masked, stamped,
                None if stamped else rank, step[0], step[1])

    @staticmethod
    def _push(reader: Any, line: str, counters: tuple[int, int, int], index: int) -> int:
        """`line` (number, seq and matched counts in `counters`) given to the pipe, as a line
        `_read` does not read; the next line's index."""
        reader.lines, reader._seq, reader.matched = counters
        for rec in reader.pipe.push(reader.lines, line, None):
            reader._record(rec)
        return index + 1

    def _known(self, shape: bytes, line: str) -> Hit | None:
        """`_hit(line)`, the regexes run only on the first line of each digit-masked `shape`
        and the others' matches read from its spans (`matchers.Found`). Exact: with
        `maskable` templates the prefilter's words and the regexes see the shape only
        (`matchers.Matcher.maskable`), and so does the prefix's shape (`_prefix`)."""
        known = self.shapes.get(shape)
        if known is None:
            hit = self._hit(line)
            if len(shape) > MAX_MASKED_BYTES:
                return hit  # (not remembered: the memory the shapes hold stays small)
            if len(self.shapes) >= MAX_MASKED:
                self.shapes.clear()
            if hit is None:
                self.shapes[shape] = ()
                return None
            matcher, found, pre_end, end, _, raw = hit
            masked = line[:pre_end].translate(_DIGITS)
            spans = spans_of(found)
            step = spans[matcher.step_group] if matcher.step_group else None
            self.shapes[shape] = (matcher, spans, pre_end, end, masked, step)
            return matcher, found, pre_end, end, masked, raw
        if not known:
            return None
        matcher, spans, pre_end, end, masked, step = known
        return (matcher, Found(line, spans), pre_end, end, masked,
                line[step[0]:step[1]] if step else None)

    def _hit(self, line: str) -> Hit | None:
        """The first template whose literals are all on `line` and whose regex matches it:
        (matcher, match, where the prefix ends, where the match ends, None, the step's text
        or None)."""
        for anchor, needles, regex, matcher in self.matchers:
            if anchor and anchor not in line:
                continue
            if needles and not all(map(line.__contains__, needles)):
                continue  # a literal of the template is missing: the regex cannot match
            found = regex.match(line)
            if found is not None:
                step = found.group(matcher.step_group) if matcher.step_group else None
                return matcher, found, found.end("_pre"), found.end(), None, step
        return None

    def line(self, reader: Any, line: str, transport: float | None = None,
             clean: bool = False) -> bool:
        """Read `line` when it is a plain progress line (True), else leave it (False);
        `transport` dates a line whose prefix has no stamp (a container log's CRI time), as
        `RecordPipe.push` does; `clean`: a block's prefilter found no event word, no control
        byte and none of `wording.SAVED_HINTS` on the line. `reader` is the
        reader.LogReader (it imports this module)."""
        hit = self._hit(line)
        return hit is not None and self._read(reader, line, hit, transport, clean)

    def _read(self, reader: Any, line: str, hit: Hit, transport: float | None,
              clean: bool) -> bool:
        """`line`'s progress record from the first template that matched it (`_hit`)."""
        matcher, found, pre_end, end, masked, raw_step = hit
        if (not clean or end < len(line) and line.find("[", end) >= 0) and self._unsure(
                line, pre_end, end, clean):  # (a clean line with no `[` after it is sure)
            return False
        ts, rank = None, None
        if pre_end:  # the prefix group opens the match, at the line's start
            known = self._prefix(line[:pre_end], reader.lines, masked)
            if known is None:
                return False
            ts, rank = known
        blank, _ = reader.pipe.stamp_column(line, ts)
        if blank:
            return False  # dated by the stamp above it: the pipe's (`pipe.blank_column`)
        if ts is None and self.tail:  # a Unix time that ends the line (`unixtime`)
            at_end = unixtime.search(line)
            ts = self.clock.seconds(at_end.groupdict(), reader.lines) if at_end else None
        if ts is None:
            ts = transport
        if raw_step is None:
            return False
        step = int(raw_step) if raw_step.isdigit() else step_value(raw_step)  # (`step_of`)
        if step is None:
            return False
        if ts is not None:  # (an undated record changes nothing the reader dates)
            reader.dated(ts)
        reader._seq += 1
        reader.matched += 1
        reader.add_progress(Prog(reader.lines, reader._seq, ts, rank, step, matcher.family,
                                 matcher.bar, matcher, found), rank)
        return True

    def _unsure(self, line: str, start: int, end: int, clean: bool = False) -> bool:
        """True when more than the progress record may be on the line: a message glued after
        it, a word an event rule looks for, colour codes or control bytes (looked for outside
        the template's match: inside it there are only the template's words and numbers;
        not at all on a `clean` line, which has none of them anywhere, nor a save's word)."""
        if end < len(line) and line.find("[", end) >= 0 and self.glue.search(line, end):
            return True
        if len(line) - end > GLUED_MIN and self.norm.shapes and self.norm.glued(line, end):
            return True
        if clean:  # (the block's prefilter looked for `SAVED_HINTS` too: none on the line)
            return False
        if (self.words.search(line, 0, start) or self.words.search(line, end)
                or _CONTROL.search(line, 0, start) or _CONTROL.search(line, end)):
            return True
        return says_saved(line, end)  # a step line that is a save's (`wording`)

    def _prefix(self, pre: str, number: int,
                shape: str | None = None) -> tuple[float | None, str | None] | None:
        """(stamp, rank) of a line's prefix, None when it is not only a prefix and a stamp;
        `shape`: the prefix with its digits masked, when known."""
        shape = pre.translate(_DIGITS) if shape is None else shape
        known = self.prefixes.get(shape)
        if known is None:
            text, rank, _ = self.norm.strip(pre)
            rest, groups = self.norm.stamp(text)
            stamp = next((s for s in self.norm.shapes if not s.tail and s.regex.search(text)),
                         None) if groups else None
            first = stamp.regex.search(pre) if stamp is not None else None
            spans = StampSpans.of(stamp, first) if stamp and first else None
            known = (not rest.strip(_RESIDUE), rank, stamp, spans)
            if len(self.prefixes) < MAX_SHAPES:
                self.prefixes[shape] = known
        ok, rank, stamp, spans = known
        if not ok:
            return None
        if stamp is None:
            return None, rank
        if spans is not None:  # the stamp read from its place, its minute known (`stampspans`)
            ts = spans.read(pre, self.clock, number)
            if ts is not None:
                return ts, rank
        found = stamp.regex.search(pre)
        if found is None:
            return None
        ts = self.clock.seconds(found.groupdict(), number)
        if spans is not None and ts is not None:
            spans.learn(found, self.clock)
        return ts, rank
