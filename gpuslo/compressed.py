"""Compressed data files read as their decompressed bytes (told by magic bytes, never the name).

gzip (RFC 1952 §2.3.1: 1f 8b), xz (the .xz file format 1.1.0 §2.1.1.1: fd 37 7a 58 5a 00) and
bzip2 (`BZh` + block size digit + the block magic 31 41 59 26 53 59) are decompressed as they are
read with the standard library (`gzip`, `lzma`, `bz2`: one read's worth in memory), so every
command that reads a data file (`inspect`, `goodput`, `serving-log`, `report`) reads the same
compressions: logrotate compresses with gzip by default and with xz or bzip2 where `compresscmd`
says so (newcomer6 finding 15: `inspect` read an xz file's visible bytes, `goodput` called it
binary). zstd (RFC 8878 §3.1.1: 28 b5 2f fd) has no decompressor in Python 3.11's standard
library: such a file is refused with one line saying so (`CorruptGzip`, an input error), never
read as binary text. A file that opens with one of these magics and does not decompress raises
`CorruptGzip` ("corrupt xz ..."), which `config_file.unreadable_data` names.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import zlib
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BZIP2 = (b"BZh", b"1AY&SY")  # bytes 0-2, then the block magic after the block-size digit
_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, OSError, ValueError)
ZSTD_REFUSED = ("zstd-compressed: not read (no zstd decompressor here; decompress it first: "
                "`zstd -dc FILE | gpuslo ... -`)")


class CorruptGzip(OSError):
    """A data file that opens with a compression's magic bytes but does not decompress (cut
    short, bad CRC, not that format after all), or a zstd one; `unreadable_data` names the file
    and this reason."""


def kind_of(head: bytes) -> str | None:
    """"gzip", "xz", "bzip2", "zstd" from a file's first 10 bytes, None for anything else."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(XZ_MAGIC):
        return "xz"
    if head.startswith(_BZIP2[0]) and head[3:4].isdigit() and head[4:10] == _BZIP2[1]:
        return "bzip2"
    return "zstd" if head.startswith(ZSTD_MAGIC) else None


_OPENERS = {"gzip": lambda h: gzip.GzipFile(fileobj=h, mode="rb"),
            "xz": lambda h: lzma.LZMAFile(h, mode="rb"),  # noqa: SIM115 closed by close()
            "bzip2": lambda h: bz2.BZ2File(h, "rb")}
_WHOLE = {"gzip": gzip.decompress, "xz": lzma.decompress, "bzip2": bz2.decompress}


class _Decompressed(io.RawIOBase):
    """A compressed stream read as its decompressed bytes, every failure `CorruptGzip`."""

    def __init__(self, handle: BinaryIO, name: str, kind: str) -> None:
        super().__init__()
        self._handle, self._kind, self.name = handle, kind, name
        self._stream = _OPENERS[kind](handle)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self._stream.read(len(buffer))
        except _ERRORS as error:
            raise CorruptGzip(errno.EIO, f"corrupt {self._kind} ({error})", self.name) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._handle.close()
            super().close()


def gunzip_data(data: bytes, name: str) -> bytes:
    """`data` decompressed when it opens with a known magic (a whole file already read, such as
    standard input read at once), else as it is. Raises CorruptGzip naming `name`."""
    kind = kind_of(data[:10])
    if kind is None:
        return data
    if kind == "zstd":
        raise CorruptGzip(errno.EIO, ZSTD_REFUSED, name)
    try:
        return _WHOLE[kind](data)
    except _ERRORS as error:
        raise CorruptGzip(errno.EIO, f"corrupt {kind} ({error})", name) from None


def decompressing(handle: BinaryIO, name: str) -> BinaryIO:
    """`handle`, or its decompressed bytes when it opens with a known magic (peeked, not
    consumed, so a pipe works too). Raises CorruptGzip for a zstd one."""
    head = handle.peek(10)[:10] if hasattr(handle, "peek") else b""
    kind = kind_of(head)
    if kind is None:
        return handle
    if kind == "zstd":
        handle.close()
        raise CorruptGzip(errno.EIO, ZSTD_REFUSED, name)
    return io.BufferedReader(_Decompressed(handle, name, kind), buffer_size=1 << 20)
