"""The one way gpuslo reads a file an option names (node config, Xid policy overlay, SLO spec,
log-profile overlay, Slurm health-check config, web config, and the TLS files handed to `ssl`).

An operator's typo or an attacker's file must not hang, crash or stall a command:

- regular files only: the file is opened non-blocking (a FIFO opens at once instead of waiting
  for a writer) and `fstat`ed; a FIFO, a directory, a device (`/dev/zero` never ends) or a socket
  is refused by kind;
- a size cap (`MAX_CONFIG_BYTES`, 1 MiB): PyYAML's pure-Python loader took > 25 s on a 10 MB
  file, libyaml's about 1 s per MB on this 2-core machine under load; the largest file gpuslo
  ships (the log profiles) is 21 kB;
- the nesting depth checked BEFORE anything recursive sees the text: PyYAML's composer and
  constructor recurse once per level (a RecursionError), and its C loader recurses on the C
  stack (a segmentation fault, exit 139) — the depth is measured on libyaml's or PyYAML's event
  stream, which is iterative, and refused past `MAX_DEPTH`;
- no aliases (`*name`): a config is data a person wrote; with aliases a 1 kB file expands to a
  billion nodes for whatever walks it, or refers to itself;
- not UTF-8, not YAML: the line of the first bad byte or token;
- empty (or only comments): a file named on purpose must set something (`empty_file`).

Every failure is one `ConfigError` line naming the file (and line), which the CLI prints and
exits 2 on. `read_config_text(path, what)` is the I/O; `parse_yaml(text, source)` is pure;
`load_yaml(path, what)` is both; `regular_file(path, what)` checks a file another library
will open (TLS certificates). `open_data_file(path)` opens a data file (evidence, a log, a
trace: any size, an anonymous pipe allowed; `-` is standard input, named `<stdin>` by
`data_name`), refusing a FIFO made with `mkfifo`, a device or a socket (never waited on);
a gzip-, xz- or bzip2-compressed one (told by its magic bytes: `kern.log.2.gz`, kubelet's
`0.log.<time>.gz`, logrotate's `compresscmd xz`) is decompressed as it is read
(`gpuslo.compressed`), and a corrupt one, or a zstd one, fails as `CorruptGzip`;
`unreadable_data(path, error)` is the one InputError for a data file that cannot be opened or
read, and `EMPTY_DATA`/`BINARY_DATA` the words for one read with nothing in it, so `gpuslo
goodput` and `gpuslo inspect` say the same thing about the same file.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from gpuslo.compressed import CorruptGzip
from gpuslo.compressed import decompressing as _gunzipped
from gpuslo.errors import ConfigError, InputError, UsageError

if TYPE_CHECKING:
    import yaml

MAX_CONFIG_BYTES = 1024 * 1024
MAX_DEPTH = 32  # the deepest shipped file (log profiles) nests 6 levels
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_config_bytes(path: str | os.PathLike[str], what: str,
                      max_bytes: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the regular file at `path` (`what` names it in errors: "SLO spec", ...).
    Raises ConfigError: missing or unreadable, not a regular file, over `max_bytes`."""
    source = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise ConfigError(f"{source}: cannot read {what} ({error.strerror or error})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(f"{source}: cannot read {what}: {_kind(mode)}, not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise ConfigError(f"{source}: {what} larger than {max_bytes:,} bytes; refused")
        return b"".join(chunks)
    except OSError as error:
        if error.errno == errno.EISDIR:
            raise ConfigError(f"{source}: cannot read {what}: a directory") from None
        raise ConfigError(f"{source}: cannot read {what} ({error.strerror or error})") from None
    finally:
        os.close(fd)


def read_config_text(path: str | os.PathLike[str], what: str,
                     max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """`read_config_bytes` as UTF-8 text. Raises ConfigError (also naming the line of the first
    byte that is not UTF-8)."""
    data = read_config_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text ({what}, byte {error.start}: a "
                          "binary file?)") from None


def regular_file(path: str | os.PathLike[str], what: str) -> Path:
    """`path`, checked to be a readable regular file under the size cap before another library
    (ssl) opens it. Raises ConfigError."""
    read_config_bytes(path, what)
    return Path(path)


STDIN = "-"  # a data file named `-` is standard input, as in cat, grep and `gpuslo inspect`


def stdin_at_most_once(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a list of data files that names `-` (standard input) more than once: it can be
    read only once, and a second read would silently see nothing. Raises UsageError."""
    if sum(str(path) == STDIN for path in paths) > 1:
        raise UsageError("- (standard input) is named more than once; it can be read only once")


def data_name(path: str | os.PathLike[str]) -> str:
    """How a data file is named in documents and errors: `<stdin>` for `-`, else the path."""
    return "<stdin>" if str(path) == STDIN else str(path)


def _pipe_device() -> int:
    """The device number of anonymous pipes (pipefs) on this system."""
    read, write = os.pipe()
    try:
        return os.fstat(read).st_dev
    finally:
        os.close(read)
        os.close(write)


def not_a_log_file(path: str | os.PathLike[str]) -> str | None:
    """Why a data file named by path cannot be a log to read, None when it can (a regular
    file, `-`, an anonymous pipe such as `<(kubectl logs ...)`, whose writer holds it from its
    creation; a missing path or a directory is left to the caller). A FIFO made with `mkfifo`,
    a socket or a device is "not a regular file (a FIFO)": reading a FIFO no one writes to gives
    nothing, which would be reported as an empty log, and a device never ends. Never opens it."""
    if str(path) == STDIN:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISFIFO(st.st_mode) and st.st_dev == _pipe_device():
        return None
    return f"not a regular file ({_kind(st.st_mode)})"


def open_regular_file(path: str | os.PathLike[str]) -> tuple[BinaryIO | None, str]:
    """(`path` opened for reading in binary, "") when it is a regular file, else (None, what it
    is in words: "a FIFO", "a device", ...), for a reader that follows files a glob or a folder
    names (job logs, journals): a FIFO, socket or device among them would block the reading
    thread (a FIFO open waits for a writer, a read for data), so the path is `stat`ed first and
    never opened when it is not regular, and opened non-blocking, then checked again (it may
    have been replaced between the two). Raises OSError (FileNotFoundError when it went away)."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return os.fdopen(fd, "rb"), ""
        os.close(fd)
    return None, _kind(mode)


def open_data_file(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, for a data file an option names (evidence, a
    training log, a trace), which may be large or a pipe (`<(journalctl -k)`), so neither the
    size cap nor the regular-file rule applies. Opened non-blocking, then blocking again: a
    pipe opens at once (never waits for a writer), one with a writer streams.
    `-` is standard input (a copy of descriptor 0, so closing it leaves stdin open), whatever
    it is: the user chose it, and a terminal or `< /dev/null` is read like a pipe.
    A compressed file or stream (gzip, xz, bzip2) is returned decompressing as it is read
    (`compressed.decompressing`; its reads raise `CorruptGzip` where it does not decompress).
    One rule for every data file: a FIFO made with `mkfifo` is refused unopened, as
    `not_a_log_file` words it (read, one nobody writes yet is empty and a late writer is never
    seen: `inspect` said "empty file", exit 1; newcomer4 finding 10); `<(cmd)` is read.
    Raises InputError for a named FIFO, a device or socket (`/dev/zero` never ends) and OSError
    as `open` does (IsADirectoryError for a directory, EBADF for a closed stdin)."""
    if str(path) == STDIN:
        return _gunzipped(os.fdopen(os.dup(0), "rb"), STDIN)
    why = not_a_log_file(path)  # stat only: opening a FIFO would release a writer waiting on it
    if why is not None:
        raise InputError(str(path), f"{why}: not read")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise InputError(str(path), f"{_kind(mode)}, not a file")
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return _gunzipped(handle, str(path))


# byte-order marks of the encodings a text log is written in besides UTF-8 (PowerShell 5's
# `Tee-Object`, `Out-File` and `>` write UTF-16 LE with its BOM); UTF-32 first: its LE mark
# begins with UTF-16 LE's
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def bom_encoding(head: bytes) -> str | None:
    """`utf-16` or `utf-32` when `head` opens with that byte-order mark (Python's codec of that
    name reads the mark and the byte order from it), else None (read as UTF-8). A UTF-32 LE
    mark followed by text is told from UTF-16 LE's by its two NUL bytes."""
    return next((name for bom, name in _BOMS if head.startswith(bom)), None)


def decode_data(data: bytes) -> str:
    """A whole data file's bytes as text: by its byte-order mark (`bom_encoding`), else UTF-8;
    undecodable bytes replaced."""
    return data.decode(bom_encoding(data) or "utf-8", errors="replace")


# A run of NUL bytes this long or longer is padding, not data: what logrotate's `copytruncate`
# leaves where the writer's offset ran past the truncated file's end (the writer goes on at its
# old offset, the file reads as NULs up to it), or a log preallocated and filled later. The
# training-log reader skips such runs on bytes (`goodput.logs.read.strip_nul_runs`, this length).
NUL_PADDING_RUN = 4
_NUL_PADDING = re.compile(f"\0{{{NUL_PADDING_RUN},}}")


def without_nul_padding(text: str) -> str:
    """`text` with every run of `NUL_PADDING_RUN` or more NULs removed (pure): a run at the start
    of the text or of a line is dropped, so the record after it keeps its line number; a run
    inside a line ends that line (the writer went on at an offset past the cut one). Single NULs
    are kept: a file of scattered NULs is still judged binary."""
    if "\0" * NUL_PADDING_RUN not in text:
        return text

    def gap(run: re.Match) -> str:
        start, end = run.span()
        inside = start and text[start - 1] != "\n" and end < len(text) and text[end] != "\n"
        return "\n" if inside else ""

    return _NUL_PADDING.sub(gap, text)


# A data file read with nothing to judge by: the command's answer is `unknown` naming the file
# (exit 1, tests/test_bad_files.py), in the same words from every command that judges one.
EMPTY_DATA = "empty file: nothing to read"
BINARY_DATA = "binary file (control bytes, not text): not read"


def unreadable_data(path: str | os.PathLike[str], error: OSError) -> InputError:
    """The InputError for a data file `open_data_file` could not open or read (the CLI prints
    it as one line and exits 2), the same words from every command: `FILE: cannot read: no
    such file`, `... permission denied`, `FILE: is a directory, not a file`, or `FILE: cannot
    read: <strerror>`."""
    path = data_name(path)
    if isinstance(error, CorruptGzip):
        return InputError(path, f"cannot read: {error.strerror}")
    if isinstance(error, IsADirectoryError):
        return InputError(path, "is a directory, not a file")
    if isinstance(error, FileNotFoundError):
        return InputError(path, "cannot read: no such file")
    if isinstance(error, PermissionError):
        return InputError(path, "cannot read: permission denied")
    return InputError(path, f"cannot read: {error.strerror or error}")


def _yaml():
    """(PyYAML, its safe loader: libyaml's where built), imported at the first parse: a command
    that reads no YAML file (`gpuslo report` without `--slo`) does not load it."""
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, source: str, max_depth: int = MAX_DEPTH) -> Any:
    """`text` as YAML (pure; safe types only). Raises ConfigError on one line,
    `source:line: ...`: not YAML, nested deeper than `max_depth`, or holding an alias."""
    _check_events(text, source, max_depth)
    yaml, loader = _yaml()
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader (C or Python)
    except yaml.YAMLError as error:
        raise _yaml_error(error, text, source) from None
    except RecursionError:  # not expected after the depth check; kept fail-closed
        raise ConfigError(f"{source}: nested too deeply") from None


def load_yaml(path: str | os.PathLike[str], what: str) -> Any:
    """The YAML file at `path` (see the module docstring), never None: a file that sets nothing
    is `empty_file`'s error. Raises ConfigError."""
    data = parse_yaml(read_config_text(path, what), str(path))
    if data is None:
        raise empty_file(str(path), what)
    return data


def empty_file(source: str, what: str) -> ConfigError:
    """The error for a file an option names on purpose that sets nothing (empty, only comments,
    `null`): never read as "the defaults", which leaving the option out gives (a config
    management template rendered empty would otherwise turn `drain: true` off unseen)."""
    return ConfigError(f"{source}: empty {what} (no field set); leave the option out for the "
                       "defaults")


def _check_events(text: str, source: str, max_depth: int) -> None:
    depth = 0
    yaml, loader = _yaml()
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    raise ConfigError(f"{_where(source, event)}: nested deeper than {max_depth} "
                                      "levels; refused")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                raise ConfigError(f"{_where(source, event)}: YAML alias *{event.anchor} is not "
                                  "accepted in a config file (write the value out)")
    except yaml.YAMLError as error:
        raise _yaml_error(error, text, source) from None


def _where(source: str, event: yaml.Event) -> str:
    mark = getattr(event, "start_mark", None)
    return source if mark is None else f"{source}:{mark.line + 1}"


def _yaml_error(error: yaml.YAMLError, text: str, source: str) -> ConfigError:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line = mark.line + 1 if mark else None
    if isinstance(error, _yaml()[0].reader.ReaderError):
        line = text.count("\n", 0, error.position) + 1
    why = getattr(error, "problem", None) or getattr(error, "reason", None) or type(error).__name__
    where = source if line is None else f"{source}:{line}"
    return ConfigError(f"{where}: not valid YAML ({' '.join(str(why).split())})")
