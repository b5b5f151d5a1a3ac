"""The `xid` check over a fake /dev/kmsg (a file the test appends records to), across exporter
"restarts" (a new check object on the same state directory) and reboots (a new boot id); the
journalctl/dmesg fallback with real child processes; a kernel-log file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES

from gpuslo.errors import DependencyMissing
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck, count_events
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.policy.classify import classify_events
from gpuslo.exporter.policy.xid import load_policy

XID79 = (
    "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)
MAP = "NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b"
XID109 = (
    "NVRM: Xid (PCI:0000:cb:00): 109, pid=1, name=pt_main_thread, Ch 00000008, "
    "errorString CTX SWITCH TIMEOUT"
)


class Node:
    """A fake node: /dev/kmsg as a file, procfs with a boot id, a state directory."""

    def __init__(self, root: Path, boot_id: str = "boot-1") -> None:
        self.kmsg = root / "kmsg"
        self.kmsg.write_text("")
        self.procfs = root / "proc"
        (self.procfs / "sys/kernel/random").mkdir(parents=True)
        self.reboot(boot_id)
        self.state = root / "state"
        self.sequence = 0

    def reboot(self, boot_id: str) -> None:
        (self.procfs / "sys/kernel/random/boot_id").write_text(boot_id + "\n")
        self.kmsg.write_text("")
        self.sequence = 0

    def log(self, uptime_s: float, message: str, skip: int = 0) -> None:
        self.sequence += skip
        with self.kmsg.open("a") as handle:
            handle.write(f"3,{self.sequence},{int(uptime_s * 1e6)},-;{message}\n")
        self.sequence += 1

    def run(self, **extra):
        context = CheckContext(
            kmsg_path=self.kmsg,
            procfs=self.procfs,
            state_dir=self.state,
            clock=lambda: 1_700_000_000.0,
            **extra,
        )
        output = XidCheck().run(context)  # a new object each time: an exporter restart
        return {r.scope: r for r in output.results}, output.facts[0]


UUID = "GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b"


def test_restart_neither_recounts_nor_loses(tmp_path):
    node = Node(tmp_path)
    node.log(5.0, "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03")
    node.log(900.0, MAP)
    node.log(900.1, XID79)
    results, facts = node.run()
    assert results[UUID].status == "fail" and results[UUID].reason == "fallen_off_bus"
    assert results[UUID].action == "reboot_node"
    assert facts.xid_events == {("00000000:91:00.0", "79", "fatal"): 1}
    node.log(901.0, XID109)
    results, facts = node.run()
    assert results[UUID].status == "fail"  # still failed after the restart
    assert results["pci:00000000:CB:00.0"].status == "warn"
    assert facts.xid_events == {
        ("00000000:91:00.0", "79", "fatal"): 1,
        ("00000000:CB:00.0", "109", "warn"): 1,
    }
    node.log(902.0, "NVRM: Xid (PCI:0000:91:00): 31, pid=7, name=python, Ch 00000008")
    results, _ = node.run()  # the GPU at PCI line came in an earlier run: same scope
    assert set(results) == {UUID, "node"}
    results, facts = node.run()  # nothing new
    assert facts.xid_events[("00000000:91:00.0", "79", "fatal")] == 1
    assert "pci:00000000:CB:00.0" not in results
    assert results["node"].status == "ok"


def test_new_boot_starts_over(tmp_path):
    node = Node(tmp_path)
    node.log(900.0, XID79)
    node.run()
    node.reboot("boot-2")
    node.log(3.0, "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03")
    results, facts = node.run()
    assert set(results) == {"node"} and results["node"].status == "ok"
    assert facts.xid_events == {} and facts.kernel_log_records_lost == 0


def test_recovery_action_none_clears_the_problem(tmp_path):
    node = Node(tmp_path)
    node.log(
        10.0,
        "NVRM: Xid (PCI:0000:55:00): 154, GPU recovery action changed from 0x0 (None) "
        "to 0x1 (GPU Reset Required)",
    )
    results, _ = node.run()
    assert results["pci:00000000:55:00.0"].status == "fail"
    assert results["pci:00000000:55:00.0"].reason == "recovery_action"
    node.log(
        99.0,
        "NVRM: Xid (PCI:0000:55:00): 154, GPU recovery action changed from "
        "0x1 (GPU Reset Required) to 0x0 (None)",
    )
    results, _ = node.run()
    assert results["pci:00000000:55:00.0"].status == "warn"


def test_reset_in_the_same_read_clears_and_a_later_fatal_counts_again(tmp_path):
    node = Node(tmp_path)
    node.log(10.0, "NVRM: Xid (PCI:0000:55:00): 48, An uncorrectable double bit error (DBE)")
    node.log(
        11.0,
        "NVRM: Xid (PCI:0000:55:00): 154, GPU recovery action changed from 0x0 (None) "
        "to 0x1 (GPU Reset Required)",
    )
    node.log(
        99.0,
        "NVRM: Xid (PCI:0000:55:00): 154, GPU recovery action changed from "
        "0x1 (GPU Reset Required) to 0x0 (None)",
    )
    results, _ = node.run()
    assert results["pci:00000000:55:00.0"].status == "warn"
    node.log(120.0, "NVRM: Xid (PCI:0000:55:00): 95, Uncontained: FBHUB")
    results, _ = node.run()
    assert (results["pci:00000000:55:00.0"].status, results["pci:00000000:55:00.0"].reason) == (
        "fail",
        "xid_fatal",
    )


def test_overrun_between_reads_is_unknown_and_counted(tmp_path):
    node = Node(tmp_path)
    node.log(1.0, "first record")
    node.run()
    node.log(2.0, "after an overrun", skip=40)
    results, facts = node.run()
    assert results["node"].status == "unknown" and results["node"].reason == "no_data"
    assert facts.kernel_log_records_lost == 40


def test_escalation_spans_runs(tmp_path):
    node = Node(tmp_path)
    for uptime in (1000.0, 2000.0, 3000.0):
        node.log(uptime, XID109)
        results, _ = node.run()
    assert results["pci:00000000:CB:00.0"].status == "fail"
    assert results["pci:00000000:CB:00.0"].reason == "xid_fatal"


def test_kernel_log_file_is_read_whole(tmp_path):
    case = CORPUS / "cases" / "026_xid48-xid171-xid63-xid154-drain-and-reset-journal.txt"
    context = CheckContext(kernel_log=case, state_dir=tmp_path, clock=lambda: 1.0)
    output = XidCheck().run(context)
    (gpu,) = [r for r in output.results if r.scope.startswith("GPU-")]
    # The root cause (the first fatal Xid, 48) names the reason; Xid 154 sets the action.
    assert (gpu.status, gpu.reason, gpu.action) == ("fail", "xid_fatal", "drain_and_reset")
    assert gpu.message.startswith("Xid 48 (fatal): ")
    assert output.facts[0].xid_events[("00000000:55:00.0", "48", "fatal")] == 2


def fake_tools(bin_dir: Path, journalctl: str | None, dmesg: str | None) -> None:
    bin_dir.mkdir()
    for name, script in (("journalctl", journalctl), ("dmesg", dmesg)):
        if script is not None:
            (bin_dir / name).write_text("#!/bin/sh\n" + script)
            (bin_dir / name).chmod(0o755)


def test_falls_back_to_journalctl_then_dmesg(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    (tmp_path / "dmesg.txt").write_text(f"[   12.500000] {XID79}\n")
    fake_tools(
        bin_dir,
        "echo 'No journal files were found.' >&2\necho '-- No entries --'\n",
        f"/bin/cat {tmp_path / 'dmesg.txt'}\n",
    )
    monkeypatch.setenv("PATH", str(bin_dir))
    context = CheckContext(kmsg_path=tmp_path / "absent", state_dir=tmp_path, clock=lambda: 1.0)
    output = XidCheck().run(context)
    scopes = {r.scope: r for r in output.results}
    assert scopes["pci:00000000:91:00.0"].status == "fail"
    assert scopes["node"].source == "dmesg"


def test_nothing_readable_is_dependency_missing(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_tools(
        bin_dir,
        None,
        "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n",
    )
    monkeypatch.setenv("PATH", str(bin_dir))
    context = CheckContext(kmsg_path=tmp_path / "absent", state_dir=tmp_path)
    with pytest.raises(DependencyMissing) as error:
        XidCheck().run(context)
    assert "journalctl: not installed" in str(error.value)
    assert "Operation not permitted" in str(error.value)


def test_state_is_written_atomically_and_unreadable_kmsg_falls_back(tmp_path, monkeypatch):
    node = Node(tmp_path)
    node.log(1.0, XID79)
    node.run()
    # no temporary file left behind; the lock file (state.locked) stays, empty
    assert sorted(p.name for p in node.state.iterdir()) == ["xid_kmsg_state.json",
                                                           "xid_kmsg_state.json.lock"]
    if os.geteuid() != 0:
        node.kmsg.chmod(0)
        monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
        with pytest.raises(DependencyMissing):
            node.run()


def test_count_events_is_keyed_by_address_code_and_class():
    text = (CORPUS / "kernel_log_lines.txt").read_text()
    classified = classify_events(parse_kernel_log(text), load_policy(), None)
    xids, sxids = count_events(classified)
    assert xids[("00000000:CB:00.0", "13", "application")] == 1  # three lines, one event
    assert xids[("00000000:B3:00.0", "79", "fatal")] == 1  # the fallen-off-the-bus block
    assert sxids[("nvidia-nvswitch3", "22013", "noise")] == 1  # 38 s after the driver load


def test_missing_kernel_log_file_is_dependency_missing(tmp_path):
    context = CheckContext(kernel_log=tmp_path / "gone.log", state_dir=tmp_path)
    with pytest.raises(DependencyMissing, match="gone.log"):
        XidCheck().run(context)


def test_the_gpu_family_comes_from_the_driver_inventory(tmp_path):
    """An operator's per-family overlay must reach the xid check without NVML: the family is read
    from /proc/driver/nvidia/gpus/*/information (here the real H200's)."""
    from gpuslo.exporter.checks.xid import gpu_family_of, read_gpu_family

    gpus = tmp_path / "driver" / "nvidia" / "gpus" / "0000:00:06.0"
    gpus.mkdir(parents=True)
    (gpus / "information").write_text(
        (FIXTURES / "h200" / "proc-driver-nvidia-gpus-information.txt").read_text()
    )
    assert read_gpu_family(tmp_path) == "hopper"
    assert read_gpu_family(tmp_path / "nowhere") is None
    assert gpu_family_of(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"]) is None


def test_a_per_family_overlay_applies_to_the_check(tmp_path):
    gpus = tmp_path / "proc" / "driver" / "nvidia" / "gpus" / "0000:00:06.0"
    gpus.mkdir(parents=True)
    (gpus / "information").write_text(
        (FIXTURES / "h200" / "proc-driver-nvidia-gpus-information.txt").read_text()
    )
    log = tmp_path / "kern.log"
    log.write_text(
        "[  100.000000] NVRM: Xid (PCI:0000:00:06): 63, pid=1, name=python, "
        "Row Remapper: New row marked for remapping, reset gpu to activate.\n"
    )
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        "xid:\n  families:\n    hopper:\n      63: {class: fatal, action: drain_and_reset}\n"
    )
    context = CheckContext(
        state_dir=tmp_path / "state",
        kernel_log=log,
        procfs=tmp_path / "proc",
        policy_path=str(overlay),
    )
    results = XidCheck().run(context).results
    assert any(r.status == "fail" and r.action == "drain_and_reset" for r in results), results


def test_a_driver_reload_ends_a_fatal_problem_and_a_later_fatal_counts_again(tmp_path):
    """Issue 26: a fatal Xid is cleared by a reboot, a driver reload or a GPU reset (the gate
    then validates the GPU); the events before the reload are still counted."""
    node = Node(tmp_path)
    node.log(5.0, "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03")
    node.log(900.0, MAP)
    node.log(900.1, XID79)
    results, _ = node.run()
    assert results[UUID].status == "fail"
    node.log(950.0, "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03")
    results, facts = node.run()
    assert UUID not in results or results[UUID].status != "fail"
    assert facts.xid_events == {("00000000:91:00.0", "79", "fatal"): 1}
    node.log(990.0, XID79)  # and in one read: the reload, then a new Xid 79
    node.log(991.0, "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03")
    node.log(992.0, XID79)
    results, facts = node.run()
    assert results[UUID].status == "fail"
    assert facts.xid_events == {("00000000:91:00.0", "79", "fatal"): 3}
