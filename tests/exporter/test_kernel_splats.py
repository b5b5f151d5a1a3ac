"""Kernel splats through an NVIDIA kernel module (issue 24, fresh11 1309): an oops, WARNING, lockup
or hung task whose faulting frame or call trace is in nvidia* is one `kernel_splat` event, judged
by the policy's `kernel_splats` (kernel tainted-kernels.rst: an oops or BUG means the kernel died
in that code, taint D; a WARNING is taint W) in `inspect` and in the live `xid` check alike; a splat
whose frames are in no NVIDIA module is no GPU event, whatever `Modules linked in:` lists.

The lines are real (tests/fixtures/kernel_splats/): fresh11 1309 (an oops at nvidia's load),
fresh10 1222 (RmInitAdapter failed on 0000:13:00, then an oops whose excerpt shows no frame),
fresh10 1211 (a resource check's `caller ... [nvidia]`), NVIDIA/k8s-device-plugin#77 (a hung task
in nvidia_uvm, a 4.4 kernel's frame format), NVIDIA/open-gpu-kernel-modules#968 (a hung nv_open_q
in rmapiLockAcquire, journal lines with microseconds; the excerpt starts at `task:`, after the
header), NVIDIA/egl-wayland#6 and open-gpu-kernel-modules#472 (WARNINGs in the DRM core and
follow_pte on nodes that loaded nvidia: only `Modules linked in:` names it), pop-os/pop#3535 (a
hung task on a hybrid NVIDIA laptop, no NVIDIA frame), Bumblebee-Project/Bumblebee#645 (`...
provided by nvidia_frontend_exit_module [nvidia].`: a symbol, not a frame), a DRM `[nvidia-drm]`
banner (fresh10 1202) and the H200 boot log's `DEBUGCTL` line (prefilter hits, no splat).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo import names
from gpuslo.errors import ConfigError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck, judge
from gpuslo.exporter.evidence.kernel_log import read
from gpuslo.exporter.evidence.kernel_log.anchors import HEADER_LOOKBACK_LINES
from gpuslo.exporter.evidence.kernel_log.events import EventBuilder
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log, scan_kernel_log_file
from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan
from gpuslo.exporter.evidence.kernel_log.splats import DIE_LINES, SPLAT_LINES, header_of
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy, policy_from_mapping

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kernel_splats"


def real(name: str) -> str:
    """A real excerpt (the module docstring names each source)."""
    return (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


OOPS_1309 = real("oops-1309")
OOPS_1222 = real("oops-1222")
HUNG_UVM = real("hung-uvm")
TRACE_968 = real("trace-968")
WARNING_DRM_CORE = real("warning-drm-core")
WARNING_FOLLOW_PTE = real("warning-follow-pte")
HUNG_NOT_NVIDIA = real("hung-not-nvidia")
NOT_FRAMES = real("not-frames")


def splats(text: str) -> list:
    return [e for e in parse_kernel_log(text) if e.kind == "kernel_splat"]


def findings(text: str) -> list:
    return inspect_kernel_log(text, InspectOptions(), "kern.log")


def test_an_oops_whose_rip_is_in_nvidia_is_one_fatal_event_from_its_header():
    (event,) = splats(OOPS_1309)
    assert (event.token, event.module, event.line, event.pci) == ("oops", "nvidia", 3, None)
    assert event.lines == 7 and event.timestamp == pytest.approx(2.613694)
    assert event.message.startswith("BUG: kernel NULL pointer dereference")
    assert "RIP: 0010:nvlogInit+0x6/0xd0 [nvidia]" in event.message
    (oops,) = [f for f in findings(OOPS_1309) if f.signal == "kernel_oops"]
    assert (oops.class_, oops.action, oops.reason, oops.layer) == (
        names.CLASS_FATAL, names.ACTION_REBOOT_NODE, "driver_crash", names.LAYER_NODE)


def test_the_live_check_reads_the_same_oops_and_fails_the_node():
    events = parse_kernel_log(OOPS_1309)
    output = judge(events, 11, [], "kern.log", load_policy(), None, 0.0)
    (node,) = [r for r in output.results if r.scope == "node" and r.reason]
    assert (node.status, node.reason, node.action) == (
        names.STATUS_FAIL, "driver_crash", names.ACTION_REBOOT_NODE)
    assert "kernel oops in nvidia" in node.message


def test_a_file_scan_in_small_blocks_finds_the_same_splat(tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text(OOPS_1309 * 3)
    scan = scan_kernel_log_file(str(path), chunk_bytes=200)
    assert [e for e in scan.finish() if e.kind == "kernel_splat"] == splats(OOPS_1309 * 3)
    assert len(splats(OOPS_1309 * 3)) == 3


def test_a_hung_task_in_nvidia_uvm_is_a_warn_stall():
    (event,) = splats(HUNG_UVM)
    assert (event.token, event.module, event.line) == ("hung_task", "nvidia_uvm", 1)
    assert "uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]" in event.message
    (stall,) = [f for f in findings(HUNG_UVM) if f.signal == "kernel_stall"]
    assert (stall.class_, stall.reason) == (names.CLASS_WARN, None)


def test_nvidia_frames_without_their_header_are_unknown_in_inspect_warn_live():
    (event,) = splats(TRACE_968)
    assert (event.token, event.module, event.line) == ("trace", "nvidia", 6)
    (trace,) = [f for f in findings(TRACE_968) if f.signal == "kernel_trace"]
    assert (trace.class_, trace.reason) == (names.CLASS_UNKNOWN, "parse_error")
    output = judge(parse_kernel_log(TRACE_968), 11, [], "kern.log", load_policy(), None, 0.0)
    assert {r.status for r in output.results} == {names.STATUS_OK, names.STATUS_WARN}


def test_an_oops_names_the_gpu_the_nvrm_lines_beside_it_name():
    frame = "Feb 09 15:47:06 debian kernel: RIP: 0010:nv_queue_work+0x10/0x20 [nvidia]\n"
    (event,) = splats(OOPS_1222 + frame)
    assert (event.token, event.pci) == ("oops", "00000000:13:00.0")
    # two GPUs named beside it: which one the oops hit is not known
    two = OOPS_1222.replace("GPU 0000:13:00.0: rm_init", "GPU 0000:14:00.0: rm_init")
    (event,) = splats(two + frame)
    assert event.pci is None


@pytest.mark.parametrize("text", [OOPS_1222, WARNING_DRM_CORE, WARNING_FOLLOW_PTE,
                                  HUNG_NOT_NVIDIA, NOT_FRAMES],
                         ids=["oops-no-frame", "warning-drm-core", "warning-follow-pte",
                              "hung-task-elsewhere", "not-frames"])
def test_a_splat_with_no_nvidia_frame_is_no_gpu_event(text):
    assert splats(text) == []
    assert not [f for f in findings(text) if (f.signal or "").startswith("kernel_")
                and f.signal != "kernel_log_read"]


def test_a_warning_in_i915_with_nvidia_loaded_stays_out_then_an_nvidia_warning_counts():
    nvidia = ("[  460.000000] ------------[ cut here ]------------\n"
              "[  460.000001] WARNING: CPU: 2 PID: 77 at nvidia/nv.c:123 "
              "nv_foo+0x12/0x34 [nvidia]\n")
    (event,) = splats(WARNING_DRM_CORE + nvidia)
    assert (event.token, event.line, event.module) == ("warning", 8, "nvidia")
    assert event.message.startswith("WARNING: CPU: 2 PID: 77 at nvidia/nv.c:123")
    assert "faulting in nvidia: nv_foo+0x12/0x34 [nvidia]" in event.message
    (warning,) = [f for f in findings(WARNING_DRM_CORE + nvidia) if f.signal == "kernel_warning"]
    assert warning.class_ == names.CLASS_WARN


@pytest.mark.parametrize(("line", "kind"), [
    ("[    2.613694] BUG: kernel NULL pointer dereference, address: 0000000000000fa8", "oops"),
    ("Feb 09 15:47:06 debian kernel: BUG: unable to handle page fault for address: 2a04", "oops"),
    ("[    2.618999] Oops: 0002 [#1] PREEMPT SMP NOPTI", "die"),
    ("[ 9.1] general protection fault, probably for non-canonical address 0x1: 0000 [#1] SMP",
     "die"),
    ("[ 9.1] Internal error: Oops: 96000004 [#1] PREEMPT SMP", "die"),
    ("[ 9.1] ------------[ cut here ]------------", "cut"),
    ("[ 9.1] invalid opcode: 0000 [#1] SMP PTI", "die"),
    ("kernel: watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]", "soft_lockup"),
    ("[ 9.1] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283",
     "atomic_sleep"),
    ("[ 9.1] BUG: scheduling while atomic: nvidia-smi/1/0x00000002", "atomic_sleep"),
    ("[ 9.1] BUG: KASAN: use-after-free in nv_foo+0x1/0x2 [nvidia]", "bug"),
    ("[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 seconds.", "hung_task"),
    ("[ 9.1] rcu: INFO: rcu_sched self-detected stall on CPU", "rcu_stall"),
    ("[ 9.1] INFO: rcu_preempt detected stalls on CPUs/tasks:", "rcu_stall"),
    ("[ 455.8] WARNING: CPU: 7 PID: 49 at drivers/gpu/drm/drm_atomic_helper.c:1612 x+0x89/0x90",
     "warning"),
    ("[ 1286.6] WARNING: at drivers/gpu/drm/drm_ioctl.c:143 drm_setversion+0x176/0x180 [drm]()",
     "warning"),
])
def test_headers(line, kind):
    assert header_of(line)[0] == kind


@pytest.mark.parametrize("line", [
    "[    0.1] RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable to RETBleed attacks",
    "[    0.163172] kvm: host DEBUGCTL refresh per vcpu_load (vendor request)",
    "[    0.1] x86/cpu: ACPI BIOS Bug: [#] nothing",
    "2025-01-23 22:23:53.671 DEBUG [46345:46359] Thread handle 283117120 running",
])
def test_not_headers(line):
    assert header_of(line) is None


def test_the_policy_section_is_checked_and_an_overlay_can_reclass_a_type():
    policy = load_policy()
    data = dict(policy.data)
    with pytest.raises(ConfigError, match="kernel_splats.oopz"):
        policy_from_mapping(data, "p.yaml", {"kernel_splats": {"oopz": {"class": "warn",
                                                                        "action": "none"}}}, "o")
    quiet = policy_from_mapping(data, "p.yaml", {"kernel_splats": {"hung_task": {
        "class": "noise", "action": "none"}}}, "o.yaml")
    assert quiet.splat_rule("hung_task").class_ == names.CLASS_NOISE
    assert quiet.splat_rule("oops").class_ == names.CLASS_FATAL
    data.pop("kernel_splats")
    bare = policy_from_mapping(data, "p.yaml")  # no section: every type reads as an oops
    assert (bare.splat_rule("warning").class_, bare.splat_rule("warning").reason) == (
        names.CLASS_FATAL, "driver_crash")
    assert bare.splat_rule("trace").class_ == names.CLASS_UNKNOWN


def test_cut_here_then_kernel_bug_then_its_die_line_is_one_oops():
    """lib/bug.c prints `cut here`, `kernel BUG at file:line!`, then die's `invalid opcode`."""
    text = ("[ 9.0] ------------[ cut here ]------------\n"
            "[ 9.0] kernel BUG at /var/lib/dkms/nvidia/nvidia-uvm/uvm_gpu.c:1234!\n"
            "[ 9.0] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI\n"
            "[ 9.0] CPU: 3 PID: 88 Comm: python Tainted: P           OE     6.8.0 #1\n"
            "[ 9.0] RIP: 0010:uvm_gpu_retain+0x1/0x2 [nvidia_uvm]\n")
    (event,) = splats(text)
    assert (event.token, event.line, event.lines, event.module) == ("oops", 1, 5, "nvidia_uvm")
    assert event.message.startswith("invalid opcode: 0000 [#1]")


