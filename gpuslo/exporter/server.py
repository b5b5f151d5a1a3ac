"""The exporter behind `gpuslo exporter`: serve /metrics on a GPU node (DESIGN.md §4).

Checks run in a background thread (the runner runs each check when its interval is due, 30 s
by default), which wakes every `JOURNAL_POLL_S` or at the shortest check interval, whichever is
shorter; journals are tailed on a thread of their own every `JOURNAL_POLL_S`. A scrape only
reads the latest snapshot and job goodput through `collector.GpusloCollector`; it never runs
a check. A GPU record appended to a followed `--kernel-log` file is judged in process by the
watcher's thread and published at once (`xid_fast`); the loop and the watcher publish under one
lock.

Listening: default `127.0.0.1:9835` (loopback only; 9835 is gpuslo's port). All interfaces must
be asked for by address (`--web.listen-address 0.0.0.0:9835` or `[::]:9835`). HTTP, TLS, basic
auth and the connection limits are `gpuslo.exporter.web.server.MetricsServer`'s; the registry also
holds prometheus_client's `process_*` metrics while serving. SIGTERM and SIGINT stop the loops,
the HTTP server (every connection closed) and the checks cleanly.
Xid/SXid/records-lost counters are carried across restarts in `<state dir>/exporter_counters.json`
(`state.CounterCarry`); job counters are recomputed from the journals at start and never
exposed below their high-water marks (`<state dir>/journal_marks.json`). Every turn of
the check loop touches `<state dir>/exporter.heartbeat` for the liveness probe.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest

from gpuslo import __version__
from gpuslo.errors import UsageError
from gpuslo.exporter.collector import GpusloCollector, Jobs
from gpuslo.exporter.evidence.kernel_log.watch import KernelLogWatcher, watched_source
from gpuslo.exporter.jobs.contract import AllocationSource
from gpuslo.exporter.jobs.journals import JournalTailer, unexpired
from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.exporter.slurm.state import PlatformSampler
from gpuslo.exporter.snapshot import AllocationSourceState, GpuAllocation, GpuInfo, NodeSnapshot
from gpuslo.exporter.state import CounterCarry
from gpuslo.exporter.web.admission import DEFAULT_MAX_CONNECTIONS
from gpuslo.exporter.web.config import WebConfig
from gpuslo.exporter.web.server import LISTEN_BACKLOG, MetricsServer
from gpuslo.exporter.xid_fast import FastXid
from gpuslo.goodput.journal import FINISHED_HOLD_S

log = logging.getLogger(__name__)
DEFAULT_LISTEN = "127.0.0.1:9835"
JOURNAL_POLL_S = 5.0
DEFAULT_MAX_JOBS = 20
__all__ = ["LISTEN_BACKLOG", "Exporter", "parse_listen", "serve", "start_watcher"]
HEARTBEAT_FILE = "exporter.heartbeat"  # touched by every turn of the check loop
# How long a stop waits for each loop: a check cycle is bounded by its checks' deadlines (and
# saves the state it advanced); a journal or job-log read blocked in the kernel cannot be
# cancelled, and its state is written atomically, so the exporter stops without it.
STOP_GRACE_S = {"gpuslo-checks": 30.0, "gpuslo-journals": 3.0}


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT` or `[V6]:PORT` → (host, port). UsageError when the host is empty (all
    interfaces must be named: 0.0.0.0 or ::) or the port is not 0–65535."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host:
        raise UsageError(
            f"--web.listen-address {text!r}: give ADDR:PORT (0.0.0.0:PORT for all interfaces)"
        )
    if not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--web.listen-address {text!r}: port must be a number 0-65535")
    return host, int(port)


class Exporter:
    """The exporter's state and loop, with its I/O passed in.

    Args:
        cycle: runs the checks that are due and returns the new NodeSnapshot (Runner.cycle).
        tailer: follows the job journals, or None.
        carry: keeps kernel-log counters across restarts, or None.
        clock: Unix seconds; max_jobs: bound on exposed jobs (most recent first).
        platform: samples Slurm state, or None.
        allocation_sources: the GPU allocation sources (kubelet, HPC job mapping); each is
            sampled every turn of the loop and reads the inventory through `inventory()`.
        job_logs: follows job logs (`--job-log`), or None; its jobs join the journals' jobs.
        job_hold_s: how long a finished job stays exposed after its last event.
        record: holds the GPU faults of a snapshot in the return-to-service gate without
            stepping it (`ReturnToService.record`); called whenever the kernel-log fast path
            published xid results the gate's cycle did not see, so a fatal Xid published once
            is held even when the log is rotated before the next cycle reads it. None: no gate.
    """

    def __init__(
        self,
        cycle: Callable[[], NodeSnapshot],
        tailer: JournalTailer | None,
        carry: CounterCarry | None = None,
        clock: Callable[[], float] = time.time,
        max_jobs: int = DEFAULT_MAX_JOBS,
        heartbeat: Path | None = None,
        platform: PlatformSampler | None = None,
        allocation_sources: list[AllocationSource] | None = None,
        job_logs: JobLogTailer | None = None,
        job_hold_s: float = FINISHED_HOLD_S,
        record: Callable[[NodeSnapshot], Any] | None = None,
    ) -> None:
        self._record = record
        self._job_logs = job_logs
        self._cycle, self._tailer, self._carry = cycle, tailer, carry
        self._platform = platform
        self.allocation_sources = list(allocation_sources or [])
        self._heartbeat = heartbeat
        self._max_jobs, self._job_hold_s, self._clock = max_jobs, job_hold_s, clock
        self.snapshot: NodeSnapshot | None = None
        self._raw: NodeSnapshot | None = None  # the latest snapshot before the counter carry
        self._publish = threading.Lock()  # the loop and the kernel-log watcher both publish
        self.fast: FastXid | None = None  # judges a followed kernel-log file in process
        self.jobs: Jobs = []
        self.wake = threading.Event()  # set to run due checks now instead of after poll_s
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(
            GpusloCollector(lambda: self.snapshot, lambda: self.jobs, clock, extra=self._extra,
                            allocations=self.allocations)
        )

    def _extra(self) -> list[tuple[str, list[str], float]]:
        """Samples besides the snapshot's: Slurm state, and the journal and job-log errors by
        reason (every reason, zeros included, when journals or job logs are tailed)."""
        samples = list(self._platform.samples()) if self._platform is not None else []
        tailers = [t for t in (self._tailer, self._job_logs) if t is not None]
        if tailers:  # journals and job logs alike (DESIGN §4)
            errors: dict[str, int] = {}
            for tailer in tailers:
                for reason, n in tailer.errors.items():
                    errors[reason] = errors.get(reason, 0) + n
            samples += [("gpuslo_journal_errors_total", [r], n) for r, n in sorted(errors.items())]
        return samples

    def inventory(self) -> tuple[GpuInfo, ...]:
        """The GPUs of the latest snapshot (() before the first cycle)."""
        return self.snapshot.gpus if self.snapshot is not None else ()

    def allocations(self) -> tuple[list[GpuAllocation], list[AllocationSourceState]]:
        """The latest allocations of every source, and every source's state."""
        found: list[GpuAllocation] = []
        for source in self.allocation_sources:
            found += source.allocations()
        return found, [source.state() for source in self.allocation_sources]

    def run_checks(self) -> None:
        """One check cycle; the snapshot is swapped whole, with carried counters (and, with
        the fast path, the xid check's answer brought up to the end of the followed file)."""
        snapshot = self._cycle()
        with self._publish:
            again = False
            if self.fast is not None:
                snapshot, again = self.fast.after_cycle(snapshot)
            self._swap(snapshot)
        if self.fast is not None:
            self.record_faults(snapshot)
        if again:
            self.fast.runner.make_due("xid")
            self.wake.set()

    def publish_xid(self) -> bool:
        """Judge the followed kernel-log file in process and publish the xid check's answer at
        once (the watcher's hook, `xid_fast`); False when the fast path declines (the caller
        then makes the xid check due)."""
        with self._publish:
            if self.fast is None or self._raw is None:
                return False
            snapshot = self.fast.refresh(self._raw)
            if snapshot is None:
                return False
            self._swap(snapshot, save=False)  # an fsync is ~10 ms: the loop saves within poll_s
        self.record_faults(snapshot)  # after publishing: /metrics does not wait for the gate
        return True

    def record_faults(self, snapshot: NodeSnapshot) -> None:
        """Hold the snapshot's GPU faults in the return-to-service gate (`record`); a gate that
        cannot be written is logged, and the next cycle's gate reports it `unknown`."""
        if self._record is None:
            return
        try:
            self._record(snapshot)
        except Exception:  # noqa: BLE001 - keep serving; the cycle's gate fails closed
            log.exception("cannot record the published faults in the return-to-service gate")

    def _swap(self, snapshot: NodeSnapshot, save: bool = True) -> None:
        """Publish `snapshot` with the kernel-log counters carried (under `_publish`), saved
        unless not `save`. Saving later is safe: the xid source's readings are totals, so a
        restart from the last saved (total, reading) pair adds the same growth once."""
        self._raw = snapshot
        if self._carry is not None:
            xid = self._carry.apply("xid", snapshot.xid_events)
            sxid = self._carry.apply("sxid", snapshot.sxid_events)
            lost = self._carry.apply("records_lost", {(): snapshot.kernel_log_records_lost})
            unread = self._carry.apply(  # the source's count under one class-like last label
                "unrecognised", {(s, "line"): n for s, n in snapshot.unrecognised_messages.items()}
            )
            try:
                if save:
                    self._carry.save()
            except OSError:  # keep serving; the counters are still right in memory
                log.exception("cannot save %s", self._carry.path)
            snapshot = _replace(
                snapshot,
                xid_events=xid,
                sxid_events=sxid,
                kernel_log_records_lost=lost.get((), 0),
                unrecognised_messages={key[0]: n for key, n in unread.items()},
            )
        self.snapshot = snapshot

    def poll_journals(self) -> None:
        """Read new journal and job-log lines; the job list (the most recent `max_jobs` of
        both, a journal winning over a log of the same job id) is copied, then swapped whole."""
        jobs: dict[str, Any] = {}
        for tailer in (self._job_logs, self._tailer):
            if tailer is not None:
                tailer.poll()
                jobs.update(tailer.jobs(self._max_jobs))
        if self._tailer is not None or self._job_logs is not None:
            fresh = unexpired(jobs.items(), self._clock(), self._job_hold_s)
            newest = sorted(fresh, key=lambda item: (-item[1].last_event_t, item[0]))
            self.jobs = copy.deepcopy(newest[: self._max_jobs])

    def gpus_of_container(self, namespace: str, pod: str, container: str) -> int | None:
        """GPUs the allocation sources say the container holds now (None: none known)."""
        held = {a.uuid for a in self.allocations()[0]
                if (a.namespace, a.pod, a.container) == (namespace, pod, container)}
        return len(held) or None

    def sample_platform(self) -> None:
        """Sample Slurm state (PlatformSampler), when configured, and every allocation source
        (each turns its own failure into its state)."""
        if self._platform is not None:
            self._platform.sample()
        for source in self.allocation_sources:
            source.sample()

    def journal_loop(self, stop: threading.Event, poll_s: float = JOURNAL_POLL_S) -> None:
        """Until `stop` is set: poll the journals every `poll_s`, on its own thread, so reading
        many or large journals never delays a check (a failing poll is logged and retried)."""
        while not stop.is_set():
            try:
                self.poll_journals()
            except Exception:  # noqa: BLE001 - keep serving; the journal error counter shows it
                log.exception("exporter journal poll failed")
            stop.wait(poll_s)

    def loop(self, stop: threading.Event, poll_s: float = JOURNAL_POLL_S) -> None:
        """Until `stop` is set: run due checks and sample the platform every `poll_s` (journals
        are `journal_loop`'s). A failing cycle is logged and retried; it never ends the loop
        (its checks' heartbeats go stale)."""
        while not stop.is_set():
            for step in (self.run_checks, self.sample_platform):
                try:
                    step()
                except Exception:  # noqa: BLE001 - keep serving; staleness makes it visible
                    log.exception("exporter %s failed", step.__name__)
            self.beat()
            self.wake.wait(poll_s)
            self.wake.clear()

    def beat(self) -> None:
        """Touch the loop's heartbeat file: the Kubernetes liveness probe
        (`python -m gpuslo.cli.liveness`) restarts an exporter whose loop stopped turning even
        though its HTTP server still answers."""
        if self._heartbeat is None:
            return
        try:
            self._heartbeat.touch()
        except OSError:
            log.exception("cannot touch %s", self._heartbeat)

    def exposition(self) -> bytes:
        """The current exposition in Prometheus text format."""
        return generate_latest(self.registry)


