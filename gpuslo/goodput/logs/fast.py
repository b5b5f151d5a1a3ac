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
that may hold an event word or a control byte; the other lines skip those two searches, the
most costly part of a line (a regex alternation of some 25 words, run at every position).

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
from gpuslo.goodput.logs.matchers import Found, Matcher, Prog, spans_of
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.stamps import Clock, StampShape
from gpuslo.goodput.logs.wording import Wording, says_saved

_DIGITS = str.maketrans("0123456789", "0000000000")
_BAR_END = r"(?:it/s|s/it)(?:, [^\]\n]{0,400})?\](?=\S)"
_RESIDUE = " \t-|:>[]"
_CONTROL_BYTES = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x1b"
_CONTROL = re.compile("[\x00-\x08\x1b]")  # colour codes and control bytes (_CONTROL_BYTES)
MAX_SHAPES = 256
MAX_MASKED = 4096  # digit-masked line shapes whose match is remembered (`FastPath._known`)
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
        self.scan = BlockScan(tuple(words), _CONTROL_BYTES)
        self.prefixes: dict[str, tuple[bool, str | None, StampShape | None]] = {}
        self.tail = any(s.tail for s in norm.shapes)
        self.maskable = all(m.maskable for m in matchers)
        self.shapes: dict[bytes, tuple[Matcher, dict[str, tuple[int, int]]] | tuple[()]] = {}

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
                clean = marked is not None and index not in marked
                if shapes is None:
                    if self.line(reader, line, None, clean):
                        continue
                else:
                    known = self._known(shapes[index], line)
                    if known is not None and self._read(reader, line, *known, None, clean):
                        continue
            for rec in pipe.push(reader.lines, line, None):
                reader._record(rec)
            idle = pipe.idle()

    def _known(self, shape: bytes, line: str) -> tuple[Matcher, Any] | None:
        """The first template whose prefilter passes and whose regex matches `line`, and its
        match (`matchers.Found` when a line of the same shape was matched before), as `line`
        finds them; None when none matches. Exact: with `maskable` templates the prefilter's
        words and the regexes see the shape only (`matchers.Matcher.maskable`)."""
        known = self.shapes.get(shape)
        if known is None:
            for anchor, needles, regex, matcher in self.matchers:
                found = self._match(line, anchor, needles, regex)
                if found is not None:
                    known = (matcher, spans_of(found))
                    break
            else:
                found, known = None, ()
            if len(self.shapes) >= MAX_MASKED:
                self.shapes.clear()
            self.shapes[shape] = known
            return (known[0], found) if known else None
        return (known[0], Found(line, known[1])) if known else None

    @staticmethod
    def _match(line: str, anchor: str, needles: tuple[str, ...],
               regex: re.Pattern[str]) -> re.Match[str] | None:
        if anchor and anchor not in line:
            return None
        if needles and not all(map(line.__contains__, needles)):
            return None  # a literal of the template is missing: the regex cannot match
        return regex.match(line)

    def line(self, reader: Any, line: str, transport: float | None = None,
             clean: bool = False) -> bool:
        """Read `line` when it is a plain progress line (True), else leave it (False);
        `transport` dates a line whose prefix has no stamp (a container log's CRI time), as
        `RecordPipe.push` does; `clean`: a block's prefilter found no event word and no
        control byte on the line. `reader` is the reader.LogReader (it imports this module)."""
        for anchor, needles, regex, matcher in self.matchers:
            found = self._match(line, anchor, needles, regex)
            if found is not None:
                return self._read(reader, line, matcher, found, transport, clean)
        return False

    def _read(self, reader: Any, line: str, matcher: Matcher, found: Any,
              transport: float | None, clean: bool) -> bool:
        """`line`'s progress record from the first template that matched it (`line`)."""
        if self._unsure(line, found.end("_pre"), found.end(), clean):
            return False
        pre = found.group("_pre")
        ts, rank = None, None
        if pre:
            known = self._prefix(pre, reader.lines)
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
        step = matcher.step_of(found)
        if step is None:
            return False
        reader.dated(ts)
        reader._seq += 1
        reader.matched += 1
        prog = Prog(reader.lines, reader._seq, ts, rank)
        prog.printed, prog.family, prog.bar = step, matcher.family, matcher.bar
        prog.matcher, prog.found = matcher, found
        reader.add_progress(prog, rank)
        return True

    def _unsure(self, line: str, start: int, end: int, clean: bool = False) -> bool:
        """True when more than the progress record may be on the line: a message glued after
        it, a word an event rule looks for, colour codes or control bytes (looked for outside
        the template's match: inside it there are only the template's words and numbers;
        not at all on a `clean` line, which has none anywhere)."""
        if end < len(line) and "[" in line[end:] and self.glue.search(line, end):
            return True
        if not clean and (self.words.search(line, 0, start) or self.words.search(line, end)
                          or _CONTROL.search(line, 0, start) or _CONTROL.search(line, end)):
            return True
        return says_saved(line, end)  # a step line that is a save's (`wording`)

    def _prefix(self, pre: str, number: int) -> tuple[float | None, str | None] | None:
        """(stamp, rank) of a line's prefix, None when it is not only a prefix and a stamp."""
        shape = pre.translate(_DIGITS)
        known = self.prefixes.get(shape)
        if known is None:
            text, rank, _ = self.norm.strip(pre)
            rest, groups = self.norm.stamp(text)
            stamp = next((s for s in self.norm.shapes if not s.tail and s.regex.search(text)),
                         None) if groups else None
            known = (not rest.strip(_RESIDUE), rank, stamp)
            if len(self.prefixes) < MAX_SHAPES:
                self.prefixes[shape] = known
        ok, rank, stamp = known
        if not ok:
            return None
        if stamp is None:
            return None, rank
        found = stamp.regex.search(pre)
        if found is None:
            return None
        return self.clock.seconds(found.groupdict(), number), rank


def _mergeable(a: Prog, b: Prog) -> bool:
    """b follows a directly (nothing printed between a and the first record merged into b),
    same progress family (one counter: Megatron's iteration line is two templates, with and
    without a field) and rank, step not going back (a bar redraws a step): a record between two
    such records may be merged into the next (a run's first never is, the counter rises into
    it)."""
    return (b.since == a.seq + 1 and a.family == b.family and b.printed >= a.printed
            and a.rank == b.rank)


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
    """Half the records, merged pairwise where nothing separates them (module docstring)."""
    out: list[Prog] = []
    known: dict[int, bool] = {}
    i = 0
    while i < len(progress):
        a = progress[i]
        b = progress[i + 1] if i + 1 < len(progress) else None
        if b is not None and out and _mergeable(out[-1], a) and _mergeable(a, b):
            if _additive(a, known):  # a's own times add to b's; other fields are b's own
                a.complete()
                b.complete()
                if a.window_s is not None and b.window_s is not None:
                    b.window_s += a.window_s
                if a.line_s is not None and b.line_s is not None:
                    b.line_s += a.line_s
            b.since = a.since
            out.append(b)
            i += 2
            continue
        out.append(a)
        i += 1
    return out
