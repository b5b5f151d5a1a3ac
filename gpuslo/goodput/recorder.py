"""The `Recorder` a training loop's local rank 0 uses on each node (DESIGN.md §5); it writes
the journal of `gpuslo.goodput.journal` and folds it with `gpuslo.goodput.calculator`, the pure
calculator shared by the exporter and the SLO engine. The only module that imports OpenTelemetry.

The Recorder appends schema-versioned JSON lines to `<journal_dir>/<job_id>.jsonl`, flushes every
line it writes and fsyncs at checkpoints and at job end. Step events are coalesced: one line per
`coalesce_steps` steps or `coalesce_s` seconds (first/last step and time kept), so a week of 1 s
steps writes about 10 080 lines (≈1.1 MB, measured in tests/test_goodput_recorder.py) instead of
604 800. A crash loses at most the steps of the open coalescing window (their time is still
accounted: it becomes wasted progress and recovery at the restart).

Failing closed without failing the job: construction errors are one type, `RecorderError` (bad
job id, a directory or journal that cannot be created or read; lines of an old journal that are
not valid, not UTF-8 included, are skipped). After construction nothing the disk does raises into
the training loop: a write or fsync that fails (ENOSPC, EIO) is counted in `write_errors`, logged
once per streak, and the unwritten lines are retried at the next event; a journal (or its
directory) deleted mid-run is recreated with every line written so far, so it stays whole.
Arguments that are programming errors (an unknown phase or status) still raise ValueError.

When the process has an OpenTelemetry MeterProvider (or one is passed in), the Recorder also
records `gpuslo.job.gpu_seconds` (counter, unit s, attributes job and category),
`gpuslo.job.interruptions` (counter, attributes job and layer) and `gpuslo.job.step` (gauge:
last committed step), computed by the same calculator from the events it writes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from opentelemetry import metrics

from gpuslo import names
from gpuslo.errors import RecorderError
from gpuslo.files import write_atomic
from gpuslo.goodput.calculator import GoodputState, JobGoodput
from gpuslo.goodput.journal import (
    END_STATUSES,
    PHASES,
    SCHEMA_VERSION,
    encode_line,
    journal_path,
    parse_journal,
    validate_job_id,
)

__all__ = ["Recorder", "RecorderError"]
log = logging.getLogger(__name__)
MAX_UNWRITTEN = 100_000  # lines kept for a retry while the disk refuses them (about 10 MB)

class Recorder:
    """Records one job's events on one node.

    Args:
        journal_dir: directory of journals (created if missing); the exporter's `--journal-dir`.
        job_id: validated by `validate_job_id` (ValueError when unsafe or longer than 128).
        node: node name written into `job_start` (default: the host name).
        clock: returns Unix seconds; injected for tests.
        coalesce_steps, coalesce_s: write one `steps` line per this many steps or seconds.
        meter_provider: OpenTelemetry MeterProvider; default the process's global one (a no-op
            unless the application set one).
    Raises RecorderError when the job id is invalid or the journal cannot be created or read.
    """

    def __init__(
        self,
        journal_dir: str | os.PathLike[str],
        job_id: str,
        *,
        node: str | None = None,
        clock: Callable[[], float] = time.time,
        coalesce_steps: int = 1000,
        coalesce_s: float = 60.0,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        try:
            self.job_id = validate_job_id(job_id)
        except ValueError as error:
            raise RecorderError(f"job id {str(job_id)[:40]!r}: {error}") from None
        self.node = node if node is not None else os.uname().nodename
        self.path = journal_path(journal_dir, job_id)
        self._clock = clock
        self._coalesce_steps, self._coalesce_s = coalesce_steps, coalesce_s
        self._pending: dict[str, Any] | None = None
        self._state = GoodputState()
        self._lines: list[str] = []  # every line of the journal, to recreate a deleted one
        self._unwritten: list[str] = []  # lines the disk refused, retried at the next event
        self.write_errors = 0  # writes and fsyncs the disk refused (each retried)
        self._failing = False  # logged once per streak of failures
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():  # a restarted process: continue the accounting of the journal
                for event in parse_journal(self.path.read_bytes(), str(self.path))[0]:
                    self._state.apply(event)
                    self._lines.append(encode_line(event))
            self._file = self._open()
        except OSError as error:
            raise RecorderError(f"{self.path}: cannot open the journal ({error})") from None
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("gpuslo.goodput")
        self._seconds = meter.create_counter(
            "gpuslo.job.gpu_seconds", unit="s", description="GPU-seconds by goodput category"
        )
        self._interruptions = meter.create_counter(
            "gpuslo.job.interruptions", description="Job interruptions by layer"
        )
        self._step = meter.create_gauge("gpuslo.job.step", description="Last committed step")

    # -- the training loop's API ------------------------------------------------------------
    def job_start(self, gpus: int) -> None:
        """The job (or a fresh process of it) starts using `gpus` GPUs on this node."""
        self._write("job_start", job=self.job_id, node=self.node, gpus=int(gpus))

    def restart(self, from_step: int, gpus: int | None = None, layer: str | None = None) -> None:
        """The job restarts from the checkpoint at `from_step` after an interruption; `layer`
        names the layer of the fault when the caller knows it."""
        extra = {k: v for k, v in (("gpus", gpus), ("layer", layer)) if v is not None}
        self._write("restart", from_step=int(from_step), **extra)

    @contextlib.contextmanager
    def phase(self, category: str) -> Iterator[None]:
        """Time spent inside the block goes to `category` (one of `PHASES`; ValueError else)."""
        if category not in PHASES:
            raise ValueError(f"phase {category!r} is not one of {PHASES}")
        self._write("phase_start", category=category)
        try:
            yield
        finally:
            self._write("phase_end", category=category)

    def step(
        self, n: int, *, step_time_s: float | None = None, compute_s: float | None = None
    ) -> None:
        """Step `n` finished now. Coalesced; written with the next event or window end.

        step_time_s: the step's duration as the loop measured it (seconds); without it the
            calculator derives each interval's step time from the progress time.
        compute_s: this node's compute time in the step (seconds, e.g. forward + backward +
            optimizer of its ranks, without waiting in collectives), from per-rank section
            timings: the exporter publishes its mean as `gpuslo_job_step_compute_seconds` for
            straggler scores. A window's `steps` event carries the mean of each value only when
            every step of the window gave it. ValueError for a negative or non-finite value.
        """
        for name, value in (("step_time_s", step_time_s), ("compute_s", compute_s)):
            if value is not None and not 0 <= float(value) < float("inf"):
                raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
        t = self._clock()
        if self._pending is None:
            self._pending = {"first_step": int(n), "first_t": t, "count": 0,
                             "step_time_s": 0.0, "compute_s": 0.0}
        pending = self._pending
        pending.update(step=int(n), t=t, count=pending["count"] + 1)
        for name, value in (("step_time_s", step_time_s), ("compute_s", compute_s)):
            pending[name] = None if value is None or pending[name] is None else (
                pending[name] + float(value))
        if (pending["count"] >= self._coalesce_steps
                or t - pending["first_t"] >= self._coalesce_s):
            self._flush_steps()

    def checkpoint(self, step: int) -> None:
        """A checkpoint of `step` finished and is durable: commits progress (fsync)."""
        self._write("checkpoint", step=int(step))
        self._sync()

    def job_end(self, status: str = "completed", layer: str | None = None) -> None:
        """The job ends with `status` (one of `END_STATUSES`); fsyncs and closes the journal."""
        if status not in END_STATUSES:
            raise ValueError(f"status {status!r} is not one of {END_STATUSES}")
        if layer is not None and layer not in names.LAYERS:
            raise ValueError(f"layer {layer!r} is not one of {names.LAYERS}")
        self._write("job_end", status=status, **({"layer": layer} if layer else {}))
        self.close()

    def close(self) -> None:
        """Write pending steps, fsync and close (idempotent; never raises for I/O)."""
        if self._closed:
            return
        self._flush_steps()
        self._sync()
        self._closed = True
        with contextlib.suppress(OSError):
            self._file.close()

    @property
    def goodput(self) -> JobGoodput:
        """The accounting of everything written so far."""
        return self._state.result

    # -- internals --------------------------------------------------------------------------
    def _flush_steps(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            for name in ("step_time_s", "compute_s"):  # sums -> means, or left out
                total = pending.pop(name)
                if total is not None:
                    pending[name] = round(total / pending["count"], 9)
            self._emit({"v": SCHEMA_VERSION, "t": pending.pop("t"), "event": "steps", **pending})

    def _write(self, kind: str, **fields: Any) -> None:
        self._flush_steps()
        self._emit({"v": SCHEMA_VERSION, "t": self._clock(), "event": kind, **fields})

    def _emit(self, event: dict[str, Any]) -> None:
        line = encode_line(event)
        self._lines.append(line)
        self._unwritten.append(line)
        self._observe(event)
        self._retry()

    # -- the journal file: never raises after construction ----------------------------------
    def _open(self) -> Any:
        """Open the journal for appending; end a line a crash cut short."""
        handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        if handle.tell():
            with open(self.path, "rb") as existing:
                existing.seek(-1, os.SEEK_END)
                if existing.read(1) != b"\n":
                    handle.write("\n")  # so the next event stays a whole line
        return handle

    def _needs_rewrite(self) -> bool:
        """True after a failed write (the file is closed) or when the journal was deleted or
        replaced under us: writes to an unlinked file would "succeed" and vanish."""
        if isinstance(self._file, _Closed):
            return True
        try:
            return os.stat(self.path).st_ino != os.fstat(self._file.fileno()).st_ino
        except FileNotFoundError:
            return True

    def _rewrite(self) -> None:
        """Write the whole journal again, atomically (directory recreated), and reopen it: after
        a failed write or a deletion nothing is lost and no line is doubled."""
        with contextlib.suppress(OSError):
            self._file.close()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, "".join(self._lines).encode())
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._unwritten, self._failing = [], False
        log.warning("journal %s rewritten with its %d lines", self.path, len(self._lines))

    def _retry(self) -> None:
        """Write the unwritten lines; on OSError count it, log once and keep them for later."""
        if self._closed:
            return
        try:
            if self._needs_rewrite():
                self._rewrite()
            elif self._unwritten:
                self._file.write("".join(self._unwritten))
                self._file.flush()
        except OSError as error:
            self._failed(error)
            return
        self._unwritten = []

    def _sync(self) -> None:
        self._retry()
        if self._unwritten or self._closed:
            return
        try:
            os.fsync(self._file.fileno())
        except OSError as error:
            self._failed(error)

    def _failed(self, error: OSError) -> None:
        if not self._failing:
            log.warning("journal %s: cannot write (%s); the job goes on and the journal is "
                        "rewritten at the next event", self.path, error)
        self._failing = True
        self.write_errors += 1
        del self._unwritten[:-MAX_UNWRITTEN]
        with contextlib.suppress(OSError, ValueError):
            self._file.close()
        self._file = _Closed()

    def _observe(self, event: dict[str, Any]) -> None:
        before = dict(self._state.result.gpu_seconds), dict(self._state.result.interruptions)
        self._state.apply(event)
        result, attrs = self._state.result, {"job": self.job_id}
        for category, value in result.gpu_seconds.items():
            if value > before[0][category]:
                self._seconds.add(value - before[0][category], {**attrs, "category": category})
        for layer, count in result.interruptions.items():
            if count > before[1][layer]:
                self._interruptions.add(count - before[1][layer], {**attrs, "layer": layer})
        if result.committed_step >= 0:
            self._step.set(result.committed_step, attrs)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Closed:
    """Stands for a journal file that failed: every use raises OSError, so the next event
    reopens it."""

    closed = True

    def fileno(self) -> int:
        raise OSError("journal not open")

    def close(self) -> None:
        return None
