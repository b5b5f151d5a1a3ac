"""`gpuslo exporter`: serve /metrics on a GPU node (DESIGN.md §4, issue 4).

Checks run in a background thread (the runner runs each check when its interval is due, 30 s by
default); journals are tailed on the same thread; the thread wakes every `JOURNAL_POLL_S` or at
the shortest check interval, whichever is shorter. A scrape only reads the
latest snapshot and job goodput through `collector.GpusloCollector` — it never runs a check.

Listening: default `127.0.0.1:9835` (loopback only; 9835 is gpuslo's port). All interfaces must be
asked for by address (`--listen 0.0.0.0:9835` or `[::]:9835`). TLS and client certificates use
prometheus_client's `start_http_server(certfile=, keyfile=, client_cafile=,
client_auth_required=)`. SIGTERM and SIGINT stop the loop, the HTTP server and the checks cleanly.
Xid/SXid/records-lost counters are carried across restarts in `<state dir>/exporter_counters.json`
(`state.CounterCarry`); job counters are recomputed from the journals at start. Every turn of
the check loop touches `<state dir>/exporter.heartbeat` for the liveness probe.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import logging
import math
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest, start_http_server

from gpuslo.errors import InputError, UsageError
from gpuslo.exporter.check_command import add_source_arguments, runner_from_args
from gpuslo.exporter.collector import GpusloCollector, Jobs
from gpuslo.exporter.journals import JournalTailer
from gpuslo.exporter.kernel_log_watch import KernelLogWatcher, watched_source
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.exporter.state import CounterCarry

log = logging.getLogger(__name__)
DEFAULT_LISTEN = "127.0.0.1:9835"
JOURNAL_POLL_S = 5.0
DEFAULT_MAX_JOBS = 20
# prometheus_client's server listens with socketserver's backlog of 5: with more concurrent
# scrapers than that, connections wait for SYN retransmits (1 s, 3 s). Listen deeper.
LISTEN_BACKLOG = 128
HEARTBEAT_FILE = "exporter.heartbeat"  # touched by every turn of the check loop


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT` or `[V6]:PORT` → (host, port). UsageError when the host is empty (all
    interfaces must be named: 0.0.0.0 or ::) or the port is not 0–65535."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host:
        raise UsageError(f"--listen {text!r}: give ADDR:PORT (0.0.0.0:PORT for all interfaces)")
    if not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {text!r}: port must be a number 0-65535")
    return host, int(port)


class Exporter:
    """The exporter's state and loop, with its I/O passed in.

    Args:
        cycle: runs the checks that are due and returns the new NodeSnapshot (Runner.cycle).
        tailer: follows the job journals, or None.
        carry: keeps kernel-log counters across restarts, or None.
        clock: Unix seconds; max_jobs: bound on exposed jobs (most recent first).
    """

    def __init__(self, cycle: Callable[[], NodeSnapshot], tailer: JournalTailer | None,
                 carry: CounterCarry | None = None, clock: Callable[[], float] = time.time,
                 max_jobs: int = DEFAULT_MAX_JOBS, heartbeat: Path | None = None) -> None:
        self._cycle, self._tailer, self._carry = cycle, tailer, carry
        self._heartbeat = heartbeat
        self._max_jobs = max_jobs
        self.snapshot: NodeSnapshot | None = None
        self.jobs: Jobs = []
        self.wake = threading.Event()  # set to run due checks now instead of after poll_s
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(GpusloCollector(lambda: self.snapshot, lambda: self.jobs, clock))

    def run_checks(self) -> None:
        """One check cycle; the snapshot is swapped whole, with carried counters."""
        snapshot = self._cycle()
        if self._carry is not None:
            xid = self._carry.apply("xid", snapshot.xid_events)
            sxid = self._carry.apply("sxid", snapshot.sxid_events)
            lost = self._carry.apply("records_lost", {(): snapshot.kernel_log_records_lost})
            try:
                self._carry.save()
            except OSError:  # keep serving; the counters are still right in memory
                log.exception("cannot save %s", self._carry.path)
            snapshot = _replace(snapshot, xid_events=xid, sxid_events=sxid,
                                kernel_log_records_lost=lost.get((), 0))
        self.snapshot = snapshot

    def poll_journals(self) -> None:
        """Read new journal lines; the job list is copied, then swapped whole."""
        if self._tailer is not None:
            self._tailer.poll()
            self.jobs = copy.deepcopy(self._tailer.jobs(self._max_jobs))

    def loop(self, stop: threading.Event, poll_s: float = JOURNAL_POLL_S) -> None:
        """Until `stop` is set: run due checks and poll journals every `poll_s`. A failing cycle
        is logged and retried; it never ends the loop (its checks' heartbeats go stale)."""
        while not stop.is_set():
            for step in (self.run_checks, self.poll_journals):
                try:
                    step()
                except Exception:  # noqa: BLE001 - keep serving; staleness makes it visible
                    log.exception("exporter %s failed", step.__name__)
            self.beat()
            self.wake.wait(poll_s)
            self.wake.clear()

    def beat(self) -> None:
        """Touch the loop's heartbeat file: the Kubernetes liveness probe
        (`python -m gpuslo.exporter.liveness`) restarts an exporter whose loop stopped turning even
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



def configure(parser: argparse.ArgumentParser) -> None:
    """Add the exporter's flags and every source flag of `gpuslo check`."""
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="ADDR:PORT",
                        help=f"address to serve /metrics on (default {DEFAULT_LISTEN}, loopback "
                        "only; 0.0.0.0:9835 or [::]:9835 for all interfaces)")
    parser.add_argument("--interval", type=float, default=None, metavar="SECONDS",
                        help="check interval for every check (default: each check's own, 30 s)")
    parser.add_argument("--journal-dir", type=Path, default=None, metavar="DIR",
                        help="directory of job goodput journals (<job>.jsonl) to tail")
    parser.add_argument("--max-jobs", type=int, default=DEFAULT_MAX_JOBS, metavar="N",
                        help=f"expose at most N jobs, most recent first (default {DEFAULT_MAX_JOBS})")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS with this cert")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="private key of --tls-cert")
    parser.add_argument("--tls-client-ca", type=Path, metavar="FILE",
                        help="require client certificates signed by this CA")
    parser.add_argument("--once", action="store_true",
                        help="run one cycle, print the exposition to stdout and exit")
    add_source_arguments(parser)


