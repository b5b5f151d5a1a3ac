"""InfiniBand/RoCE and EFA port error counters between runs (the `port_errors` check), over the
sysfs fixture trees `infiniband-counters` and `efa-counters` (tests/fixtures/sysfs/
make_fixtures.py: the counter files of the kernel's core/sysfs.c and the EFA driver), copied so
each test can move the counters as a next run would see them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.port_errors import STATE_FILE, PortErrorsCheck
from gpuslo.exporter.evidence.fabric.counters import counter_max, read_port_counters
from gpuslo.exporter.policy.port_counters import judge_port
from gpuslo.exporter.runner import Runner

SYSFS = Path(__file__).resolve().parent.parent / "fixtures" / "sysfs"
T0 = 1_700_000_000.0


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "sysfs"
    shutil.copytree(SYSFS / "infiniband-counters", root, symlinks=True)
    return root


def _set(root: Path, device: str, counter: str, value: int, kind: str = "counters") -> None:
    (root / "class" / "infiniband" / device / "ports" / "1" / kind / counter).write_text(
        f"{value}\n"
    )


def _run(root: Path, tmp_path: Path, t: float, **config) -> dict:
    ctx = CheckContext(sysfs=root, state_dir=tmp_path / "state", clock=lambda: t, config=config)
    return {r.scope: r for r in PortErrorsCheck().run(ctx)}


def test_reads_only_the_error_counters_with_their_widths(tree):
    counters = read_port_counters(tree)
    assert sorted(counters) == ["mlx5_0/1", "mlx5_1/1", "mlx5_2/1", "mlx5_3/1"]
    port = counters["mlx5_0/1"]
    assert port["counters/symbol_error"] == 2 and port["counters/link_downed"] == 1
    assert "counters/port_rcv_data" not in port  # traffic, not an error
    assert counter_max("counters/symbol_error") == 65535
    assert counter_max("counters/link_downed") == 255
    assert counter_max("hw_counters/rx_drops") is None


def test_first_run_records_the_baseline_and_names_a_saturated_counter(tree, tmp_path):
    results = _run(tree, tmp_path, T0)
    assert [results[d].status for d in ("mlx5_0", "mlx5_1", "mlx5_2")] == ["ok"] * 3
    assert "baseline recorded" in results["mlx5_0"].message
    saturated = results["mlx5_3"]
    assert (saturated.status, saturated.reason) == ("warn", "network_port_errors")
    assert "symbol_error at 65535" in saturated.message and "saturated" in saturated.message
    assert (tmp_path / "state" / STATE_FILE).exists()


def test_errors_rising_are_a_rate_and_link_downed_rising_is_a_flap(tree, tmp_path):
    _run(tree, tmp_path, T0)
    _set(tree, "mlx5_0", "symbol_error", 42)
    _set(tree, "mlx5_0", "port_rcv_errors", 10)
    _set(tree, "mlx5_1", "link_downed", 3)
    results = _run(tree, tmp_path, T0 + 30)
    errors, flap = results["mlx5_0"], results["mlx5_1"]
    assert (errors.status, errors.reason, errors.layer) == ("warn", "network_port_errors", "node")
    assert "+40 symbol_error (1.33/s)" in errors.message and "+10 port_rcv_errors" in errors.message
    assert (flap.status, flap.reason) == ("warn", "network_link_flap")
    assert "+2 link_downed" in flap.message
    assert results["mlx5_2"].status == "ok"
    # the next run compares with this one: nothing new, quiet again
    assert _run(tree, tmp_path, T0 + 60)["mlx5_0"].status == "ok"


def test_a_threshold_and_the_node_config_decide_what_counts(tree, tmp_path):
    _run(tree, tmp_path, T0)
    _set(tree, "mlx5_0", "symbol_error", 42)
    assert _run(tree, tmp_path, T0 + 30, port_error_threshold=100)["mlx5_0"].status == "ok"
    _set(tree, "mlx5_0", "symbol_error", 90)
    strict = {"degradation_status": {"network_port_errors": "fail"}}
    assert _run(tree, tmp_path, T0 + 60, **strict)["mlx5_0"].status == "fail"


def test_a_counter_reset_is_a_new_baseline_not_an_error(tree, tmp_path):
    _run(tree, tmp_path, T0)
    _set(tree, "mlx5_0", "symbol_error", 0)
    result = _run(tree, tmp_path, T0 + 30)["mlx5_0"]
    assert result.status == "ok" and "reset" in result.message


def test_an_unreadable_counter_is_unknown(tree, tmp_path):
    _set(tree, "mlx5_2", "port_xmit_discards", 0)
    (tree / "class/infiniband/mlx5_2/ports/1/counters/port_xmit_discards").write_text("N/A\n")
    result = _run(tree, tmp_path, T0)["mlx5_2"]
    assert (result.status, result.reason) == ("unknown", "parse_error")


def test_efa_hardware_counters(tmp_path):
    root = tmp_path / "sysfs"
    shutil.copytree(SYSFS / "efa-counters", root, symlinks=True)
    assert read_port_counters(root)["rdmap1s0/1"]["hw_counters/rx_drops"] == 3
    _run(root, tmp_path, T0)
    _set(root, "rdmap2s0", "rx_drops", 500, kind="hw_counters")
    _set(root, "rdmap2s0", "retrans_timeout_events", 7, kind="hw_counters")
    results = _run(root, tmp_path, T0 + 60)
    assert results["rdmap1s0"].status == "ok"
    assert results["rdmap2s0"].reason == "network_port_errors"
    assert "+497 rx_drops" in results["rdmap2s0"].message


def test_no_rdma_is_not_applicable(tmp_path):
    (result,) = _run(SYSFS / "no-rdma", tmp_path, T0).values()
    assert result.status == "ok" and result.applicable is False


def test_a_corrupt_baseline_is_unknown_and_never_reset(tree, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / STATE_FILE).write_text('{"t": 1, "ports": [1]}')
    runner = Runner([PortErrorsCheck()], CheckContext(sysfs=tree, state_dir=state, timeout_s=5))
    try:
        results = runner.cycle().results
    finally:
        runner.close()
    assert results and all(r.status == "unknown" for r in results)
    assert STATE_FILE in results[0].message
    assert (state / STATE_FILE).read_text() == '{"t": 1, "ports": [1]}'


def test_judge_port_is_pure_and_says_the_rate():
    before = {"counters/symbol_error": 5}
    judged = judge_port("mlx5_0/1", before, {"counters/symbol_error": 65}, 60.0)
    assert judged.reason == "network_port_errors" and "+60 symbol_error (1/s)" in judged.message
