"""`gpuslo exporter`: serve /metrics on a GPU node (DESIGN.md §4): the flags, then
`gpuslo.exporter.server`.

Listening: default `127.0.0.1:9835` (loopback only; 9835 is gpuslo's port). All interfaces must
be asked for by address (`--web.listen-address 0.0.0.0:9835` or `[::]:9835`; `--listen` is an
alias). `--web.config.file` takes exporter-toolkit's web config (TLS, client certificates,
basic auth with bcrypt hashes; `gpuslo.exporter.web`). SIGTERM and SIGINT stop the loop,
the HTTP server and the checks cleanly; `--once` runs one cycle and prints the exposition.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import math
import signal
import socket
import ssl
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuslo.cli.slurm_check import node_name
from gpuslo.cli.sources import (
    add_source_arguments,
    gate_from_args,
    node_config,
    runner_from_args,
)
from gpuslo.config_file import regular_file
from gpuslo.errors import GpusloError, InputError, UsageError
from gpuslo.exporter.evidence.kubelet.pod_resources import DEFAULT_SOCKET
from gpuslo.exporter.jobs.allocations import KubeletAllocations
from gpuslo.exporter.jobs.contract import AllocationSource
from gpuslo.exporter.jobs.hpc import HpcJobAllocations
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.exporter.jobs.logs import DEFAULT_SETTLE_S, JobLogTailer
from gpuslo.exporter.server import (
    DEFAULT_LISTEN,
    DEFAULT_MAX_JOBS,
    HEARTBEAT_FILE,
    JOURNAL_POLL_S,
    Exporter,
    parse_listen,
    serve,
    start_watcher,
)
from gpuslo.exporter.slurm.state import PlatformSampler
from gpuslo.exporter.snapshot import GpuInfo
from gpuslo.exporter.state import CounterCarry
from gpuslo.exporter.web.admission import DEFAULT_MAX_CONNECTIONS
from gpuslo.exporter.web.config import WebConfig, load_web_config
from gpuslo.goodput.journal import FINISHED_HOLD_S
from gpuslo.goodput.slowdown import SlowdownRule
from gpuslo.slo_spec import load_spec


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the exporter's flags, in named groups (httpie's cli/definition.py), and every source
    flag of `gpuslo check`."""
    _web_flags(parser.add_argument_group("web (where and how /metrics is served)"))
    _check_flags(parser.add_argument_group("checks"))
    _job_flags(parser.add_argument_group("jobs (GPU allocations and job goodput)"))
    _slurm_flags(parser.add_argument_group("Slurm"))
    add_source_arguments(parser.add_argument_group("sources and expectations (as `gpuslo check`)"))


def _web_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--web.listen-address", "--listen", dest="listen", default=DEFAULT_LISTEN,
        metavar="ADDR:PORT",
        help=f"address to serve /metrics on (default {DEFAULT_LISTEN}, loopback "
        "only; 0.0.0.0:9835 or [::]:9835 for all interfaces); --listen is an alias",
    )
    group.add_argument(
        "--web.config.file", dest="web_config", type=Path, metavar="FILE",
        help="exporter-toolkit web config: tls_server_config (cert_file, key_file, "
        "client_ca_file, client_auth_type, min_version) and basic_auth_users (bcrypt)",
    )
    group.add_argument(
        "--web.max-connections", dest="max_connections", type=int,
        default=DEFAULT_MAX_CONNECTIONS, metavar="N",
        help="open connections at most; the oldest ones still sending a request head, then "
        f"idle, then in the TLS handshake are closed to admit new ones (default "
        f"{DEFAULT_MAX_CONNECTIONS})",
    )
    group.add_argument(
        "--web.max-connections-per-client", dest="max_per_client", type=int, metavar="N",
        help="open connections one client address holds at most (default: no cap; Prometheus "
        "replicas behind one NAT share an address)",
    )
    group.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS with this cert")
    group.add_argument("--tls-key", type=Path, metavar="FILE", help="private key of --tls-cert")
    group.add_argument("--tls-client-ca", type=Path, metavar="FILE",
                       help="require client certificates signed by this CA")


def _check_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--interval", type=float, default=None, metavar="SECONDS",
        help="check interval for every check (default: each check's own, 30 s)",
    )
    group.add_argument(
        "--once", action="store_true", help="run one cycle, print the exposition to stdout and exit"
    )