def _validate(args: argparse.Namespace) -> None:
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    if args.tls_client_ca is not None and args.tls_cert is None:
        raise UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    for path in (args.tls_cert, args.tls_key, args.tls_client_ca):
        if path is not None and not path.is_file():
            raise InputError(str(path), "no such file")
    if args.interval is not None and not (math.isfinite(args.interval) and args.interval > 0):
        raise UsageError("--interval must be a positive number of seconds")
    if args.max_jobs < 0:
        raise UsageError("--max-jobs must be 0 or more")


def build_exporter(args: argparse.Namespace) -> tuple[Exporter, Any]:
    """The Exporter for `args` and its Runner (which the caller closes)."""
    runner = runner_from_args(args, interval_s=args.interval)
    context = runner.context
    try:
        Path(context.state_dir).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        runner.close()
        raise InputError(str(context.state_dir), f"state dir not writable ({error})") from None
    tailer = JournalTailer(args.journal_dir) if args.journal_dir else None
    carry = CounterCarry(context.state_dir)
    heartbeat = Path(context.state_dir) / HEARTBEAT_FILE
    return Exporter(runner.cycle, tailer, carry, max_jobs=args.max_jobs, heartbeat=heartbeat), runner


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT (exit 0), or with --once print one exposition (exit 0)."""
    _validate(args)
    host, port = parse_listen(args.listen)
    exporter, runner = build_exporter(args)
    try:
        if args.once:
            exporter.run_checks()
            exporter.poll_journals()
            sys.stdout.buffer.write(exporter.exposition())
            sys.stdout.flush()
            return 0
        poll_s = min([JOURNAL_POLL_S, *runner.intervals.values()])
        watcher = start_watcher(exporter, runner, runner.context)
        try:
            return _serve(exporter, host, port, args, poll_s)
        finally:
            if watcher is not None:
                watcher.close()
    finally:
        runner.close()


def start_watcher(exporter: Exporter, runner: Any, context: Any) -> KernelLogWatcher | None:
    """Follow what the xid check reads, so a new GPU record makes the xid check due at once
    (detection in about a second instead of at its 30 s interval). None when there is no xid
    check or nothing to follow."""
    source = watched_source(context.kernel_log, Path(context.kmsg_path))
    if source is None or "xid" not in runner.intervals:
        return None

    def on_marker() -> None:
        runner.make_due("xid")
        exporter.wake.set()

    return KernelLogWatcher(source[0], on_marker, is_kmsg=source[1]).start()


def _serve(exporter: Exporter, host: str, port: int, args: argparse.Namespace,
           poll_s: float) -> int:
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: (stop.set(), exporter.wake.set()))
    tls: dict[str, Any] = {}
    if args.tls_cert:
        tls = {"certfile": str(args.tls_cert), "keyfile": str(args.tls_key)}
    if args.tls_client_ca:
        tls.update(client_cafile=str(args.tls_client_ca), client_auth_required=True)
    try:
        server, _ = start_http_server(port, addr=host, registry=exporter.registry, **tls)
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error}") from None
    server.socket.listen(LISTEN_BACKLOG)
    log.info("serving /metrics on %s:%d", host, port)
    worker = threading.Thread(target=exporter.loop, args=(stop, poll_s), name="gpuslo-checks",
                              daemon=True)
    worker.start()
    stop.wait()
    server.shutdown()
    server.server_close()
    worker.join(timeout=30)
    return 0
