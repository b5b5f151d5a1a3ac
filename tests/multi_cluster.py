"""Test helpers for many clusters, one SLO: a simulated cluster served live, so a real
Prometheus can scrape it, and vmalert replaying rules over VictoriaMetrics in stages.

`ServedCluster(sim, step_s)` holds the OpenMetrics samples of a `gpuslo simulate` fleet
(`gpuslo.slo.simulate.openmetrics`) grouped by time and serves them on a loopback HTTP port as
one exposition (Prometheus text format, no timestamps: Prometheus stamps them with its scrape
time), one simulated step per `pace_s` wall seconds from `start()`: every node of the cluster
behind one target, each series keeping the `instance` label the simulation gives it (scrape
with `honor_labels: true`, as for the exporters' job metrics). Series absent at a step (a node
not scraped, a fault that ended) are absent from that exposition, so Prometheus marks them
stale, as with a real exporter. Before the first step and after the last, the first and last
steps are served (`hold_s` wall seconds of the first before it moves on).
"""

from __future__ import annotations

import http.server
import re
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path

import requests
import yaml

from gpuslo.slo.simulate.openmetrics import openmetrics_text


def expositions(text: str) -> list[str]:
    """OpenMetrics text with timestamps → one exposition per timestamp, in time order (the
    timestamps dropped, comments and `# EOF` left out)."""
    by_time: dict[int, list[str]] = defaultdict(list)
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        sample, stamp = line.rsplit(" ", 1)
        by_time[int(stamp)].append(sample + "\n")
    return ["".join(by_time[t]) for t in sorted(by_time)]


class ServedCluster:
    """A simulated cluster on http://127.0.0.1:<port>/metrics (see the module docstring)."""

    def __init__(self, sim, step_s: int, pace_s: float = 1.0, hold_s: float = 0.0) -> None:
        self.pages = [page.encode() for page in expositions(openmetrics_text(sim, step_s))]
        self.pace_s, self.hold_s, self.began = pace_s, hold_s, None
        served = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                body = served.page()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.target = f"127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def step(self) -> int:
        """The simulated step served now (0 before `start`)."""
        if self.began is None:
            return 0
        moved = (time.monotonic() - self.began - self.hold_s) // self.pace_s
        return int(min(max(moved, 0), len(self.pages) - 1))

    def page(self) -> bytes:
        return self.pages[self.step()]

    def start(self) -> ServedCluster:
        self.thread.start()
        return self

    def run(self) -> None:
        """Start moving through the steps."""
        self.began = time.monotonic()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def stages(groups: list[dict]) -> list[list[dict]]:
    """The recording rules of `groups`, in stages: a rule comes after every rule whose series it
    reads (its own series aside: a held count reads its previous value). Replay evaluates one
    rule over the whole window at a time, so a rule must not run before what it reads is in the
    store."""
    rules = [rule for group in groups for rule in group["rules"] if "record" in rule]
    names = {rule["record"] for rule in rules}
    depth: dict[str, int] = {}

    def level(rule: dict) -> int:
        name = rule["record"]
        if name not in depth:
            reads = {other for other in names - {name}
                     if re.search(rf"(?<![\w:]){re.escape(other)}(?![\w:])", rule["expr"])}
            by_name = {r["record"]: r for r in rules}
            depth[name] = 1 + max((level(by_name[other]) for other in reads), default=-1)
        return depth[name]

    out: list[list[dict]] = []
    for rule in rules:
        at = level(rule)
        out += [[] for _ in range(at + 1 - len(out))]
        out[at].append(rule)
    return out


def replay(vmalert: str, groups: list[dict], url: str, start: float, end: float,
           work: Path) -> None:
    """vmalert in replay mode: the recording rules of `groups` evaluated every second over
    [start, end] (whole seconds) against the VictoriaMetrics at `url`, written back into it,
    stage by stage (`stages`) with a flush between, so a rule reads what the rules before it
    wrote."""
    stamp = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
    for number, rules in enumerate(stages(groups)):
        path = work / f"stage{number}.rules.yml"
        path.write_text(yaml.safe_dump({"groups": [{"name": f"stage{number}", "rules": rules}]},
                                       sort_keys=False))
        done = subprocess.run(
            [vmalert, f"-rule={path}", f"-datasource.url={url}", f"-remoteWrite.url={url}",
             "-evaluationInterval=1s", "-datasource.queryStep=1s",
             f"-replay.timeFrom={stamp(start)}", f"-replay.timeTo={stamp(end)}",
             "-replay.rulesDelay=0s", "-replay.disableProgressBar",
             "-remoteWrite.flushInterval=100ms"],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        requests.get(f"{url}/internal/force_flush", timeout=30).raise_for_status()