def _job_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--pod-resources-kubelet-socket", type=Path, metavar="SOCKET",
        help="kubelet pod-resources gRPC socket (Kubernetes: usually "
        f"{DEFAULT_SOCKET}), exported as gpuslo_gpu_allocation{{namespace, pod, container}}",
    )
    group.add_argument(
        "--hpc-job-mapping-dir", type=Path, metavar="DIR",
        help="dcgm-exporter HPC job-mapping dir (one file per GPU index listing "
        "job ids), exported as gpuslo_gpu_allocation{hpc_job}",
    )
    group.add_argument(
        "--journal-dir", type=Path, default=None, metavar="DIR",
        help="directory of job goodput journals (<job>.jsonl) to tail; it must exist "
        "(a missing one is an error at start, exit 2)",
    )
    group.add_argument(
        "--job-log", action="append", default=None, metavar="GLOB",
        help="job logs to read training progress from (repeatable), e.g. "
        "'/var/log/pods/*/*/*.log' (CRI container logs: the job is namespace:pod:container) "
        "or '/shared/slurm-*.out' (the job is the file name); exported as gpuslo_job_*",
    )
    group.add_argument(
        "--job-log-gpus", type=int, default=None, metavar="N",
        help="GPUs of a job-log job the kubelet allocations do not name (default: such a job is "
        "read but not exposed)",
    )
    group.add_argument(
        "--job-log-settle", type=float, default=DEFAULT_SETTLE_S, metavar="SECONDS",
        help=f"count job-log events once they are this old (default {DEFAULT_SETTLE_S:g}: a later "
        "line can still change what the last ones meant)",
    )
    group.add_argument(
        "--max-jobs", type=int, default=DEFAULT_MAX_JOBS, metavar="N",
        help=f"expose at most N jobs, most recent first (default {DEFAULT_MAX_JOBS})",
    )
    group.add_argument(
        "--job-expiry", type=float, default=FINISHED_HOLD_S, metavar="SECONDS",
        help="stop exposing a job this long after it completed or was cancelled (default "
        f"{FINISHED_HOLD_S:g}; a failed job may restart and stays until --max-jobs)",
    )
    group.add_argument(
        "--slo", type=Path, default=None, metavar="FILE",
        help="SLO spec YAML, the file `gpuslo rules` and `gpuslo report` take: its "
        "slowdown_threshold, slowdown_min_intervals and slowdown_reference_intervals decide "
        "which job time the counters split off as `slowdown` (default: the built-in rule)",
    )


def _slurm_flags(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--slurm", action="store_true",
        help="export this node's Slurm state and reason (gpuslo_slurm_node_state)",
    )
    group.add_argument(
        "--scontrol", default="scontrol", metavar="PATH",
        help="scontrol binary for --slurm (default: on PATH)",
    )


def _validate(args: argparse.Namespace) -> None:
    if args.web_config is not None and (args.tls_cert or args.tls_key or args.tls_client_ca):
        raise UsageError("--web.config.file and --tls-* do not go together: put the TLS "
                         "settings in the web config file")
    if args.max_connections < 1:
        raise UsageError("--web.max-connections must be 1 or more")
    if args.max_per_client is not None and args.max_per_client < 1:
        raise UsageError("--web.max-connections-per-client must be 1 or more")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    if args.tls_client_ca is not None and args.tls_cert is None:
        raise UsageError("--tls-client-ca needs --tls-cert and --tls-key")
    for path in (args.tls_cert, args.tls_key, args.tls_client_ca):
        if path is not None:
            regular_file(path, "TLS file")  # ConfigError: missing, a directory, a FIFO, ...
    if args.interval is not None and not (math.isfinite(args.interval) and args.interval > 0):
        raise UsageError("--interval must be a positive number of seconds")
    if args.max_jobs < 0:
        raise UsageError("--max-jobs must be 0 or more")
    if args.job_log_gpus is not None and args.job_log_gpus < 1:
        raise UsageError("--job-log-gpus must be 1 or more")
    if not (math.isfinite(args.job_log_settle) and args.job_log_settle >= 0):
        raise UsageError("--job-log-settle must be 0 or more seconds")
    if not (math.isfinite(args.job_expiry) and args.job_expiry >= 0):
        raise UsageError("--job-expiry must be 0 or more seconds")


def build_exporter(args: argparse.Namespace) -> tuple[Exporter, Any]:
    """The Exporter for `args` and its Runner (which the caller closes). Raises ConfigError for
    a bad --slo spec (before anything starts)."""
    rule = load_spec(getattr(args, "slo", None)).slowdown_rule()
    runner = runner_from_args(args, interval_s=args.interval)
    context = runner.context
    try:
        Path(context.state_dir).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        runner.close()
        raise InputError(str(context.state_dir), f"state dir not writable ({error})") from None
    try:
        tailer = (
            JournalTailer(args.journal_dir, state_dir=context.state_dir, rule=rule)
            if args.journal_dir
            else None
        )
    except GpusloError:
        runner.close()
        raise
    carry = CounterCarry(context.state_dir)
    heartbeat = Path(context.state_dir) / HEARTBEAT_FILE
    platform = platform_sampler(args, runner.node)
    built: list[Exporter] = []
    sources = allocation_sources(args, lambda: built[0].inventory() if built else ())
    job_logs = job_log_tailer(args, context.state_dir, built, rule)
    gate = gate_from_args(args, context, background=not args.once)
    exporter = Exporter(lambda: gate.apply(runner.cycle()), tailer, carry, max_jobs=args.max_jobs,
                        heartbeat=heartbeat,
                        platform=platform, allocation_sources=sources, job_logs=job_logs,
                        job_hold_s=args.job_expiry, record=gate.record)
    built.append(exporter)
    return exporter, runner


