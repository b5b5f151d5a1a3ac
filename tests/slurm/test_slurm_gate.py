"""The return-to-service gate against a real slurmctld/slurmd on loopback: gpuslo drains the node
for a fatal Xid on the replayed H200, and after the reboot resumes its own drain only once the
probe (the probe replay) has validated the GPU; a gate that fails keeps it drained."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, REPO
from slurm_cluster import wait_for

from gpuslo.cli import main

pytestmark = pytest.mark.slurm

NVML = REPO / "gpuslo" / "data" / "nvml_replay"
REPLAY = json.loads((REPO / "gpuslo" / "data" / "probe_replay" / "h200.json").read_text())
HEALTHY_LOG = (FIXTURES / "h200" / "dmesg.txt").read_text()
XID79 = ("[  100.000000] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, "
         "GPU has fallen off the bus.\n")
XID_REASON = "gpuslo: xid fallen_off_bus pci:00000000:00:06.0"


def reason_of(text: str) -> str:
    for line in text.splitlines():
        if line.strip().startswith("Reason="):
            return line.strip()[len("Reason="):].rsplit(" [", 1)[0]
    return ""


class Node:
    """The Slurm node as a replayed H200: boot id, kernel log and probe replay of its own."""

    def __init__(self, cluster, tmp_path, monkeypatch):
        self.cluster, self.root = cluster, tmp_path
        monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
        monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x1.json"))
        monkeypatch.setenv("GPUSLO_PROBE_REPLAY", str(tmp_path / "probe.json"))
        (tmp_path / "proc/sys/kernel/random").mkdir(parents=True)
        (tmp_path / "node.yaml").write_text("validation: {validators: [probe], max_tries: 2}\n")

    def boot(self, boot_id: str, log: str = HEALTHY_LOG) -> None:
        (self.root / "proc/sys/kernel/random/boot_id").write_text(boot_id + "\n")
        (self.root / "kern.log").write_text(log)

    def probe(self, tflops: float) -> None:
        idle = {**REPLAY["idle"], "bf16_tflops": tflops, "seconds": 0.05}
        (self.root / "probe.json").write_text(json.dumps({**REPLAY, "idle": idle}))

    def health_check(self, capsys) -> tuple[int, str, str]:
        """`gpuslo check --format slurm --drain` as slurmd's HealthCheckProgram would run it:
        (exit code, the line, the node's Slurm reason after it)."""
        code = main(["check", "--format", "slurm", "--drain", "--node", self.cluster.node,
                     "--state-dir", str(self.root / "state"), "--kernel-log",
                     str(self.root / "kern.log"), "--path.procfs", str(self.root / "proc"),
                     "--config", str(self.root / "node.yaml")])
        return code, capsys.readouterr().out.strip(), reason_of(self.cluster.show())


def test_drained_for_a_fault_resumed_only_after_the_gate(cluster, tmp_path, monkeypatch, capsys):
    node = Node(cluster, tmp_path, monkeypatch)
    node.probe(300.0)
    node.boot("boot-1", HEALTHY_LOG + XID79)
    assert node.health_check(capsys) == (1, XID_REASON, XID_REASON)
    node.boot("boot-2")  # rebooted: the Xid is gone, the GPU is validating, its probe slow
    assert node.health_check(capsys) == (
        1, "gpuslo: validation validation gpu0", "gpuslo: validation validation gpu0")
    assert "DRAIN" in cluster.show()  # still no work for it
    node.probe(779.0)  # the next try passes: gpuslo resumes its own drain
    assert node.health_check(capsys) == (0, "gpuslo: ok", "")
    wait_for(lambda: "DRAIN" not in cluster.show(), 10)


def test_a_failed_gate_keeps_the_node_drained(cluster, tmp_path, monkeypatch, capsys):
    node = Node(cluster, tmp_path, monkeypatch)
    node.probe(316.0)
    node.boot("boot-1", HEALTHY_LOG + XID79)
    node.health_check(capsys)
    node.boot("boot-2")
    assert node.health_check(capsys)[1] == "gpuslo: validation validation gpu0"
    failed = "gpuslo: validation validation_failed gpu0"
    assert node.health_check(capsys) == (1, failed, failed)  # try 2 of 2: the gate fails
    node.probe(779.0)
    assert node.health_check(capsys) == (1, failed, failed)  # not without a new repair
    assert "DRAIN" in cluster.show()


def test_an_admins_resume_is_validated_before_the_node_stays_up(cluster, tmp_path, monkeypatch,
                                                                capsys):
    """A thermal fault, say, whose check no longer reports it clears with check_ok anyway; an
    admin resuming gpuslo's drain is counted (the state file says so) and the GPU is validated:
    here the probe passes, so the node stays up."""
    node = Node(cluster, tmp_path, monkeypatch)
    node.probe(779.0)
    node.boot("boot-1", HEALTHY_LOG + XID79)
    node.health_check(capsys)
    cluster.resume()  # the admin: "I reset the GPU"
    node.boot("boot-1")  # same boot, the log rotated: the Xid is no longer in it
    code, line, reason = node.health_check(capsys)
    assert (code, line, reason) == (0, "gpuslo: ok", "")
    saved = json.loads((tmp_path / "state" / "return_to_service.json").read_text())
    assert saved["resumes"] == 1 and saved["drained"] is False
    assert saved["totals"] == [["GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5", "passed", 1]]
