"""The per-line fast path of the reader, and the bound on the progress records it keeps (pure).

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

`thin(progress)` keeps memory bounded on any log size: when the records reach the reader's
bound, every other record of a stretch of consecutive records (same run, same progress family,
step not going back, nothing printed between them) is merged into the next one (its window and
line times added), so the records left describe the same steps and times, more coarsely; a
merged record can be merged again, so each thinning halves the records.
"""

from __future__ import annotations

import re
from typing import Any

import gpuslo.goodput.logs.unixtime as unixtime
from gpuslo.goodput.logs.blockscan import BlockScan, encode
from gpuslo.goodput.logs.matchers import Found, Matcher, Prog, spans_of, step_value
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.stamps import Clock, StampShape
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
        (`_known`) where the templates allow it."""
        data = encode(lines)
        marked = self.scan.lines(lines, data)
        shapes = data.translate(_MASK).split(b"\n") if self.maskable else None
        if shapes is not None and len(shapes) != len(lines):
            shapes = None  # a line holding a newline (not one of `read_blocks`)
        pipe = reader.pipe
        idle = pipe.idle()  # only a push changes it: the fast path reads without the pipe
        for index, line in enumerate(lines):
            reader.lines += 1
            if idle:
                hit = self._hit(line) if shapes is None else self._known(shapes[index], line)
                if hit is not None and self._read(reader, line, hit, None, marked is not None
                                                  and index not in marked):
                    continue
            for rec in pipe.push(reader.lines, line, None):
                reader._record(rec)
            idle = pipe.idle()

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
            return False  # dated by the stamp above it: the pipe's (`pipe._blank_column`)
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


def _additive(prog: Prog, known: dict[int, bool]) -> bool:
    """Whether a merged record's times add to the next one's (a window or a line's part of a
    step); a record still unread whose template has neither need not be read to be merged.
    `known`: the answer per template (by id) in this pass, as a template's fields are fixed."""
    if prog.found is None or prog.matcher is None:
        return True
    additive = known.get(id(prog.matcher))
    if additive is None:
        additive = known[id(prog.matcher)] = any(
            role in ("window_s", "line_s") for _, role, _, _ in prog.matcher.fields)
    return additive


def thin(progress: list[Prog]) -> list[Prog]:
    """Half the records, merged pairwise where nothing separates them (module docstring):
    a record `a` between the last record kept and the next, `b`, is merged into `b` when each
    of the three follows the one before directly (nothing printed between them, nor between
    `a` and the first record merged into `b`: `since`), all three of one progress family (one
    counter: Megatron's iteration line is two templates, with and without a field) and rank,
    the step not going back (a bar redraws a step); a run's first record is never merged (the
    counter rises into it)."""
    out: list[Prog] = []
    known: dict[int, bool] = {}
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
                if (a.found is None or known.get(id(a.matcher)) is not False) and _additive(
                        a, known):  # a's own times add to b's; other fields are b's own
                    a.complete()
                    b.complete()
                    if a.window_s is not None and b.window_s is not None:
                        b.window_s += a.window_s
                    if a.line_s is not None and b.line_s is not None:
                        b.line_s += a.line_s
                b.since = a.since
                out.append(b)
                last = b
                i += 1
                continue
        out.append(a)
        last = a
    return out
