"""Every generated dashboard panel's query over 7 days on the fleet backfill of
bench/report_prometheus.py, with the server's default limits; a table of the timings.

    python bench/report_prometheus.py --gpus 10000 --engines victoriametrics --work DIR
    python bench/dashboards_at_scale.py --work DIR [--engine victoriametrics|prometheus]
                                        [--repeat 5] [--step 600]

1. The server over DIR's backfill (VictoriaMetrics: `vmalert` replays the recording groups the
   report bench did not — every group of `gpuslo.alerts.sli.recording_groups` after its first
   level (`first_level_groups`) — once, marked in DIR/loaded.json; Prometheus: the data
   directory as the report bench left it, only the first level recorded).
2. Every panel target and Prometheus annotation of `gpuslo dashboards` (`build_files`), Grafana's
   variables substituted as Grafana would for the last 7 days of the backfill at `--step`
   (`$__range` 7d, `$__rate_interval` max(step + scrape, 4 x scrape), `$cluster`/`$job` `.*`,
   the drill-down's single-select `$node` the first node gpuslo_node_info names and its hidden
   `$exporter` that node's instances, as Grafana picks them), run `--repeat` times as a range
   query (an instant query for `instant` targets) ending at the backfill's end.
3. A table, slowest first: dashboard, panel, p95 and median seconds, series returned, whether
   the query reads raw exporter series (`gpuslo_...`) or only recorded ones (`gpuslo:...`), and
   `SLOW` for p95 >= 1 s (the goal of issue 30: every panel < 1 s p95, default limits).
The anchor is the server itself: the same query shapes run by Grafana; no second tool.

Measured 2026-12-06 01:42-01:47 UTC, `python bench/dashboards_at_scale.py --work DIR` on the
1,000-GPU backfill (`bench/report_prometheus.py --gpus 1000 --engines victoriametrics`, 7 days at
300 s), VictoriaMetrics 1.79, default limits, `vmalert` replay of the other recording groups
(with the per-check liveness and per-job groups) 246 s; 2-core host shared with other sessions
and the 10,000-GPU backfill being written: load average 5.8 before, 6.2 after. 116 queries x 5;
none at p95 >= 1 s:
  before (the same backfill and replay, the generator at 4686180, 01:27-01:31 UTC, load 6.8 →
  7.2): 2 of 105 at p95 >= 1 s, slowest 1.70 s (check-liveness / Heartbeat age per check and
  node, raw, 1,125 series), then Check duration 1.58 s and Time since last answer 0.82 s (the
  same 1,125 series), node-drilldown / GPU usable 0.59 s (1,000 series) and GPU verdicts 0.45 s
  (every GPU's verdict summed): per-node panels over `$node` = All.
  after: slowest 0.100 s, the fleet boards' "Node verdict changes" annotation (raw, 69 series;
  off by default there); slowest panel 0.060 s (job-goodput / GPUs busy by category, recorded);
  check-liveness panels <= 0.045 s (9 series, one per check); node-drilldown panels <= 0.017 s
  (one node's series).
Measured 2026-12-06 02:03-02:16 UTC on the 10,000-GPU backfill (`--gpus 10000`: 37.4 GB of
OpenMetrics in 660 s, import 809 s, rules backfill 153 s), the same server and limits, replay
279 s; load average 2.0 before and after (a quieter host). 116 queries x 5; none at p95 >= 1 s:
  before (the generator at 4686180 on the same data, `--repeat 3`, load 1.1 → 2.6): 7 of 105 at
  p95 >= 1 s, slowest 3.84 s (Heartbeat age per check and node, 11,250 series), Check duration
  3.27 s, Time since last answer 3.06 s, node-drilldown / GPU usable 2.63 s (10,000 series),
  GPU verdicts 2.22 s, check-liveness / Check runs 1.11 s, job-goodput / Goodput per job 1.10 s:
  about 2x-5x the 1,000-GPU figures, growing with the fleet.
  after: slowest 0.237 s, the fleet boards' Node verdict changes annotation (686 series, off by
  default there); slowest panel 0.154 s (job-goodput / Compute time per step by node, raw, 1,018
  series), then Node performance score 0.123 s (recorded, 1,018 series) and Goodput per job
  0.112 s (222 jobs); check-liveness panels <= 0.013 s, node-drilldown panels <= 0.017 s: flat
  from 1,000 to 10,000 GPUs, except the per-node crawl panels and that annotation.
  The liveness board draws one line per check from `gpuslo.alerts.liveness`'s recorded series,
  the job board one per job from `gpuslo.alerts.job_series`'s, and the drill-down reads one
  node's raw series through `instance=~"$exporter"`. Still raw and per node across the fleet:
  job-goodput / Compute time per step by node (86 series, 0.020 s; the crawl's per-node view,
  narrowed by `$job`) and the Node verdict changes annotation of the fleet boards (enabled only
  on the drill-down, where it reads one node).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import requests
import yaml

from gpuslo.alerts import sli
from gpuslo.dashboards import generate
from gpuslo.slo_spec import SloSpec

GOAL_S = 1.0


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(url: str, process: subprocess.Popen, limit_s: float = 600) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} exited with {process.returncode}")
        try:
            if requests.get(url, timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} not ready in {limit_s} s")


def pick_node(url: str, at: float) -> tuple[str, str]:
    """(node, exporter): the first node name gpuslo_node_info gives at `at`, as Grafana's
    single-select `$node` picks it, and its `instance` values as Grafana writes the hidden
    `$exporter`'s All (an alternation, regex metacharacters escaped)."""
    answer = requests.post(f"{url}/api/v1/query", timeout=60, data={
        "query": "max by (node, instance) (gpuslo_node_info)", "time": at}).json()
    found = sorted((s["metric"]["node"], s["metric"]["instance"])
                   for s in answer["data"]["result"])
    if not found:
        raise SystemExit("no gpuslo_node_info at the backfill's end")
    node = found[0][0]
    escape = lambda v: re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\\\1", v)  # noqa: E731
    return node, "|".join(escape(instance) for name, instance in found if name == node)


