"""The `xid` check's kernel-log file (`--kernel-log`): the whole-file scan of every run, and the
state an exporter resumes it from (`FileResume`), so a new record is judged in process, on the
appended bytes only (`gpuslo.exporter.xid_fast`).

The file is read in one pass (`scan_kernel_log_file`: its first 64 KiB must be a kernel log;
complete lines only). A scan is a stream (`KernelLogScan.feed` takes whole-line chunks in order),
so the scan of bytes [0, offset) fed the bytes [offset, end) is the scan of [0, end): resuming
gives the events, records, fallback lines and PCIe bandwidth notices the whole-file scan would,
and the check's pure judging turns them into the same results and totals
(tests/exporter/test_xid_fast.py).
A resume is refused (`None`: the caller runs the whole check) when the path now holds another
file (rotated), a shorter one (truncated), more new bytes than `MAX_RESUME_BYTES`, a start that
is no longer a kernel log, or a cut-off GPU record; the whole check then judges it, fail closed.

A log rotated (moved away, a new empty file in its place: logrotate's `create`) or truncated
(`copytruncate`) is empty until the kernel next writes, which on a quiet node may be hours: every
GPU read unknown meanwhile (newcomer6 finding 10). `remember_read` records in the state dir
(`SEEN_FILE`) each path whose scan read a kernel log; `emptied_since_read` is True when such a
path now holds nothing (blank, or NUL padding only): the records already judged are judged (the
gate holds a fault through it), and the empty file is "no record since", not "not a kernel log".
A path never read as a kernel log, or one that now holds anything else, stays a ParseError.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from gpuslo.config_file import without_nul_padding
from gpuslo.errors import DependencyMissing, InputError, ParseError
from gpuslo.exporter.evidence.kernel_log.read import (
    GPU_MARKER,
    HEAD_BYTES,
    KernelLogScan,
    check_kernel_log_head,
    scan_kernel_log_file,
)
from gpuslo.exporter.policy.severity_words import KERNEL_LOG_EXTRA, KERNEL_LOG_EXTRA_LITERALS
from gpuslo.exporter.state import read_json_state, write_json_atomic

# A last line without its newline is a writer mid-line; after this long unchanged it is cut off.
CUT_OFF_AFTER_S = 30.0
# More new bytes than this since the last whole-file scan: the whole check reads them instead.
MAX_RESUME_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class FileResume:
    """Where a whole-file scan stopped: the file's `inode`, the `offset` after its last
    complete line, the scan there (`scan`: a pickled `KernelLogScan`, unpickled afresh for each
    resume so it is never changed), and the GPU `family` the run judged with."""

    path: str
    inode: int
    offset: int
    scan: bytes
    family: str | None


def scan_file(path: Path, now: float) -> tuple[KernelLogScan, FileResume | None]:
    """The whole-file scan of `path` (complete lines only) and where it stopped (None when the
    file changed inode during the scan, or is not a regular file).

    A last line without its newline waits for the next run (a writer may be mid-line), unless it
    holds a GPU marker and the file has not changed for `CUT_OFF_AFTER_S`: then the log ends in
    a cut-off record, a ParseError (never healthy). Raises ParseError when its first 64 KiB are
    not a kernel log (empty, binary, any other text): a file without Xids is healthy only when
    it is a kernel log; DependencyMissing when it cannot be read."""
    try:
        before = os.stat(path)
        scan = scan_kernel_log_file(
            str(path), require_kernel_log=True, complete_lines=True, extra=KERNEL_LOG_EXTRA,
            extra_literals=KERNEL_LOG_EXTRA_LITERALS,
        )
        after = os.stat(path)
    except InputError as error:
        raise DependencyMissing(str(error)) from None
    except OSError as error:
        raise DependencyMissing(f"{path}: {error.strerror or error}") from None
    _check_tail(str(path), scan.unterminated, scan.records, now - after.st_mtime)
    same = before.st_ino == after.st_ino and Path(path).is_file()
    resume = FileResume(str(path), after.st_ino, scan.fed, pickle.dumps(scan), None) if (
        same
    ) else None
    return scan, resume


def _check_tail(source: str, tail: bytes, records: int, unchanged_s: float) -> None:
    """Raise ParseError when `tail` (a last line without its newline) holds a GPU marker and the
    file has not changed for `CUT_OFF_AFTER_S`."""
    if GPU_MARKER.search(tail.decode("utf-8", errors="replace")) and unchanged_s > CUT_OFF_AFTER_S:
        raise ParseError(
            source,
            f"ends in a cut-off kernel-log record (no newline for {unchanged_s:.0f} s)",
            line=records + 1,
        )


def resume_scan(resume: FileResume, now: float) -> tuple[KernelLogScan, int] | None:
    """The scan of the file as it is now, from `resume` and the bytes appended since, and the
    new offset; None when it cannot be resumed (see the module docstring) or cannot be read."""
    try:
        with open(resume.path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            if stat.st_ino != resume.inode or stat.st_size < resume.offset:
                return None  # rotated or truncated
            if stat.st_size - resume.offset > MAX_RESUME_BYTES:
                return None
            if resume.offset < HEAD_BYTES:  # the head the whole check would judge grew
                check_kernel_log_head(handle.read(HEAD_BYTES), resume.path)
            handle.seek(resume.offset)
            data = handle.read(stat.st_size - resume.offset)
        cut = data.rfind(b"\n") + 1
        scan: KernelLogScan = pickle.loads(resume.scan)
        scan.feed(data, cut)
        _check_tail(resume.path, data[cut:], scan.records, now - stat.st_mtime)
    except (OSError, ParseError):
        return None
    return scan, resume.offset + cut


SEEN_FILE = "xid_kernel_log_seen.json"  # {"paths": {path: inode of the last file read}}


def remember_read(state_dir: Path, path: Path, inode: int) -> None:
    """Record that `path` (file `inode`) was read as a kernel log; written only when the record
    changes (once per rotation). A state dir that cannot be written leaves no record: the next
    empty file is then a ParseError, fail closed."""
    target = Path(state_dir) / SEEN_FILE
    try:
        seen = read_json_state(target, {"paths": {}})
        paths = seen.get("paths") if isinstance(seen, dict) else None
        if not isinstance(paths, dict) or paths.get(str(path)) != inode:
            paths = {**(paths if isinstance(paths, dict) else {}), str(path): inode}
            Path(state_dir).mkdir(parents=True, exist_ok=True)
            write_json_atomic(target, {"paths": paths})
    except (OSError, ParseError):
        return


def emptied_since_read(state_dir: Path, path: Path) -> bool:
    """True when `path` was read as a kernel log before (`remember_read`) and now holds nothing
    but blanks or NUL padding (rotated or truncated, the kernel silent since)."""
    try:
        seen = read_json_state(Path(state_dir) / SEEN_FILE, {})
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except (OSError, ParseError):
        return False
    paths = seen.get("paths") if isinstance(seen, dict) else None
    known = isinstance(paths, dict) and str(path) in paths
    return known and not without_nul_padding(head.decode("utf-8", "replace")).strip()
