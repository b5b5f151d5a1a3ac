"""Reading a training log from disk (the I/O edge): streamed, bounded memory, binary refused.

`read_lines(path, stats)` yields the physical lines of the log at `path` (`-`: standard input)
as text: split on `\\n` and `\\r` (a progress bar redrawn with carriage returns gives one line
per redraw), decoded as UTF-8 (as UTF-16 or UTF-32 when the file opens with that byte-order
mark) with undecodable bytes replaced, each line at most `MAX_LINE_BYTES` (the rest of a longer
line is skipped and counted). The file is read in `CHUNK` pieces, so a 10 GB log or a 1 GB line
needs no more memory than one chunk and one line.
`read_blocks(path, stats)` yields the same lines a chunk at a time (a list of the lines each
`CHUNK` completes: a `Block`, which also holds the bytes they were decoded from), for a reader
that prefilters whole blocks (`fast.FastPath.block`).

Control characters a log router wrote out as text are read as the characters: rsyslog's
`$EscapeControlCharactersOnReceive` (on by default) writes each as `#` and three octal digits
(`#015` a carriage return, `#033` an escape: SageMaker's MPI jobs' `…<stdout>:#015Epoch 0:  50%
1/2 [...]#033[A`, fresh16 S14), and `cat -v` writes `^M` and `^[` (`_escaped`): a bar redrawn
with `#015` gives one line per redraw as with `\r`. Only a stream that shows such escapes
(`escapes_shown`: one glued to the text, or before a CSI) is read back, from there on: a
trainer's own `Epoch #012 step 5` stays as printed.

A run of NUL bytes (at least `NUL_RUN` of them: UTF-16 or UTF-32 text without its byte-order
mark has shorter ones between its characters, and stays binary) is padding, not content:
logrotate's `copytruncate` leaves the truncated length as NULs before the next write, and a
crash mid-write leaves a NUL-filled block. Each run ends the line it interrupts (what follows
was written after it) and is counted in `stats.nul_bytes`; the file is judged binary on what is
left.
"""

from __future__ import annotations

import codecs
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from gpuslo.config_file import NUL_PADDING_RUN, bom_encoding, open_data_file, unreadable_data
from gpuslo.errors import InputError

CHUNK = 1 << 20
MAX_LINE_BYTES = 64 * 1024
_TEXT_CONTROL = set(range(0x20)) - {0x09, 0x0A, 0x0D, 0x1B, 0x0C}
NUL_RUN = NUL_PADDING_RUN  # one rule for every reader (config_file.without_nul_padding)
_NUL_RUN = re.compile(rb"\x00{%d,}" % NUL_RUN)


# rsyslog's `#ooo` (`#015` CR, `#012` LF, `#033` ESC) and `cat -v`'s caret notation (`^M`, `^[`)
_ESCAPED = re.compile(rb"#01[25](?!\d)|#033(?=\[)|\^M(?![a-z])|\^\[(?=\[)")
_ESCAPED_AS = {b"#015": b"\n", b"#012": b"\n", b"^M": b"\n", b"#033": b"\x1b", b"^[": b"\x1b"}


# what only an escaping router writes: an escape before a CSI (`#033[`, `^[[`), a line break
# glued to the text on either side (`<stdout>:#015Epoch`), `^M` ending a line; not a
# trainer's own `Epoch #012 step 5` or `checkpoint #015 saved`, a number after a blank
_ESCAPES_SHOWN = re.compile(rb"#033\[|[^\s#]#01[25]|#01[25][^\s\d]|\^M$|\^\[\[", re.M)


def escapes_shown(data: bytes) -> bool:
    """True when `data` shows a router's written-out control characters (`_ESCAPES_SHOWN`):
    only then are they read back (`_escaped`), in that stream from there on."""
    return (b"#0" in data or b"^" in data) and _ESCAPES_SHOWN.search(data) is not None


def _escaped(data: bytes) -> bytes:
    """`data` with control characters written out as text read back (module docstring); the
    line breaks (`#015`, `#012`, `^M`) become newlines, as `\r` does."""
    if b"#0" not in data and b"^" not in data:
        return data
    return _ESCAPED.sub(lambda m: _ESCAPED_AS[m.group()], data)


