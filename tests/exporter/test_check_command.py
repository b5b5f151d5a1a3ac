"""`gpuslo check` end to end: exit codes, JSON and text output, on this machine (no NVIDIA driver)
and on the recorded H200 node through the fake NVML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from gpuslo.cli import main

FAKE_NVML = str(REPO / "gpuslo" / "data" / "nvml_replay")
GPU_CHECKS = ("gpu_inventory", "gpu_memory", "thermal", "nvlink", "pcie")


def check(capsys, *args):
    code = main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.skipif(
    Path("/proc/driver/nvidia").exists(), reason="this machine has an NVIDIA driver"
)
def test_without_nvidia_driver_gpu_checks_are_unknown_and_node_not_healthy(
    tmp_path, capsys, monkeypatch
):
    """This machine, as it is (CI's has no NVIDIA driver, library or nvidia-smi)."""
    monkeypatch.delenv("GPUSLO_NVML_PATH", raising=False)
    code, out, _ = check(capsys, "--format", "json", "--state-dir", str(tmp_path))
    report = json.loads(out)
    assert code == 1 and report["verdict"] == "unknown"
    for name in GPU_CHECKS:
        results = [r for r in report["results"] if r["check"] == name]
        assert [(r["status"], r["reason"]) for r in results] == [("unknown", "dependency_missing")]
        assert results[0]["layer"] == "observability"


def test_json_on_the_recorded_h200_node(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", FAKE_NVML)
    args = ["--format", "json", "--state-dir", str(tmp_path)] + [f"--check={c}" for c in GPU_CHECKS]
    code, out, _ = check(capsys, *args)
    report = json.loads(out)
    assert code == 0 and report["verdict"] == "healthy"
    assert [g["verdict"] for g in report["gpus"]] == ["healthy"] * 8
    assert report["gpus"][0]["pci_bus_id"] == "00000000:00:06.0"
    for result in report["results"]:
        assert {"status", "reason", "layer", "action", "message", "duration_s"} <= set(result)
        assert result["duration_s"] > 0
    assert {h["check"] for h in report["heartbeats"]} == set(GPU_CHECKS)


def test_text_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", FAKE_NVML)
    code, out, _ = check(capsys, "--check", "pcie", "--state-dir", str(tmp_path))
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["CHECK", "SCOPE", "STATUS"]
    assert lines[1].split()[:3] == ["pcie", "gpu0", "ok"]
    assert lines[-1].endswith(": healthy")


def test_npd_format_exit_codes_and_80_bytes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", FAKE_NVML)
    code, out, _ = check(
        capsys, "--format", "npd", "--check", "thermal", "--state-dir", str(tmp_path)
    )
    assert (code, out.startswith("ok: thermal")) == (0, True)
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", "missing")
    code, out, _ = check(
        capsys, "--format", "npd", "--check", "thermal", "--state-dir", str(tmp_path)
    )
    assert code == 1 and "dependency_missing" in out  # 1, not 2: NPD would keep a stale OK
    assert len(out.rstrip("\n").encode()) <= 80 and out.count("\n") == 1


def test_config_errors(tmp_path, capsys):
    bad = tmp_path / "node.yaml"
    bad.write_text("expect_gpus: eight\n")
    code, _, err = check(capsys, "--config", str(bad), "--state-dir", str(tmp_path))
    assert code == 2 and "expect_gpus" in err and str(bad) in err
    code, out, _ = check(capsys, "--format", "npd", "--config", str(bad))
    assert code == 1 and "expect_gpus" in out


def test_flags_win_over_the_config_file(tmp_path):
    import argparse

    from gpuslo.cli.check_args import configure
    from gpuslo.cli.sources import context_from_args

    config = tmp_path / "node.yaml"
    config.write_text("expect_gpus: 8\ninstance_type: p5.48xlarge\ncheck_timeout_s: 7\n")
    parser = argparse.ArgumentParser()
    configure(parser)
    args = parser.parse_args(
        [
            "--config",
            str(config),
            "--expect-gpus",
            "4",
            "--expect-network-devices",
            "efa=32",
            "--state-dir",
            str(tmp_path),
        ]
    )
    context = context_from_args(args)
    assert (context.expect_gpus, context.instance_type, context.timeout_s) == (
        4,
        "p5.48xlarge",
        7.0,
    )
    assert context.expect_network_devices == {"efa": 32}


def test_help_names_the_state_dir_default():
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "check", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "/var/lib/gpuslo when writable" in " ".join(done.stdout.split())


def test_recorded_output_of_a_real_h200_is_healthy_with_every_duration():
    """`gpuslo check --format json` as it ran on a real H200 (tests/fixtures/nvml/README.md)."""
    report = json.loads(
        (REPO / "tests" / "fixtures" / "nvml" / "h200-gpuslo-check.json").read_text()
    )
    assert report["verdict"] == "healthy" and report["driver_version"] == "580.159.04"
    assert {r["check"] for r in report["results"]} >= set(GPU_CHECKS)
    assert all(r["duration_s"] > 0 for r in report["results"])
    assert all(h["runs_total"] == 1 and h["last_success"] > 0 for h in report["heartbeats"])
    probe = json.loads(
        (REPO / "tests" / "fixtures" / "nvml" / "h200-gpuslo-check-active.json").read_text()
    )
    (result,) = probe["results"]
    assert result["status"] == "ok" and result["scope"] == report["gpus"][0]["uuid"]


def test_recorded_nvidia_smi_fallback_on_a_real_h200_is_healthy():
    path = REPO / "tests" / "fixtures" / "nvml" / "h200-gpuslo-check-nvidia-smi.json"
    report = json.loads(path.read_text())
    assert report["verdict"] == "healthy"
    assert {r["source"] for r in report["results"] if r["check"] in GPU_CHECKS} == {"nvidia-smi"}