def targets(step_s: int, scrape_s: int, node: str = ".*", exporter: str = ".*") -> list[dict]:
    """Every panel target and Prometheus annotation with Grafana's variables substituted."""
    rate = max(step_s + scrape_s, 4 * scrape_s)
    values = {"$__rate_interval": f"{rate}s", "$__range_s": str(7 * 86400), "$__range": "7d",
              "$__interval": f"{step_s}s", "$cluster": ".*", "$node": node,
              "$exporter": exporter, "$job": ".*"}

    def sub(expr: str) -> str:
        for variable, value in values.items():
            expr = expr.replace(variable, value)
        return expr

    out = []
    for text in generate.build_files(SloSpec()).values():
        board = json.loads(text)
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                out.append({"board": board["uid"], "panel": panel["title"],
                            "expr": sub(target["expr"]), "instant": bool(target.get("instant"))})
        for note in board["annotations"]["list"]:
            if note["datasource"]["type"] == "prometheus":
                out.append({"board": board["uid"], "panel": f"annotation: {note['name']}",
                            "expr": sub(note["target"]["expr"]), "instant": False})
    return out


def run_query(url: str, target: dict, start: float, end: float, step_s: int) -> tuple[float, int]:
    """(seconds, series returned) of one query; raises SystemExit on an error answer."""
    params = {"query": target["expr"]}
    if target["instant"]:
        path, params["time"] = "query", end
    else:
        path = "query_range"
        params.update(start=start, end=end, step=step_s)
    t0 = time.perf_counter()
    answer = requests.post(f"{url}/api/v1/{path}", data=params, timeout=300)
    seconds = time.perf_counter() - t0
    body = answer.json()
    if body.get("status") != "success":
        return seconds, -1
    return seconds, len(body["data"]["result"])


