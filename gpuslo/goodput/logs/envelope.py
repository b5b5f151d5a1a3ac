"""A collector's envelope around every line of a log, removed before the reader (pure).

A log read from a collector rather than from the trainer's stdout carries, before each line, the
time the collector received it:
- `kubectl logs --timestamps`, `docker logs -t`: an RFC 3339 time with up to nine fraction
  digits (seven or more on the first line: `_NANO_OPENER`) and a zone, then one blank
  (`2026-12-07T06:54:01.250000000Z step 10 …`);
- a Kubernetes CRI file (`/var/log/pods/…`): the same time, the stream and the tags
  (`… stdout F step 10`, `P` for a piece of a longer line: joined with the pieces that follow).
  Each record, with the redraws `read` split off it after its `\\r`s joined back on, goes to
  `cri_log.decode`, the exporter's `--job-log` reading: the same joined lines, each dated by
  the record it ended in. What `read` cannot give back: a `P` record whose text ends in `\\r`
  is stored as `\\r\\n`, which `read` takes for one line end (a Windows log's), so here its
  text runs on into the next record's; and a line that is no record is a redraw of the record
  before it (`--job-log`, which splits on `\\n` only, reads it as a plain line, undated);
- journald or syslog (`journalctl -o short`): `Dec 07 06:54:01 host python[1234]: `;
- moreutils `ts` with its default format: `Dec 07 06:54:01 `. A trainer whose own stamps take
  that syslog layout at the start of every line cannot be told from it: its stamps are then
  read as a collector's, and its printed durations win over them (below).

`Envelope.detect(head)` picks the kind whose envelope opens the head's first non-blank line and
at least `MIN_LINES` of its lines, all of them in a shorter head (a collector wraps every line
it receives; a bar's `\\r` redraws, split into lines by `read`, carry none after the first).
`Envelope.unwrap(line)` then gives each physical line as (collector time or None, the trainer's
text): a line without the envelope (a redraw after `\\r`) keeps the time of the line before it
(in a CRI file: of the record its text ended in, each record given once the next begins).

Which clock wins: the collector's time goes to the reader as the transport time
(`LogReader.feed(line, ts)`, kept as a `stamps.TransportTime`), which dates a record only when
the record has no stamp of its own. The trainer's stamp is when it measured the step; the
collector's is when the line reached the pipe, after the trainer's stdout buffer (Python
block-buffers a pipe: many lines then share one collector time), so the trainer's own clock
wins wherever it prints one, and so do its printed durations, elapsed times, averages
and rates (`steptimes._preferred`; its roles are learnt without the transport's times); a log
that prints no time at all is dated by the collector (a valid clock: when each line was written).
Launcher prefixes inside the envelope (`[rank0]:`, `0: `) stay for `normalise.Normaliser.strip`.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.cri_log import (
    MAX_JOINED,
    CriJoiner,
    decode,
    parse_cri_line,
    timed_lines,
)

MIN_LINES = 3
HEAD_LINES = 200
_MONTH = r"(?P<b>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (?P<d>[ \d]?\d) "
_TIME = r"(?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)(?:\.(?P<f>\d{1,9}))?"
# journald's `host identifier[pid]: `: an identifier opens with a letter (a trainer's own
# `2023-02-18 19:06:04` after `ts`'s stamp is no host and process)
_SENDER = r"[\w.-]{1,63} [A-Za-z_][\w./@-]{0,63}(?:\[\d{1,10}\])?: "
_KINDS = {
    "rfc3339": re.compile(r"(?P<Y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)T" + _TIME
                          + r"(?P<z>Z|[+-]\d\d:\d\d) (?!stdout |stderr )"),
    "journald": re.compile(_MONTH + _TIME + " " + _SENDER + "?"),
    "ts": re.compile(_MONTH + _TIME + f" (?!{_SENDER})"),
}
# what opens a log kubectl or docker stamped: nanoseconds (kubectl prints all nine digits,
# docker's RFC3339Nano trims trailing zeros: seven or more but one time in a thousand). A
# trainer's own RFC 3339 stamp prints seconds, milli- or microseconds (InnerEye's
# `2021-03-19T14:41:07Z INFO …`, Python's isoformat): its clock, not an envelope.
_NANO_OPENER = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7,9}(?:Z|[+-]\d\d:\d\d) ")


class Envelope:
    """The envelope of one log (see the module docstring); `kind` None: the lines are bare."""

    def __init__(self, kind: str | None, reference: float | None = None) -> None:
        self.kind = kind
        self.clock = Clock(reference=reference)
        self.last: float | None = None
        self.joiner = CriJoiner()  # CRI `P` pieces not yet ended, per stream
        self.record: str | None = None  # the CRI record being read, its redraws rejoined

    @classmethod
    def detect(cls, head: list[str], reference: float | None = None) -> Envelope:
        """The envelope of the log whose first physical lines are `head`."""
        lines = [line for line in head[:HEAD_LINES] if line.strip()]
        if not lines:
            return cls(None, reference)
        least = min(MIN_LINES, len(lines))  # a log of one or two lines: each of them
        if parse_cri_line(lines[0]) is not None and sum(
                parse_cri_line(line) is not None for line in lines) >= least:
            return cls("cri", reference)
        for kind, pattern in _KINDS.items():
            if kind == "rfc3339" and not _NANO_OPENER.match(lines[0]):
                continue
            if pattern.match(lines[0]) and sum(
                    pattern.match(line) is not None for line in lines) >= least:
                return cls(kind, reference)
        return cls(None, reference)

    def unwrap(self, line: str) -> list[tuple[float | None, str]]:
        """The (collector time, text) lines one physical line gives: in a CRI file those of the
        record before it, once it is a record (see `_cri`)."""
        if self.kind is None:
            return [(None, line)]
        if self.kind == "cri":
            return self._cri(line)
        found = _KINDS[self.kind].match(line)
        if found is None:
            return [(self.last, line)]
        at = self.clock.seconds(found.groupdict())
        self.last = at if at is not None else self.last
        return [(self.last, line[found.end():])]

    def _cri(self, line: str) -> list[tuple[float | None, str]]:
        """A CRI line: a record waits in `record` for the bare lines after it (its text after
        each `\\r`, split off by `read`), rejoined with `\\r` and decoded (`cri_log.decode`)
        when the next record begins. A record no runtime writes (bare lines past `MAX_JOINED`
        characters) is decoded then, and the bare lines after it keep its time."""
        record = parse_cri_line(line)
        if record is None:
            if self.record is None:
                return [(self.last, line)]
            self.record += "\r" + line
            return self._decoded() if len(self.record) > MAX_JOINED else []
        out = self._decoded()
        self.record, self.last = line, record.t
        return out

    def _decoded(self) -> list[tuple[float | None, str]]:
        """The lines of the record in `record` (none when there is none), `last` its time."""
        if self.record is None:
            return []
        out = decode(self.record, self.joiner)
        self.record = None
        return out

    def flush(self) -> list[tuple[float | None, str]]:
        """What an unfinished CRI record holds at the end of the log."""
        out = self._decoded()
        for pieces, text in self.joiner.drain():
            out += timed_lines(pieces, text)
        return out
