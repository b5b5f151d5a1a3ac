"""`gpuslo demo`: the whole stack on bundled real data, no GPU needed.

1. Two fixture nodes, each a real `gpuslo exporter` process: `h200-healthy` replays the NVML values,
   dmesg and nvidia-smi outputs recorded on a healthy NVIDIA H200; `blackwell-dbe` replays a real
   kernel log with a double-bit ECC error (Xid 48, 63 and 154 "Drain and Reset"; shared/corpus case
   026) on NVML values that show the same incident (row remap pending, DBE counted).
2. A training job on `blackwell-dbe`, written through the real `Recorder`, that the Xid interrupts
   and that restarts from its last checkpoint.
3. Prometheus rules and Grafana dashboards from the default SLO spec; Prometheus (Debian's package,
   when installed) on loopback with those rules, scraping both exporters for a short while.
4. The report for the real StepFun fault trace (349 days) and for a simulated 1,000-GPU week,
   12 of whose nodes run inference replicas (the report's "Inference serving" section; the
   summary prints the replica most hit).

Every step runs the same commands a user would (`python -m gpuslo ...`); the demo prints where
everything is, the node verdicts and the headline numbers. NVML is replayed by the fake `pynvml`
module in gpuslo/data/nvml_replay (see its docstring), put first on the import path through
`GPUSLO_NVML_PATH`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpuslo.demo import job as demo_job
from gpuslo.demo import prometheus as demo_prometheus
from gpuslo.errors import GpusloError, InputError, UsageError
from gpuslo.slo.report.figures import has_job_data
from gpuslo.slo.report.model import window_name, window_text

DATA = Path(__file__).resolve().parent.parent / "data"
DEMO = DATA / "demo"
NVML_REPLAY = DATA / "nvml_replay"
SIMULATED_NODES, SIMULATED_GPUS_PER_NODE = 125, 8  # a 1,000-GPU fleet
SERVING_NODES = 12  # of them run inference replicas (vLLM, SGLang, TGI, Triton), not training


@dataclass(frozen=True)
class DemoNode:
    """One fixture node: its name, the NVML record it replays and the kernel log it reads."""

    name: str
    nvml_record: Path
    kernel_log: Path
    gpus: int


def _gpuslo(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run one gpuslo command as a user would; a non-zero exit other than 1 is an error."""
    proc = subprocess.run(
        [sys.executable, "-m", "gpuslo", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode not in (0, 1):
        raise GpusloError(
            f"`gpuslo {' '.join(args)}` failed (exit {proc.returncode}): "
            f"{proc.stderr.strip()[-500:]}"
        )
    return proc


def node_environment(node: DemoNode) -> dict[str, str]:
    """Environment for a node's exporter: NVML replayed from the node's record."""
    return {
        **os.environ,
        "GPUSLO_NVML_PATH": str(NVML_REPLAY),
        "GPUSLO_FAKE_NVML": str(node.nvml_record),
    }


def node_arguments(node: DemoNode, root: Path) -> list[str]:
    """The exporter's source flags for a fixture node under `root` (empty sysfs/procfs trees, so
    nothing of the machine running the demo leaks in)."""
    for sub in ("sysfs/class", "procfs", "state", "journals"):  # a sysfs with no RDMA devices
        (root / sub).mkdir(parents=True, exist_ok=True)
    return [
        "--node",
        node.name,
        "--kernel-log",
        str(node.kernel_log),
        "--path.sysfs",
        str(root / "sysfs"),
        "--path.procfs",
        str(root / "procfs"),
        "--state-dir",
        str(root / "state"),
        "--journal-dir",
        str(root / "journals"),
        "--expect-gpus",
        str(node.gpus),
    ]


def demo_nodes(out: Path) -> list[DemoNode]:
    """The two fixture nodes; the Blackwell node's NVML record is derived from the H200's."""
    h200 = DEMO / "h200" / "nvml-probe.json"
    blackwell = out / "nodes" / "blackwell-dbe" / "nvml-record.json"
    blackwell.parent.mkdir(parents=True, exist_ok=True)
    blackwell.write_text(
        json.dumps(
            demo_job.blackwell_dbe_record(json.loads(h200.read_text())), indent=1, sort_keys=True
        )
    )
    return [
        DemoNode("h200-healthy", h200, DEMO / "h200" / "dmesg.txt", 1),
        DemoNode(
            "blackwell-dbe", blackwell, DEMO / "corpus" / "kernel-log-dbe-drain-and-reset.txt", 1
        ),
    ]


def _verdicts(exposition: str) -> dict[str, str]:
    verdict = next(
        (
            line.split('verdict="')[1].split('"')[0]
            for line in exposition.splitlines()
            if line.startswith("gpuslo_node_verdict{") and line.rstrip().endswith(" 1.0")
        ),
        "unknown",
    )
    problems = sorted(
        {
            _problem_line(line)
            for line in exposition.splitlines()
            if line.startswith("gpuslo_gpu_problem{") and line.rstrip().endswith(" 1.0")
        }
    )
    return {"verdict": verdict, "problems": problems}


def _problem_line(line: str) -> str:
    """`GPU 0 gpu_memory: ecc_uncorrectable (node) -> drain_and_reset` from a
    gpuslo_gpu_problem line."""
    labels = dict(part.split("=", 1) for part in line.split("{", 1)[1].rsplit("}", 1)[0].split(","))
    value = {key: text.strip('"') for key, text in labels.items()}
    return (
        f"GPU {value.get('gpu', '?')} {value.get('check', '?')}: {value.get('reason', '?')} "
        f"({value.get('layer', '?')}) -> {value.get('action', '?')}"
    )


def run_nodes(nodes: list[DemoNode], out: Path) -> dict[str, dict[str, str]]:
    """One exporter cycle per node (`gpuslo exporter --once`); writes nodes/<name>/metrics.prom."""
    results = {}
    for node in nodes:
        root = out / "nodes" / node.name
        proc = _gpuslo(
            ["exporter", "--once", *node_arguments(node, root)], env=node_environment(node)
        )
        (root / "metrics.prom").write_text(proc.stdout)
        results[node.name] = _verdicts(proc.stdout)
    return results


def _headline(path: Path) -> dict:
    return json.loads(path.read_text())


def run_reports(out: Path) -> dict[str, dict]:
    """The report for the StepFun trace (349 days) and for a simulated 1,000-GPU week."""
    stepfun = out / "report-stepfun"
    _gpuslo(
        [
            "report",
            "--trace",
            str(DEMO / "stepfun" / "fault_trace.json"),
            "--trace-format",
            "stepfun",
            "--out",
            str(stepfun),
            "--format",
            "md,html,json",
        ]
    )
    simulated = out / "simulated-fleet"
    _gpuslo(
        [
            "simulate",
            "--nodes",
            str(SIMULATED_NODES),
            "--gpus-per-node",
            str(SIMULATED_GPUS_PER_NODE),
            "--days",
            "7",
            "--seed",
            "1",
            "--serving-nodes",
            str(SERVING_NODES),
            "--out",
            str(simulated),
        ]
    )
    report = out / "report-simulated"
    _gpuslo(["report", "--data", str(simulated), "--out", str(report), "--format", "md,html,json"])
    return {
        "StepFun trace (400 nodes x 8 GPUs)": _headline(stepfun / "report.json"),
        "simulated 1,000-GPU week": _headline(report / "report.json"),
    }


def _hours(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _job_hours(report: dict, value: float | None) -> str:
    """GPU-hours of a job figure; `—` when the data has no jobs (the StepFun trace), where 0.0
    would read as a measured zero."""
    return "—" if not has_job_data(report) else f"{_hours(value)} GPU-h"


def _ratio(value: float | None) -> str:
    return "— (no jobs in this data)" if value is None else f"{value:.4f}"


def _job_parts(job: dict) -> str:
    """'of 3,600 s allocated (2,400 s productive, 300 s wasted progress, ...)': every part, so
    they add up to the allocated GPU-seconds the ratio divides by (newcomer8 F9); the three
    main parts alone for a summary without `badput_s`."""
    if "badput_s" not in job:
        return (f"({job['productive_s']:,.0f} s productive, {job['wasted_progress_s']:,.0f} s "
                f"wasted progress, {job['recovery_s']:,.0f} s recovery)")
    parts = [f"{job['productive_s']:,.0f} s productive"] + [
        f"{v:,.0f} s {c.replace('_', ' ')}" for c, v in job["badput_s"].items()]
    return f"of {job['allocated_s']:,.0f} s allocated ({', '.join(parts)})"


def print_summary(
    out: Path, verdicts: dict, scrape: demo_prometheus.ScrapeResult, reports: dict, job: dict
) -> None:
    """What the demo did, where everything is, and the headline numbers."""
    print(f"\ngpuslo demo: everything is under {out}/\n")
    print("Node verdicts (gpuslo exporter --once; exposition in nodes/<node>/metrics.prom):")
    for name, result in verdicts.items():
        print(f"  {name:<15} {result['verdict']}")
        for problem in result["problems"]:
            print(f"      {problem}")
    print(f"\nTraining job {job['job']} on blackwell-dbe (journal nodes/blackwell-dbe/journals/):")
    print(
        "  interrupted by the fatal Xid, restarted from the checkpoint at step "
        f"{job['restart_step']}; "
        f"goodput {job['goodput_ratio']:.3f} {_job_parts(job)}"
    )
    print(f"\nPrometheus: {scrape.summary}")
    for line in scrape.lines:
        print(f"  {line}")
    print("\nGenerated: rules/ (Prometheus rules + promtool tests), dashboards/ (Grafana JSON)")
    for title, report in reports.items():
        lost = report.get("lost_gpu_hours_by_layer", {})
        name = window_name(report)
        print(f"\n{name[0].upper()}{name[1:]}, {title}: {window_text(report)}")
        print(
            f"  provisioned {_hours(report['provisioned_gpu_hours'])} GPU-h, "
            f"usable {_hours(report['usable_gpu_hours'])} GPU-h "
            f"(ratio {report['usable_ratio']:.4f}), "
            f"productive {_job_hours(report, report.get('productive_gpu_hours'))}, "
            f"goodput {_ratio(report.get('goodput_ratio'))}"
        )
        print(
            "  lost GPU-h by layer: "
            + ", ".join(
                f"{layer} {_hours(lost.get(layer))}"
                for layer in ("node", "platform", "training", "observability")
            )
        )
        hit = (report.get("jobs_hit") or [None])[0]
        if hit and hit["lost_gpu_hours"]:
            print(f"  job most hit: {hit['job']} lost {_hours(hit['lost_gpu_hours'])} of the "
                  f"{_hours(hit['held_gpu_hours'])} GPU-h it held, most to {hit['layer']} / "
                  f"{hit['reason']} (section \"Jobs most hit\")")
        if report.get("serving"):
            print_serving(report["serving"])
    print(f"\nReports: {out}/report-stepfun/report.html, {out}/report-simulated/report.html")


def print_serving(block: dict) -> None:
    """The simulated week's inference replicas (the report's "Inference serving" section, from
    its JSON twin): capacity, latency attainment, and the one replica most hit."""
    cats, lost = block["categories_gpu_hours"], block["lost_gpu_hours_by_layer"]
    print(f"  inference serving: {block['replicas']:,} replicas on up to {block['gpus']:,} GPUs: "
          f"{_hours(cats['serving'])} GPU-h serving, {_hours(cats['idle_capacity'])} idle "
          f"capacity, {_hours(block['lost_gpu_hours'])} lost ("
          + ", ".join(f"{layer} {_hours(lost.get(layer))}"
                      for layer in ("node", "platform", "training", "observability")) + ")")
    latency = block["latency"]
    print("  latency: " + "; ".join(
        f"{fig['what']} {fig['objective_seconds']:g} s: {_ratio(fig['attainment'])} "
        f"(target {fig['target']:g})" for fig in latency.values()))
    hit = (block.get("replicas_most_hit") or [None])[0]
    if hit:
        print(f"  replica most hit: {hit['replica']} ({hit['engine']}, {hit['gpus']} GPUs on "
              f"{hit['node']}) lost {_hours(hit['lost_gpu_hours'])} of the "
              f"{_hours(hit['allocated_gpu_hours'])} GPU-h it held, most to {hit['layer']} / "
              f"{hit['reason']} (section \"Inference serving\")")


def run_demo(out: Path, scrape_seconds: float = 12.0, prometheus: bool = True) -> int:
    """Run the demo into `out`, scraping for `scrape_seconds` when `prometheus` (and Debian's
    Prometheus is installed); returns 0 when every step finished. Raises UsageError when `out`
    holds something that is not an earlier demo, InputError when it cannot be written."""
    started = time.monotonic()
    out = out.resolve()
    if out.exists() and any(out.iterdir()) and not (out / ".gpuslo-demo").exists():
        raise UsageError(f"{out} exists and is not a gpuslo demo directory; choose another --out")
    shutil.rmtree(out, ignore_errors=True)
    try:
        out.mkdir(parents=True)
        (out / ".gpuslo-demo").write_text("written by gpuslo demo\n")
    except OSError as error:
        raise InputError(
            str(out), f"cannot write the demo there ({error.strerror or error})"
        ) from None
    print(f"gpuslo demo: writing to {out}/", flush=True)
    nodes = demo_nodes(out)
    job = demo_job.record_job(out / "nodes" / "blackwell-dbe" / "journals", now=time.time())
    print("  rules and dashboards ...", flush=True)
    _gpuslo(["rules", "--out", str(out / "rules")])
    _gpuslo(["dashboards", "--out", str(out / "dashboards")])
    print("  node checks ...", flush=True)
    verdicts = run_nodes(nodes, out)
    print("  Prometheus ...", flush=True)
    scrape = demo_prometheus.scrape_nodes(
        [
            (node.name, node_arguments(node, out / "nodes" / node.name), node_environment(node))
            for node in nodes
        ],
        out,
        seconds=scrape_seconds,
        enabled=prometheus,
    )
    print("  reports (the StepFun year, a simulated week) ...", flush=True)
    reports = run_reports(out)
    print_summary(out, verdicts, scrape, reports, job)
    print(f"\nfinished in {time.monotonic() - started:.0f} s")
    return 0
