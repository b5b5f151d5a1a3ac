"""Rows of a table whose header names its columns in words, aligned by position (pure, stateful).

A table printed with aligned columns (rich's `Table`, nerfstudio's training stats: `Step (% Done)
Train Iter (time)    ETA (time)    Train Rays / Sec`, a rule, then `4090 (81.78%)    43.140 ms
39 s, 300.687 ms    14.86 M`) names each value only in its header, its names several words
long, its cells a number with a unit or a qualifier (`43.140 ms`, `4090 (81.78%)`). Each row
under such a header is read as `name: cell, …`, the cell cut at the column's start in the
header, so the reader sees the step as `Step: 4090` and its time as `Train Iter time: 43.140 ms`.
(Single-word headers, ChainerRL's `steps\\telapsed\\tmean`, are split by their separator in
`pipe`.)

A header: three or more columns parted by two or more spaces, each starting with a letter and
at most `MAX_NAME` characters, no digit, one name of several words or with a qualifier in
parentheses. A row: under the header (rules between are skipped), a cell starts at each
column's start, right after a space, and every cell opens with a number. The header is
forgotten at the first line that is neither. A trailing source marker (rich's `RichHandler`
prints `filename.py:lineno` at the right edge with `show_path`) is not part of the table.
Names are kept as words: a qualifier in parentheses becomes a word (`Train Iter (time)` →
`Train Iter time`), one that is not a word is dropped (`Step (% Done)` → `Step`). A cell of
duration parts is one duration (`39 s, 300.687 ms` → `39.300687 s`).
"""

from __future__ import annotations

import re

MAX_NAME = 40
SOURCE_MARKER = re.compile(r"\s{2,}[\w.-]+\.py:\d+\s*$")  # rich's `show_path` column
MARKER_TAIL = 160  # characters at a line's end searched for it (linear on any line length)
_COLUMN = re.compile(r"\S+(?: \S+)*")  # words parted by single spaces
_RULE = re.compile(r"^[\s\-=_─━]+$")
_WORD_QUALIFIER = re.compile(r"\(([A-Za-z]+)\)")
_OTHER_QUALIFIER = re.compile(r"\([^)]*\)")
_NUMBER_START = re.compile(r"^[-+]?\d")
_PART = r"\d+(?:\.\d+)? ?(?:h|min|ms|m|s)"
_PARTS = re.compile(rf"^{_PART}(?:,? {_PART})+$")
_PART_SECONDS = {"h": 3600.0, "min": 60.0, "m": 60.0, "s": 1.0, "ms": 1e-3}


def source_marked(text: str) -> bool:
    """True when `text` ends in rich's source marker (`  latfacto.py:566`)."""
    return SOURCE_MARKER.search(text[-MARKER_TAIL:]) is not None


def _strip_source(text: str) -> str:
    head, tail = text[:-MARKER_TAIL], text[-MARKER_TAIL:]
    return head + SOURCE_MARKER.sub("", tail)


def _columns(text: str) -> list[tuple[int, str]]:
    """(start, text) of each run of text parted from the next by two or more spaces."""
    return [(m.start(), m.group()) for m in _COLUMN.finditer(text)]


def _name(column: str) -> str:
    name = _WORD_QUALIFIER.sub(r" \1", column)
    name = _OTHER_QUALIFIER.sub(" ", name).replace(" / ", "/")
    return " ".join(name.split())


class AlignedTable:
    """The header last seen and the rows under it (see the module docstring)."""

    def __init__(self) -> None:
        self.header: list[tuple[int, str]] | None = None  # (start, name) of each column

    def name(self, text: str) -> str | None:
        """`text` as `name: cell, …` when it is a row under the header; None otherwise (a
        header is remembered, any other line but a rule forgets it)."""
        core = _strip_source(text).rstrip()
        if _RULE.match(core) and core.strip():
            return None
        header = self._header(core)
        if header is not None:
            self.header = header
            return None
        if self.header is None:
            return None
        cells = self._cells(core)
        if cells is None:
            self.header = None
            return None
        return ", ".join(f"{name}: {cell}" for (_, name), cell in zip(self.header, cells,
                                                                      strict=True))

    @staticmethod
    def _header(core: str) -> list[tuple[int, str]] | None:
        if any(ch.isdigit() for ch in core):
            return None
        columns = _columns(core)
        if len(columns) < 3 or any(len(c) > MAX_NAME or not c[0].isalpha() for _, c in columns):
            return None
        if not any(" " in c or "(" in c for _, c in columns):
            return None  # single words: `pipe` splits those by their separator
        return [(start, _name(c)) for start, c in columns]

    def _cells(self, core: str) -> list[str] | None:
        assert self.header is not None
        starts = [start for start, _ in self.header]
        cells = []
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(core)
            if start >= len(core) or core[start] == " " or (start and core[start - 1] != " "):
                return None
            cell = core[start:end].strip()
            if not _NUMBER_START.match(cell):
                return None
            cells.append(_one_duration(cell))
        return cells


def _one_duration(cell: str) -> str:
    """A cell of duration parts (`39 s, 300.687 ms`) as one duration in seconds (`39.300687 s`);
    any other cell as it is."""
    if not _PARTS.match(cell):
        return cell
    parts = re.findall(r"(\d+(?:\.\d+)?) ?(h|min|ms|m|s)", cell)
    return f"{sum(float(n) * _PART_SECONDS[u] for n, u in parts):.6f} s"