def test_a_soft_lockup_through_nvidia_is_a_stall_and_a_cut_here_alone_a_warning():
    lockup = ("kernel: watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [python:29632]\n"
              "kernel: RIP: 0010:_nv011159rm+0x62/0x110 [nvidia]\n")
    assert [e.token for e in splats(lockup)] == ["soft_lockup"]
    warned = "[ 1.0] ------------[ cut here ]------------\n[ 1.1]  nv_foo+0x1/0x2 [nvidia]\n"
    assert [e.token for e in splats(warned)] == ["warning"]


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.txt")))
def test_the_prefilter_hides_no_splat_line(name):
    """Every line fed to the recognisers gives the events the prefiltered scan gives."""
    text = real(name) + OOPS_1309
    builder = EventBuilder()
    for number, line in enumerate(text.split("\n"), 1):
        builder.feed(number, line)
    assert builder.finish() == parse_kernel_log(text)


class _Fed:
    """Stands in for the recognisers: the lines the prefilter feeds."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def feed(self, number: int, line: str) -> None:
        self.lines.append((number, line))

    def finish(self) -> list:
        return []


def test_header_lines_are_read_only_before_a_block_holding_an_nvidia_frame():
    """No frame, no header read; a frame reads its block's headers and the last
    HEADER_LOOKBACK_LINES lines' of the blocks before it, first."""
    assert HEADER_LOOKBACK_LINES >= SPLAT_LINES + DIE_LINES
    filler = "".join(f"[ {n}.0] usb 1-1: new device\n" for n in range(400))
    first = f"[ 0.1] BUG: scheduling while atomic\n{filler}[ 9.9] BUG: soft lockup - CPU#2\n"
    scan = KernelLogScan()
    scan.builder = _Fed()
    scan.feed(first.encode())
    assert scan.builder.lines == []
    scan.feed(b"[ 9.9] RIP: 0010:_nv011159rm+0x62/0x110 [nvidia]\n[ 9.9] WARNING: CPU: 1\n")
    assert scan.builder.lines == [
        (402, "[ 9.9] BUG: soft lockup - CPU#2"),
        (403, "[ 9.9] RIP: 0010:_nv011159rm+0x62/0x110 [nvidia]"),
        (404, "[ 9.9] WARNING: CPU: 1"),
    ]