@dataclass
class ReadStats:
    """What reading saw: bytes read, lines cut at MAX_LINE_BYTES, whether the file looked
    binary (then nothing was parsed), the encoding its byte-order mark named, and the NUL
    padding skipped (bytes, in how many runs)."""

    bytes: int = 0
    long_lines: int = 0
    binary: bool = False
    encoding: str | None = None  # a BOM's encoding (`utf-16`, `utf-32`); None: read as UTF-8
    nul_bytes: int = 0  # NUL padding skipped (`strip_nul_runs`), leading or not
    nul_runs: int = 0


class Block(list):  # type: ignore[type-arg]  (a list of str)
    """One chunk's lines (`read_blocks`), a list of str; `data`: the UTF-8 bytes they were
    decoded from, joined by newlines (so that a block prefilter need not encode them again:
    `fast.FastPath.block`), or None when a line was cut or decoded on its own. Where the bytes
    are not valid UTF-8 they differ from the lines encoded again, only at the bytes that were
    replaced (never an ASCII byte: UTF-8 is self-synchronising)."""

    __slots__ = ("data",)

    def __init__(self, lines: list[str], data: bytes | None = None) -> None:
        super().__init__(lines)
        self.data = data


def looks_binary(head: bytes) -> bool:
    """True when more than 10 % of `head` are NUL or control bytes that text logs never hold,
    or more than 3 % are and over 20 % are not UTF-8: text in any encoding (Latin-1, GBK)
    holds almost no control bytes, random or compressed data about one byte in ten (27 of the
    256 values), the rest mostly undecodable. Callers remove NUL padding first
    (`strip_nul_runs`)."""
    if not head:
        return False
    bad = sum(1 for b in head if b in _TEXT_CONTROL)
    if bad > 0.10 * len(head):
        return True
    return bad > 0.03 * len(head) and (
        head.decode("utf-8", errors="replace").count("\ufffd") > 0.20 * len(head))


def strip_nul_runs(chunk: bytes, stats: ReadStats) -> bytes:
    """`chunk` with every run of `NUL_RUN` or more NUL bytes replaced by one line break
    (padding ends the line it interrupts), the bytes and runs counted in `stats`."""
    if b"\x00" * NUL_RUN not in chunk:
        return chunk
    runs = _NUL_RUN.findall(chunk)
    stats.nul_runs += len(runs)
    stats.nul_bytes += sum(map(len, runs))
    return _NUL_RUN.sub(b"\n", chunk)


def read_lines(path: str | os.PathLike[str], stats: ReadStats) -> Iterator[str]:
    """Yield the physical lines of the log at `path` (see the module docstring).

    Raises InputError when the file cannot be opened or is a directory. A binary file sets
    `stats.binary` and yields nothing."""
    for block in read_blocks(path, stats):
        yield from block


def read_blocks(path: str | os.PathLike[str], stats: ReadStats) -> Iterator[Block]:
    """The lines of `read_lines`, as one list per chunk read (never an empty list); the same
    errors."""
    try:
        handle = open_data_file(path)  # closed in the finally below; never waits on a FIFO
    except OSError as error:
        raise unreadable_data(path, error) from None
    try:
        yield from _split(_chunks(handle, path, stats), stats)
    finally:
        handle.close()


def binary_start(data: bytes) -> bool:
    """True when a file that opens with `data` is binary as `gpuslo goodput` judges it: the same
    judgement (`_chunks`: byte-order mark, NUL padding, `looks_binary`, mostly-ASCII) over its
    first `CHUNK` bytes (pure). For readers that hold the bytes themselves, e.g. the exporter's
    job-log tailer (newcomer 7 F1: 200 KB of random bytes were read there as a job at step 6,
    while `gpuslo goodput` said "binary file ... not read")."""
    stats = ReadStats()
    for _ in _chunks(io.BytesIO(data[:CHUNK]), "<bytes>", stats):
        pass
    return stats.binary


