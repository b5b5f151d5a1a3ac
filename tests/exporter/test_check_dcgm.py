"""The `dcgm` check against a real HTTP server on loopback serving recorded and synthetic pages."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import CORPUS
from fixtures.dcgm.loopback_server import dcgm_server

from gpuslo.errors import DependencyMissing, ParseError, ToolError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.dcgm import STATE_FILE, DcgmCheck
from gpuslo.verdict import gpu_verdicts, node_verdict

SYNTHETIC = Path(__file__).resolve().parent.parent / "fixtures" / "dcgm"
H200 = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"
PAGES = {
    "healthy": (SYNTHETIC / "h200_healthy.synthetic.prom").read_text(),
    "next": (SYNTHETIC / "h200_healthy_next.synthetic.prom").read_text(),
    "xid79": (SYNTHETIC / "h200_xid79.synthetic.prom").read_text(),
    "mig": (CORPUS / "dcgm-exporter" / "xid_errors_a30_mig.prom").read_text(),
    "temps_only": (CORPUS / "dcgm-exporter" / "modern_mig_pod_labels_gpu_temp.prom").read_text(),
    "pr239": (CORPUS / "dcgm-exporter" / "exp_xid_count_pr239.prom").read_text(),
    "truncate": (SYNTHETIC / "h200_healthy.synthetic.prom").read_text(),
}
# the next scrape without the PCIe replay family (its HELP/TYPE lines and sample)
PAGES["smaller"] = "\n".join(
    line for line in PAGES["next"].splitlines() if "PCIE_REPLAY" not in line
)


@pytest.fixture(scope="module")
def served():
    with dcgm_server(PAGES) as (url, pages):
        yield url, pages


@pytest.fixture
def server(served):
    return served[0]


T0 = 1_700_000_000.0


def run(
    server: str, path: str, state_dir: Path, timeout_s: float = 2.0, at: float = T0, url: str = ""
) -> list:
    """One run of the check with its clock at `at`; `url` overrides server + path."""
    context = CheckContext(
        dcgm_url=url or f"{server}{path}",
        state_dir=state_dir,
        procfs=state_dir / "no-procfs",  # the pages' GPUs are no host's: nothing to tell them by
        timeout_s=timeout_s,
        clock=lambda: at,
    )
    return DcgmCheck().run(context)


def test_not_configured_is_explicitly_not_applicable(tmp_path):
    (result,) = DcgmCheck().run(CheckContext(state_dir=tmp_path))
    assert (result.status, result.applicable, result.scope) == ("ok", False, "node")


def test_healthy_page_then_an_advancing_energy_counter_stays_healthy(server, tmp_path):
    first = run(server, "/metrics/healthy", tmp_path)
    assert [(r.scope, r.gpu, r.status) for r in first] == [(H200, "0", "ok")]
    assert first[0].source.startswith("dcgm-exporter http://127.0.0.1:")
    assert first[0].observed_at == T0
    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert state["energy"] == {H200: [1_234_567_890.0, T0]}
    second = run(server, "/metrics/next", tmp_path, at=T0 + 120)
    assert gpu_verdicts(second, [H200]) == {H200: "healthy"}


def test_energy_counter_frozen_past_three_collection_intervals_is_stale(server, tmp_path):
    run(server, "/metrics/healthy", tmp_path)
    (same_cycle,) = run(server, "/metrics/healthy", tmp_path, at=T0 + 30)
    assert same_cycle.status == "ok"  # dcgm-exporter may not have collected again yet
    (result,) = run(server, "/metrics/healthy", tmp_path, at=T0 + 120)
    assert (result.status, result.reason, result.layer) == (
        "unknown",
        "stale_data",
        "observability",
    )


def test_state_from_another_exporter_url_is_not_reused(server, tmp_path):
    run(server, "/metrics/healthy", tmp_path)
    (result,) = run(server, "/metrics/healthy?other", tmp_path, at=T0 + 120)
    assert result.status == "ok"


def test_broken_state_file_is_a_parse_error_naming_it(server, tmp_path):
    url = f"{server}/metrics/healthy"
    (tmp_path / STATE_FILE).write_text(json.dumps({"url": url, "energy": {H200: 5}}))
    with pytest.raises(ParseError) as caught:
        run(server, "", tmp_path, url=url)
    assert STATE_FILE in str(caught.value)


def test_last_xid_and_memory_problems_fail_the_gpu(server, tmp_path):
    (result,) = run(server, "/metrics/xid79", tmp_path)
    expected = ("fail", "fallen_off_bus", "reboot_node")  # Xid 79's reason, from its policy entry
    assert (result.status, result.reason, result.action) == expected
    assert "79" in result.message


def test_mig_page_gives_one_result_per_gpu_uuid(server, tmp_path):
    results = run(server, "/metrics/mig", tmp_path)
    assert sorted(r.gpu for r in results) == ["0", "1"]
    assert node_verdict(results) == "healthy"


def test_required_family_missing_is_unknown_never_zero(server, tmp_path):
    results = run(server, "/metrics/temps_only", tmp_path)
    node = [r for r in results if r.scope == "node"]
    assert [(r.status, r.reason) for r in node] == [("unknown", "no_data")]
    assert "DCGM_FI_DEV_XID_ERRORS" in node[0].message
    assert node_verdict(results) == "unknown"


def test_family_that_disappears_between_scrapes_is_unknown(served, tmp_path):
    server, pages = served
    pages["live"] = PAGES["healthy"]
    run(server, "/metrics/live", tmp_path)
    pages["live"] = PAGES["smaller"]  # the same exporter stops serving a family
    results = run(server, "/metrics/live", tmp_path, at=T0 + 30)
    node = [r for r in results if r.scope == "node"]
    assert [(r.status, r.reason) for r in node] == [("unknown", "no_data")]
    assert "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" in node[0].message
    assert node_verdict(results) == "unknown"


def test_unparsable_page_raises_parse_error(server, tmp_path):
    with pytest.raises(ParseError):
        run(server, "/metrics/pr239", tmp_path)


@pytest.mark.parametrize("path", ["/hang", "/500", "/truncate", "/huge", "/trickle"])
def test_broken_exporter_raises_tool_error_within_the_deadline(server, tmp_path, path):
    started = time.monotonic()
    with pytest.raises(ToolError):
        run(server, path, tmp_path, timeout_s=1.0)
    assert time.monotonic() - started < 1.0 + 1.0
    assert not (tmp_path / STATE_FILE).exists()  # nothing half-written


def test_exporter_not_running_is_a_missing_dependency(tmp_path):
    with dcgm_server() as (url, _):
        pass  # started and stopped: the port is closed now
    with pytest.raises(DependencyMissing):
        run(url, "/metrics", tmp_path, timeout_s=1.0)