def replay_rest(url: str, work: Path, start: pd.Timestamp, end: pd.Timestamp) -> float:
    """vmalert replays the recording groups after the first level over [start, end); seconds."""
    rules = work / "rest.rules.yml"
    rules.write_text(yaml.safe_dump({"groups": sli.recording_groups(SloSpec())[
        len(sli.first_level_groups(SloSpec())):]},
                                    sort_keys=False))
    t0 = time.perf_counter()
    subprocess.run(["vmalert", f"-rule={rules}", f"-datasource.url={url}",
                    f"-remoteWrite.url={url}",
                    f"-replay.timeFrom={start.strftime('%Y-%m-%dT%H:%M:%SZ')}",
                    f"-replay.timeTo={end.strftime('%Y-%m-%dT%H:%M:%SZ')}",
                    "-replay.disableProgressBar", "-replay.rulesDelay=5s"],
                   check=True, capture_output=True)
    requests.get(f"{url}/internal/force_flush").raise_for_status()
    time.sleep(2)
    return time.perf_counter() - t0


def server(engine: str, work: Path) -> tuple[str, subprocess.Popen]:
    port = _port()
    url = f"http://127.0.0.1:{port}"
    if engine == "victoriametrics":
        argv = ["victoria-metrics", f"-storageDataPath={work / 'vm'}",
                f"-httpListenAddr=127.0.0.1:{port}", "-retentionPeriod=100y",
                "-dedup.minScrapeInterval=1ms"]
        ready = f"{url}/health"
    else:
        argv = ["prometheus", f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'prometheus'}",
                f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y"]
        ready = f"{url}/-/ready"
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait(ready, process)
    return url, process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="bench/report_prometheus.py's --work")
    parser.add_argument("--engine", default="victoriametrics",
                        choices=("victoriametrics", "prometheus"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--step", type=int, default=600, help="range step, s (7 d / ~1000 px)")
    args = parser.parse_args()
    work = Path(args.work)
    meta = json.loads((work / "loaded.json").read_text())
    shape = meta["shape"]
    start = pd.Timestamp(meta["start"])
    end = start + pd.Timedelta(days=shape["days"])
    url, process = server(args.engine, work)
    try:
        if args.engine == "victoriametrics" and not meta.get("dashboards_rules"):
            seconds = replay_rest(url, work, start, end)
            meta["dashboards_rules"] = {"replay_s": seconds}
            (work / "loaded.json").write_text(json.dumps(meta, indent=1))
            print(f"vmalert replayed the other recording groups in {seconds:.0f} s")
        first, last = (end - pd.Timedelta(days=7)).timestamp(), end.timestamp() - 1
        node, exporter = pick_node(url, last)
        found = targets(args.step, shape["step"], node, exporter)
        print(f"$node {node}, $exporter {exporter}")
        print(f"load average before: {os.getloadavg()}; {shape['gpus']} GPUs, "
              f"{len(found)} queries x {args.repeat}, {args.engine}, step {args.step} s")
        rows = []
        for target in found:
            times, series = [], 0
            for _ in range(args.repeat):
                seconds, series = run_query(url, target, first, last, args.step)
                times.append(seconds)
            times.sort()
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            raw = bool(re.search(r"\bgpuslo_[a-z_]+", target["expr"]))
            rows.append((p95, times[len(times) // 2], series, raw, target))
        rows.sort(key=lambda r: -r[0])
        print(f"{'p95 s':>7} {'median':>7} {'series':>6} reads  dashboard / panel")
        for p95, median, series, raw, target in rows:
            flag = " SLOW" if p95 >= GOAL_S else ""
            answer = "error" if series < 0 else str(series)
            print(f"{p95:7.3f} {median:7.3f} {answer:>6} {'raw ' if raw else 'rec '}  "
                  f"{target['board']} / {target['panel']}{flag}")
        slow = sum(r[0] >= GOAL_S for r in rows)
        print(f"{slow} of {len(rows)} queries at p95 >= {GOAL_S} s; slowest "
              f"{rows[0][0]:.3f} s; load average after: {os.getloadavg()}")
        return 0 if not slow else 1
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
