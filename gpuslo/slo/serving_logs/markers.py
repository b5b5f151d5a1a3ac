"""Serving-engine log lines → markers: the I/O edge of `gpuslo serving-log` (issue 29, item 3).

Records come from the training-log reader's own stages (`gpuslo.goodput.logs`: `read_lines` for
the file — binary refused, long lines cut —, the `Normaliser` for launcher prefixes such as
vLLM's `(APIServer pid=1)`, `stamps.learn_shapes` on the head for the stamp layouts, the `Clock`
and the `RecordPipe` for joined records and Unix seconds), so a serving log is read with the same
record structure and stamps as a training log. What a record *says* is read here, by kind, from
the wording families in `gpuslo/data/serving_log_markers.yaml` (`MarkerWording`): `ready`,
`loading`, `crash` (with a reason of names.REASONS), `shutdown`, and `throughput` lines (requests
running and waiting over the window since the line before).

`read_markers(path, wording) -> MarkerLog` and `recurring_unread(path, wording)` are the only
I/O; `MarkerWording.classify(text)` is pure. `recurring_unread` asks the training-log reader's
public entry point (`analyse_log`, what `gpuslo goodput` calls) for the log's recurring
templates it left unread and keeps those no serving family reads either (STYLE.md 13: an unread
recurring shape is reported, never silently dropped), and for the progress records it read (a
training log given by mistake).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from gpuslo.errors import ConfigError
from gpuslo.goodput.logs import analyse_log, last_written
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.pipe import Rec, RecordPipe
from gpuslo.goodput.logs.profiles import load_profiles
from gpuslo.goodput.logs.read import ReadStats, read_lines
from gpuslo.goodput.logs.stamps import StampShape, learn_shapes

MARKERS_FILE = "serving_log_markers.yaml"
MARKER_KINDS = ("ready", "loading", "crash", "shutdown")
SAMPLE_LINES = 2000  # head lines the stamp layouts are learnt on
# what opens a message before its words: a CRI stream tag (`stdout F `, when the container
# log's own stamp was read as the record's; the stamp layout may leave its zone letter `Z`), a
# level word and a `[file.py:123]` location
_LOCATION = re.compile(r"^\s*(?:Z\s+)?(?:(?:stdout|stderr) [FP] )?"
                       r"(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\s+)?"
                       r"(?:\[[\w./-]{1,120}:\d{1,6}\]\s*|[\w./-]{1,120}\.(?:py|cc|rs):\d{1,6}\]\s*)?")


@dataclass(frozen=True)
class Marker:
    """One serving fact a record told. kind: MARKER_KINDS or `throughput`; line (1-based
    physical line); ts (Unix seconds, UTC as printed, or None); carried (True when ts is the
    stamp of an earlier record: the line has none of its own); engine (vllm, sglang, tgi,
    triton, or ""); reason (names.REASONS for a crash, else ""); running / waiting (requests,
    throughput lines only); busy (False when the line says no token was processed in its
    window: every throughput group 0; None when it gives no throughput); text (cut to 200)."""

    kind: str
    line: int
    ts: float | None
    carried: bool
    engine: str
    reason: str = ""
    running: int | None = None
    waiting: int | None = None
    busy: bool | None = None
    text: str = ""


@dataclass(frozen=True)
class _Rule:
    kind: str
    engine: str
    regex: re.Pattern[str]
    reason: str = ""


class MarkerWording:
    """The wording families (see the module docstring), compiled. `classify(text)` gives
    (kind, engine, reason, groups) for a record's message, or None."""

    def __init__(self, data: dict[str, Any], source: str = MARKERS_FILE) -> None:
        try:
            self.max_offset = int(data.get("max_offset", 120))
            self.payload = [re.compile(p) for p in data.get("payload", [])]
            self.rules = [_Rule(kind, e.get("engine", ""), re.compile(e["pattern"]),
                                e.get("reason", ""))
                          for kind in MARKER_KINDS for e in data["markers"].get(kind, [])]
            self.rules += [_Rule("throughput", e.get("engine", ""), re.compile(e["pattern"]))
                           for e in data.get("throughput", [])]
        except (KeyError, TypeError, AttributeError, ValueError, re.error) as error:
            raise ConfigError(source, f"serving log markers: {error}") from None

    def classify(self, text: str) -> tuple[str, str, str, dict[str, str]] | None:
        """(kind, engine, reason, named groups) of the first rule matching the message of
        `text` (a record without stamp or launcher prefix) within `max_offset` characters;
        None for no rule, or for a request payload."""
        found = _LOCATION.match(text)
        body = text[found.end():] if found else text
        if any(p.search(body) for p in self.payload):
            return None
        for rule in self.rules:
            found = rule.regex.search(body)
            if found is not None and found.start() <= self.max_offset:
                groups = {k: v for k, v in found.groupdict().items() if v is not None}
                return rule.kind, rule.engine, rule.reason, groups
        return None


