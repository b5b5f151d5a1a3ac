"""Reading a daemon's log file for a live check (I/O at the edge), shared by the
`fabricmanager` and `hostengine` checks.

A log configured explicitly that cannot be read is `DependencyMissing` (the runner reports
`unknown`/`dependency_missing`: fail closed); the default path absent is the caller's call (not
applicable, or unknown). Only the last `MAX_BYTES` of a long log are read (its start is cut at a
line boundary), so a log that grew for months costs the same each run.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpuslo.errors import DependencyMissing

MAX_BYTES = 16 * 1024 * 1024


def read_log_tail(path: Path, max_bytes: int = MAX_BYTES) -> tuple[str, int]:
    """(text of the last `max_bytes` of the file from a line start, number of lines skipped
    before it: 0 when read whole, else -1 as the count is not known). Raises DependencyMissing
    naming the path when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            skipped = 0
            if size > max_bytes:
                handle.seek(size - max_bytes)
                handle.readline()
                skipped = -1
            data = handle.read(max_bytes)
    except OSError as error:
        raise DependencyMissing(f"{path}: {error.strerror or error}") from None
    return data.decode("utf-8", errors="replace"), skipped
