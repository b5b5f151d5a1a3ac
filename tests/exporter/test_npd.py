"""node-problem-detector: the plugin answer (exit code, ≤ 80 bytes) and the generated
custom-plugin-monitor config (golden file)."""

from __future__ import annotations

import json

from conftest import REPO
from hypothesis import given
from hypothesis import strategies as st

from gpuslo.errors import DependencyMissing
from gpuslo.exporter.checks.registry import default_names
from gpuslo.exporter.npd import (
    MAX_MESSAGE_BYTES,
    main,
    plugin_answer,
    render_monitor_config,
    run_plugin,
    truncate,
)
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import CheckResult

DEPLOYED = REPO / "deploy" / "node-problem-detector" / "gpuslo-monitor.json"
GOLDEN = REPO / "tests" / "golden" / "npd" / "gpuslo-monitor.json"


def test_generated_config_matches_golden_and_deployed(tmp_path):
    out = tmp_path / "monitor.json"
    assert main([str(out)]) == 0
    assert out.read_bytes() == GOLDEN.read_bytes() == DEPLOYED.read_bytes()


def test_config_has_a_condition_and_rule_per_check_every_30s():
    config = json.loads(render_monitor_config())
    assert config["pluginConfig"]["invoke_interval"] == "30s"
    assert config["pluginConfig"]["max_output_length"] == MAX_MESSAGE_BYTES
    # one rule per check, and the return-to-service gate's, which runs every check and the
    # probe on the validating GPUs: a longer timeout than the others
    assert [r["args"][4] for r in config["rules"]] == [*default_names(active=False), "validation"]
    assert {c["type"] for c in config["conditions"]} == {r["condition"] for r in config["rules"]}
    for rule in config["rules"]:
        assert rule["args"][:3] == ["check", "--format", "npd"]
    assert {r["timeout"] for r in config["rules"][:-1]} == {"25s"}
    assert config["rules"][-1]["timeout"] == "90s"


@given(st.text(max_size=400))
def test_truncate_fits_80_bytes_on_one_line(text):
    line = truncate(text)
    assert len(line.encode()) <= MAX_MESSAGE_BYTES and "\n" not in line
    line.encode().decode()  # never a split character


def result(check, status, reason="", gpu="", message="m"):
    return CheckResult(
        check=check,
        scope=f"GPU-{gpu}" if gpu else "node",
        status=status,
        reason=reason,
        gpu=gpu,
        message=message,
    )


def test_answers():
    healthy = NodeSnapshot("n", results=(result("thermal", "ok"), result("pcie", "warn")))
    assert plugin_answer(healthy) == (0, "ok: pcie, thermal")
    bad = NodeSnapshot(
        "n",
        results=(
            result("thermal", "ok"),
            result("gpu_memory", "fail", "ecc_uncorrectable", "3", "é" * 80),
        ),
    )
    code, message = plugin_answer(bad)
    assert code == 1 and message.startswith("gpu_memory gpu3 fail ecc_uncorrectable: é")
    assert len(message.encode()) <= 80
    unknown = NodeSnapshot("n", results=(result("xid", "unknown", "check_timeout"),))
    assert plugin_answer(unknown)[0] == 1
    assert plugin_answer(NodeSnapshot("n"))[0] == 1  # nothing checked is not ok


def test_own_errors_exit_1_not_2(capsys):
    def broken():
        raise DependencyMissing("NVML library not found")

    assert run_plugin(broken) == 1
    assert "NVML library not found" in capsys.readouterr().out

    def crashed():
        raise RuntimeError("bug")

    assert run_plugin(crashed) == 1
