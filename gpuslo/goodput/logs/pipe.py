"""Physical lines → logical records, in order (pure, stateful per log): the reader's first stage.

`RecordPipe(normaliser, clock, wrap_width)`: `push(line_no, line, transport_ts)` returns the
records the line completes, `flush()` the last ones. Each `Rec` is one logical record: its first
physical line, text (prefixes and stamp removed), stamp (Unix seconds, from the `Clock`; for a
line that opens with the blank column of the stamp above it, that stamp (rich's repeated times
left out, `blank_column`); else the transport's time, a CRI container-log time), and the
rank/host a prefix named.

Joins, the capture artefacts that cut one record into several lines:
- a rich-console record wrapped over several lines (continuations indented to the message's
  column): one record (`richwrap`, before the joins below);
- a prefix cut off by a carriage return: a physical line that ends in a rank prefix alone gives
  its rank to the next line (Ray's `(TaskRunner pid=625502) \\rTraining Progress: …| 1/3746 …`,
  which `read` splits at the `\\r`), so the bar is the same process's as its other lines;
- terminal wrapping: a line exactly `wrap_width` characters long (the width most long lines of
  the sample share, see `wrap_width`) continues on the next line unless that line opens a new
  record (it has a prefix or a stamp, or is a tqdm bar or a traceback's header: `_whole`);
- a dangling `key:` at the end of a line whose value opens the next line (`cls_loss:\\n1.1, lr`);
- tables: a line of three or more names separated by tabs or runs of spaces (or by commas alone,
  a CSV file's header: Lightning's metrics.csv; or between `|` borders, names of a few words)
  is a header; each later line of as many numbers, separated
  the same way, is the record `name: value, …`; names of several words, cells cut by the
  columns' positions (rich's tables): `columns`;
- metrics spread over lines: consecutive unstamped lines that each hold one `key: value`
  (`key=value`, `| key | value |` table rows, YAML blocks, indented metrics under a header) are
  one record `key: value, key: value, ...` until a blank line, a rule of dashes or another kind
  of line; section lines without a value (`| rollout/ | |`, `info:`) are skipped inside it; a
  line whose one value is a file path opens no such block (`_PATH`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.columns import AlignedTable, source_marked
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.profiles import MAX_RECORD
from gpuslo.goodput.logs.richwrap import RichJoin

MAX_JOIN = 8  # physical lines one wrapped record may span
MIN_NUMERIC_CELLS = 3  # numbers in a bordered row with words, at least
MAX_BLOCK = 400  # key-value lines one block may hold
_KV = re.compile(r"^\s*(?:\|\s*)?(?P<k>[A-Za-z_][\w/.@()\- ]{0,60}?)\s*(?:[:=]|\s\|)\s*"
                 r"(?P<v>[^\s|,]{1,80})\s*(?:\|\s*)?$")
MAX_KV_LINE = 300  # characters of a line that holds one key and its value
_SECTION = re.compile(r"^\s*\|\s*[A-Za-z_][\w/.@ -]{0,60}\|\s*\|\s*$"
                      r"|^\s*[A-Za-z_][\w/.-]{0,60}:\s*$")
_RULE = re.compile(r"^\s*[-=*_]{5,}\s*$")
# a file path as a line's one value (`save model: ./out/10_2019-04-03-03-58/model`, StarGAN-VC,
# fresh20 X12): a statement naming a file opens no block of metrics, so the `Time Elapsed for
# This Epoch: 00:03:07` under it stays a line of its own; inside an open block it still joins
_PATH = re.compile(r"^(?:\.{0,2}/|~/|[\w.-]+/[\w.-]+/)[\w./-]*[A-Za-z][\w./-]*$")
# (a banner ruled with `=` signs, `======== Epoch 2 ========` above a Keras 3 bar, ends in a rule,
# not a key: fresh16 S03)
_DANGLING = re.compile(r"(?:^|[^=])[:=]\s*$")
_VALUE_START = re.compile(r"^[-+]?\d")
_CELL = re.compile(r"^\[?\s*[-+]?(?:\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|NaN|inf)\s*\]?"
                   r"[A-Za-z%]{0,3}$")
_NAME = re.compile(r"^[A-Za-z_][\w./@():%-]{0,40}$")
_HEADER_START = re.compile(r"\s*[A-Za-z_][\w./@():%-]{0,40}(?:\t|\s{2,})\s*[A-Za-z_]")
# a bordered table (turicreate's progress table, `| Iteration    | Loss    | Elapsed Time |`
# between `+----+` rules): names of a few words between bars
# a CSV file's header (Lightning's CSVLogger metrics.csv, `epoch,lr,train_loss,…,step`): three or
# more names parted by commas alone; its rows, as many cells, numbers or empty (fresh19 W04)
_CSV_HEADER = re.compile(r"^\s*[A-Za-z_][\w./@()%-]{0,40}(?:,[A-Za-z_][\w./@()%-]{0,40}){2,}\s*$")
_BORDERED = re.compile(r"^\s*\|(?:[^|\n]{1,60}\|){3,12}\s*$")
_SPACED_NAME = re.compile(r"^[A-Za-z_][\w./@():%-]{0,40}(?: [\w./@():%-]{1,40}){0,3}$")
_BORDER = re.compile(r"^\s*[+|][-=+|:]{5,}[+|]\s*$")  # a table's border or header rule
_TQDM = re.compile(r"\d%\|[█▉▊▋▌▍▎▏ ]{3,}\|")
# a line that opens a record of its own, never the rest of a wrapped one (`_whole`): a tqdm bar
# (tqdm pads itself to the terminal's width, so a bar as wide as the wrap is whole) and a Python
# traceback's header, also inside rich's box (`─── Traceback (most recent call last) ───╮`)
_TRACEBACK_HEAD = re.compile(r"^[\W_]{0,120}Traceback \(most recent call last\)")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Rec:
    """One logical record (see the module docstring)."""

    line: int
    text: str
    ts: float | None
    rank: str | None


def wrap_width(lines: list[str]) -> int | None:
    """The terminal width records were cut at: the longest length at least 3 lines share
    when it is at least 60, at least half of the lines within 10 % of it have exactly it, and
    most lines of that length are followed by a line that does not open like them (the rest of
    the record, not the next one; `38/89` opens like `39/89`, and a capitalised word at the
    start of a line opens a record: `Validation loss decreased …` under an epoch line). A tqdm
    bar (`22%|███ |`) is left out: tqdm pads itself to the terminal's width, so bars of one
    width are whole lines (kohya's `steps: 22%|███...| 176/800 [...]` between `epoch 11/50`
    lines), and aligned table rows (YOLOv5's results rows) open alike; so is a line that ends in
    rich's source marker (`latfacto.py:566`: rich pads each record to the console's width), and
    a bordered table's rules and rows (`+-----+-----+`, `| name | 317 |`: Ray Tune's trial
    table, 172 characters 15 times, fresh20 X18), drawn to the table's width, not the
    terminal's, each closed by its border."""
    counts = Counter(len(n) for n in lines if len(n) >= 60 and not _TQDM.search(n)
                     and not source_marked(n) and not _BORDER.match(n)
                     and not _BORDERED.match(n))
    if not counts:
        return None
    width = max(counts)
    near = sum(c for n, c in counts.items() if n >= 0.9 * width)
    if counts[width] < 3 or counts[width] < 0.5 * near:
        return None
    cut = [(a, b) for a, b in zip(lines, lines[1:], strict=False) if len(a) == width]
    continued = sum(1 for a, b in cut if b.strip() and _first(b) != _first(a)
                    and not b[:1].isupper())
    return width if continued >= 0.5 * len(cut) else None


