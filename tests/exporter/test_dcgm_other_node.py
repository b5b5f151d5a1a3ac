"""A `--dcgm-url` pointing at another node's dcgm-exporter is a misconfigured source, never this
node's GPUs: where NVML gives the local GPU UUIDs, a page none of whose UUIDs is local makes the
node `unknown` (`dcgm` / `no_data`, saying so) and is not merged; a page with some foreign GPUs
is judged on the local ones only, with a warn naming the others. Found by newcomer12
(tests/fixtures/newcomer12/README.md): node-17's healthy page made the replayed H200 `ok`, its
Xid 79 page left every gpuslo_gpu_usable at 1, and `check --format json` listed 16 GPUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO
from fixtures.dcgm.loopback_server import dcgm_server

from gpuslo import names
from gpuslo.cli import main
from gpuslo.exporter.policy.dcgm import on_this_node
from gpuslo.verdict import NODE_SCOPE, CheckResult

NEWCOMER = REPO / "tests" / "fixtures" / "newcomer12"
NVML = REPO / "gpuslo" / "data" / "nvml_replay"
PAGES = {
    "node17_healthy": (NEWCOMER / "dcgm_healthy.prom").read_text(),
    "node17_xid79": (NEWCOMER / "dcgm_xid79.prom").read_text(),
    "own_xid79": (REPO / "tests" / "fixtures" / "dcgm" / "h200_xid79.synthetic.prom").read_text(),
}
LOCAL = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"  # h200x1's GPU, the synthetic page's too
LOG = NEWCOMER / "rotate_after_kern.log"  # a clean kernel log


@pytest.fixture(scope="module")
def url():
    with dcgm_server(PAGES) as (base, _):
        yield base


def check(tmp_path: Path, capsys, monkeypatch, url: str, replay: str) -> tuple[int, dict]:
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / replay))
    code = main(["check", "--format", "json", "--dcgm-url", url, "--kernel-log", str(LOG),
                 "--state-dir", str(tmp_path / "state"),
                 "--path.procfs", str(tmp_path / "no-procfs")])  # the replay's GPUs, not a host's
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("page", ["node17_healthy", "node17_xid79"])
def test_another_nodes_page_is_unknown_and_not_merged(tmp_path, capsys, monkeypatch, url, page):
    code, report = check(tmp_path, capsys, monkeypatch, f"{url}/metrics/{page}", "h200x8.json")
    dcgm = [r for r in report["results"] if r["check"] == "dcgm"]
    assert [(r["scope"], r["status"], r["reason"]) for r in dcgm] == [
        (NODE_SCOPE, "unknown", "no_data")]
    assert "the dcgm-exporter page is not this node's: none of its 8 GPUs" in dcgm[0]["message"]
    assert code == 1 and report["verdict"] == "unknown"
    gpus = report["gpus"]
    assert len(gpus) == 8 and len({g["gpu"] for g in gpus}) == 8
    assert not any(g["uuid"].startswith("GPU-0000000") for g in gpus)
    assert {g["verdict"] for g in gpus} == {"unknown"}  # never usable on a foreign page


def test_this_nodes_own_page_is_merged_as_before(tmp_path, capsys, monkeypatch, url):
    """The negative: a page whose UUIDs are the node's is judged on them."""
    code, report = check(tmp_path, capsys, monkeypatch, f"{url}/metrics/own_xid79", "h200x1.json")
    dcgm = [(r["scope"], r["status"], r["reason"]) for r in report["results"]
            if r["check"] == "dcgm"]
    assert dcgm == [(LOCAL, "fail", "fallen_off_bus")], dcgm
    assert code == 1 and report["gpus"][0]["verdict"] == "unhealthy"


def result(scope: str, status: str = "ok", reason: str = "") -> CheckResult:
    return CheckResult("dcgm", scope, status, reason, source="dcgm-exporter http://x/metrics",
                       observed_at=5.0)


def test_a_page_with_some_foreign_gpus_is_judged_on_the_local_ones():
    foreign = result("GPU-00000003-aaaa", "fail", "xid_fatal")
    results = [result(LOCAL), foreign, CheckResult("xid", NODE_SCOPE, "ok")]
    judged = on_this_node(results, {LOCAL, "GPU-local-2"})
    assert [(r.check, r.scope, r.status) for r in judged] == [
        ("xid", NODE_SCOPE, "ok"), ("dcgm", LOCAL, "ok"), ("dcgm", NODE_SCOPE, "warn")]
    assert judged[-1].message.startswith(
        "1 GPUs of the dcgm-exporter page are not this node's (GPU-00000003-aaaa): not judged")


def test_without_an_inventory_or_uuids_nothing_is_changed():
    """No local identities (a run that read no inventory), or a page naming GPUs by index only:
    nothing can be told, so nothing changes."""
    results = [result("GPU-00000003-aaaa", "fail", "xid_fatal")]
    assert on_this_node(results, set()) == results
    by_index = [result("gpu:0", names.STATUS_OK)]
    assert on_this_node(by_index, {LOCAL}) == by_index


H200_INFO = REPO.parent / "shared" / "fixtures" / "h200" / "proc-driver-nvidia-gpus-information.txt"


def _procfs(tmp_path: Path) -> Path:
    """A procfs holding the real H200's `/proc/driver/nvidia/gpus/<bus>/information`."""
    gpu = tmp_path / "proc" / "driver" / "nvidia" / "gpus" / "0000:00:06.0"
    gpu.mkdir(parents=True)
    (gpu / "information").write_text(H200_INFO.read_text())
    return tmp_path / "proc"


def dcgm_alone(tmp_path: Path, capsys, url: str, procfs: Path) -> tuple[int, list]:
    """`gpuslo check --check dcgm` alone: no NVML inventory, only the driver's procfs files."""
    code = main(["check", "--check", "dcgm", "--format", "json", "--dcgm-url", url,
                 "--path.procfs", str(procfs), "--state-dir", str(tmp_path / "state")])
    report = json.loads(capsys.readouterr().out)
    return code, [(r["scope"], r["status"], r["reason"]) for r in report["results"]
                  if r["check"] == "dcgm"]


@pytest.mark.parametrize("page", ["node17_healthy", "node17_xid79"])
def test_the_dcgm_check_alone_tells_another_nodes_page_from_the_drivers_own_uuids(
        tmp_path, capsys, url, page):
    code, dcgm = dcgm_alone(tmp_path, capsys, f"{url}/metrics/{page}", _procfs(tmp_path))
    assert dcgm == [(NODE_SCOPE, "unknown", "no_data")] and code == 1


def test_the_dcgm_check_alone_judges_its_own_page_and_without_procfs_as_before(tmp_path, capsys,
                                                                               url):
    """The negatives: the node's own page is judged on its GPU; with no driver files to read,
    nothing can be told and another node's page is judged as it stands (as before)."""
    _, dcgm = dcgm_alone(tmp_path, capsys, f"{url}/metrics/own_xid79", _procfs(tmp_path))
    assert dcgm == [(LOCAL, "fail", "fallen_off_bus")]
    _, dcgm = dcgm_alone(tmp_path, capsys, f"{url}/metrics/node17_healthy", tmp_path / "none")
    assert len(dcgm) == 8 and {status for _, status, _ in dcgm} == {"ok"}
