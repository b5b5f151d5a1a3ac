"""Newcomer 7 F4 (tests/data/newcomer7/FINDINGS.md): with PyTorch importable and no `--active`,
the exporter exported the probe validator `available` and `gate_unavailable 0`, while the probe
itself answered `dependency_missing` (no CUDA) and the gate returned a GPU fresh from Xid 79 by
hold-down (`held_down`). Now the validator reads `unavailable` and the flag 1 in the cycles where
the gate holds down without it; a probe that answers keeps `available` (the negative)."""

from __future__ import annotations

import pytest
from conftest import REPO

from gpuslo import names
from gpuslo.cli import main
from gpuslo.exporter import validators as validators_module
from gpuslo.exporter.policy import return_to_service as rts
from gpuslo.exporter.policy.return_to_service import ValidatorOutcome
from gpuslo.exporter.validators import as_answered, outcome_of, unavailable_answers
from gpuslo.verdict import CheckResult

NVML = REPO / "gpuslo" / "data" / "nvml_replay"
# the newcomer's kernel log (newcomer7-inputs/gate/kernA.log, the replayed H200's bus id)
XID79 = "[ 1843.308145] NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus.\n"
CLEAN = "[    5.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07\n"
# what the probe answers on a node with PyTorch and no CUDA device (`gpu_probe`'s unknown)
NO_CUDA = CheckResult(check="gpu_probe", scope="node", status=names.STATUS_UNKNOWN,
                      reason="dependency_missing", message="PyTorch sees no CUDA device")
PASSED = CheckResult(check="gpu_probe", scope="node", status=names.STATUS_OK,
                     message="bf16 779 TFLOPS, copy 4.13 TB/s")


def _exporter(tmp_path, monkeypatch, capsys, probe: CheckResult) -> list[dict[str, str]]:
    """The Xid 79, a reboot, then four `exporter --once` cycles with the probe answering
    `probe` (in place of the child process); each cycle's gate series."""
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x8.json"))
    monkeypatch.delenv("GPUSLO_PROBE_REPLAY", raising=False)
    monkeypatch.setattr(validators_module.importlib.util, "find_spec",
                        lambda name: object() if name == "torch" else None)
    monkeypatch.setattr(validators_module.shutil, "which", lambda name: None)

    def run(self, gpus, states):
        return {u: [outcome_of("probe", [probe], u)] for u in gpus.values()}

    monkeypatch.setattr(validators_module.Validators, "run", run)
    boot = tmp_path / "proc/sys/kernel/random/boot_id"
    boot.parent.mkdir(parents=True)
    log = tmp_path / "kern.log"
    cycles = []
    for boot_id, text in [("boot-1", CLEAN + XID79)] + [("boot-2", CLEAN)] * 4:
        boot.write_text(boot_id + "\n")
        log.write_text(text)
        assert main(["exporter", "--once", "--state-dir", str(tmp_path / "state"),
                     "--kernel-log", str(log), "--path.procfs", str(tmp_path / "proc")]) == 0
        lines = capsys.readouterr().out.splitlines()
        cycles.append({line.rsplit(" ", 1)[0]: line.rsplit(" ", 1)[1] for line in lines
                       if line.startswith("gpuslo_gpu_validation_")})
    return cycles


PROBE_AVAILABLE = 'gpuslo_gpu_validation_validator{state="available",validator="probe"}'
UNAVAILABLE = "gpuslo_gpu_validation_gate_unavailable"


def test_f4_a_probe_that_answers_dependency_missing_is_unavailable(tmp_path, monkeypatch,
                                                                  capsys):
    cycles = _exporter(tmp_path, monkeypatch, capsys, NO_CUDA)
    held_down = [c for c in cycles if any('outcome="held_down"' in k for k in c)]
    assert held_down, "the gate holds the GPU down when its only validator cannot run"
    for cycle in cycles[1:]:  # every cycle that tried the probe says it is not there
        assert (cycle[PROBE_AVAILABLE], cycle[UNAVAILABLE]) == ("0.0", "1.0")


def test_f4_negative_a_probe_that_answers_stays_available(tmp_path, monkeypatch, capsys):
    cycles = _exporter(tmp_path, monkeypatch, capsys, PASSED)
    assert not [k for c in cycles for k in c if 'outcome="held_down"' in k]
    assert [k for k in cycles[1] if 'outcome="passed"' in k]
    for cycle in cycles:
        assert (cycle[PROBE_AVAILABLE], cycle[UNAVAILABLE]) == ("1.0", "0.0")


@pytest.mark.parametrize(("previous", "answers", "expected"), [
    ({}, [rts.UNAVAILABLE, rts.UNAVAILABLE], {"probe": "m"}),
    ({}, [rts.UNAVAILABLE, rts.PASS], {}),  # it ran on one GPU: it is there
    ({"probe": "old"}, [rts.INCONCLUSIVE], {}),  # a timeout is not "not installed"
    ({"probe": "old"}, [], {"probe": "old"}),  # no try this cycle: the last answer stands
])
def test_f4_unavailable_answers(previous, answers, expected):
    outcomes = {f"GPU-{i}": [ValidatorOutcome("probe", s, "m")] for i, s in enumerate(answers)}
    assert unavailable_answers(previous, outcomes) == expected


def test_f4_as_answered_only_lowers_available():
    states = {"probe": "available", "dcgm_diag": "not_configured"}
    assert as_answered(states, {"probe": "x", "dcgm_diag": "y"}) == {
        "probe": "unavailable", "dcgm_diag": "not_configured"}
    assert as_answered(states, {}) == states