def _cells(text: str, sep: str) -> list[str]:
    """The cells of a table line: split at tabs, at runs of two or more spaces, or at the bars
    of a bordered row (`| 6            | 5.62333      | 5.84s        |`)."""
    if sep in ("|", ","):
        return [p.strip() for p in text.strip().strip("|").split(sep)]
    parts = text.strip().split("\t") if sep == "\t" else re.split(r"\s{2,}", text.strip())
    return [p.strip() for p in parts]


def _first(text: str) -> str:
    """A record's first word: a line opening with the same word opens a new record."""
    parts = text.split(None, 1)
    return _DIGITS.sub("0", parts[0]) if parts else ""


STAMP_COLUMN_MIN = 8  # characters a left-out stamp's blank column spans at least


def blank_column(piece: str, width: int) -> bool:
    """`piece` opens with exactly the blanks of the stamp column of the last stamped line: rich's
    `RichHandler` prints a time only when it changed (`omit_repeated_times`) and pads its column
    otherwise, so the line belongs to that stamp (colossalai's `[01/15/23 18:11:55] INFO ...`,
    then 20 spaces and `INFO ... Training, Epoch: 0, Step: 1`). A continuation indented
    further (rich's wrapped message) does not."""
    return width >= STAMP_COLUMN_MIN and piece[:width].isspace() and (
        len(piece) > width and not piece[width].isspace())


