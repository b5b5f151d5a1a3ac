"""/dev/kmsg records (Documentation/ABI/testing/dev-kmsg) from the real H200 dump, read
non-blocking from a file and a FIFO with a sequence cursor, with lost records counted."""

from __future__ import annotations

import contextlib
import os
import threading

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import InputError, ParseError
from gpuslo.exporter.evidence.kernel_log.kmsg import (
    parse_kmsg_record,
    parse_kmsg_text,
    read_boot_id,
    read_kmsg,
)

DUMP = (FIXTURES / "h200" / "dev-kmsg.txt").read_text()


def test_record_fields():
    record = parse_kmsg_record("6,1234,5678901,-;NVRM: Xid (PCI:0000:cb:00): 13, pid=1")
    assert (record.sequence, record.timestamp_us, record.facility, record.level) == (
        1234,
        5678901,
        0,
        6,
    )
    assert record.message == "NVRM: Xid (PCI:0000:cb:00): 13, pid=1"
    assert parse_kmsg_record("12,5,7,c,extra;msg;with;semicolons").message == "msg;with;semicolons"
    assert record.as_line() == "6,1234,5678901,-;NVRM: Xid (PCI:0000:cb:00): 13, pid=1"


def test_real_dump_with_continuation_lines():
    records = parse_kmsg_text(DUMP, "dev-kmsg.txt")
    assert records[0].sequence == 0 and records[0].message.startswith("Linux version")
    with_dict = [r for r in records if r.continuation]
    assert with_dict and all("=" in line for r in with_dict for line in r.continuation)
    assert [r.sequence for r in records] == sorted(r.sequence for r in records)


def test_bad_record_names_source_line_and_field():
    with pytest.raises(ParseError) as error:
        parse_kmsg_text("6,1,2,-;fine\nnot a record\n", "kmsg.txt")
    assert error.value.line == 2 and error.value.field == "record"
    assert "kmsg.txt:2" in str(error.value)


def test_read_from_a_cursor_counts_gaps_as_lost(tmp_path):
    path = tmp_path / "kmsg"
    path.write_text("6,0,1,-;a\n6,1,2,-;b\n6,5,3,-;c\n SUBSYSTEM=pci\n6,6,4,-;d\n")
    first = read_kmsg(path)
    assert [r.message for r in first.records] == ["a", "b", "c", "d"]
    assert (first.lost, first.last_sequence) == (3, 6)
    again = read_kmsg(path, first.last_sequence)
    assert (again.records, again.lost, again.last_sequence) == ([], 0, 6)
    assert [r.message for r in read_kmsg(path, 1).records] == ["c", "d"]


def test_fifo_is_read_without_blocking(tmp_path):
    fifo = tmp_path / "kmsg.fifo"
    os.mkfifo(fifo)
    # A writer holds the FIFO open: the reader must return what is there, not wait for EOF.
    writer_fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(writer_fd, b"6,10,1,-;x\n6,11,2,-;y\n")
        done = []
        thread = threading.Thread(target=lambda: done.append(read_kmsg(fifo, 9)))
        thread.start()
        thread.join(timeout=5)
        assert not thread.is_alive()
        assert [r.sequence for r in done[0].records] == [10, 11]
    finally:
        os.close(writer_fd)


def test_missing_device_and_boot_id(tmp_path):
    with pytest.raises(InputError):
        read_kmsg(tmp_path / "nope")
    (tmp_path / "sys/kernel/random").mkdir(parents=True)
    (tmp_path / "sys/kernel/random/boot_id").write_text("3f0b7a5e-0000-4000-8000-000000000001\n")
    assert read_boot_id(tmp_path) == "3f0b7a5e-0000-4000-8000-000000000001"
    assert read_boot_id(tmp_path / "absent") == ""


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_parse_error(text):
    with contextlib.suppress(ParseError):
        assert isinstance(parse_kmsg_text(text), list)
