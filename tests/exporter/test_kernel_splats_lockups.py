"""Lockups and untagged resource-manager frames through NVIDIA modules (issue 24).

- A hard lockup is fatal, a soft lockup a warning, by the kernel's own account
  (Documentation/admin-guide/lockup-watchdogs.rst: after a soft lockup the detector "resume[s]
  execution of other kernel code"; after a hard lockup, a CPU looping with its interrupts off for
  more than 10 s, "the system will stay locked up"). Header lines are real: `NMI watchdog: Watchdog
  detected hard LOCKUP on cpu 79` (Open-CAS/ocf#408, 2020-10-11, a journal line), the older
  kernel's `cut here` / `WARNING: ... watchdog_overflow_callback` / `Watchdog detected hard LOCKUP
  on cpu 1` (aabc/ipt-ratelimit#3, 2015-10-21), `watchdog: BUG: soft lockup - CPU#2 stuck for 22s!
  [chia_plot:29632]` (madMAx43v3r/chia-plotter#535, 2021-06-17), an older kernel's whole `NMI
  watchdog: BUG: soft lockup` splat over the kernel's own frames (Ubuntu Forums, "Webserver
  crashes on a Saturday due to high disk IO", 2018-09-05: tests/fixtures/kernel_splats/
  soft-lockup-not-nvidia.txt, excerpt). The NVIDIA frames beside them
  are nvidia's (`krcWatchdog_IMPL`, `nvidia_isr`: NVIDIA/open-gpu-kernel-modules#1031) and the
  closed resource manager's `_nvNNNNNNrm` symbols.
- `_nvNNNNNNrm` symbols belong to the nvidia module only, so a frame in one is NVIDIA's even when
  the line carries no `[nvidia]` tag; a trace with no NVIDIA frame (the same headers over the
  kernel's own frames, with `rm+0x` symbols such as `avc_has_perm`) is no GPU event.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo import names
from gpuslo.exporter.checks.xid import judge
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy

JOURNAL = "Oct 11 05:39:13 chi412 kernel: "
HARD = JOURNAL + "NMI watchdog: Watchdog detected hard LOCKUP on cpu 79\n"
CPU = JOURNAL + "CPU: 79 PID: 0 Comm: swapper/79 Tainted: P           OE     4.15.0-112-generic\n"
RIP_TAGGED = JOURNAL + "RIP: 0010:_nv011159rm+0x62/0x110 [nvidia]\n"
RIP_UNTAGGED = JOURNAL + "RIP: 0010:_nv011159rm+0x62/0x110\n"
FRAMES = (JOURNAL + "Call Trace:\n" + JOURNAL + " <IRQ>\n"
          + JOURNAL + " krcWatchdog_IMPL+0x4d0/0x530 [nvidia]\n"
          + JOURNAL + " nvidia_isr+0x1633/0x1a40 [nvidia]\n"
          + JOURNAL + " call_timer_fn+0x2c/0x1e0\n")
UNTAGGED_FRAMES = (JOURNAL + "Call Trace:\n" + JOURNAL + " ? _nv043429rm+0x1d/0x30\n"
                   + JOURNAL + " _nv015243rm+0x5f/0x90\n" + JOURNAL + " call_timer_fn+0x2c/0x1e0\n")
OLD_HARD = (
    "[86185.341902] ------------[ cut here ]------------\n"
    "[86185.346539] WARNING: CPU: 1 PID: 31758 at /build/linux-xkTWug/linux-3.16.7-ckt11/kernel/"
    "watchdog.c:265 watchdog_overflow_callback+0x98/0xc0()\n"
    "[86185.359253] Watchdog detected hard LOCKUP on cpu 1\n"
    "[86185.501105] Call Trace:\n"
)
SOFT = "[405108.698255] watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [chia_plot:29632]\n"
SOFT_NOT_NVIDIA = (Path(__file__).resolve().parent.parent / "fixtures" / "kernel_splats"
                   / "soft-lockup-not-nvidia.txt").read_text(encoding="utf-8")
SOFT_NMI = SOFT_NOT_NVIDIA.splitlines(keepends=True)[0]
NOT_NVIDIA = ("[86185.503557]  <NMI>  [<ffffffff8150b4c5>] ? dump_stack+0x41/0x51\n"
              "[86185.509519]  [<ffffffff80084dd404>] avc_has_perm+0xf8/0x1b8\n"
              "[86185.515717]  [<ffffffff810677cc>] ? warn_slowpath_fmt+0x4c/0x50\n")


def splats(text: str) -> list:
    return [(e.token, e.module) for e in parse_kernel_log(text) if e.kind == "kernel_splat"]


def stall(text: str):
    (finding,) = [f for f in inspect_kernel_log(text, InspectOptions(), "kern.log")
                  if f.signal == "kernel_stall"]
    return finding


def live_node(text: str) -> list:
    output = judge(parse_kernel_log(text), 20, [], "kern.log", load_policy(), None, 0.0)
    return [(r.status, r.reason) for r in output.results if r.scope == "node" and r.reason]


@pytest.mark.parametrize("rip", [RIP_TAGGED, RIP_UNTAGGED], ids=["tagged", "untagged"])
def test_a_hard_lockup_in_nvidia_is_one_fatal_stall_in_inspect_and_live(rip):
    text = HARD + CPU + rip + FRAMES
    assert splats(text) == [("hard_lockup", "nvidia")]
    finding = stall(text)
    assert (finding.class_, finding.action, finding.reason) == (
        names.CLASS_FATAL, names.ACTION_REBOOT_NODE, "driver_crash")
    assert live_node(text) == [(names.STATUS_FAIL, "driver_crash")]


def test_an_older_kernels_warning_then_hard_lockup_is_one_hard_lockup():
    text = OLD_HARD + FRAMES.replace(JOURNAL, "[86185.52] ")
    assert splats(text) == [("hard_lockup", "nvidia")]
    assert stall(text).class_ == names.CLASS_FATAL


@pytest.mark.parametrize("header", [SOFT, SOFT_NMI], ids=["watchdog", "nmi-watchdog"])
def test_a_soft_lockup_in_nvidia_stays_a_warning(header):
    """The negative of the split: the kernel resumes after a soft lockup."""
    text = header + "[405108.70] RIP: 0010:_nv011159rm+0x62/0x110 [nvidia]\n"
    assert splats(text) == [("soft_lockup", "nvidia")]
    assert stall(text).class_ == names.CLASS_WARN
    assert live_node(text) == []
    assert splats(SOFT_NOT_NVIDIA) == []  # the whole real splat, no NVIDIA frame: no GPU event


def test_untagged_resource_manager_frames_make_an_nvidia_splat_and_others_do_not():
    assert splats(HARD + CPU + UNTAGGED_FRAMES) == [("hard_lockup", "nvidia")]
    # the same lines with the kernel's own frames, `rm+0x` among them: no GPU event
    assert splats(OLD_HARD + NOT_NVIDIA) == []
    assert splats(HARD + CPU + JOURNAL + "RIP: 0010:intel_idle+0x94/0xe0\n") == []
    # a symbol that only looks like one: `x_nv011159rm` is no resource-manager frame
    assert splats(HARD + JOURNAL + "RIP: 0010:x_nv011159rm+0x62/0x110\n") == []
