"""`report --prometheus` counts what should exist: a node whose exporter died, a GPU-less node
with `--expect-gpus 8`, a node only kube-state-metrics knows and a node whose GPUs are missing
all stay in the inventory, as observability (or node) loss — never dropped, never an error
(issue 12: "report --prometheus fails with 'no gpuslo_gpu_info series'").

Two hours of samples every 60 s, backfilled into a real Prometheus on loopback:

  node   GPUs                                   verdicts             GPU-hours
  a      2 seen, expected 2                     healthy all along    4 usable
  b      2 seen, expected 2; exporter dies at   healthy, then none   2 usable + 2 no_data
         1 h (every series vanishes)
  c      expected 8, none readable              none                 16 no_data
  d      kube-state-metrics capacity 4 only     none                 8 no_data
  e      expected 4, none seen, gpu_inventory   none                 8 node/gpu_missing
         says fail

Provisioned 20 GPUs × 2 h = 40 GPU-hours; usable 6 → ratio 0.15; observability 26, node 8.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import backfill, require_binary, running_prometheus

from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.prometheus import load_prometheus
from gpuslo.slo_spec import SloSpec

pytestmark = pytest.mark.prometheus
START = pd.Timestamp("2026-03-02T00:00:00Z")
STEP_S, STEPS = 60, 120
INFO = 'pci_bus_id="00000000:00:06.0",model="NVIDIA H200",family="hopper"'


def _lines(name: str, labels: str, value: float, steps: range) -> list[str]:
    t0 = int(START.timestamp())
    return [f"{name}{{{labels}}} {value:g} {t0 + k * STEP_S}" for k in steps]


def _exporter(node: str, expected: int, gpus: int, steps: range, fail: bool = False) -> dict:
    target = f'instance="{node}:9835",job="gpuslo"'
    out = {
        "gpuslo_node_info": _lines(
            "gpuslo_node_info",
            f'{target},node="{node}",driver_version="580",cuda_version="13"',
            1,
            steps,
        ),
        "gpuslo_gpu_expected": _lines("gpuslo_gpu_expected", target, expected, steps),
        "gpuslo_check_status": _lines(
            "gpuslo_check_status",
            f'{target},check="gpu_inventory",status="fail"',
            int(fail),
            steps,
        ),
    }
    for gpu in range(gpus):
        ids = f'{target},gpu="{gpu}",uuid="GPU-{node}-{gpu}"'
        out["gpuslo_gpu_info"] = out.get("gpuslo_gpu_info", []) + _lines(
            "gpuslo_gpu_info", f"{ids},{INFO}", 1, steps
        )
        out["gpuslo_gpu_usable"] = out.get("gpuslo_gpu_usable", []) + _lines(
            "gpuslo_gpu_usable", ids, 1, steps
        )
        for verdict in ("healthy", "unhealthy", "unknown"):
            out.setdefault("gpuslo_gpu_verdict", []).extend(
                _lines(
                    "gpuslo_gpu_verdict",
                    f'{ids},verdict="{verdict}"',
                    int(verdict == "healthy"),
                    steps,
                )
            )
    return out


def openmetrics(nodes: list[dict]) -> str:
    """OpenMetrics text of the given families (name -> sample lines), merged per family."""
    families: dict[str, list[str]] = {}
    for node in nodes:
        for name, lines in node.items():
            families.setdefault(name, []).extend(lines)
    text = "".join(
        f"# TYPE {name} gauge\n" + "\n".join(lines) + "\n"
        for name, lines in sorted(families.items())
    )
    return text + "# EOF\n"


def _fleet() -> list[dict]:
    every, first_hour = range(STEPS), range(STEPS // 2)
    ksm = 'instance="ksm:8080",job="kube-state-metrics",node="d",resource="nvidia_com_gpu"'
    return [
        _exporter("a", 2, 2, every),
        _exporter("b", 2, 2, first_hour),
        _exporter("c", 8, 0, every),
        {"kube_node_status_capacity": _lines("kube_node_status_capacity", ksm, 4, every)},
        _exporter("e", 4, 0, every, fail=True),
    ]


def _serve(tmp_path_factory, nodes: list[dict]):
    promtool, binary = require_binary("promtool"), require_binary("prometheus")
    root = tmp_path_factory.mktemp("blind")
    (root / "fleet.om").write_text(openmetrics(nodes))
    backfill(promtool, root / "fleet.om", root / "data")
    (root / "prometheus.yml").write_text("global: {}\n")
    return running_prometheus(
        binary,
        root / "prometheus.yml",
        root / "data",
        "--storage.tsdb.retention.time=100y",
        "--query.lookback-delta=90s",
    )


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    with _serve(tmp_path_factory, _fleet()) as url:
        yield url


def test_blind_and_vanished_nodes_stay_in_the_inventory(prometheus):
    end = START + pd.Timedelta(hours=2)
    frames = load_prometheus(prometheus, START, end, step_s=STEP_S, progress=False)
    assert frames.inventory.groupby("node")["uuid"].count().to_dict() == {
        "a": 2,
        "b": 2,
        "c": 8,
        "d": 4,
        "e": 4,
    }
    result = compute_week(frames, START, end, SloSpec())
    assert result.provisioned_gpu_hours == pytest.approx(40)
    # b's GPUs answer for the first hour (plus at most the 90 s lookback on each of 2 GPUs).
    assert result.usable_gpu_hours == pytest.approx(6, abs=0.1)
    assert result.usable_ratio == pytest.approx(0.15, abs=0.0025)
    assert result.lost_gpu_hours_by_layer["observability"] == pytest.approx(26, abs=0.1)
    assert result.lost_gpu_hours_by_layer["node"] == pytest.approx(8)
    assert result.lost_gpu_hours_by_reason["gpu_missing"] == pytest.approx(8)


def test_a_fleet_with_no_gpu_listed_is_reported_not_refused(tmp_path_factory, tmp_path):
    """Only c (GPU-less, expect 8) and d (kube-state-metrics only): not one gpuslo_gpu_info
    series, which used to fail with "no gpuslo_gpu_info series"; now 12 blind GPUs."""
    with _serve(tmp_path_factory, [_fleet()[2], _fleet()[3]]) as url:
        out = tmp_path / "report"
        args = [
            "report",
            "--prometheus",
            url,
            "--start",
            "2026-03-02T00:00:00Z",
            "--end",
            "2026-03-02T02:00:00Z",
            "--out",
            str(out),
            "--format",
            "json",
        ]
        assert main(args) == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["gpus"] == 12 and doc["provisioned_gpu_hours"] == pytest.approx(24)
    assert doc["usable_ratio"] == 0
