"""Training-log lines → observations (pure; the profiles say what each line means).

`LogParser(profiles, framework=None)`: `feed(line)` one physical line (no newline) at a time,
then `finish() -> ParsedLog`. Memory is bounded by what the log *says* (one small `Obs` per
progress line, error or checkpoint line), not by its size: lines that match nothing are counted
and dropped. `parse_lines(lines, profiles, framework)` does the same over an iterable.

Per physical line: cut before glued messages (`splits`), strip launcher/reporter prefixes
(`[default3]:`, `[rank0]:`, `[1745] `, `> `), strip a leading timestamp (`timestamps`), re-join
terminal-wrapped records (a step rule's `record_end`), then run the common rules and every
framework's rules (or only the one given). The framework is the one with the most progress
records; its observations and the common ones, in line order, are the result.

Timestamps become Unix seconds (UTC as printed: logs do not say their zone). A timestamp without
a year (c10 `E602 11:17:52`, glog, absl) takes the year of the last full timestamp, else
`REFERENCE_YEAR`; a time of day alone takes the last full date, rolling over at midnight.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuslo.errors import UsageError
from gpuslo.goodput.logs.profiles import MAX_RECORD, Profiles, Rule

REFERENCE_YEAR = 2000  # a leap year, so a year-less Feb 29 still parses
MAX_JOIN = 8  # physical lines one wrapped record may span
_ANSI = re.compile(r"\x1b\[[0-9;?]{0,40}[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class Obs:
    """One thing a log line said.

    kind: a rule kind (`step`, `save`, `interruption`, ...); line: 1-based physical line;
    ts: the record's own timestamp (Unix seconds) or None; prev_ts: the last timestamp any
    earlier line carried; data: the regex's named groups (strings); rule: the rule that matched;
    text: the record, cut to 300 characters; framework: the profile (None for common rules);
    seq: the record's position in the log (pieces of one physical line keep their order).
    """

    kind: str
    line: int
    ts: float | None
    prev_ts: float | None
    data: dict[str, str]
    rule: Rule
    text: str
    framework: str | None = None
    seq: int = 0


@dataclass
class ParsedLog:
    """What `LogParser.finish` returns.

    framework: the chosen profile name or None; detected: True when it was detected, not given;
    observations: in line order; lines: physical lines read; matched: records some rule matched;
    unreadable: lines dropped as binary noise; truncated: lines cut at `MAX_RECORD`;
    first_ts, last_ts: the earliest and latest timestamps of any line (Unix seconds) or None;
    candidates: progress records per framework (what detection saw).
    """

    framework: str | None
    detected: bool
    observations: list[Obs]
    lines: int = 0
    matched: int = 0
    unreadable: int = 0
    truncated: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    candidates: dict[str, int] = field(default_factory=dict)


class _Clock:
    """Turns timestamp regex groups into Unix seconds, carrying year and date forward."""

    def __init__(self) -> None:
        self.year: int | None = None
        self.day_start: float | None = None  # midnight of the last full date, Unix seconds
        self.last: float | None = None

    def seconds(self, g: dict[str, str]) -> float | None:
        try:
            hour, minute, sec = int(g["H"]), int(g["M"]), int(g["S"])
            frac = float("0." + g["f"]) if g.get("f") else 0.0
            if hour > 23 or minute > 59 or sec > 60:
                return None
            if g.get("Y"):
                year, month, day = int(g["Y"]), int(g["m"]), int(g["d"])
            elif g.get("md"):
                md = g["md"]
                year = self.year or REFERENCE_YEAR
                month, day = int(md[:-2]), int(md[-2:])
            else:
                return self._time_of_day(hour * 3600 + minute * 60 + sec + frac)
            if not (1 <= month <= 12 and 1 <= day <= 31):
                return None
            midnight = float(calendar.timegm((year, month, day, 0, 0, 0)))
        except (KeyError, ValueError, OverflowError):
            return None
        if g.get("Y"):
            self.year, self.day_start = year, midnight
        value = midnight + hour * 3600 + minute * 60 + sec + frac
        self.last = value
        return value

    def _time_of_day(self, tod: float) -> float:
        if self.day_start is None:
            self.day_start = float(calendar.timegm((REFERENCE_YEAR, 1, 1, 0, 0, 0)))
        value = self.day_start + tod
        if self.last is not None and value < self.last - 43200:  # rolled over midnight
            self.day_start += 86400.0
            value += 86400.0
        self.last = value
        return value


class LogParser:
    """Streaming parser of one training log (see the module docstring).

    Raises UsageError when `framework` is not a profile name."""

    def __init__(self, profiles: Profiles, framework: str | None = None) -> None:
        if framework is not None and framework not in profiles.frameworks:
            known = ", ".join(profiles.frameworks)
            raise UsageError(f"--framework: unknown framework {framework!r}; known: {known}")
        self.profiles = profiles
        self.forced = framework
        self._frameworks = ([profiles.frameworks[framework]] if framework
                            else list(profiles.frameworks.values()))
        self._joiners = [r for fw in self._frameworks for r in fw.rules
                         if r.kind == "step" and r.record_end is not None]
        self._clock = _Clock()
        self._common: list[Obs] = []
        self._per_fw: dict[str, list[Obs]] = {fw.name: [] for fw in self._frameworks}
        self._steps: dict[str, int] = dict.fromkeys(self._per_fw, 0)
        self._hits: dict[str, int] = dict.fromkeys(self._per_fw, 0)
        self._step_rank: dict[str, str | None] = {}
        self._pending: list[str] | None = None
        self._pending_meta: tuple[int, float | None, str | None] = (0, None, None)
        self._last_ts: float | None = None
        self._seq = 0
        self._transport_ts: float | None = None
        self.lines = self.matched = self.unreadable = self.truncated = 0
        self.first_ts: float | None = None
        self.max_ts: float | None = None

    # -- input ---------------------------------------------------------------------------
    def feed(self, line: str, ts: float | None = None) -> None:
        """One physical line (its newline removed; any length, any characters). `ts` is the time
        the transport recorded for it (a CRI container-log timestamp, Unix seconds), used when
        the line carries no timestamp of its own; it never joins or splits records."""
        self._transport_ts = ts
        self.lines += 1
        if len(line) > MAX_RECORD:
            line = line[:MAX_RECORD]
            self.truncated += 1
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if _CONTROL.search(line):
            cleaned = _CONTROL.sub("", line)
            if len(cleaned) < 0.7 * len(line):
                self.unreadable += 1
                return
            line = cleaned
        for piece in self._split(line):
            self._physical(piece)

    def _split(self, line: str) -> list[str]:
        cuts = {0}
        for pattern in self.profiles.splits:
            cuts.update(m.start() for m in pattern.finditer(line, 1) if m.start() > 0)
        if len(cuts) == 1:
            return [line]
        points = sorted(cuts) + [len(line)]
        return [line[a:b] for a, b in zip(points, points[1:], strict=False) if line[a:b].strip()]

    def _strip(self, text: str) -> tuple[str, bool, str | None]:
        had_prefix, rank = False, None
        for _ in range(6):
            for pattern in self.profiles.prefixes:
                found = pattern.match(text)
                if found and found.end() > 0:
                    had_prefix = True
                    rank = found.groupdict().get("rank") or rank
                    text = text[found.end():]
                    break
            else:
                break
        return text, had_prefix, rank

    def _timestamp(self, text: str) -> tuple[str, float | None]:
        for pattern in self.profiles.timestamps:
            found = pattern.match(text)
            if found:
                value = self._clock.seconds(found.groupdict())
                if value is not None:
                    return text[found.end():], value
        return text, None

    def _inline_timestamp(self, text: str) -> float | None:
        for pattern in self.profiles.inline_timestamps:
            found = pattern.search(text)
            if found:
                return self._clock.seconds(found.groupdict())
        return None

    def _physical(self, raw: str) -> None:
        text, had_prefix, rank = self._strip(raw)
        text, own = self._timestamp(text)
        if own is not None:
            text, more_prefix, more_rank = self._strip(text)
            rank = more_rank or rank
        ts = own if own is not None else self._transport_ts
        if self._pending is not None:
            starts_new = had_prefix or own is not None or not text.strip() or any(
                r.match(text) for r in self._joiners)
            if not starts_new and len(self._pending) < MAX_JOIN:
                self._pending.append(text)
                joined = "".join(self._pending)
                if any(r.record_end is not None and r.record_end.search(joined)
                       for r in self._joiners):
                    self._flush_pending()
                return
            self._flush_pending()
        for rule in self._joiners:
            end = rule.record_end
            if end is not None and rule.match(text) and not end.search(text):
                self._pending = [text]
                self._pending_meta = (self.lines, ts, rank)
                return
        self._record(text, self.lines, ts, rank)

    def _flush_pending(self) -> None:
        parts, self._pending = self._pending, None
        if parts:
            line, ts, rank = self._pending_meta
            self._record("".join(parts)[:MAX_RECORD], line, ts, rank)

    # -- one logical record ---------------------------------------------------------------
    def _record(self, text: str, line: int, ts: float | None, rank: str | None) -> None:
        if ts is None and ("datetime:" in text or "CANCELLED AT" in text):
            ts = self._inline_timestamp(text)
        prev_ts = self._last_ts
        if ts is not None:
            self._last_ts = ts
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.max_ts = ts if self.max_ts is None else max(self.max_ts, ts)
        if not text.strip():
            return
        self._seq += 1
        seq = self._seq
        matched = False
        best: tuple[Rule, dict[str, str]] | None = None
        for rule in self.profiles.common:
            groups = rule.match(text)
            if groups is None:
                continue
            if rule.kind == "interruption":
                if best is None or rule.priority > best[0].priority:
                    best = (rule, groups)
            else:
                self._common.append(Obs(rule.kind, line, ts, prev_ts, groups, rule, text[:300],
                                        seq=seq))
            matched = True
        if best is not None:
            self._common.append(Obs("interruption", line, ts, prev_ts, best[1], best[0],
                                    text[:300], seq=seq))
        for fw in self._frameworks:
            seen: set[str] = set()
            for rule in fw.rules:
                if rule.kind in seen:
                    continue
                groups = rule.match(text)
                if groups is None:
                    continue
                seen.add(rule.kind)
                matched = True
                self._hits[fw.name] += 1
                if rule.kind == "detect":
                    continue
                if rule.kind == "step":
                    owner = self._step_rank.setdefault(fw.name, rank)
                    if owner != rank:
                        continue
                    self._steps[fw.name] += 1
                self._per_fw[fw.name].append(
                    Obs(rule.kind, line, ts, prev_ts, groups, rule, text[:300], fw.name, seq))
        if matched:
            self.matched += 1

    def finish(self) -> ParsedLog:
        """End of input: choose the framework and return the observations in line order."""
        self._flush_pending()
        return self.parsed()

    def parsed(self) -> ParsedLog:
        """What the lines so far say, without ending the input (a record still being joined
        is left out until it completes): for a log that is still being written."""
        if self.forced:
            chosen: str | None = self.forced
        else:
            ranked = sorted(self._per_fw, key=lambda n: (self._steps[n], self._hits[n]),
                            reverse=True)
            best = ranked[0] if ranked else None
            chosen = best if best and (self._steps[best] or self._hits[best]) else None
        observations = self._common + (self._per_fw[chosen] if chosen else [])
        observations.sort(key=lambda o: (o.seq, o.framework is None))
        return ParsedLog(framework=chosen, detected=self.forced is None,
                         observations=observations, lines=self.lines, matched=self.matched,
                         unreadable=self.unreadable, truncated=self.truncated,
                         first_ts=self.first_ts, last_ts=self.max_ts,
                         candidates={k: v for k, v in self._steps.items() if v})


def parse_lines(lines: Iterable[str], profiles: Profiles, framework: str | None = None,
                ) -> ParsedLog:
    """Parse every line of `lines` (strings without newlines); see `LogParser`."""
    parser = LogParser(profiles, framework)
    for line in lines:
        parser.feed(line)
    return parser.finish()


def number(value: Any) -> float | None:
    """A log's number (`5,856`, `2.5e+4`, `nan`) as a finite float, else None."""
    try:
        result = float(str(value).replace(",", ""))
    except (TypeError, ValueError):
        return None
    return result if result == result and abs(result) != float("inf") else None
