"""Typed errors raised by the library; `gpuslo.cli` is the only place that turns them into a
one-line message and an exit code (2 for usage and input errors)."""

from __future__ import annotations


class GpusloError(Exception):
    """Base of every error gpuslo raises on purpose. `exit_code` is what the CLI exits with."""

    exit_code = 2


class UsageError(GpusloError):
    """A flag, option or argument combination that cannot work."""


class InputError(GpusloError):
    """An input file, URL or directory that cannot be read at all (missing, unreadable, empty)."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.detail = message


class ParseError(GpusloError):
    """Text that does not have the shape its parser expects.

    `source` names the file (or `<stdin>`, a URL, a command), `line` is 1-based where known,
    `field` names the offending field where known.
    """

    def __init__(
        self, source: str, message: str, line: int | None = None, field: str | None = None
    ) -> None:
        where = source if line is None else f"{source}:{line}"
        if field:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.field = field
        self.detail = message


class ConfigError(GpusloError):
    """A configuration, policy or SLO spec file with an invalid field (the message names it)."""


class DependencyMissing(GpusloError):
    """Something the check needs is not there (binary, library, device file, endpoint)."""


class ToolError(GpusloError):
    """A tool or library answered, but with an error (non-zero exit, HTTP error, NVML error)."""


class SourceUnavailable(GpusloError):
    """A source that could not tell (the kubelet's pod-resources API, scontrol): `reason` is a
    `names.REASONS` word (dependency_missing, check_timeout, tool_error, parse_error; layer
    observability)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class DeadlineExceeded(ToolError):
    """A source's own deadline expired (an HTTP read, a subprocess, an NVML child): the message
    names the deadline in seconds. The runner reports it as `check_timeout`, as it does its own
    deadline, never as `tool_error`."""


class RecorderError(GpusloError):
    """The goodput Recorder cannot start: an invalid job id, a journal directory or journal that
    cannot be created, opened or read. After construction the Recorder never raises for I/O."""
