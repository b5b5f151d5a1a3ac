"""`gpuslo_gpu_expected`: the node's provisioned GPU count is exported from the node config,
`--expect-gpus` or the learned baseline, also when no GPU can be read — so a node whose driver is
gone still counts its GPUs in the fleet's denominator (issue 12, "the fleet SLI gains from
blindness")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from exporter.test_collector_node import NOW, samples

from gpuslo.exporter.collector import build_families
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import CheckResult

REPO = Path(__file__).resolve().parent.parent.parent
REPLAY = REPO / "gpuslo" / "data" / "nvml_replay"


def _exporter_once(state: Path, *flags: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GPUSLO_")}
    command = [sys.executable, "-m", "gpuslo", "exporter", "--once", "--state-dir", str(state)]
    command += ["--kernel-log", os.devnull, "--path.sysfs", str(state / "nosys"), *flags]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**environ, **env}
    )
    assert done.returncode == 0, done.stderr
    return samples(done.stdout)


def _gpu_series(s: dict) -> list:
    return [k for k in s if k[0] in ("gpuslo_gpu_info", "gpuslo_gpu_usable")]


def test_a_gpu_less_node_with_expect_gpus_8_exports_8(tmp_path: Path) -> None:
    """No NVML, no nvidia-smi on this machine: nothing is readable, yet the node says it should
    have 8 GPUs and is not usable. gpuslo_gpu_usable stays per readable GPU (none here), so the
    8 reach the fleet's denominator through gpuslo_gpu_expected."""
    s = _exporter_once(tmp_path, "--expect-gpus", "8")
    assert s[("gpuslo_gpu_expected", ())] == 8
    assert s[("gpuslo_node_usable", ())] == 0
    assert _gpu_series(s) == []


def test_the_learned_baseline_survives_the_driver_going_away(tmp_path: Path) -> None:
    """First run on the 8-GPU NVML replay learns 8; then NVML disappears: still 8 expected."""
    replay = {"GPUSLO_NVML_PATH": str(REPLAY), "GPUSLO_FAKE_NVML": str(REPLAY / "h200x8.json")}
    first = _exporter_once(tmp_path, **replay)
    assert first[("gpuslo_gpu_expected", ())] == 8 and len(_gpu_series(first)) == 16
    gone = _exporter_once(tmp_path, **replay, GPUSLO_FAKE_NVML_MODE="missing")
    assert gone[("gpuslo_gpu_expected", ())] == 8
    assert gone[("gpuslo_node_usable", ())] == 0 and _gpu_series(gone) == []


def test_nothing_known_exports_no_expected_count() -> None:
    """No config and no baseline: the exporter does not invent a count (the fleet rules then
    use the GPUs seen, kube-state-metrics' capacity and the held value)."""
    blind = CheckResult(
        check="gpu_inventory",
        scope="node",
        status="unknown",
        reason="dependency_missing",
        observed_at=NOW,
    )
    snap = NodeSnapshot(node="n", results=(blind,))
    families = {f.name: f for f in build_families(snap, [], NOW)}
    assert families["gpuslo_gpu_expected"].samples == []
    counted = build_families(NodeSnapshot(node="n", gpus_expected=4), [], NOW)
    expected = next(f for f in counted if f.name == "gpuslo_gpu_expected")
    assert [s.value for s in expected.samples] == [4]