def _chunks(handle: BinaryIO, path: str | os.PathLike[str], stats: ReadStats
            ) -> Iterator[bytes]:
    """The file's bytes in `CHUNK` pieces, as UTF-8: a UTF-16 or UTF-32 log that opens with its
    byte-order mark (PowerShell's `Tee-Object` and `>` write UTF-16 LE) is decoded on the way,
    `stats.encoding` naming it. Nothing after a first piece that looks binary (`stats.binary`,
    judged after decoding, so a BOM before control bytes is still binary; and a decoded head
    that is not mostly ASCII: bytes that only open like UTF-16 decode to scattered code points,
    a log's stamps, numbers and spaces are ASCII in any language). NUL padding is removed
    first (`strip_nul_runs`), and the judgement waits for a piece with something left."""
    decoder = None
    first, judged = True, False
    while True:
        try:
            raw = handle.read(CHUNK)
            if first and raw and len(raw) < 4:  # a pipe's first read may be short of a BOM
                raw += handle.read(4 - len(raw))
        except OSError as error:
            raise unreadable_data(path, error) from None
        stats.bytes += len(raw)
        if first:
            first = False
            stats.encoding = bom_encoding(raw)
            if stats.encoding is not None:
                decoder = codecs.getincrementaldecoder(stats.encoding)(errors="replace")
        text = None if decoder is None else decoder.decode(raw, final=not raw)
        chunk = strip_nul_runs(raw if text is None else text.encode("utf-8"), stats)
        head = chunk.strip(b"\n")  # NUL padding alone leaves only line breaks: judge later
        if not judged and (looks_binary(head[:65536]) or (text is not None and not _mostly_ascii(
                text[:32768]))):
            stats.binary = True
            return
        judged = judged or bool(head) or not raw
        if chunk:  # at the end, what a decoder held back (an odd byte: one replacement)
            yield chunk
        if not raw:
            return


def _mostly_ascii(text: str) -> bool:
    """True when at least 30 % of `text` is ASCII (random bytes read as UTF-16: 0.2 %)."""
    return sum(ch < "\x80" for ch in text) >= 0.3 * len(text)


def _split(chunks: Iterator[bytes], stats: ReadStats) -> Iterator[Block]:
    """Lines from UTF-8 chunks, a list per chunk (see the module docstring)."""
    buffer = b""
    skipping = escaping = False
    for chunk in chunks:
        buffer += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        escaping = escaping or escapes_shown(buffer)
        if escaping:
            buffer = _escaped(buffer)
        parts = buffer.split(b"\n")
        buffer = parts.pop()
        if skipping and parts:
            skipping = False
            parts = parts[1:]
        if parts and max(map(len, parts)) <= MAX_LINE_BYTES:  # one decode for the chunk: the
            # same text (no UTF-8 sequence spans a newline, so each bad one is replaced alike)
            data = b"\n".join(parts)
            block = Block(data.decode("utf-8", errors="replace").split("\n"), data)
        else:
            block = Block([_text(part, stats) for part in parts])
        if len(buffer) > MAX_LINE_BYTES:
            if not skipping:  # its start, cut and counted once (`_text`); the rest skipped
                block.append(_text(buffer, stats))
                block.data = None
            skipping, buffer = True, b""
        if block:
            yield block
    if buffer and not skipping:
        yield Block([_text(buffer, stats)])


def physical_lines(message: str) -> list[str]:
    """The physical lines of one message as `read_lines` would yield them from a file: split on
    `\r\n`, `\r` and `\n`, each cut at MAX_LINE_BYTES characters. Pure (for container logs,
    whose transport already split the stream into messages)."""
    if "#0" in message or "^" in message:
        raw = message.encode("utf-8", "surrogateescape")
        if escapes_shown(raw):
            message = _escaped(raw).decode("utf-8", "surrogateescape")
    parts = message.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(parts) > 1 and not parts[-1]:
        parts.pop()  # a redraw ending in `\r` ends its line; no empty line after it
    return [part[:MAX_LINE_BYTES] for part in parts]


def _text(raw: bytes, stats: ReadStats) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raw = raw[:MAX_LINE_BYTES]
        stats.long_lines += 1
    return raw.decode("utf-8", errors="replace")


def checkpoint_files(spec: str) -> list[tuple[str, float, bool]]:
    """(name, modification time, empty) of the checkpoint files `spec` names: a directory (its
    entries, one level, directories included: `checkpoint-500/`) or a glob pattern; empty: a
    directory with no entry or a file of 0 bytes (a save in progress, or one that failed).

    Raises InputError when `spec` matches nothing readable."""
    import glob as globbing

    if os.path.isdir(spec):
        paths = [os.path.join(spec, name) for name in sorted(os.listdir(spec))]
    else:
        paths = sorted(globbing.glob(spec))
    out = []
    for found in paths:
        try:
            stat = os.stat(found)
            empty = not os.listdir(found) if os.path.isdir(found) else stat.st_size == 0
            out.append((os.path.basename(found.rstrip("/")), stat.st_mtime, empty))
        except OSError:
            continue
    if not out:
        raise InputError(spec, "--checkpoint-dir: no checkpoint file or directory found")
    return out
