"""Atomic state files (through `gpuslo.files`: temporary file, fsync, rename, directory fsync).
A reader (or a restarted exporter after kill -9) sees the old file or the new one, never half of
one. Other modules (the xid check's kernel-log cursor) may reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuslo.errors import DeadlineExceeded, ParseError
from gpuslo.files import write_atomic


def write_json_atomic(path: str | os.PathLike[str], value: Any) -> None:
    """Write `value` as JSON (sorted keys, trailing newline) atomically."""
    write_atomic(path, (json.dumps(value, sort_keys=True, indent=1) + "\n").encode())


def read_json_state(path: str | os.PathLike[str], default: Any) -> Any:
    """Read a JSON state file; `default` when it does not exist.

    Raises ParseError naming the file when it exists but is not valid JSON (a state file is only
    ever written atomically, so a broken one means someone else wrote it: refuse, do not reset),
    OSError when it exists but cannot be read (a directory, no permission).
    """
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    except UnicodeDecodeError:
        raise ParseError(str(target), "state file is not UTF-8 text") from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise ParseError(str(target), f"state file is not valid JSON ({error})") from None


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], timeout_s: float) -> Iterator[None]:
    """Hold an exclusive `fcntl.flock` on `<path>.lock` (created if missing) for the block, so
    two processes sharing a state file (`gpuslo check` run by hand and the exporter, both
    reading the kernel-log cursor) read, advance and save it one after the other.

    Waits up to `timeout_s` seconds; raises DeadlineExceeded (`check_timeout`) naming the lock
    when another process holds it that long, OSError when the lock file cannot be created. The
    kernel drops the lock when its holder dies (kill -9 included)."""
    lock_path = f"{os.fspath(path)}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise DeadlineExceeded(
                        f"{lock_path}: held by another process past the deadline of "
                        f"{timeout_s:g} s"
                    ) from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


def carry_counter(total: int, last_source: int, source: int) -> tuple[int, int]:
    """Fold one reading of a source counter into a total that never goes down.

    Returns (new total, new last source value): growth of the source is added; a source value
    below the last one means the source restarted its count, so the whole value is new.
    """
    growth = source - last_source if source >= last_source else source
    return total + growth, source


def fold_classes(last: dict[tuple, int], now: dict[tuple, int]) -> dict[tuple, int]:
    """Growth per series of one event key whose series differ only by class (pure).

    `last` and `now` map series keys to the source's cumulative count. The growth is that of
    their sums (a sum below the last one means the source restarted: all of it is new, as in
    `carry_counter`), given to the series whose own count grew, in key order, so the totals
    grow by exactly the number of new events however the events were reclassified. Every key
    of `last` and `now` is in the answer (0 where nothing grew).
    """
    growth, _ = carry_counter(0, sum(last.values()), sum(now.values()))
    restarted = sum(now.values()) < sum(last.values())
    out = dict.fromkeys(sorted({*last, *now}), 0)
    for key in out:
        share = now.get(key, 0) - (0 if restarted else last.get(key, 0))
        give = min(max(share, 0), growth)
        out[key], growth = give, growth - give
    if growth:  # cannot happen (the shares add up to at least the growth); never lose it
        out[max(now, key=now.__getitem__)] += growth
    return out


class CounterCarry:
    """Kernel-log counters (Xid, SXid, records lost) that survive an exporter restart.

    The state file (`exporter_counters.json` in the state dir) holds, per series, the exposed
    total and the last value the source reported; it is rewritten atomically after a cycle that
    changed it, so kill -9 at any moment leaves the previous or the new totals.
    """

    FILE = "exporter_counters.json"

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.path = Path(state_dir) / self.FILE
        raw = read_json_state(self.path, {})
        try:
            self._series = {
                (kind, tuple(key)): (int(total), int(last))
                for kind, rows in raw.items()
                for *key, total, last in rows
            }
        except (AttributeError, TypeError, ValueError):
            raise ParseError(str(self.path), "state file has an unexpected shape") from None

    def apply(self, kind: str, readings: dict[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
        """Fold the source's `readings` for `kind` (`xid`, `sxid`, `records_lost`) and return
        the totals of every series of that kind ever seen (series never disappear).

        The source is carried per event key *without its class* (the last label of an Xid or
        SXid series): a restart under a changed policy or GPU family reads the same events with
        new classes, and only the growth of their sum is new (`fold_classes`). The old class
        keeps what it counted; new events count under the new class.
        """
        groups: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
        for key, value in readings.items():
            key = tuple(key)
            groups.setdefault(key[:-1] if key else (), {})[key] = int(value)
        for base, values in groups.items():
            known = {
                key: self._series[(k, key)]
                for (k, key) in self._series
                if k == kind and (key[:-1] if key else ()) == base
            }
            last = {key: pair[1] for key, pair in known.items()}
            for key, growth in fold_classes(last, values).items():
                total = known.get(key, (0, 0))[0]
                self._series[(kind, key)] = (total + growth, values.get(key, 0))
        return {key: total for (k, key), (total, _) in self._series.items() if k == kind}

    def save(self) -> None:
        """Write the totals atomically (only when they changed since the last save)."""
        rows: dict[str, list[list[Any]]] = {}
        for (kind, key), (total, last) in sorted(self._series.items()):
            rows.setdefault(kind, []).append([*key, total, last])
        data = (json.dumps(rows, sort_keys=True) + "\n").encode()
        if getattr(self, "_saved", None) != data:
            write_atomic(self.path, data)
            self._saved = data


SYSTEM_STATE_DIR = Path("/var/lib/gpuslo")


def default_state_dir() -> Path:
    """/var/lib/gpuslo when it is (or can be made) writable, else $XDG_STATE_HOME/gpuslo
    (~/.local/state/gpuslo)."""
    probe = SYSTEM_STATE_DIR if SYSTEM_STATE_DIR.exists() else SYSTEM_STATE_DIR.parent
    if os.access(probe, os.W_OK):
        return SYSTEM_STATE_DIR
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gpuslo"
