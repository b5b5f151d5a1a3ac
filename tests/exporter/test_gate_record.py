"""A fatal fault seen once is held by the return-to-service gate whichever path saw it: a run
restricted by `--check` (node-problem-detector's per-check rules) and the exporter's kernel-log
fast path record it (`ReturnToService.record`), so a log rotated or truncated before the next
full cycle never clears it; only its clearing events do (reboot, driver reload, admin resume).
Found by newcomer12 (tests/fixtures/newcomer12/README.md): `check --check xid` said `ok: xid`
once the log had rotated, and a live exporter showed the GPU healthy 12 s after the rotation."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO

from gpuslo import names
from gpuslo.cli import main
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.gate import STATE_FILE, ReturnToService
from gpuslo.exporter.policy import return_to_service as rts
from gpuslo.exporter.policy.return_to_service import Fault, GpuGate, Marks, load_gate_policy
from gpuslo.exporter.runner import Runner
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.state import CounterCarry
from gpuslo.exporter.xid_fast import FastXid
from gpuslo.verdict import CheckResult

NEWCOMER = REPO / "tests" / "fixtures" / "newcomer12"
NVML = REPO / "gpuslo" / "data" / "nvml_replay"
HEALTHY = "[    6.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n"
XID_79 = ("[ 1843.308000] NVRM: Xid (PCI:0000:00:06): 79, pid=1234, name=python, "
          "GPU has fallen off the bus.\n")
GPU_06 = "pci:00000000:00:06.0"
UUID_0 = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"  # h200x1's GPU at 00000000:00:06.0
NOW = 1000.0


def boot(root: Path, boot_id: str) -> Path:
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/random/boot_id").write_text(boot_id + "\n")
    return root / "proc"


# --- a run restricted to the xid check (node-problem-detector's rule) ---------------------------


def npd_xid(tmp_path, capsys, log: Path) -> tuple[int, str]:
    code = main(["check", "--format", "npd", "--check", "xid", "--kernel-log", str(log),
                 "--state-dir", str(tmp_path / "state"), "--path.procfs", str(tmp_path / "proc")])
    return code, capsys.readouterr().out


def test_check_xid_holds_an_xid_after_the_log_rotated(tmp_path, monkeypatch, capsys):
    """newcomer12's two files, in order, with a fresh state dir and no full run in between."""
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x8.json"))
    boot(tmp_path, "boot-1")
    code, out = npd_xid(tmp_path, capsys, NEWCOMER / "rotate_before_kern.log")
    assert code == 1 and out.startswith("xid fail fallen_off_bus: Xid 79 (fatal)")
    code, out = npd_xid(tmp_path, capsys, NEWCOMER / "rotate_after_kern.log")  # rotated
    assert code == 1, out
    assert out.startswith("validation fail fallen_off_bus: xid fallen_off_bus not reported now")
    boot(tmp_path, "boot-2")  # a full run after a reboot clears it (then validates the GPU)
    full = main(["check", "--format", "json", "--kernel-log",
                 str(NEWCOMER / "rotate_after_kern.log"), "--state-dir", str(tmp_path / "state"),
                 "--path.procfs", str(tmp_path / "proc")])
    report = json.loads(capsys.readouterr().out)
    gate = [r for r in report["results"] if r["check"] == "validation" and r["scope"] != "node"]
    assert full == 1 and [r["reason"] for r in gate] == ["validation"], gate


def test_check_xid_on_a_clean_log_records_nothing(tmp_path, monkeypatch, capsys):
    """The negative: a rotated log that never showed an Xid is healthy, and no state is
    written for it."""
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x8.json"))
    boot(tmp_path, "boot-1")
    assert npd_xid(tmp_path, capsys, NEWCOMER / "rotate_after_kern.log") == (0, "ok: xid\n")
    assert not (tmp_path / "state" / STATE_FILE).exists()


# --- the exporter's kernel-log fast path --------------------------------------------------------


