"""What judging a daemon's log shares (pure), for the fabric-manager and host-engine policies
(`policy.fabricmanager`, `policy.hostengine`): their message catalogues, the records no entry
claims, and the device-and-severity fallback over the rest.

- A catalogue is `messages:` in the data file, `name: {patterns: [...], ...}`, tried in order;
  the first entry one of whose patterns occurs in the text claims it (`MessageCatalogue`).
- A record no entry claims that is a daemon's error (`is_trouble`: level ERROR, FATAL or
  CRITICAL, or a console or `systemctl status` record with a failure word) is never read healthy
  (`error_finding`): unknown (reason `unrecognised_message`), fatal with a fatal-class word.
- Every other record's lines, and the lines that are no record, go to the device-and-severity
  fallback (`policy.unrecognised`) by `fallback_findings`.
`sort_records` is the walk over the records both policies make: what the daemon's own extractor
reads (an SXid report, a health-watch result), what its catalogue claims, its errors no entry
claims, and the rest for the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuslo import names
from gpuslo.exporter.evidence.daemon_log import DaemonLog, LogRecord
from gpuslo.exporter.policy.unrecognised import (
    ERROR_WORDS,
    is_fatal_text,
    judge_line,
    judge_lines,
    unrecognised_findings,
)
from gpuslo.verdict import Finding

ERROR_LEVELS = ("ERROR", "FATAL", "CRITICAL", "CRIT", "ERR")
# Words that make a console or status record a failure (beside `ERROR_WORDS`).
FAILURE_WORDS = re.compile(
    r"\b(?:invalid|inactive|not running|exit(?:ed|ing)|abort(?:ed|ing)|terminated|crash\w*|"
    r"dead|auto-restart)\b",
    re.IGNORECASE,
)
WRAPPER_UNITS = ("console", "systemctl")


@dataclass(frozen=True)
class MessageCatalogue:
    """Compiled `messages:` entries: (name, patterns, entry) in file order."""

    entries: tuple[tuple[str, tuple[re.Pattern, ...], Mapping[str, Any]], ...]

    @classmethod
    def from_mapping(cls, messages: Mapping[str, Any]) -> MessageCatalogue:
        """Compile the entries (patterns case-insensitive)."""
        return cls(tuple(
            (str(name), tuple(re.compile(p, re.IGNORECASE) for p in entry["patterns"]), entry)
            for name, entry in messages.items()
        ))

    def match(self, text: str) -> tuple[str, Mapping[str, Any]] | None:
        """(name, entry) of the first entry one of whose patterns occurs in `text`."""
        for name, patterns, entry in self.entries:
            if any(p.search(text) for p in patterns):
                return name, entry
        return None


def first_line(record: LogRecord) -> str:
    """The record's first line (the message without its continuation)."""
    return record.message.split("\n", 1)[0]


def catalogue_text(record: LogRecord) -> str:
    """The text a catalogue is tried on: a wrapper record's first line (a status block's
    `Active:` state, not its property lines), else the whole message. A console line that ends
    with a colon announces its reason on the next line (a message wrapped by the terminal or the
    person pasting it: `nv-fabricmanager: request to query NVSwitch device information failed:`
    over `  WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]`, fresh14 case 1609; one line in
    NVIDIA/gpu-operator#610): that next line is part of the text."""
    if record.unit not in WRAPPER_UNITS:
        return record.message[:4096]
    head, _, rest = record.message.partition("\n")
    if record.unit == "console" and rest and head.rstrip().endswith(":"):
        return f"{head.rstrip()} {rest.split(chr(10), 1)[0].strip()}"[:4096]
    return head[:4096]


def record_lines(record: LogRecord) -> list[tuple[int, str]]:
    """(file line, text) of every line of the record's message."""
    return [(record.line + i, text) for i, text in enumerate(record.message.split("\n"))]


def is_trouble(record: LogRecord) -> bool:
    """True when a record no catalogue entry claims is the daemon's own error (module doc)."""
    if record.level in ERROR_LEVELS:
        return True
    if record.unit not in WRAPPER_UNITS:
        return False
    text = first_line(record)[:4096]
    return ERROR_WORDS.search(text) is not None or FAILURE_WORDS.search(text) is not None


def error_finding(record: LogRecord, kind: str, signal: str) -> Finding:
    """A daemon's error no entry claims: unknown, or fatal with a fatal-class word, attached to
    the device the line names."""
    text = first_line(record)
    fatal = is_fatal_text(text)
    device = judge_line(record.line, text)
    where = device.device.finding_keys() if device else {}
    level = f"[{record.level}] " if record.level else ""
    return Finding(
        kind=kind,
        class_=names.CLASS_FATAL if fatal else names.CLASS_UNKNOWN,
        signal=signal,
        reason="unrecognised_fatal_message" if fatal else "unrecognised_message",
        action=names.ACTION_DRAIN_AND_RESET if fatal else names.ACTION_NONE,
        line=record.line,
        message=f"{level}{text}"[:300],
        **where,
    )


def fallback_findings(
    kind: str, lines: Iterable[tuple[int, str]], log: DaemonLog, other_lines: bool
) -> list[Finding]:
    """The device-and-severity fallback over `lines` and, with `other_lines`, the lines of the
    log that are no record (`inspect` runs the fallback once over a text several readers
    share, so it passes False)."""
    return unrecognised_findings(kind, judge_lines([*lines, *(log.other if other_lines else ())]))


@dataclass
class SortedRecords:
    """A log's records by what reads them (see `sort_records`), each list in line order."""

    extracted: list[Any] = field(default_factory=list)
    matched: list[tuple[LogRecord, Any]] = field(default_factory=list)
    trouble: list[LogRecord] = field(default_factory=list)
    others: list[tuple[int, str]] = field(default_factory=list)


def sort_records(
    records: Iterable[LogRecord],
    extract: Callable[[LogRecord], Any],
    match: Callable[[LogRecord], Any],
    trouble: Callable[[LogRecord], bool] = is_trouble,
) -> SortedRecords:
    """Each record goes to the first that takes it: `extract` (not None: what it read), `match`
    (not None: the catalogue entry claiming it), `trouble` (the daemon's error no entry claims),
    else its lines to the fallback."""
    out = SortedRecords()
    for record in records:
        if (found := extract(record)) is not None:
            out.extracted.append(found)
        elif (entry := match(record)) is not None:
            out.matched.append((record, entry))
        elif trouble(record):
            out.trouble.append(record)
        else:
            out.others += record_lines(record)
    return out