def load_wording(path: str | os.PathLike[str] | None = None) -> MarkerWording:
    """The packaged wording families, or those of the YAML file at `path`. Raises ConfigError
    naming the file when it cannot be read or a pattern does not compile."""
    try:
        if path is None:
            text = resources.files("gpuslo").joinpath("data", MARKERS_FILE).read_text("utf-8")
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        data = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(str(path or MARKERS_FILE), f"cannot read: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path or MARKERS_FILE), "not a mapping")
    return MarkerWording(data, str(path or MARKERS_FILE))


@dataclass
class MarkerLog:
    """What `read_markers` saw: markers (in log order), lines (physical), records, stamped
    (records with their own stamp), first_ts / last_ts (Unix seconds of the earliest and latest
    stamp, None without any), stamp_layouts (labels), year_known (False when no stamp printed
    a year), year_assumed (the year then inferred from when the log was last written, `said`
    in words: `goodput.logs.last_written`; None: times read in stamps.REFERENCE_YEAR), binary,
    long_lines, traceback_line (the first `Traceback (most recent call last)` or `File "…", line
    N, in …` frame line; newcomer8 F7: vLLM #48707's EngineCore ERROR frames with no exception
    line read "no … crash line")."""

    markers: list[Marker] = field(default_factory=list)
    lines: int = 0
    records: int = 0
    stamped: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    stamp_layouts: list[str] = field(default_factory=list)
    year_known: bool = False
    year_assumed: int | None = None
    said: str = ""
    binary: bool = False
    long_lines: int = 0
    traceback_line: int | None = None  # first line of a Python traceback (a frame or its head)


def read_markers(path: str | os.PathLike[str], wording: MarkerWording) -> MarkerLog:
    """Read the log at `path` (see the module docstring). Raises InputError when the file
    cannot be read; a binary file gives a MarkerLog with `binary` set and nothing else."""
    stats = ReadStats()
    out = MarkerLog()
    lines = read_lines(path, stats)
    head: list[str] = []
    for line in lines:
        head.append(line)
        if len(head) >= SAMPLE_LINES:
            break
    norm = Normaliser(load_profiles())
    norm.shapes = _shapes(norm, head)
    out.stamp_layouts = [s.label for s in norm.shapes]
    reference, out.said = last_written(path)
    clock = Clock(reference=reference)
    pipe = RecordPipe(norm, clock)
    last_ts: float | None = None
    for number, line in enumerate(_chain(head, lines), 1):
        out.lines = number
        for rec in pipe.push(number, line):
            last_ts = _take(out, rec, last_ts, wording)
    for rec in pipe.flush():
        last_ts = _take(out, rec, last_ts, wording)
    out.binary, out.long_lines = stats.binary, stats.long_lines
    out.year_known, out.year_assumed = clock.year is not None, clock.year_first
    return out


def _chain(head: list[str], rest: Iterable[str]) -> Iterable[str]:
    yield from head
    yield from rest


def _shapes(norm: Normaliser, head: list[str]) -> list[StampShape]:
    """The stamp layouts of the head, learnt as the training-log reader learns them."""
    texts: list[str] = []
    for line in head:
        cleaned = norm.clean(line)
        if cleaned:
            texts += [norm.strip(piece)[0] for piece in norm.split(cleaned)]
    overlay = [StampShape(p, "overlay", True) for p in norm.profiles.timestamps]
    return overlay + learn_shapes(texts)


# a Python traceback's head or one of its frame lines, wherever the logger's prefix puts it
_TRACEBACK = re.compile(
    r'Traceback \(most recent call last\)|\bFile "[^"\n]{1,400}", line \d+, in ')


def _take(out: MarkerLog, rec: Rec, last_ts: float | None, wording: MarkerWording
          ) -> float | None:
    """Count one record, keep its marker; returns the latest stamp so far."""
    out.records += 1
    if rec.ts is not None:
        out.stamped += 1
        out.first_ts = rec.ts if out.first_ts is None else min(out.first_ts, rec.ts)
        out.last_ts = rec.ts if out.last_ts is None else max(out.last_ts, rec.ts)
        last_ts = rec.ts
    if out.traceback_line is None and _TRACEBACK.search(rec.text):
        out.traceback_line = rec.line
    found = wording.classify(rec.text)
    if found is None:
        return last_ts
    kind, engine, reason, groups = found
    ts = rec.ts if rec.ts is not None else last_ts
    running = int(groups["running"]) if "running" in groups else None
    waiting = int(groups["waiting"]) if "waiting" in groups else None
    rates = [float(v) for k, v in groups.items() if k.endswith("_tps") or k == "new_seq"]
    busy = any(r > 0 for r in rates) if rates else None
    out.markers.append(Marker(kind, rec.line, ts, rec.ts is None and ts is not None, engine,
                              reason, running, waiting, busy, rec.text[:200]))
    return last_ts


def recurring_unread(path: str | os.PathLike[str], wording: MarkerWording
                     ) -> tuple[list[dict], int]:
    """(templates, progress records): the recurring templates of the log at `path` that neither
    the training-log reader nor a serving family reads — dicts template, records, first_line,
    example (cut to 200) — and how many progress (training step) records the reader found."""
    doc = analyse_log(path, with_explain=True).document
    unread = [{"template": u["template"], "records": u["records"],
               "first_line": u["first_line"], "example": u["example"][:200]}
              for u in doc["explain"]["unread"] if wording.classify(u["example"]) is None]
    progress = sum(p["records"] for p in doc["explain"]["progress"])
    return unread, progress
