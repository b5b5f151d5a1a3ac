"""One log file read the two ways `LogReader` takes it, for tests that compare them."""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.read import ReadStats, read_blocks, read_lines
from gpuslo.goodput.logs.reader import LogReader


def by_lines(path: Path) -> LogReader:
    """A reader fed `path` line by line (the regex of every line: `FastPath.line`)."""
    reader = LogReader(load_profiles())
    for line in read_lines(path, ReadStats()):
        reader.feed(line)
    return reader


def by_blocks(path: Path) -> LogReader:
    """A reader fed `path` block by block (`FastPath.block`, masked shapes included)."""
    reader = LogReader(load_profiles())
    for block in read_blocks(path, ReadStats()):
        reader.feed_block(block)
    return reader