def _replace(snapshot: NodeSnapshot, **changes: Any) -> NodeSnapshot:
    return dataclasses.replace(snapshot, **changes)


def start_watcher(exporter: Exporter, runner: Any, context: Any) -> KernelLogWatcher | None:
    """Follow what the xid check reads. A new GPU record in a followed file is judged in process
    at once (`xid_fast`, tens of milliseconds); from /dev/kmsg, or when the fast path declines,
    it makes the xid check due at once (about a second instead of its 30 s interval). None when
    there is no xid check or nothing to follow."""
    source = watched_source(context.kernel_log, Path(context.kmsg_path))
    if source is None or "xid" not in runner.intervals:
        return None
    if not source[1]:
        exporter.fast = FastXid(runner, context.policy_path)

    def on_marker() -> None:
        if exporter.publish_xid():
            return
        runner.make_due("xid")
        exporter.wake.set()

    return KernelLogWatcher(source[0], on_marker, is_kmsg=source[1]).start()


def serve(
    exporter: Exporter,
    host: str,
    port: int,
    poll_s: float,
    web: WebConfig | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    describe: str = "",
    max_per_client: int | None = None,
) -> int:
    """Serve /metrics on `host:port` and run the check and journal loops until SIGTERM or
    SIGINT; returns 0 once both stopped and every connection is closed.

    `web` is the TLS and basic-auth configuration (`web.config.WebConfig`), None for plain HTTP;
    `max_connections` caps open connections and `max_per_client` those of one client address
    (`web.server.MetricsServer`); `describe` is added to the start-up log line. Raises
    UsageError when the address cannot be listened on."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: (stop.set(), exporter.wake.set()))
    ProcessCollector(registry=exporter.registry)
    try:
        server = MetricsServer(exporter.registry, host, port, web,
                               ready=lambda: exporter.snapshot is not None,
                               max_connections=max_connections, max_per_client=max_per_client)
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error}") from None
    scheme = "https" if web is not None and web.tls else "http"
    users = len(web.users) if web is not None else 0
    shown = f"[{host}]" if ":" in host else host
    log.info("gpuslo exporter %s serving %s://%s:%d/metrics (basic auth: %s, at most %d "
             "connections)%s", __version__, scheme, shown, server.address[1],
             f"{users} users" if users else "off", max_connections, describe)
    workers = [
        threading.Thread(target=exporter.loop, args=(stop, poll_s), name="gpuslo-checks"),
        threading.Thread(
            target=exporter.journal_loop, args=(stop, JOURNAL_POLL_S), name="gpuslo-journals"
        ),
    ]
    server.start()
    for worker in workers:
        worker.daemon = True
        worker.start()
    # Wait with a timeout: the kernel may deliver the signal to another thread, and Python runs
    # the handler only when the main thread next executes, which a bare wait() never does (the
    # exporter then ignored SIGTERM until SIGKILL).
    while not stop.wait(0.2):
        pass
    log.info("stopping: signal received")
    server.shutdown()
    for worker in workers:
        worker.join(timeout=STOP_GRACE_S[worker.name])
        if worker.is_alive():  # a daemon thread: the process exits without it
            log.warning("stopping: thread %s still busy after %g s; not waited for",
                        worker.name, STOP_GRACE_S[worker.name])
    return 0
