"""Scrape load on the exporter against a bare prometheus_client server, side by side.

    python bench/exporter_load.py [--duration 30] [--scrapers 50] [--every 1] [--bare-backlog 128]

Starts two servers in child processes on loopback: (1) the gpuslo exporter (`Exporter` with its
background cycle thread running every second) for an 8-GPU node with 9 checks, Xid counters and
20 jobs tailed from Recorder journals; (2) a bare prometheus_client server exposing the same number
of series as plain gauges (the anchor). Each gets `--scrapers` concurrent scrapers (threads, a new
connection per GET) for `--duration` seconds; each scraper scrapes once every `--every` seconds
(1 s: 50 scrapes/s, far above a real fleet's 50 Prometheus replicas at 15 s), staggered, or back
to back with `--every 0` to find saturation (then latency is queueing: scrapers / throughput).
Prints p50/p99 latency, errors and the server's RSS growth for both, and the exporter/bare ratios.
Targets (issue 4): zero errors, p99 < 50 ms, RSS growth < 10 MB, p99 within 1.5x of the bare server.
Both servers listen with the exporter's backlog (`LISTEN_BACKLOG`); `--bare-backlog 0` keeps
prometheus_client's default of 5 for the anchor, which drops SYNs under 50 concurrent connects.

    python bench/exporter_load.py --idle 500

measures issue 12's slow-client case instead: open 500 connections that send nothing (no request,
no TLS hello), then time 20 scrapes, on the exporter's server and on prometheus_client's
`start_http_server` (the anchor), plain and TLS. Target: every exporter scrape under 1 s.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from gpuslo.exporter.web.config import WebConfig
from gpuslo.exporter.web.server import LISTEN_BACKLOG, MetricsServer


def _node(now: float):  # noqa: ANN202
    from gpuslo.exporter.snapshot import GpuInfo, Heartbeat, NodeSnapshot
    from gpuslo.verdict import CheckResult

    gpus = tuple(
        GpuInfo(
            str(i),
            f"GPU-{i:08x}-0000-0000-0000-000000000000",
            f"00000000:{i + 0x10:02x}:00.0",
            "NVIDIA H200",
            "hopper",
        )
        for i in range(8)
    )
    checks = (
        "gpu_inventory",
        "xid",
        "dcgm",
        "gpu_memory",
        "thermal",
        "nvlink",
        "pcie",
        "network_links",
        "gpu_probe",
    )
    results = tuple(
        CheckResult(check=c, scope=g.uuid, status="ok", observed_at=now)
        for c in checks
        for g in gpus
    )
    beats = tuple(Heartbeat(c, 30.0, now, now, 0.2, 100) for c in checks)
    xids = {(g.pci_bus_id, x, "warn"): 1 for g in gpus for x in ("13", "31", "63")}
    return NodeSnapshot(
        node="bench",
        driver_version="580.159.04",
        cuda_version="13.0",
        gpus=gpus,
        results=results,
        heartbeats=beats,
        xid_events=xids,
        network_devices={"efa": 32},
        network_devices_expected={"efa": 32},
        taken_at=now,
    )


def serve_exporter(port: int, certs: str = "") -> None:
    from gpuslo.exporter.jobs.journals import JournalTailer
    from gpuslo.exporter.server import Exporter
    from gpuslo.exporter.state import CounterCarry
    from gpuslo.goodput import Recorder

    journals = Path(tempfile.mkdtemp(prefix="gpuslo-bench-"))
    for j in range(20):
        rec = Recorder(journals, f"job-{j}", node="bench")
        rec.job_start(8)
        for n in range(1, 50):
            rec.step(n)
        rec.checkpoint(49)
        rec.close()
    exporter = Exporter(
        lambda: _node(time.time()), JournalTailer(journals), CounterCarry(journals / "state")
    )
    stop = threading.Event()
    threading.Thread(target=exporter.loop, args=(stop, 1.0), daemon=True).start()
    threading.Thread(target=exporter.journal_loop, args=(stop, 1.0), daemon=True).start()
    while exporter.snapshot is None or not exporter.jobs:
        time.sleep(0.05)
    config = WebConfig(cert_file=f"{certs}/server.pem", key_file=f"{certs}/server.key") if certs \
        else None
    MetricsServer(exporter.registry, "127.0.0.1", port, config).start()  # as `gpuslo exporter`
    series = sum(
        1 for line in exporter.exposition().decode().splitlines() if not line.startswith("#")
    )
    print(f"ready {series}", flush=True)
    stop.wait()


def serve_bare(port: int, series: int, backlog: int, certs: str = "") -> None:
    from prometheus_client import CollectorRegistry, Gauge, start_http_server

    registry = CollectorRegistry()
    gauge = Gauge("bare_series", "anchor", ["i"], registry=registry)
    for i in range(series):
        gauge.labels(str(i)).set(i)
    tls = {"certfile": f"{certs}/server.pem", "keyfile": f"{certs}/server.key"} if certs else {}
    server, _ = start_http_server(port, addr="127.0.0.1", registry=registry, **tls)
    if backlog:
        server.socket.listen(backlog)
    print(f"ready {series}", flush=True)
    threading.Event().wait()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def load(port: int, scrapers: int, duration: float, every: float) -> tuple[list[float], int]:
    """Latencies (seconds) of every successful scrape and the error count. Each scraper starts
    a scrape every `every` seconds (staggered, as Prometheus spreads targets), or back to back
    when `every` is 0 (saturation)."""
    latencies: list[float] = []
    errors = [0]
    kinds: dict[str, int] = {}
    deadline = time.monotonic() + duration

    def scraper(offset: float) -> None:
        next_start = time.monotonic() + offset
        while time.monotonic() < deadline:
            if every:
                time.sleep(max(0.0, next_start - time.monotonic()))
                next_start += every
            t0 = time.perf_counter()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/metrics")
                answer = conn.getresponse()
                body = answer.read()
                conn.close()
                ok = answer.status == 200 and body
            except OSError as error:
                ok = False
                kinds[type(error).__name__] = kinds.get(type(error).__name__, 0) + 1
            if ok:
                latencies.append(time.perf_counter() - t0)
            else:
                errors[0] += 1

    threads = [
        threading.Thread(target=scraper, args=(every * i / scrapers,)) for i in range(scrapers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if kinds:
        print(f"errors on port {port}: {kinds}", file=sys.stderr)
    return latencies, errors[0]


def measure(cmd: list[str], port: int, args: argparse.Namespace) -> dict[str, float]:
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        series = int(child.stdout.readline().split()[1])
        load(port, args.scrapers, min(2.0, args.duration), args.every)  # warm up
        before = rss_kb(child.pid)
        latencies, errors = load(port, args.scrapers, args.duration, args.every)
        growth = (rss_kb(child.pid) - before) / 1024
    finally:
        child.terminate()
        child.wait()
    q = statistics.quantiles(latencies, n=100)
    return {
        "series": series,
        "scrapes": len(latencies),
        "errors": errors,
        "p50_ms": q[49] * 1000,
        "p99_ms": q[98] * 1000,
        "rss_growth_mb": growth,
    }


def report(args: argparse.Namespace, exp: dict[str, float], bare: dict[str, float]) -> None:
    """Print both servers' figures, the ratios and whether the targets are met."""
    pace = f"every {args.every:g} s" if args.every else "back to back"
    print(
        f"{args.scrapers} scrapers, {pace}, {args.duration:g} s per server, "
        f"{int(exp['series'])} series"
    )
    print(f"{'':10}{'scrapes':>9}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}{'RSS +MB':>9}")
    for name, r in (("exporter", exp), ("bare", bare)):
        print(
            f"{name:10}{r['scrapes']:9d}{r['errors']:8d}{r['p50_ms']:9.2f}{r['p99_ms']:9.2f}"
            f"{r['rss_growth_mb']:9.2f}"
        )
    print(
        f"ratio     p50 {exp['p50_ms'] / bare['p50_ms']:.2f}x"
        f"  p99 {exp['p99_ms'] / bare['p99_ms']:.2f}x"
    )
    met = (
        exp["errors"] == 0
        and exp["p99_ms"] < 50
        and exp["rss_growth_mb"] < 10
        and exp["p99_ms"] <= 1.5 * bare["p99_ms"]
    )
    print(
        "targets (0 errors, p99 < 50 ms, RSS < 10 MB, p99 <= 1.5x bare):",
        "met" if met else "NOT met",
    )


