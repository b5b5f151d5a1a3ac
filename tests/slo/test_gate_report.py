"""The return-to-service gate from a running exporter's /metrics to the weekly report: a child
exporter on the replayed H200 goes through a fatal Xid, a reboot, a failed gate, a second repair
and a passed gate; every scrape becomes one minute of OpenMetrics (backfilled into Debian's
Prometheus with promtool), and `gpuslo report --prometheus` must count the validating time as
platform loss and the failed gate as one gate failure (an `unknown` blink inside a validation,
a cycle slower than 3 × the 2 s interval on a loaded machine, is no new validation). Plus the
engine on hand-written intervals, whose GPU-hours a reviewer can redo."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import pandas as pd
import pytest
import requests
from conftest import backfill, require_binary, running_prometheus
from exporter.test_gate_exporter import Exporter
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo_spec import SloSpec

START = pd.Timestamp("2026-01-05T00:00:00Z")
NODE = {"instance": "n1:9835", "job": "gpuslo"}


class Scrapes:
    """Scrapes the exporter every 0.25 s on a thread; `texts` in order."""

    def __init__(self, exporter: Exporter) -> None:
        self.exporter, self.texts, self.stop = exporter, [], threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        url = f"http://127.0.0.1:{self.exporter.port}/metrics"
        while not self.stop.is_set():
            with contextlib.suppress(requests.RequestException):
                self.texts.append(requests.get(url, timeout=2).text)
            time.sleep(0.25)

    def finish(self) -> list[str]:
        self.stop.set()
        self.thread.join(5)
        return self.texts


class _Minutes:
    """Every scrape as one minute from START, labelled as Prometheus would (instance, job)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def collect(self):
        families: dict[str, Metric] = {}
        for minute, text in enumerate(self.texts):
            at = START.timestamp() + 60 * minute
            up = families.setdefault("up", Metric("up", "up", "gauge"))
            up.add_sample("up", dict(NODE), 1.0, timestamp=at)
            for family in text_string_to_metric_families(text):
                name = family.name
                kept = families.setdefault(name, Metric(name, family.documentation, family.type))
                for s in family.samples:
                    kept.add_sample(s.name, {**s.labels, **NODE}, s.value, timestamp=at)
        yield from families.values()


def test_exporter_metrics_to_the_report(tmp_path):
    promtool, prometheus = require_binary("promtool"), require_binary("prometheus")
    node = Exporter(tmp_path / "node", max_tries=2)
    try:
        node.wait(lambda: node.verdict() == "unhealthy")
        scrapes = Scrapes(node)
        time.sleep(3)
        node.boot("boot-2")  # rebooted; the probe is slow: two tries, the gate fails
        node.wait(lambda: node.gpu("gpuslo_gpu_validation_state", state="failed") == 1.0)
        time.sleep(2)
        node.probe(779.0)
        node.boot("boot-3")  # repaired and rebooted again: validated, healthy
        node.wait(lambda: node.verdict() == "healthy")
        time.sleep(3)
        texts = scrapes.finish()
    finally:
        node.stop()
    registry = CollectorRegistry()
    registry.register(_Minutes(texts))
    work = tmp_path / "prom"
    work.mkdir()
    (work / "metrics.om").write_bytes(generate_latest(registry))
    backfill(promtool, work / "metrics.om", work / "data")
    (work / "prometheus.yml").write_text("global: {}\n")
    end = START + pd.Timedelta(minutes=len(texts))
    with running_prometheus(prometheus, work / "prometheus.yml", work / "data",
                            "--storage.tsdb.retention.time=100y") as url:
        out = tmp_path / "report"
        assert main(["report", "--prometheus", url, "--start", START.isoformat(), "--end",
                     end.isoformat(), "--out", str(out), "--format", "json,md"]) == 0
    doc = json.loads((out / "report.json").read_text())
    validating = sum('verdict="validating"} 1.0' in t for t in texts) / 60  # GPU-hours
    gate = doc["return_to_service"]
    assert (gate["validations"], gate["gates_failed"]) == (2, 1), gate
    assert gate["validating_gpu_hours"] == pytest.approx(validating, abs=2 / 60)
    assert doc["unusable_gpu_hours_by_layer"]["platform"] == pytest.approx(
        gate["validating_gpu_hours"])  # nothing else of the platform's on this node
    assert gate["failed_gate_gpu_hours"] > 0
    assert "Return to service: 2 GPU validations" in (out / "report.md").read_text()


def test_validating_time_is_the_platforms_and_no_fault():
    """One GPU over 10 h: 2 h unhealthy (Xid 79), 1 h validating, 1 h unhealthy after a failed
    gate, 0.5 h validating again, the rest healthy. Lost: node 2 + 1 = 3 GPU-h, platform 1 + 0.5
    = 1.5 GPU-h; two validations, one gate failure; MTBF counts the Xid and the failed gate, not
    the validations."""
    at = lambda h: START + pd.Timedelta(hours=h)  # noqa: E731
    rows = [(0, 2, "unhealthy", "fallen_off_bus"), (2, 3, "validating", "validation"),
            (3, 4, "unhealthy", "validation_failed"), (4, 4.5, "validating", "validation"),
            (4.5, 10, "healthy", "")]
    verdicts = pd.DataFrame([{"node": "n1", "uuid": "GPU-0", "start": at(a), "end": at(b),
                              "verdict": v, "reason": r, "layer": "", "action": "none"}
                             for a, b, v, r in rows])
    inventory = pd.DataFrame([{"node": "n1", "uuid": "GPU-0", "gpu": "0", "model": "H200",
                               "provisioned_start": at(0), "provisioned_end": at(10)}])
    frames = Frames(inventory=make_frame("inventory", inventory, "test"),
                    verdicts=make_frame("verdicts", verdicts, "test"))
    week = compute_week(frames, at(0), at(10), SloSpec())
    assert week.usable_gpu_hours == pytest.approx(5.5)
    assert week.unusable_gpu_hours_by_layer[names.LAYER_NODE] == pytest.approx(3.0)
    assert week.unusable_gpu_hours_by_layer[names.LAYER_PLATFORM] == pytest.approx(1.5)
    assert week.return_to_service == {"validating_gpu_hours": pytest.approx(1.5),
                                      "failed_gate_gpu_hours": pytest.approx(1.0),
                                      "validations": 2, "gates_failed": 1}
    assert set(week.reliability.reset_index()["reason"]) == {"fallen_off_bus",
                                                             "validation_failed"}