def job_log_tailer(args: argparse.Namespace, state_dir: Path, built: list[Exporter],
                   rule: SlowdownRule | None = None) -> JobLogTailer | None:
    """The JobLogTailer for --job-log (and the config's `job_log`), None when none is given;
    a container's GPU count comes from the exporter's allocations (`built[0]` once made);
    `rule` is the --slo spec's slowdown rule."""
    patterns = list(args.job_log or [])
    configured = node_config(args).job_log
    if configured and configured not in patterns:
        patterns.append(configured)
    if not patterns:
        return None

    def gpus_for(identity: Any) -> int | None:
        if identity is None or not built:
            return None
        return built[0].gpus_of_container(identity.namespace, identity.pod, identity.container)

    return JobLogTailer(patterns, state_dir, gpus_for, args.job_log_gpus,
                        clock=time.time, settle_s=args.job_log_settle, rule=rule)


def allocation_sources(args: argparse.Namespace,
                       gpus: Callable[[], tuple[GpuInfo, ...]]) -> list[AllocationSource]:
    """Both allocation sources, each `not_configured` unless its flag (or the config's
    `pod_resources_kubelet_socket`) names it, so the exposition always says which one told;
    `gpus` returns the exporter's latest inventory."""
    config = node_config(args)
    socket_path = args.pod_resources_kubelet_socket or config.pod_resources_kubelet_socket
    return [KubeletAllocations(socket_path, gpus),
            HpcJobAllocations(getattr(args, "hpc_job_mapping_dir", None), gpus)]


def platform_sampler(args: argparse.Namespace, node: str) -> PlatformSampler | None:
    """The PlatformSampler for --slurm, or None when it is not asked. The Slurm NodeName is
    `node` when configured (--node, the config), else $SLURMD_NODENAME, else the short host
    name."""
    if not getattr(args, "slurm", False):
        return None
    slurm_node = None
    if args.slurm:
        configured = node if node != socket.gethostname() else None
        slurm_node = configured or node_name(argparse.Namespace(node=None))
    return PlatformSampler(slurm_node, args.scontrol)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT (exit 0), or with --once print one exposition (exit 0)."""
    _validate(args)
    host, port = parse_listen(args.listen)
    web = web_config_from_args(args)
    exporter, runner = build_exporter(args)
    try:
        if args.once:
            exporter.run_checks()
            exporter.poll_journals()
            exporter.sample_platform()
            sys.stdout.buffer.write(exporter.exposition())
            sys.stdout.flush()
            return 0
        poll_s = min([JOURNAL_POLL_S, *runner.intervals.values()])
        watcher = start_watcher(exporter, runner, runner.context)
        try:
            faulthandler.register(signal.SIGUSR1)  # SIGUSR1: every thread's stack on stderr
            logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                                format="%(asctime)s %(levelname)s %(name)s: %(message)s")
            checks = ", ".join(sorted(runner.intervals))
            journals = f", journals {args.journal_dir}" if args.journal_dir else ""
            describe = f"; checks {checks}; state {runner.context.state_dir}{journals}"
            return serve(exporter, host, port, poll_s, web, args.max_connections, describe,
                         max_per_client=args.max_per_client)
        finally:
            if watcher is not None:
                watcher.close()
    finally:
        runner.close()


def web_config_from_args(args: argparse.Namespace) -> WebConfig | None:
    """The web config of `--web.config.file`, or of the `--tls-*` flags (a client CA means
    RequireAndVerifyClientCert), None for plain HTTP. ConfigError names a bad file or field."""
    if args.web_config is not None:
        return load_web_config(args.web_config)
    if not args.tls_cert:
        return None
    ca = str(args.tls_client_ca) if args.tls_client_ca else None
    config = WebConfig(cert_file=str(args.tls_cert), key_file=str(args.tls_key),
                       client_ca_file=ca, client_auth=ssl.CERT_REQUIRED if ca else ssl.CERT_NONE)
    config.ssl_context()  # a certificate that cannot be loaded stops the exporter at start
    return config