def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certs(directory: str) -> None:
    """A self-signed server certificate for 127.0.0.1 (openssl)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    f"{directory}/server.key", "-out", f"{directory}/server.pem", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)


def behind_idle(cmd: list[str], port_: int, idle: int, tls: bool, certs: str) -> dict:
    """Start a server, open `idle` connections that send nothing, then time 20 scrapes (each
    bounded at 10 s: a stalled server counts as a 10 s failure)."""
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    socks: list[socket.socket] = []
    try:
        child.stdout.readline()
        for _ in range(idle):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port_), timeout=10))
            except OSError:
                break
        context = ssl.create_default_context(cafile=f"{certs}/server.pem") if tls else None
        times, failures = [], 0
        for _ in range(20):
            t0 = time.perf_counter()
            try:
                conn = (http.client.HTTPSConnection("127.0.0.1", port_, timeout=10,
                                                    context=context) if tls
                        else http.client.HTTPConnection("127.0.0.1", port_, timeout=10))
                conn.request("GET", "/metrics")
                ok = conn.getresponse().status == 200
                conn.close()
            except OSError:
                ok = False
            times.append(time.perf_counter() - t0)
            failures += not ok
    finally:
        for sock in socks:
            sock.close()
        child.terminate()
        child.wait()
    return {"opened": len(socks), "failures": failures, "p50_s": statistics.median(times),
            "max_s": max(times)}


def idle_main(args: argparse.Namespace, me: list[str]) -> int:
    """Scrape latency behind `--idle` idle connections: the exporter's server against
    prometheus_client's start_http_server (the anchor), plain and TLS."""
    certs = tempfile.mkdtemp(prefix="gpuslo-bench-certs-")
    make_certs(certs)
    print(f"{args.idle} idle connections, then 20 scrapes (10 s bound each)")
    print(f"{'':14}{'opened':>8}{'failed':>8}{'p50 s':>9}{'max s':>9}")
    results = {}
    for tls in (False, True):
        for name in ("exporter", "bare"):
            p = port()
            cmd = [*me, "--serve", name, "--port", str(p), "--series", "300"]
            r = behind_idle(cmd + (["--certs", certs] if tls else []), p, args.idle, tls, certs)
            label = f"{name} {'TLS' if tls else 'plain'}"
            results[label] = r
            print(f"{label:14}{r['opened']:8d}{r['failures']:8d}{r['p50_s']:9.3f}"
                  f"{r['max_s']:9.3f}")
    for kind in ("plain", "TLS"):
        exp, bare = results[f"exporter {kind}"], results[f"bare {kind}"]
        print(f"ratio {kind:5} max {exp['max_s'] / bare['max_s']:.3f}x (exporter / bare)")
    met = all(r["failures"] == 0 and r["max_s"] < 1.0
              for label, r in results.items() if label.startswith("exporter"))
    print("target (every exporter scrape answered, each under 1 s):", "met" if met else "NOT met")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per server")
    parser.add_argument("--scrapers", type=int, default=50)
    parser.add_argument(
        "--every",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="each scraper scrapes every SECONDS (Prometheus' scrape_interval); "
        "0 = back to back, to find saturation",
    )
    parser.add_argument(
        "--bare-backlog",
        type=int,
        default=LISTEN_BACKLOG,
        help="listen backlog of the bare server (0: prometheus_client's default, 5)",
    )
    parser.add_argument(
        "--idle",
        type=int,
        default=0,
        metavar="N",
        help="instead: open N idle connections (plain and TLS), then time 20 scrapes "
        "(issue 12: N=500, every scrape under 1 s)",
    )
    parser.add_argument("--certs", default="", help=argparse.SUPPRESS)
    parser.add_argument("--serve", choices=("exporter", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--series", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "exporter":
        serve_exporter(args.port, args.certs)
        return 0
    if args.serve == "bare":
        serve_bare(args.port, args.series, args.bare_backlog, args.certs)
        return 0
    me = [sys.executable, __file__]
    if args.idle:
        return idle_main(args, me)
    p1 = port()
    exp = measure([*me, "--serve", "exporter", "--port", str(p1)], p1, args)
    p2 = port()
    bare = measure(
        [
            *me,
            "--serve",
            "bare",
            "--port",
            str(p2),
            "--series",
            str(int(exp["series"])),
            "--bare-backlog",
            str(args.bare_backlog),
        ],
        p2,
        args,
    )
    report(args, exp, bare)
    return 0


if __name__ == "__main__":
    sys.exit(main())