def test_a_splat_split_between_the_two_halves_of_a_file_is_the_serial_scans(tmp_path,
                                                                              monkeypatch):
    """`halves.join` feeds the first half's last header lines before the second half's frames."""
    path = tmp_path / "kern.log"
    path.write_text(WARNING_DRM_CORE + OOPS_1309)
    serial = scan_kernel_log_file(str(path), chunk_bytes=97).finish()
    assert [e.token for e in serial if e.kind == "kernel_splat"] == ["oops"]
    data = path.read_bytes()
    monkeypatch.setattr(read, "can_halve", lambda size: True)
    for middle in [i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]:
        monkeypatch.setattr(read, "split_point", lambda path, size, at=middle: at)
        split = scan_kernel_log_file(str(path), chunk_bytes=97, halves=True).finish()
        assert split == serial, f"split at byte {middle}"


def test_the_live_check_reading_dev_kmsg_holds_the_oops_until_the_next_boot(tmp_path):
    """/dev/kmsg (a file of records here): the oops fails the node, across an exporter restart
    (the cursor keeps the problem), until a new boot id."""
    kmsg, procfs = tmp_path / "kmsg", tmp_path / "proc"
    (procfs / "sys/kernel/random").mkdir(parents=True)
    (procfs / "sys/kernel/random/boot_id").write_text("boot-1\n")
    records = [line.split("] ", 1)[1] for line in OOPS_1309.splitlines()]
    kmsg.write_text("".join(f"3,{n},{2_600_000 + n},-;{text}\n" for n, text in enumerate(records)))

    def run() -> list:
        """The node's problems (the results for scope node with a reason)."""
        context = CheckContext(kmsg_path=kmsg, procfs=procfs, state_dir=tmp_path / "state",
                               clock=lambda: 1_700_000_000.0)
        return [(r.status, r.reason, r.action) for r in XidCheck().run(context).results
                if r.scope == "node" and r.reason]

    assert run() == [(names.STATUS_FAIL, "driver_crash", names.ACTION_REBOOT_NODE)]
    assert run() == [(names.STATUS_FAIL, "driver_crash", names.ACTION_REBOOT_NODE)]  # restart
    (procfs / "sys/kernel/random/boot_id").write_text("boot-2\n")
    kmsg.write_text("")
    assert run() == []


@pytest.mark.parametrize("line", [
    "a" * 200_000 + "+0x1/0x2 [nvidia]",
    "[ 1.0] " + "x" * 200_000 + " [nvidia",
    "-" * 200_000 + "[ cut here",
    "rcu" + "u" * 200_000 + " detected stall",
    "[ 1.0] BUG: " + "]" * 200_000 + " [nvidia]",
])
def test_a_hostile_line_is_read_in_linear_time(line):
    """Bounded repeats: these lines would take minutes with `[\\w.$]+` or `-*` (no time limit
    here; the suite's timeout catches a quadratic one)."""
    assert splats(line + "\n") == []  # no splat either: no frame of a stack dump
