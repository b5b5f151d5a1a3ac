"""Which lines of a block may hold one of some literal words or control characters (pure).

`BlockScan(words, chars).lines(lines) -> set[int] | None`: the indices of the lines of a block
(`read.read_blocks`: one chunk's lines) on which one of `words` (literal, case-sensitive) or
one of `chars` may occur; every line holding one is in the set (a line in it may hold none: the
caller then looks again, exactly); None when the block was not scanned (every line may). The
fast path (`fast.FastPath.block`) asks it once a block, so that a progress line with none of an
event rule's words costs no word search of its own.

The search is the kernel-log prefilter's own (`gpuslo.needles`: Vectorscan when the `hyperscan`
package is installed, its database compiled once per process, else one `find` pass per word):
the words as anchors and a class of the characters as its extra pattern, over the block's UTF-8
bytes (a word's UTF-8 bytes occur there exactly where the word occurs in the text: UTF-8 is
self-synchronising), each hit's offset mapped to its line by the newlines before it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from gpuslo.needles import Needles

_NEWLINE = re.compile(b"\n")


def encode(lines: list[str]) -> bytes:
    """A block's lines as the UTF-8 bytes that are scanned: joined by newlines."""
    return "\n".join(lines).encode("utf-8", errors="surrogatepass")


class BlockScan:
    """See the module docstring. `engine`: "vectorscan" or "python" (`use_vectorscan=False`
    forces the pure path, for tests). Raises ValueError for a word or character spanning lines,
    an empty word or a non-ASCII character (the class is one of bytes)."""

    def __init__(self, words: Sequence[str], chars: str, *, use_vectorscan: bool = True) -> None:
        if any("\n" in word for word in words) or "\n" in chars:
            raise ValueError("a word or character that spans lines cannot be found per line")
        if not all(words) or any(ord(c) > 0x7F for c in chars):
            raise ValueError("words must be non-empty and the characters ASCII")
        self.words = tuple(words)
        self.chars = chars
        klass = re.compile(b"[" + b"".join(b"\\x%02x" % ord(c) for c in chars) + b"]")
        self._needles = Needles(tuple(word.encode("utf-8") for word in self.words),
                                klass if chars else None, use_vectorscan=use_vectorscan)
        self.engine = self._needles.engine

    def lines(self, lines: list[str], data: bytes | None = None) -> set[int] | None:
        """The indices of `lines` that may hold a word or a character (module docstring);
        `data`: the lines already joined by newlines and encoded (`encode`), when the caller
        has them."""
        if not lines:
            return set()
        data = encode(lines) if data is None else data
        words, chars = self._needles.search(data, len(data))
        if not words and not chars:
            return set()
        newlines = [found.start() for found in _NEWLINE.finditer(data)]
        return {bisect_left(newlines, end) for end in (*words, *chars)}
