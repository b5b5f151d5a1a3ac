"""Which lines of a block may hold one of some literal words or control characters (pure).

`BlockScan(words, chars).lines(lines) -> set[int] | None`: the indices of the lines of a block
(`read.read_blocks`: one chunk's lines) on which one of `words` (literal, case-sensitive) or
one of `chars` may occur; every line holding one is in the set (a line in it may hold none: the
caller then looks again, exactly); None when the block was not scanned (every line may). The
fast path (`fast.FastPath.block`) asks it once a block, so that a progress line with none of an
event rule's words costs no word search of its own.

Two engines, the same lines:
- Vectorscan (the `hyperscan` package, as `gpuslo.exporter.evidence.kernel_log.needles` uses
  it): the words and a class of the characters in one database, one pass over the block's
  UTF-8 bytes (a word's UTF-8 bytes occur there exactly where the word occurs in the text: UTF-8
  is self-synchronising), each hit's offset mapped to its line by the newlines before it;
- pure Python otherwise: one `str.__contains__` per word over the joined block (a substring
  search, not a regex tried at every position), then per line only the words the block holds.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

try:  # optional: the pure path below finds the same lines, slower
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None

_NEWLINE = re.compile(b"\n")


class BlockScan:
    """See the module docstring. `engine`: "vectorscan" or "python" (`use_vectorscan=False`
    forces the pure path, for tests)."""

    def __init__(self, words: Sequence[str], chars: str, *, use_vectorscan: bool = True) -> None:
        if any("\n" in word for word in words) or "\n" in chars:
            raise ValueError("a word or character that spans lines cannot be found per line")
        self.words = tuple(words)
        self.chars = chars
        self.any_char = re.compile(f"[{re.escape(chars)}]") if chars else None
        self._database = _database(self.words, chars) if use_vectorscan else None
        self.engine = "vectorscan" if self._database is not None else "python"

    def lines(self, lines: list[str]) -> set[int] | None:
        """The indices of `lines` that may hold a word or a character (module docstring)."""
        if not lines:
            return set()
        text = "\n".join(lines)
        if self._database is not None:
            return self._vectorscan(text.encode("utf-8", errors="surrogatepass"))
        present = [word for word in self.words if word in text]
        chars = self.any_char is not None and self.any_char.search(text) is not None
        if not present and not chars:
            return set()
        return {index for index, line in enumerate(lines)
                if any(word in line for word in present)
                or (chars and self.any_char is not None and self.any_char.search(line))}

    def _vectorscan(self, data: bytes) -> set[int]:
        ends: list[int] = []

        def on_match(_pattern: int, _start: int, end: int, _flags: int, _context) -> None:
            ends.append(end - 1)  # the match's last byte, inside its line

        self._database.scan(data, match_event_handler=on_match)
        if not ends:
            return set()
        newlines = [found.start() for found in _NEWLINE.finditer(data)]
        return {bisect_left(newlines, end) for end in ends}


def _database(words: tuple[str, ...], chars: str):
    """A Vectorscan block-mode database of the words (literal) and the characters (one class);
    None when Vectorscan is missing, there is nothing to find, or it cannot compile them."""
    if hyperscan is None or not (words or chars) or not all(words):
        return None  # (an empty word is on every line: the pure path says so)
    if any(ord(c) > 0x7F for c in chars):
        return None  # a class of bytes, not of characters: ASCII only
    expressions = [re.escape(word.encode("utf-8")) for word in words]
    if chars:
        expressions.append(b"[" + b"".join(b"\\x%02x" % ord(c) for c in chars) + b"]")
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(expressions=expressions, ids=list(range(len(expressions))),
                         flags=[0] * len(expressions))
    except hyperscan.error:
        return None
    return database
