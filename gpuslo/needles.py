"""Multi-needle search over a bytes block (pure): the kernel-log prefilter's and the training-log
block scan's (`goodput/logs/blockscan.py`) one search.

`Needles(anchors, extra, extra_literals).search(block, limit) -> (anchor_hits, extra_hits)`:
offsets inside block[:limit], each list sorted, each offset inside the line it points at.
- `anchors` (case-sensitive literals: `NVRM`, `SXid`, `mlx5`): an offset inside every occurrence.
- `extra` (a bytes pattern, e.g. the fallback's ERROR_WORDS, matched within one line): an offset
  inside every match, or at least every match's line; the caller confirms each line with
  `extra.search` (`KernelLogScan`), so a line here that does not match costs only that search.

Two engines, the same lines:
- Vectorscan (the `hyperscan` package on PyPI, MIT, a static build of VectorCamp's BSD-licensed
  fork of Intel's Hyperscan): every needle in one pass over the block, Aho-Corasick/SIMD literal
  matching as grep does, the GIL released; ~1.5 GB/s for the anchors plus ERROR_WORDS
  (bench/kernel_log_scan.py). Used when importable and the patterns compile
  (`HS_FLAG_CASELESS` for an IGNORECASE `extra`).
- Pure Python otherwise (no wheel for the platform): one `bytes.find` pass per anchor; for `extra`
  one pass per literal of `extra_literals` over the lowered block (ASCII case ignored), keeping
  the hits where `extra` matches *from* the literal (`extra.match(block, hit)`: every ERROR_WORDS
  match starts with one of ERROR_LITERALS, tests/exporter/test_unrecognised_literals.py), so
  `default` (holding `fault`) costs no line search; without literals, `extra.finditer`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

try:  # optional: the pure path below finds the same lines, slower
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None

__all__ = ["Needles", "vectorscan_available"]


def vectorscan_available() -> bool:
    """True when the `hyperscan` (Vectorscan) package is importable."""
    return hyperscan is not None


@lru_cache(maxsize=8)
def _database(anchors: tuple[bytes, ...], extra: bytes | None, caseless: bool):
    """A Vectorscan block-mode database: ids 0..len(anchors)-1 the anchors, len(anchors) the extra
    pattern; None when Vectorscan is missing or cannot compile them (the pure path then runs).
    Compiled once per process (~30 ms with ERROR_WORDS)."""
    if hyperscan is None:
        return None
    expressions = [re.escape(anchor) for anchor in anchors]
    flags = [0] * len(anchors)
    if extra is not None:
        expressions.append(extra)
        flags.append(hyperscan.HS_FLAG_CASELESS if caseless else 0)
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(expressions=expressions, ids=list(range(len(expressions))), flags=flags)
    except hyperscan.error:  # a construct Vectorscan lacks (lookbehind, backreference)
        return None
    return database


class Needles:
    """The prefilter's search over bytes blocks (see the module docstring). `anchors` and
    `extra_literals` are ASCII; `extra` a bytes pattern or None. `engine` says which engine
    runs: "vectorscan" or "python"; `use_vectorscan=False` forces the pure path (tests)."""

    def __init__(self, anchors: Sequence[bytes], extra: re.Pattern[bytes] | None = None,
                 extra_literals: Sequence[bytes] = (), *, use_vectorscan: bool = True) -> None:
        self.anchors = tuple(anchors)
        self.extra = extra
        self.extra_literals = tuple(literal.lower() for literal in extra_literals)
        self.engine = "vectorscan" if use_vectorscan else "python"
        self._database = self._compile()

    def _compile(self):
        """The Vectorscan database for this search, None on the pure path (`engine` says)."""
        if self.engine == "python":
            return None
        extra = self.extra
        caseless = extra is not None and bool(extra.flags & re.IGNORECASE)
        database = _database(self.anchors, extra.pattern if extra else None, caseless)
        if database is None:
            self.engine = "python"
        return database

    def __getstate__(self) -> dict:
        """Picklable (a resumed file check pickles its scan): the database is compiled again."""
        return {key: value for key, value in self.__dict__.items() if key != "_database"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._database = self._compile()

    def search(self, block, limit: int) -> tuple[list[int], list[int]]:
        """(anchor hits, extra hits) in block[:limit] (bytes or bytearray), each sorted."""
        if self._database is not None:
            return self._vectorscan(block, limit)
        anchors = _find_all(block, limit, self.anchors)
        if self.extra is None:
            return anchors, []
        if not self.extra_literals:
            return anchors, [m.start() for m in self.extra.finditer(block, 0, limit)]
        return anchors, _literal_hits(block, limit, self.extra, self.extra_literals)

    def _vectorscan(self, block, limit: int) -> tuple[list[int], list[int]]:
        """One Vectorscan pass: a hit is a match's last byte (`to - 1`), in its line."""
        anchors: list[int] = []
        extra: list[int] = []
        count = len(self.anchors)

        def on_match(pattern: int, _start: int, end: int, _flags: int, _context) -> None:
            (anchors if pattern < count else extra).append(end - 1)

        with memoryview(block) as view, view[:limit] as data:
            self._database.scan(data, match_event_handler=on_match)
        return anchors, extra


def _find_all(block, limit: int, needles: Sequence[bytes]) -> list[int]:
    """Every offset where one of `needles` starts in block[:limit], sorted: one `find` pass each."""
    found: list[int] = []
    for needle in needles:
        position = block.find(needle, 0, limit)
        while position != -1:
            found.append(position)
            position = block.find(needle, position + 1, limit)
    return sorted(found) if len(needles) > 1 else found


def _literal_hits(
    block, limit: int, extra: re.Pattern[bytes], literals: Sequence[bytes]
) -> list[int]:
    """The offsets in block[:limit] where one of `literals` (lower case) starts, ASCII case
    ignored, and `extra` matches from there, sorted: one `find` pass per literal over a lowered
    copy; after a hit the rest of its line is skipped (a line of nothing but error words costs
    one `match` per literal, not one per word)."""
    lowered = bytes(block[:limit]).lower()
    match = extra.match
    hits: list[int] = []
    for literal in literals:
        position = lowered.find(literal)
        while position != -1:
            if match(block, position, limit) is None:
                position = lowered.find(literal, position + 1)
                continue
            hits.append(position)
            end = lowered.find(b"\n", position)
            position = -1 if end == -1 else lowered.find(literal, end + 1)
    return sorted(hits)
