"""What the training-log reader returns (`reader.LogReader.parsed`): the events a log told
(`Obs`) and the whole reading (`ParsedLog`): its progress records, counts, stamps and what was
learnt. Data only (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.goodput.logs.learn import Learnt
from gpuslo.goodput.logs.matchers import Prog
from gpuslo.goodput.logs.opening import Reopened
from gpuslo.goodput.logs.profiles import Rule


@dataclass
class Obs:
    """One event a record told: kind (a rule kind, or `epoch` from an epoch marker), line, ts
    (the record's stamp, Unix seconds, or None), prev_ts (the last stamp before it), data (the
    rule's named groups), rule (None for epoch markers), text (cut to 300 characters),
    framework (None for the common families), seq (position in the log)."""

    kind: str
    line: int
    ts: float | None
    prev_ts: float | None
    data: dict[str, str]
    rule: Rule | None
    text: str
    framework: str | None = None
    seq: int = 0


@dataclass
class ParsedLog:
    """What the reader returns: framework (the profile whose refinements matched most, None),
    detected (not given), observations (events, in order), progress (records, in order), line
    counts, the stamps' first and last Unix seconds, clock steps back, what was learnt and the
    recurring templates nothing read (template → (count, first line, example)); `rates` the
    seconds per step of timing lines read before any progress record (TPUEstimator's
    `global_step/sec: 0.908986`, a log that prints no step counter), each value once where two
    handlers print it twice in a row. `sampled`: the head lines the shapes were learnt from
    (`SAMPLE_LINES` or `SAMPLE_BYTES`, the whole log when shorter); `unread_seen` records with
    digits nothing read, `unread_counted` those of them counted in `unread` (`_note_unread`).
    `reopened`: the records that print the log's first line again (`opening.Opening`), whose
    first two lines are the records `opening_seqs`."""

    framework: str | None
    detected: bool
    observations: list[Obs]
    progress: list[Prog] = field(default_factory=list)
    lines: int = 0
    matched: int = 0
    unreadable: int = 0
    truncated: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    clock_back: list[tuple[int, float]] = field(default_factory=list)
    clock_unreliable: bool = False
    year_assumed: int | None = None  # the year given stamps that print none (`clock.Clock`)
    learnt: Learnt | None = None
    stamp_layouts: list[str] = field(default_factory=list)
    unread: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    other_progress: int = 0
    candidates: dict[str, int] = field(default_factory=dict)
    rates: list[float] = field(default_factory=list)
    sampled: int = 0
    unread_seen: int = 0
    unread_counted: int = 0
    reopened: list[Reopened] = field(default_factory=list)
    opening_seqs: tuple[int, int] = (0, 0)
