"""The gate on a node: its state file across `gpuslo check` runs, the clearing evidence read
from procfs and the xid cursor, validators with fake tools, and failing closed."""

from __future__ import annotations

import json
import os
import stat

from conftest import REPO

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.dcgm_diag import DcgmDiagCheck
from gpuslo.exporter.gate import STATE_FILE, ReturnToService, load_gate_file, outcome_of
from gpuslo.exporter.policy.return_to_service import ValidatorOutcome, load_gate_policy
from gpuslo.exporter.snapshot import GpuInfo, NodeSnapshot
from gpuslo.verdict import CheckResult, gpu_scoped, gpu_verdicts

GPUS = (GpuInfo("0", "GPU-0", "00000000:00:06.0", "NVIDIA H200", "hopper"),
        GpuInfo("1", "GPU-1", "00000000:00:07.0", "NVIDIA H200", "hopper"))
XID79 = CheckResult("xid", "pci:00000000:00:06.0", "fail", "fallen_off_bus",
                    action="reset_gpu", message="Xid 79 (fatal): GPU has fallen off the bus.")
CLEAN = CheckResult("xid", "node", "ok", message="120 kernel-log records read, 0 GPU events")


class FakeValidators:
    """Answers every try with the next outcome of `plan`."""

    def __init__(self, *plan):
        self.plan, self.calls = list(plan), []

    def run(self, gpus, states):
        self.calls.append(dict(gpus))
        status, message = self.plan.pop(0)
        return {uuid: [ValidatorOutcome("probe", status, message)] for uuid in gpus.values()}


def node(tmp_path, boot):
    procfs = tmp_path / "proc"
    (procfs / "sys/kernel/random").mkdir(parents=True, exist_ok=True)
    (procfs / "sys/kernel/random/boot_id").write_text(boot + "\n")
    return CheckContext(procfs=procfs, state_dir=tmp_path / "state")


def snap(*results):
    return NodeSnapshot("n1", gpus=GPUS, results=(*results, CheckResult("xid", "GPU-1", "ok")))


def verdicts(snapshot):
    """As the collector reads them: a result named by bus id is its GPU's."""
    return gpu_verdicts(gpu_scoped(list(snapshot.results), GPUS), ["GPU-0", "GPU-1"])


def test_xid_then_reboot_then_validated_across_runs(tmp_path):
    clock = iter(range(0, 1000, 30))
    validators = FakeValidators(("fail", "bf16 316 TFLOPS below 545"), ("pass", "correct"))
    gate = ReturnToService(node(tmp_path, "boot-a"), load_gate_policy(), validators,
                           clock=lambda: float(next(clock)))
    first = gate.apply(snap(XID79))  # t=0: the bus-id-scoped Xid is GPU 0's
    assert verdicts(first) == {"GPU-0": "unhealthy", "GPU-1": "healthy"}
    assert [(g.uuid, g.state) for g in first.validation.gpus] == [("GPU-0", "held")]
    gate.context = node(tmp_path, "boot-b")  # rebooted
    second = gate.apply(snap(CLEAN))  # t=30: cleared by the reboot, first try fails
    assert verdicts(second)["GPU-0"] == "validating"
    assert validators.calls == [{"0": "GPU-0"}]  # only the validating GPU
    (view,) = second.validation.gpus
    assert (view.state, view.tries, view.since) == ("validating", 1, 30.0)
    third = gate.apply(snap(CLEAN))  # t=60: the second try passes
    assert verdicts(third) == {"GPU-0": "healthy", "GPU-1": "healthy"}
    assert third.validation.gpus == () and third.validation.gates_total == {
        ("GPU-0", "passed"): 1}
    saved = json.loads((tmp_path / "state" / STATE_FILE).read_text())
    assert saved["gpus"] == {} and saved["totals"] == [["GPU-0", "passed", 1]]


def test_a_broken_state_file_is_unknown_never_healthy(tmp_path):
    context = node(tmp_path, "boot-a")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / STATE_FILE).write_text('{"gpus": []}')
    out = ReturnToService(context, load_gate_policy(), FakeValidators()).apply(snap(CLEAN))
    assert verdicts(out) == {"GPU-0": "unknown", "GPU-1": "unknown"}
    assert STATE_FILE in out.results[-1].message
    assert (tmp_path / "state" / STATE_FILE).read_text() == '{"gpus": []}'  # refused, not reset


def test_admin_resume_is_counted_once_and_clears_a_fatal_xid(tmp_path):
    context = node(tmp_path, "boot-a")
    gate = ReturnToService(context, load_gate_policy(), FakeValidators(("pass", "correct")))
    gate.apply(snap(XID79))
    assert gate.note_slurm(drained_by_gpuslo=True, resumed_by_someone=False) is False
    assert gate.note_slurm(drained_by_gpuslo=None, resumed_by_someone=True) is True
    assert gate.note_slurm(drained_by_gpuslo=None, resumed_by_someone=True) is False
    assert load_gate_file(tmp_path / "state" / STATE_FILE).resumes == 1
    out = gate.apply(snap(CLEAN))
    assert verdicts(out)["GPU-0"] == "healthy"  # cleared by the resume, validated at once
    assert out.validation.gates_total == {("GPU-0", "passed"): 1}


def test_validator_outcomes_from_check_results():
    busy = CheckResult("gpu_probe", "GPU-0", "ok", message="busy: speed not judged (pid 4)")
    assert outcome_of("probe", [busy], "GPU-0").status == "inconclusive"
    assert outcome_of("probe", [CheckResult("gpu_probe", "GPU-0", "ok", message="correct")],
                      "GPU-0").status == "pass"
    missing = CheckResult("gpu_probe", "node", "unknown", "dependency_missing", message="torch")
    assert outcome_of("probe", [missing], "GPU-0").status == "unavailable"
    timeout = CheckResult("dcgm_diag", "node", "unknown", "check_timeout", message="300 s")
    assert outcome_of("dcgm_diag", [timeout], "GPU-0").status == "inconclusive"


def fake_dcgmi(tmp_path, fixture, code=0):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "dcgmi"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/argv\ncat {fixture}\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_dcgm_diag_validator_judges_each_gpu(tmp_path, monkeypatch):
    """DCGM 3.x `dcgmi diag -r 1 -j` output (tests/fixtures/evidence): GPU 0 fails a test,
    GPU 1 passes; dcgmi exits non-zero as DCGM does when a test fails."""
    fixture = REPO / "tests" / "fixtures" / "evidence" / "dcgmi-diag-r1-3x.json"
    monkeypatch.setenv("PATH", f"{fake_dcgmi(tmp_path, fixture, 226)}:{os.environ['PATH']}")
    config = {"validate_gpus": {"0": "GPU-0", "1": "GPU-1"}, "dcgm_diag_level": 2}
    results = DcgmDiagCheck().run(CheckContext(config=config, timeout_s=10))
    assert (tmp_path / "argv").read_text().split() == ["diag", "-r", "2", "-j", "-i", "0,1"]
    by = {r.gpu: r for r in results}
    assert (by["0"].status, by["0"].reason) == ("fail", "diagnostic_failed")
    assert by["1"].status == "ok"
