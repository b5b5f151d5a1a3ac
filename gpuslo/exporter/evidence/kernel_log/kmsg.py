"""/dev/kmsg: the kernel's structured log interface, read from a sequence number.

Format (Linux Documentation/ABI/testing/dev-kmsg): one record per read,
`PRIORITY,SEQUENCE,TIMESTAMP_US,FLAGS[,...];MESSAGE\\n` followed by continuation lines that
start with a space (` SUBSYSTEM=pci`, ` DEVICE=+pci:0000:00:01.0`). PRIORITY is
`facility << 3 | level`; TIMESTAMP_US is microseconds since boot; FLAGS `-` or `c`
(continuation of a fragmented line). A reader that falls behind the ring buffer gets EPIPE
once, then the oldest record still there: the sequence numbers jump, and the jump is the
number of records lost.

Pure: `parse_kmsg_record`, `parse_kmsg_text` (a captured `/dev/kmsg` dump). I/O edges:
`read_kmsg(path, after_sequence)` (non-blocking; works on the device, a regular file and a
FIFO) and `read_boot_id(procfs)`.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuslo.errors import InputError, ParseError

_RECORD = re.compile(r"^(\d+),(\d+),(\d+),([^;,]*)(?:,[^;]*)?;(.*)$", re.DOTALL)
READ_SIZE = 16384  # larger than the kernel's record limit (a smaller buffer gets EINVAL)
MAX_RECORDS = 1_000_000  # one read never holds more (the ring buffer is a few MiB)


@dataclass(frozen=True)
class KmsgRecord:
    """One /dev/kmsg record.

    Attributes:
        sequence: the kernel's 64-bit record sequence number (0 is the first record of a boot).
        timestamp_us: microseconds since boot (CLOCK_MONOTONIC) when the record was logged.
        facility: syslog facility (0 = kern).
        level: syslog level (0 emerg … 7 debug).
        flags: `-`, or `c` for a continuation fragment.
        message: the message text (escaped bytes kept as the kernel wrote them).
        continuation: the ` KEY=value` lines after the record, without the leading space.
    """

    sequence: int
    timestamp_us: int
    facility: int
    level: int
    flags: str
    message: str
    continuation: tuple[str, ...] = ()

    def as_line(self) -> str:
        """The record's first line as /dev/kmsg prints it (what the kernel-log parser reads)."""
        return (
            f"{self.facility << 3 | self.level},{self.sequence},{self.timestamp_us},"
            f"{self.flags};{self.message}"
        )


def parse_kmsg_record(
    line: str, source: str = "/dev/kmsg", line_number: int | None = None
) -> KmsgRecord:
    """Parse one record line `6,1234,5678,-;message` (continuation lines are separate; see
    `parse_kmsg_text`). Raises ParseError naming `source`, the line and the field."""
    match = _RECORD.match(line.rstrip("\n"))
    if not match:
        raise ParseError(
            source,
            "not a /dev/kmsg record (PRIORITY,SEQUENCE,TIMESTAMP,FLAGS;MESSAGE)",
            line_number,
            "record",
        )
    priority, sequence, stamp, flags, message = match.groups()
    try:
        priority_value, sequence_value, stamp_value = int(priority), int(sequence), int(stamp)
    except ValueError:  # pragma: no cover - the regex admits digits only
        raise ParseError(source, "numeric field out of range", line_number, "record") from None
    return KmsgRecord(
        sequence_value, stamp_value, priority_value >> 3, priority_value & 7, flags, message
    )


def parse_kmsg_text(text: str, source: str = "/dev/kmsg") -> list[KmsgRecord]:
    """Records of a /dev/kmsg dump, one record a line, continuation lines (leading space)
    attached to the record before them. Blank lines are skipped. Raises ParseError for any
    other line."""
    records: list[KmsgRecord] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.startswith(" ") and records:
            last = records[-1]
            records[-1] = KmsgRecord(
                **{**last.__dict__, "continuation": (*last.continuation, line[1:])}
            )
            continue
        records.append(parse_kmsg_record(line, source, number))
    return records


@dataclass
class KmsgRead:
    """What one `read_kmsg` call got.

    Attributes:
        records: new records (sequence > the cursor), in order.
        lost: records the reader never saw: sequence gaps after the cursor (ring-buffer
            overruns, reported by the kernel as EPIPE).
        last_sequence: the highest sequence read, or the cursor when nothing new came.
        overruns: EPIPE errors met (each is one overrun).
    """

    records: list[KmsgRecord] = field(default_factory=list)
    lost: int = 0
    last_sequence: int = -1
    overruns: int = 0


def _read_chunks(path: Path) -> tuple[list[bytes], int]:
    """Every chunk readable now from `path` without blocking, and the EPIPE count."""
    chunks: list[bytes] = []
    overruns = 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except OSError as error:
        raise InputError(str(path), error.strerror or str(error)) from None
    try:
        while len(chunks) < MAX_RECORDS:
            try:
                chunk = os.read(fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno == errno.EPIPE:
                    overruns += 1
                    continue
                raise InputError(str(path), error.strerror or str(error)) from None
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks, overruns


def read_kmsg(path: Path | str, after_sequence: int = -1) -> KmsgRead:
    """Read every record with sequence > `after_sequence` available now at `path` (the
    /dev/kmsg device, or a file or FIFO holding its records), without blocking.

    Only complete lines are parsed (a record whose newline has not arrived is read next time).
    `lost` counts sequence numbers skipped after `after_sequence` (on a new boot pass -1: a
    first record above 0 means the ring buffer already dropped the start of the boot).
    Raises InputError when `path` cannot be opened or read, ParseError for a line that is not
    a record.
    """
    chunks, overruns = _read_chunks(Path(path))
    data = b"".join(chunks)
    # The device gives whole records; a file or FIFO may end mid-record (its writer is
    # mid-line): that part waits for the next read, which starts again after the last sequence.
    data = data[: data.rfind(b"\n") + 1]
    text = data.decode("utf-8", errors="replace")
    records = parse_kmsg_text(text, str(path))
    result = KmsgRead(last_sequence=after_sequence, overruns=overruns)
    for record in records:
        if record.sequence <= result.last_sequence:
            continue
        result.lost += record.sequence - result.last_sequence - 1
        result.records.append(record)
        result.last_sequence = record.sequence
    return result


def read_boot_id(procfs: Path | str = "/proc") -> str:
    """The kernel's boot id (`<procfs>/sys/kernel/random/boot_id`), a UUID that changes every
    boot; "" when it cannot be read (the caller then cannot tell boots apart)."""
    try:
        return (Path(procfs) / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
