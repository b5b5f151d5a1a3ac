"""The one way gpuslo writes a file: a temporary file beside the target, fsync, rename, fsync the
directory. A reader (Prometheus loading rules, Grafana provisioning, a restarted exporter after
kill -9) sees the old file or the new one, never half of one. Several files are written all or
nothing: every one is staged first and renamed only when all were written.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from gpuslo.errors import InputError


def _stage(path: Path, data: bytes) -> str:
    """`data` in a fsync'd temp file in `path`'s directory (created if missing); its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all_atomic(files: dict[Path, bytes]) -> None:
    """Write several files all or nothing (parents created). Raises OSError whose `filename` is
    the path that failed; no new file is left behind then."""
    staged: list[str] = []
    try:
        for path, data in files.items():
            try:
                if Path(path).is_dir():
                    raise IsADirectoryError(errno.EISDIR, "Is a directory")
                staged.append(_stage(Path(path), data))
            except OSError as error:
                raise OSError(error.errno, error.strerror or str(error), str(path)) from None
        for tmp, path in zip(staged, files, strict=True):
            os.replace(tmp, path)
    except BaseException:
        for tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for directory in {Path(path).parent for path in files}:
        _fsync_directory(directory)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace `path` with `data` atomically (parent created). Raises OSError."""
    write_all_atomic({Path(path): data})


def write_stream_atomic(path: str | os.PathLike[str], produce: Callable[[BinaryIO], None]) -> None:
    """Replace `path` atomically with what `produce(handle)` writes into a temp file beside it
    (for outputs too large to hold in memory). Raises OSError; no new file is left behind then."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            produce(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_directory(target.parent)


def write_text_files(directory: Path, files: dict[str, str]) -> list[Path]:
    """Write `name -> text` (UTF-8) into `directory`, all or nothing; returns the paths in name
    order. Raises InputError naming the directory or file that could not be written."""
    targets = {Path(directory) / name: files[name].encode("utf-8") for name in sorted(files)}
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            str(directory), f"cannot create output directory: {error.strerror or error}"
        ) from None
    try:
        write_all_atomic(targets)
    except OSError as error:
        raise InputError(
            error.filename or str(directory), f"cannot write: {error.strerror or error}"
        ) from None
    return list(targets)
