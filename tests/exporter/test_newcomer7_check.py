"""`gpuslo check` and the GPU policy as the newcomer of tests/data/newcomer7/FINDINGS.md saw them
(F12: an Xid scoped `pci:<bus>` beside the inventory naming that GPU; F13: fabric `status ?`)."""

from __future__ import annotations

import dataclasses
import json

from conftest import REPO

from gpuslo.cli import main
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.verdict import CheckResult, gpu_scoped

NVML = REPO / "gpuslo" / "data" / "nvml_replay"
# the newcomer's kernel log (FINDINGS.md F4/F12), verbatim
XID79 = "[ 1843.308145] NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus.\n"


def _check(tmp_path, monkeypatch, capsys, fmt):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x8.json"))
    (tmp_path / "kern.log").write_text(XID79)
    code = main(["check", "--format", fmt, "--check", "gpu_inventory", "--check", "xid",
                 "--state-dir", str(tmp_path / "state"),
                 "--kernel-log", str(tmp_path / "kern.log")])
    return code, capsys.readouterr().out


def test_check_names_the_gpu_of_an_xid_the_inventory_of_the_same_run_names(
    tmp_path, monkeypatch, capsys
):
    """newcomer7 F12: README: held under `pci:<bus id>` only until the inventory names its GPU;
    here the same run's inventory names 00000000:00:06.0 as gpu0."""
    code, out = _check(tmp_path, monkeypatch, capsys, "text")
    assert code == 1
    (xid,) = [line for line in out.splitlines() if line.startswith("xid ") and "fail" in line]
    assert xid.split()[1] == "gpu0" and "pci:" not in xid.split()[1]
    code, out = _check(tmp_path, monkeypatch, capsys, "json")
    results = json.loads(out)["results"]
    (row,) = [r for r in results if r["check"] == "xid" and r["status"] == "fail"]
    assert row["scope"].startswith("GPU-") and row["gpu"] == "0"


def test_a_bus_id_no_gpu_of_the_inventory_has_keeps_its_pci_scope():
    """Negative: a fault on a bus id the inventory does not list (a GPU fallen off the bus that
    NVML no longer shows) stays `pci:<bus id>`, with no GPU index."""

    @dataclasses.dataclass
    class Gpu:
        uuid: str
        index: str
        pci_bus_id: str

    gpus = [Gpu("GPU-a", "0", "00000000:00:06.0")]
    results = [
        CheckResult("xid", "pci:00000000:00:06.0", "fail", reason="fallen_off_bus"),
        CheckResult("xid", "pci:00000000:00:07.0", "fail", reason="fallen_off_bus"),
    ]
    moved, kept = gpu_scoped(results, gpus)
    assert (moved.scope, moved.gpu) == ("GPU-a", "0")
    assert (kept.scope, kept.gpu) == ("pci:00000000:00:07.0", "")


def test_fabric_status_not_reported_prints_as_nvidia_smi_shows_it():
    """newcomer7 F13 (NVIDIA/gpu-operator#2511: `State : In Progress`, `Status : N/A`): the
    message says `status N/A`, never `status ?`; a reported status is printed as it is."""
    s = GpuStatus(index="0", uuid="GPU-a", fabric_state="In Progress", fabric_status=None)
    (problem,) = evaluate_gpu(s)
    assert problem.message == "NVLink fabric state In Progress, status N/A"
    s = dataclasses.replace(s, fabric_state="Completed", fabric_status="Insufficient Resources")
    (problem,) = evaluate_gpu(s)
    assert problem.message == "NVLink fabric state Completed, status Insufficient Resources"