class Rig:
    """An exporter with the gate on its cycle and the fast path recording into it; the xid
    run's answers are fed by hand (as in test_xid_fast.py)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.log = tmp, tmp / "kern.log"
        self.log.write_text(HEALTHY)
        self.context = CheckContext(kernel_log=self.log, kmsg_path=tmp / "no-kmsg",
                                    state_dir=tmp / "state", procfs=boot(tmp, "boot-1"),
                                    clock=lambda: NOW)
        (tmp / "state").mkdir()
        self.check = XidCheck()
        self.runner = Runner([self.check], self.context, node="n1")
        policy = load_gate_policy({"validators": [], "hold_down_cycles": 1})
        self.gate = ReturnToService(self.context, policy, clock=lambda: NOW)
        self.exporter = Exporter(lambda: self.gate.apply(self.runner.snapshot()), None,
                                 CounterCarry(tmp / "state"), record=self.gate.record)
        self.exporter.fast = FastXid(self.runner, None, clock=lambda: NOW)
        self.answer()

    def answer(self) -> None:
        """The whole-file run answers, then the exporter's cycle (with the gate) publishes."""
        self.runner._record(self.check, NOW, ("ok", self.check.run(self.context)))
        self.exporter.run_checks()

    def rotate(self, text: str) -> None:
        self.log.rename(self.tmp / "kern.log.1")
        self.log.write_text(text)

    def failing(self) -> set[tuple[str, str]]:
        return {(r.check, r.reason) for r in self.exporter.snapshot.results
                if r.scope == GPU_06 and r.status == names.STATUS_FAIL}


def test_an_xid_published_by_the_fast_path_survives_rotation(tmp_path):
    rig = Rig(tmp_path)
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid()  # published at once, and recorded in the gate
    assert rig.failing() == {("xid", "fallen_off_bus")}
    rig.rotate((NEWCOMER / "rotate_after_kern.log").read_text())  # 2 s later: rotated
    assert not rig.exporter.publish_xid()
    rig.answer()  # the next run reads the new file: no Xid in it
    assert rig.failing() == {("validation", "fallen_off_bus")}
    saved = json.loads((tmp_path / "state" / STATE_FILE).read_text())
    assert list(saved["gpus"]) == [GPU_06] and saved["gpus"][GPU_06]["phase"] == "held"


def test_the_fast_path_hold_ends_with_a_reboot(tmp_path):
    """The negative: the record is the gate's ordinary hold, cleared by a reboot, not a latch."""
    rig = Rig(tmp_path)
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid()
    boot(tmp_path, "boot-2")
    rig.rotate(HEALTHY)
    rig.answer()  # cleared by the reboot: validated by hold-down (no validator), then healthy
    assert rig.failing() == set()
    assert json.loads((tmp_path / "state" / STATE_FILE).read_text())["gpus"] == {}


# --- the pure rules -----------------------------------------------------------------------------


XID = CheckResult("xid", GPU_06, "fail", "fallen_off_bus", action="reset_gpu", message="Xid 79")
POLICY = load_gate_policy()


def test_record_faults_adds_what_is_not_held_and_clears_nothing():
    marks = Marks("boot-1")
    new = rts.record_faults({}, {GPU_06: [XID]}, marks, NOW, POLICY)
    assert new[GPU_06].phase == rts.HELD and [f.reason for f in new[GPU_06].faults] == [
        "fallen_off_bus"]
    assert rts.record_faults(new, {GPU_06: [XID]}, marks, NOW + 5, POLICY) == {}  # held already
    validating = GpuGate(rts.VALIDATING, (Fault("xid", "fallen_off_bus", "", "", 0.0),), 0.0)
    again = rts.record_faults({GPU_06: validating}, {GPU_06: [XID]}, marks, NOW, POLICY)
    assert again[GPU_06].phase == rts.HELD  # the same fault seen again while validating


def test_a_gate_kept_under_a_bus_id_joins_its_gpu_once_the_uuid_is_known():
    by_bus = GpuGate(rts.HELD, (Fault("xid", "fallen_off_bus", "", "", 0.0),), 0.0)
    own = GpuGate(rts.HELD, (Fault("gpu_memory", "row_remap_pending", "", "", 0.0),), 0.0)
    joined = rts.rekeyed({GPU_06: by_bus, UUID_0: own}, {GPU_06: UUID_0})
    assert list(joined) == [UUID_0]
    assert [f.reason for f in joined[UUID_0].faults] == ["row_remap_pending", "fallen_off_bus"]
    assert rts.rekeyed({GPU_06: by_bus}, {}) == {GPU_06: by_bus}  # no inventory: kept by bus
