"""What a kernel-log capture shows after a fatal Xid is said, never acted on: a `journalctl -k`
capture with Xid 79, then `-- Boot ... --` and a clean driver load; an Xid 154 whose recovery
action is later set back to 0x0 (None) — NVIDIA (GPU memory error management, recovery action
flag): None means no recovery action is needed and a new process can use the GPU. The finding
stays fatal with its action (a reboot or a cleared flag is not a validation), its message says
what came later and asks for validation, and `extra.later` names it."""

from __future__ import annotations

from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log
from gpuslo.exporter.inspect.options import InspectOptions

LOAD = ("kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
        "22:23:56 UTC 2024")
XID79 = ("kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=48211, name=python3, GPU has fallen off "
         "the bus.")
MULTIBOOT = [
    "-- Boot 1f2e3d4c5b6a47988776655443322110 --",
    f"May 01 12:00:00 gpu-node-17 {LOAD}",
    f"May 01 14:00:00 gpu-node-17 {XID79}",
    "May 01 14:00:00 gpu-node-17 kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
    "-- Boot 99aa88bb77cc66dd55ee44ff33001122 --",
    "May 01 14:20:00 gpu-node-17 kernel: Linux version 5.15.0-101-generic "
    "(buildd@lcy02-amd64-001)",
    f"May 01 14:20:30 gpu-node-17 {LOAD}",
]
RESET = ("[ 600.1] NVRM: Xid (PCI:0000:ab:00): 154, pid='<unknown>', name=<unknown>, GPU recovery "
         "action changed from 0x0 (None) to 0x1 (GPU Reset Required)")
CLEARED = ("[ 700.1] NVRM: Xid (PCI:0000:ab:00): 154, pid='<unknown>', name=<unknown>, GPU "
           "recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)")


def _fatal(lines: list[str]):
    findings = inspect_kernel_log("\n".join(lines) + "\n", InspectOptions(), "cap.txt")
    return [f for f in findings if f.class_ == "fatal"]


def test_a_later_boot_is_said_and_the_verdict_stays_fatal():
    [xid] = _fatal(MULTIBOOT)
    assert (xid.xid, xid.action) == (79, "reboot_node")
    assert xid.extra["later"] == "driver_reloaded"
    assert "(line 7) the NVIDIA driver loads again" in xid.message and "validate" in xid.message


def test_negative_the_driver_load_before_the_xid_says_nothing():
    [xid] = _fatal(MULTIBOOT[:4])
    assert "later" not in xid.extra and "loads again" not in xid.message


def test_a_recovery_action_set_back_to_none_is_said():
    [xid] = _fatal([RESET, CLEARED])
    assert (xid.xid, xid.action) == (154, "reset_gpu")
    assert xid.extra["later"] == "recovery_cleared"
    assert "(line 2) Xid 154 sets this GPU's recovery action back to None" in xid.message


def test_negative_a_clear_before_the_fault_or_on_another_gpu_says_nothing():
    assert "later" not in _fatal([CLEARED, RESET])[0].extra
    other = CLEARED.replace("0000:ab:00", "0000:cd:00")
    assert "later" not in _fatal([RESET, other])[0].extra
