"""What the command line shows a person: usage errors in one line, numeric flags with bounds, and
progress for commands that take more than a couple of seconds.

- `Parser`: argparse's parser whose `error` prints one line, `gpuslo report: error: argument
  --format: ...; see gpuslo report --help`, and exits 2 (argparse prints the whole usage, 7 lines
  for `gpuslo check`, before the error).
- `number(lo, hi, unit)`: an argparse `type` for a finite float in [lo, hi]; NaN, infinities and
  values out of range are usage errors naming the bounds (`--check-timeout 1e12` overflowed the
  event loop's timeout; `--price-per-gpu-hour inf` broke the JSON).
- `directory(path, flag)`: a flag that names a directory to write into (`--out`,
  `--state-dir`) is a usage error, `--out FILE: not a directory`, when a file (or a FIFO, ...)
  stands there or above it, before any work starts (it was a NotADirectoryError traceback, a
  FileExistsError per check, or "File exists" after the whole computation).
- `stages(names, what)`: a tqdm bar on stderr that advances through named stages; off when
  stderr is not a terminal (pipes, CI, tests), so output stays clean where it is captured.
- `reader_may_leave()`: standard output whose reader may close it early (`gpuslo inspect F |
  head -1`, `| grep -q`, `| true`): what is left to print is dropped, and the command runs on
  to its own exit status (a closed pipe exited 0 on an unhealthy node, newcomer4 finding 1).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from gpuslo.errors import UsageError


class Parser(argparse.ArgumentParser):
    """argparse.ArgumentParser with one-line usage errors (exit 2). `hint` names the help to
    read; subparsers inherit the class and get `<prog> --help`."""

    hint: str | None = None
    name: str | None = None  # the command a top-level parser reports for

    def error(self, message: str):
        hint = self.hint or f"{self.prog} --help"
        self.exit(2, f"{self.name or self.prog}: error: {message}; see {hint}\n")


def number(lo: float, hi: float, unit: str) -> Callable[[str], float]:
    """An argparse type: a finite float in [lo, hi] (`unit` names it in the error)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"expected {lo:,.15g} to {hi:,.15g} {unit}, got {text!r}"
            )
        return value

    return parse


def whole(lo: int, hi: int, unit: str) -> Callable[[str], int]:
    """An argparse type: a whole number in [lo, hi] (`unit` names it in the error), so a value
    a later stage would refuse is a one-line usage error (exit 2) here, not a traceback there."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of {unit}, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected {lo:,} to {hi:,} {unit}, got {text!r}")
        return value

    return parse


def directory(path: str | os.PathLike[str], flag: str) -> Path:
    """`path` as the directory a flag names; UsageError `FLAG PATH: not a directory` when
    something else stands at `path` or at its nearest existing ancestor (a missing directory is
    fine: its writer creates it)."""
    target = Path(path)
    probe = target
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if os.path.lexists(probe) and not probe.is_dir():
        where = "" if probe == target else f" ({probe} is not a directory)"
        raise UsageError(f"{flag} {target}: not a directory{where}")
    return target


@contextlib.contextmanager
def stages(names: Sequence[str], what: str) -> Iterator[Callable[[str], None]]:
    """A progress bar over `names` (stderr, only on a terminal); yields `step(name)`, called as
    each named stage starts. Off a terminal there is no bar, and tqdm is not imported."""
    if not sys.stderr.isatty():
        yield lambda name: None
        return
    from tqdm import tqdm  # third-party, imported here: every command pays for the CLI module

    bar = tqdm(
        total=len(names),
        desc=what,
        unit="stage",
        file=sys.stderr,
        leave=False,
        bar_format="{desc}{n_fmt}/{total_fmt} {bar} {elapsed}",  # desc ends in ": "
    )
    started = [False]

    def step(name: str) -> None:
        if started[0]:
            bar.update(1)
        started[0] = True
        bar.set_description(f"{what}: {name}")

    try:
        yield step
        if not bar.disable:
            bar.update(bar.total - bar.n)
    finally:
        bar.close()


class _ReaderMayLeave:
    """A stream (standard output, text or its binary `buffer`) whose writes and flushes survive
    the reader closing the pipe: the first BrokenPipeError points the file descriptor at
    /dev/null (what is still buffered or printed later goes nowhere, and the interpreter's last
    flush cannot fail) and marks `gone[0]`; every other attribute is the stream's."""

    def __init__(self, stream, gone: list[bool]):
        self._stream = stream
        self._gone = gone

    def _drop(self) -> None:
        self._gone[0] = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def write(self, data):
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            self._drop()
            return len(data)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()
            self._stream.flush()  # what the failed flush kept, now into /dev/null

    @property
    def buffer(self):
        return _ReaderMayLeave(self._stream.buffer, self._gone)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """Standard output as `_ReaderMayLeave` for the command run inside (it and its `buffer`
    share one `gone` flag, set once the reader closed the pipe). Flushed on the way out, so a
    reader that left after the last print is met here, not in the interpreter's exit. A closed
    pipe is not the command's answer: the command runs on, and its exit status stays the verdict
    (0/1) or its error (2), whatever happened to what it printed. Does nothing when standard
    output has no file descriptor (a test's capture)."""
    gone = [False]
    original = sys.stdout
    try:
        original.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    sys.stdout = _ReaderMayLeave(original, gone)
    try:
        yield
    finally:
        try:
            sys.stdout.flush()
        finally:
            sys.stdout = original
