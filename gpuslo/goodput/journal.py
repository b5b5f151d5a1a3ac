"""The job journal: schema version 1, its event shapes, reading and the line format (DESIGN.md §5).

A job journal is JSON lines, one event per line, every line `{"v": 1, "t": <Unix seconds>,
"event": <kind>, ...}`, at `<journal_dir>/<job_id>.jsonl`. Event kinds (schema version 1):

- `job_start`  `job` (validated id), `node`, `gpus` (GPUs this node gives the job)
- `phase_start` / `phase_end`  `category` (one of `PHASES`, the `names.BADPUT_CATEGORIES` the
  job spends on itself: initialization, training_prep, data_loading, checkpoint_save,
  checkpoint_restore; and `other`, time the job's log shows it spent on none of them nor on
  progress: a hang between two progress lines, read from a training log)
- `steps`  coalesced progress: `step` (last step, finished at `t`), `first_step`, `first_t`,
  `count`, and optionally `step_time_s` (mean seconds per step over these steps, as the job
  measured them; without it the calculator derives it from the progress time) and `compute_s`
  (mean seconds per step this node's ranks spent computing, from per-rank section timings: what
  straggler scores compare across nodes)
- `checkpoint`  `step` committed by a finished checkpoint
- `restart`  `from_step` (the checkpoint step the job resumes from), optional `gpus`, `layer`
- `job_end`  `status` (one of `END_STATUSES`), optional `layer` of the fault

`FIELDS` names each kind's fields; `event()` builds one event with exactly those fields, and
`encode_line()` is the one line format every writer uses (the Recorder, `gpuslo simulate`).
This module is pure except `journal_path` (a path, no I/O) and never imports OpenTelemetry.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import ParseError

SCHEMA_VERSION = 1
JOB_ID_MAX = 128
MAX_LINE_BYTES = 64 * 1024  # a v1 event is under 300 bytes; a longer line is refused unread
# Numeric bounds checked at parse time, so no sum can overflow to +Inf or fail to convert:
T_MIN, T_MAX = 0.0, 4_102_444_800.0  # Unix seconds: 1970-01-01 to 2100-01-01
MAX_GPUS = 1_000_000  # GPUs one node gives one job (a real node has at most a few dozen)
MAX_STEP = 2**63 - 1  # steps and counts fit an int64
_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+=-]*")
PHASES = (
    "initialization",
    "training_prep",
    "data_loading",
    "checkpoint_save",
    "checkpoint_restore",
    "other",
)
END_STATUSES = ("completed", "failed", "cancelled")
# A job that ended with one of these will not restart: the exporter drops its series
# FINISHED_HOLD_S after its last event (a failed job may restart, so it stays until --max-jobs).
FINISHED_STATUSES = ("completed", "cancelled")
FINISHED_HOLD_S = 3600
_REQUIRED = {
    "job_start": {"job": str, "gpus": int},
    "phase_start": {"category": str},
    "phase_end": {"category": str},
    "steps": {"step": int},
    "checkpoint": {"step": int},
    "restart": {"from_step": int},
    "job_end": {"status": str},
}
EVENTS = tuple(_REQUIRED)
# Fields of each event kind beyond v, t and event: required ones first, then optional ones.
FIELDS: dict[str, tuple[str, ...]] = {
    "job_start": ("job", "gpus", "node"),
    "phase_start": ("category",),
    "phase_end": ("category",),
    "steps": ("step", "first_step", "first_t", "count", "step_time_s", "compute_s"),
    "checkpoint": ("step",),
    "restart": ("from_step", "gpus", "layer"),
    "job_end": ("status", "layer"),
}


def validate_job_id(job_id: object) -> str:
    """Return `job_id` if it is a safe, bounded label value and file name, else raise ValueError.

    Rules: a string of 1–128 printable ASCII characters from `A-Z a-z 0-9 . _ : @ + = -`,
    starting with a letter or digit (so no path separators, no `..`, no hidden files, no 2 KB
    labels).
    """
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("job id must be a non-empty string")
    if len(job_id) > JOB_ID_MAX:
        raise ValueError(f"job id is {len(job_id)} characters long (at most {JOB_ID_MAX})")
    if not _JOB_ID.fullmatch(job_id):
        raise ValueError(f"job id {job_id[:40]!r} has characters outside [A-Za-z0-9._:@+=-]")
    return job_id


def journal_path(journal_dir: str | os.PathLike[str], job_id: str) -> Path:
    """Where the journal of `job_id` lives; raises ValueError for an invalid job id."""
    return Path(journal_dir) / f"{validate_job_id(job_id)}.jsonl"


def event(kind: str, t: float, **fields: Any) -> dict[str, Any]:
    """One v1 event of `kind` at `t` (Unix seconds) with the fields of `FIELDS[kind]` found in
    `fields`; a field that is None or "" is left out (optional), any other key is ignored.
    Raises KeyError for an unknown kind. Does not validate values (`check_event` does)."""
    out: dict[str, Any] = {"v": SCHEMA_VERSION, "t": t, "event": kind}
    for key in FIELDS[kind]:
        value = fields.get(key)
        if value is not None and value != "":
            out[key] = value
    return out


def encode_line(event: dict[str, Any]) -> str:
    """One journal line (with its newline): compact JSON with sorted keys."""
    return json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n"


def _number(event: dict[str, Any], key: str, low: float, high: float, integer: bool) -> None:
    value = event.get(key)
    kinds = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise ValueError(f"field {key!r} missing or not {'int' if integer else 'a number'}")
    finite = isinstance(value, int) or math.isfinite(value)  # isfinite(10**400) overflows
    if not (finite and low <= value <= high):
        raise ValueError(f"field {key!r}: {_short(value)} is outside [{low:g}, {high:g}]")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_BOUNDS = {  # field: (low, high, integer)
    "t": (T_MIN, T_MAX, False),
    "first_t": (T_MIN, T_MAX, False),
    "gpus": (1, MAX_GPUS, True),
    "step": (-1, MAX_STEP, True),
    "first_step": (-1, MAX_STEP, True),
    "from_step": (-1, MAX_STEP, True),
    "count": (0, MAX_STEP, True),
}


def check_event(event: Any) -> None:
    """Raise ValueError naming the field when `event` (a decoded JSON line) is not a valid v1
    event: any other shape (an object where a string belongs, `"event": {}`) and any number out
    of `_BOUNDS` (`t` 1970–2100, `gpus` 1–1,000,000, steps within int64) is refused, so the
    calculator only ever sees finite sums."""
    if not isinstance(event, dict):
        raise ValueError("line is not a JSON object")
    if event.get("v") != SCHEMA_VERSION or isinstance(event.get("v"), bool):
        raise ValueError(f"unknown schema version {_short(event.get('v'))} (field 'v'; known: 1)")
    _number(event, "t", *_BOUNDS["t"])
    kind = event.get("event")
    if not isinstance(kind, str) or kind not in _REQUIRED:
        raise ValueError(f"field 'event': unknown event {_short(kind)}")
    for key, typ in _REQUIRED[kind].items():
        value = event.get(key)
        if isinstance(value, bool) or not isinstance(value, typ):
            raise ValueError(f"field {key!r} missing or not {typ.__name__}")
    for key in FIELDS[kind]:
        if key in _BOUNDS and (key in _REQUIRED[kind] or event.get(key) is not None):
            _number(event, key, *_BOUNDS[key])
    if kind == "job_start":
        validate_job_id(event["job"])
        if not isinstance(event.get("node", ""), str):
            raise ValueError("field 'node' is not a string")
    if kind.startswith("phase_") and event["category"] not in PHASES:
        raise ValueError(f"field 'category': {_short(event['category'])} is not one of {PHASES}")
    if kind == "job_end" and event["status"] not in END_STATUSES:
        raise ValueError(f"field 'status': {_short(event['status'])} is not one of {END_STATUSES}")
    for key in ("step_time_s", "compute_s"):
        value = event.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or not 0 <= value <= T_MAX
        ):
            raise ValueError(f"field {key!r} must be a finite number of seconds, 0 or more")
    layer = event.get("layer")
    if layer is not None and (not isinstance(layer, str) or layer not in names.LAYERS):
        raise ValueError(f"field 'layer': {_short(layer)} is not one of {names.LAYERS}")


class JournalReader:
    """Incremental, validating reader of one journal: feed it complete lines as they arrive.

    Every problem kind (invalid JSON or truncated line, unknown schema version, bad job id, bad
    field, event out of order, step going backwards) is reported once, with the source and the
    first line it occurred on, as a `ParseError`; the offending line is skipped and the rest read.
    `skipped` counts every skipped line by its `gpuslo_journal_errors_total` reason
    (`line_too_long`, else `parse_error`): ten bad lines are ten, whatever their kinds.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.line_no = 0
        self.problems: list[ParseError] = []
        self.skipped: dict[str, int] = {"parse_error": 0, "line_too_long": 0}
        self._seen: set[str] = set()
        self._last_t = -math.inf
        self._last_step: int | None = None

    def _problem(self, kind: str, message: str, field_name: str | None = None) -> None:
        """One skipped line: counted always, reported once per kind."""
        self.skipped["line_too_long" if kind == "line_too_long" else "parse_error"] += 1
        if kind not in self._seen:
            self._seen.add(kind)
            self.problems.append(ParseError(self.source, message, self.line_no, field_name))

    def feed_line(self, line: str | bytes) -> dict[str, Any] | None:
        """Validate one line (without its newline; bytes must be UTF-8); return the event, or
        None when skipped. Never raises: every problem is recorded in `problems`."""
        self.line_no += 1
        if len(line) > MAX_LINE_BYTES:
            self._problem("line_too_long", f"line longer than {MAX_LINE_BYTES} bytes; skipped")
            return None
        if isinstance(line, bytes | bytearray):
            try:
                line = bytes(line).decode("utf-8")
            except UnicodeDecodeError:
                self._problem("utf8", "line is not valid UTF-8; skipped")
                return None
        if not line.strip():
            return None
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            self._problem("json", "truncated or invalid JSON line; skipped")
            return None
        try:
            check_event(event)
        except ValueError as error:
            text = str(error)
            known = ("schema version", "job id")
            kind = next((k for k in known if k in text), text.split(":")[0])
            self._problem(kind, f"{error}; line skipped")
            return None
        return self._ordered(event)

    def _ordered(self, event: dict[str, Any]) -> dict[str, Any] | None:
        if event["t"] < self._last_t:
            self._problem("order", "event out of order (time goes backwards); skipped", "t")
            return None
        if event["event"] in ("restart", "job_start"):
            self._last_step = event.get("from_step")
        elif event["event"] == "steps":
            if self._last_step is not None and event["step"] < self._last_step:
                message = "step goes backwards without a restart; skipped"
                self._problem("backwards", message, "step")
                return None
            self._last_step = event["step"]
        self._last_t = event["t"]
        return event


def parse_journal(
    text: str | bytes, source: str
) -> tuple[list[dict[str, Any]], list[ParseError]]:
    """Parse a whole journal (text, or bytes: a line that is not UTF-8 is a problem, skipped).
    Returns (valid events in file order, problems); never raises for what the file holds.

    A last line without its newline is a truncated write (a crash mid-line): reported, skipped.
    """
    reader = JournalReader(source)
    newline = b"\n" if isinstance(text, bytes | bytearray) else "\n"
    lines = text.split(newline)
    tail = lines.pop()  # empty when the text ends with a newline
    events = [e for e in map(reader.feed_line, lines) if e is not None]
    if tail:
        reader.line_no += 1
        reader._problem("json", "truncated last line (no newline); skipped")
    return events, reader.problems