def _whole(text: str) -> bool:
    """Whether `text` opens a record of its own (`_TQDM`, `_TRACEBACK_HEAD`): it is neither the
    rest of a wrapped line nor wrapped itself. Chinese-Vicuna's HF Trainer log (newcomer6 #6,
    fresh11 N04) pads its dict lines, its bar and rich's traceback box to 163 columns: read as
    wrapped, the bar and the box's `Traceback (most recent call last)` joined the loss dict of
    line 2, and the crash was cited there with a loss record's text. A bar after a dangling
    `key:` is that key's value and joins it (SPG's `Epoch 88/450 (results/bremen/standard):`
    then its bar, fresh10 M16)."""
    return bool(_TQDM.search(text) or _TRACEBACK_HEAD.match(text))


class RecordPipe:
    """The join stage (see the module docstring)."""

    def __init__(self, normaliser: Normaliser, clock: Clock, wrap: int | None = None) -> None:
        self.norm, self.clock, self.wrap = normaliser, clock, wrap
        self._pending: list[str] | None = None
        self._meta: tuple[int, float | None, str | None] = (0, None, None)
        self._block: list[str] = []
        self._keys: set[str] = set()
        self._block_meta: tuple[int, float | None, str | None] = (0, None, None)
        self.unreadable = 0
        self.truncated = 0  # lines longer than MAX_RECORD, cut by `Normaliser.clean`
        self.header: tuple[str, list[str]] | None = None  # (separator, names) of a table
        self.aligned = AlignedTable()  # a table whose names are words, cells by position
        # the last stamp's width and time (read by the fast path: `fast.FastPath.block`)
        self.column: tuple[int, float | None] = (0, None)
        self._carried: tuple[int, str] | None = None  # (line, rank) of a line only a prefix
        self.rich = RichJoin()  # a rich-console record wrapped over several lines (`richwrap`)

    def push(self, number: int, line: str, transport_ts: float | None = None) -> list[Rec]:
        """The records that physical line `number` completes."""
        out: list[Rec] = []
        for first, text, ts, rich in self.rich.push(number, line, transport_ts):
            out += self._push(first, text, ts, rich)
        return out

    def _push(self, number: int, line: str, transport_ts: float | None, rich: bool
              ) -> list[Rec]:
        self.truncated += len(line) > MAX_RECORD
        cleaned = self.norm.clean(line)
        if cleaned is None:
            self.unreadable += 1
            return []
        out: list[Rec] = []
        wrapped = self.wrap is not None and len(cleaned) == self.wrap and not rich and (
            not _whole(cleaned))
        carried, self._carried = self._carried, None
        line_rank = None  # the rank the line's prefix names: a message glued after it is its
        for index, piece in enumerate(self.norm.split(cleaned)):
            text, rank, had_prefix = self.norm.strip(piece)
            if index == 0:
                line_rank = rank
            elif not had_prefix:
                rank = line_rank
            self._carried = None  # only the line's last piece may carry its prefix on
            if had_prefix and rank is not None and not text.strip():
                self._carried = (number, rank)  # the rest follows a `\r` on the next line
            elif carried is not None and not had_prefix and carried[0] == number - 1:
                rank = carried[1]
            carried = None
            text, groups = self.norm.stamp(text)
            ts = self.clock.seconds(groups, number) if groups else None
            own = ts is not None
            if own:
                self.column = (len(piece) - len(text.lstrip()), ts)
            elif blank_column(piece, self.column[0]):
                ts = self.column[1]  # the stamp a logger left out because it had not changed
            if ts is None:
                ts = transport_ts
            if self._pending is not None:
                dangling = _DANGLING.search(self._pending[-1]) is not None
                if not had_prefix and not own and len(self._pending) < MAX_JOIN and (
                        text.strip()) and _first(text) != _first(self._pending[0]) and (
                        not dangling or _VALUE_START.match(text)) and (
                        dangling or not _whole(text)):
                    self._pending.append(text)
                    if not wrapped and not _DANGLING.search(text):
                        out += self._flush_pending()
                    continue
                out += self._flush_pending()
            if (wrapped or _DANGLING.search(text)) and text.strip():
                self._pending, self._meta = [text], (number, ts, rank)
                continue
            out += self._record(number, text, ts, rank, own)
        return out

    def stamp_column(self, line: str, ts: float | None) -> tuple[bool, float | None]:
        """For the fast path, which reads a line without this pipe: (whether `line` opens with
        the blank stamp column, which only this pipe dates), and a stamp `ts` the fast path
        read, kept as the column's time."""
        if ts is not None:
            self.column = (self.column[0], ts)
            return False, ts
        return blank_column(line, self.column[0]), None

    def idle(self) -> bool:
        """True when no record is being joined and no prefix waits for the next line (a line
        may then be read on its own)."""
        return self._pending is None and not self._block and self._carried is None and (
            self.rich.idle())

    def flush(self) -> list[Rec]:
        """The records still being joined at the end of the input."""
        out = [r for n, text, ts, rich in self.rich.flush() for r in self._push(n, text, ts, rich)]
        return out + self._flush_pending() + self._flush_block()

    def _flush_pending(self) -> list[Rec]:
        parts, self._pending = self._pending, None
        if not parts:
            return []
        line, ts, rank = self._meta
        joined = parts[0]
        for part in parts[1:]:
            sep = " " if _DANGLING.search(joined) and _VALUE_START.match(part) else ""
            joined += sep + part
        return self._record(line, joined, ts, rank, False)

    def _record(self, line: int, text: str, ts: float | None, rank: str | None,
                own_stamp: bool) -> list[Rec]:
        if self.header is not None or len(text) <= MAX_KV_LINE and (
                "\t" in text or "  " in text or text.lstrip().startswith("|")
                or _CSV_HEADER.match(text)):
            text = self.aligned.name(text) or self._row(text)
        if not own_stamp and len(text) <= MAX_KV_LINE:
            kv = _KV.match(text)
            if kv is not None and not self._block and _PATH.match(kv.group("v")):
                return [Rec(line, text, ts, rank)]  # a file named: a statement, no block
            if kv is not None and len(self._block) < MAX_BLOCK:
                key = kv.group("k").strip()
                out = self._flush_block() if key in self._keys else []
                if not self._block:
                    self._block_meta, self._keys = (line, ts, rank), set()
                self._keys.add(key)
                self._block.append(f"{key}: {kv.group('v')}")
                return out
            if self._block and text.strip() and not _RULE.match(text) and _SECTION.match(text) \
                    and len(text) <= MAX_KV_LINE:
                return []
        out = self._flush_block()
        if text.strip() and not _RULE.match(text):
            out.append(Rec(line, text, ts, rank))
        elif own_stamp:  # an empty message still dates the log
            out.append(Rec(line, "", ts, rank))
        return out

    def _row(self, text: str) -> str:
        """A table's row as `name: value, …` under the header that names its columns (ChainerRL's
        tab-separated scores.txt, `steps\telapsed\tmean`; a table bordered by
        `|`, `_BORDERED`); a header line is remembered. A bordered row that also holds words
        (Ray Tune's trial table: `| DQN_shogi_96499_00000 | RUNNING | 10.0.0.177:612604 |
        317 | 395.588 | …`, fresh20 X18) gives its numbers, named, where they are most of its
        cells (`MIN_NUMERIC_CELLS` at least); its words (a name, a status) are left out."""
        if self.header is not None and text.count(self.header[0]) >= len(self.header[1]) - 1:
            sep, names = self.header
            cells = _cells(text, sep)
            if len(cells) == len(names) and any(cells) and all(
                    _CELL.match(c) or sep == "," and not c for c in cells):
                return ", ".join(f"{n}: {c}" for n, c in zip(names, cells, strict=True) if c)
            numeric = [bool(_CELL.match(c)) for c in cells]
            if sep == "|" and len(cells) == len(names) and sum(numeric) >= max(
                    MIN_NUMERIC_CELLS, len(cells) / 2):  # a trial's row: its numbers named
                return ", ".join(f"{n}: {c}" for n, c, k in zip(names, cells, numeric,
                                                               strict=True) if k)
        if _CSV_HEADER.match(text):
            self.header = (",", text.strip().split(","))
            return text
        if _BORDERED.match(text):
            names = _cells(text, "|")
            if len(names) >= 3 and all(_SPACED_NAME.match(n) for n in names):
                self.header = ("|", names)
            return text
        if not _HEADER_START.match(text):
            return text
        sep = "\t" if "\t" in text else "  "
        names = _cells(text, sep)
        if len(names) >= 3 and all(_NAME.match(n) for n in names):
            self.header = (sep, names)
        return text

    def _flush_block(self) -> list[Rec]:
        block, self._block = self._block, []
        if not block:
            return []
        line, ts, rank = self._block_meta
        return [Rec(line, ", ".join(block), ts, rank)]
