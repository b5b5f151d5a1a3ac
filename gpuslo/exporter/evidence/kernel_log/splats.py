"""Kernel splats through an NVIDIA kernel module: an oops, BUG, WARNING, soft lockup, hung task or
RCU stall whose faulting frame or call trace is in `nvidia`, `nvidia_uvm`, `nvidia_modeset`,
`nvidia_drm`, `nvidia_peermem` (any `nvidia*` module) is one `kernel_splat` event (pure).

A splat is what the kernel prints at once for one of these: a header line, then its context
(`Modules linked in:`, the `CPU: N PID: M Comm: ...` line, `Hardware name:`, `RIP:`/`pc :` and
the registers, `Call Trace:` and its frames, `---[ end trace ... ]---`, on x86 the RIP and
registers again after it). The prefilter (`scan`) feeds only two kinds of its lines: frames
tagged with an NVIDIA module (` [nvidia`, an anchor: `nvlogInit+0x6/0xd0 [nvidia]`,
`_nv011159rm+0x62/0x110 [nvidia]`, a build id after the name: `[nvidia 6f8f...]`) or in the
driver's closed resource manager, whose `_nvNNNNNNrm` symbols are nvidia's even untagged
(`rm+0x`, an anchor: `RIP: 0010:_nv011159rm+0x62/0x110`), and, near them,
header lines (`anchors.SPLAT_HEADERS`); the lines between are not read, and a line is read as a
header only when it holds one of those literals, so the events are those of every line fed.
`Splats.feed` groups what it is fed: a header opens a splat (a die line a few lines after a
`BUG:` or `cut here` line, or a WARNING line after `cut here`, joins it), an NVIDIA frame within
`SPLAT_LINES` lines of the splat's last line joins it, and only a splat holding an NVIDIA frame
becomes an event. `Modules linked in: nvidia_uvm(POE) nvidia(POE)` holds no frame: a WARNING in
i915 or ext4 on a node that loaded nvidia is no event.

The type, from the header (Documentation/admin-guide/bug-hunting.rst and tainted-kernels.rst: the
kernel taints itself `D` when it "died", an OOPS or BUG, and `W` for a warning; the printers are
arch/x86/kernel/dumpstack.c `die`, lib/bug.c `report_bug`, kernel/panic.c `__warn`,
kernel/sched/core.c, kernel/watchdog.c, kernel/hung_task.c, kernel/rcu/tree_stall.h):
- `oops`: the kernel died in the code: a die line with its `[#N]` counter (`Oops: 0002 [#1]`,
  `general protection fault: 0000 [#1]`, `invalid opcode: 0000 [#1]` after `kernel BUG at
  file:line!`, arm64's `Internal error: Oops: 96000004 [#1]`), `BUG: unable to handle page
  fault`, `BUG: kernel NULL pointer dereference` (its die line, a few lines on, joins it);
- `bug`: any other `BUG:` report (`Bad page state`, `KASAN: use-after-free`, ...);
- `atomic_sleep`: `BUG: sleeping function called from invalid context`, `BUG: scheduling while
  atomic` (debug checks the kernel carries on after, tainting itself `W`);
- `warning`: `WARNING: CPU: 3 PID: 1 at <file>:<line> <symbol> [module]` (older: `WARNING: at`),
  or `------------[ cut here ]------------` with no die line after it (`report_bug` and `__warn`
  print it before the WARNING line and before `kernel BUG at`, whose die line follows);
- `soft_lockup`: `BUG: soft lockup - CPU#3 stuck for 22s!` (older kernels: `NMI watchdog: BUG: soft
  lockup`), `BUG: workqueue lockup`;
- `hard_lockup`: `Watchdog detected hard LOCKUP on cpu 79` (`NMI watchdog: ` before it on older
  kernels, which print it after a `cut here` / `WARNING: ... watchdog_overflow_callback` pair it
  joins), `Kernel panic - not syncing: Hard LOCKUP`, powerpc's `Watchdog CPU:59 Hard LOCKUP`;
- `hung_task`: `INFO: task <comm>:<pid> blocked for more than 120 seconds.`;
- `rcu_stall`: `rcu: INFO: rcu_sched self-detected stall on CPU`, `... detected stalls on CPUs`;
- `trace`: NVIDIA frames with no header before them (a RIP/PC line or a bare frame line: the header
  cut off, or a stack the driver dumped itself); the caller a resource check prints (`caller
  RmInitX86EmuState+0x10e/0x290 [nvidia] mapping multiple BARs`) is no trace.
What each type means for the GPU is the policy's call (`policy.splats`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

from gpuslo.exporter.evidence.kernel_log.anchors import (
    FRAME_ANCHOR,
    RM_FRAME_ANCHOR,
    SPLAT_HEADERS,
)
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent, parse_timestamp

# A line joins a splat at most SPLAT_LINES lines after the splat's last line (the prefilter reads
# headers `anchors.HEADER_LOOKBACK_LINES` >= SPLAT_LINES + DIE_LINES before a frame).
SPLAT_LINES = 100
DIE_LINES = 10  # a die or WARNING line joins the `BUG:` / `cut here` line this many lines before
GPU_NEAR_LINES = 20  # an NVRM line naming a GPU this near a splat names the splat's GPU

_HEADER = re.compile(
    r"(?P<bug>\bBUG: (?P<what>[^\n]{0,60}))"
    r"|(?P<cut>-{0,40}\[ cut here \]-{0,40})"
    r"|(?P<die>(?:\b(?:Oops|Internal error|general protection fault|invalid opcode|divide error"
    r"|stack segment|double fault|alignment check|segment not present|invalid TSS)\b"
    r"[^\n]{0,120}?)?\[#\d{1,10}\])"
    r"|(?P<warning>\bWARNING: (?:CPU: ?\d{1,6} PID: ?\d{1,10} )?at )"
    r"|(?P<hung>\bINFO: task \S[^\n]{0,80} blocked for more than \d+ seconds)"
    r"|(?P<rcu>\brcu\w{0,20} (?:self-)?detected stalls? on)"
    r"|(?P<hard>\b[Hh]ard LOCKUP\b)"
)
_DIES = ("unable to handle", "kernel NULL pointer dereference", "kernel paging request")
_ATOMIC = ("sleeping function called from invalid context", "scheduling while atomic")
_LOCKUPS = ("soft lockup", "workqueue lockup")
# A frame in an NVIDIA module: `symbol+0xOFF/0xLEN [nvidia]` (module names as the kernel lists
# them: nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm, nvidia_peermem, ...; a build id may
# follow the name). Every repeat is bounded: an unbounded `[\w.$]+` before `+0x` rescans the
# rest of a long word for every start in it, quadratic on a hostile line (as parse._XID notes).
_FRAME = re.compile(
    r"(?P<symbol>[\w.$]{1,200})\+0x[0-9a-fA-F]{1,16}/0x[0-9a-fA-F]{1,16} "
    r"\[(?P<module>nvidia(?:_[a-z]{1,20}){0,3})(?: [0-9a-fA-F]{1,64})?\]"
)
# A frame of the closed resource manager linked into `nvidia`: `_nv011159rm+0x62/0x110`, read as
# nvidia's whether or not the line tags it (`anchors.RM_FRAME_ANCHOR`).
_RM_FRAME = re.compile(
    r"(?<![\w.$])(?P<symbol>_nv\d{3,8}rm)\+0x[0-9a-fA-F]{1,16}/0x[0-9a-fA-F]{1,16}"
)
# What may stand before a frame on a line of a stack dump: the prefix's end (`]`, `:` as in
# `kernel:` and `RIP: 0010:`, `;` of /dev/kmsg), an old kernel's `[<ffffffffa0123456>]`, `? `.
_FRAME_LEAD = re.compile(r"(?:^|[\]:;])\s*(?:\[<[0-9a-fA-F]+>\]\s*)?(?:\?\s*)?$")
# The faulting frame's register before it: x86 `RIP: 0010:` (`EIP:`, old `IP:`), arm64 `pc : `.
_FAULT_FRAME = re.compile(r"\b(?:RIP|EIP|IP|pc|PC is at)\s?:?\s*(?:[0-9a-fA-F]{4}:)?$")


def header_of(line: str) -> tuple[str, int] | None:
    """(splat type, offset of the header in `line`) when `line` opens a splat (see the module
    docstring), None otherwise; `die` for a die line (`[#N]`), which may join a `BUG:` or `cut
    here` line, `cut` for `cut here` (a WARNING unless a die line follows)."""
    match = _HEADER.search(line)
    if match is None:
        return None
    if match.group("bug") is not None:
        what = match.group("what")
        if what.startswith(_DIES):
            kind = "oops"
        elif what.startswith(_ATOMIC):
            kind = "atomic_sleep"
        else:
            kind = "soft_lockup" if what.startswith(_LOCKUPS) else "bug"
        return kind, match.start()
    kinds = {"cut": "cut", "die": "die", "warning": "warning", "hung": "hung_task",
             "rcu": "rcu_stall", "hard": "hard_lockup"}
    return kinds[match.lastgroup], match.start(match.lastgroup)


@dataclass
class _Splat:
    """One splat while it is fed: its type, first and last line, header text and timestamp, and
    its first NVIDIA frame (module, text, whether it is the faulting frame)."""

    kind: str
    line: int
    last: int
    text: str
    stamp: tuple[float | None, str, int | None]
    module: str | None = None
    frame: str = ""
    fault: bool = False
    died: bool = False


class Splats:
    """Groups the splat lines fed in line order (see the module docstring); `events(others)` gives
    the `kernel_splat` events, each naming the GPU the NVRM events near it name."""

    def __init__(self) -> None:
        self.found: list[_Splat] = []  # splats with an NVIDIA frame, in line order
        self._open: _Splat | None = None

    def feed(self, number: int, line: str) -> bool:
        """Read one line (1-based `number`); True when it is a splat header or NVIDIA frame."""
        header = header_of(line) if _may_head(line) else None
        if header is not None:
            self._header(number, line, *header)
        frame = _frame_in(line)
        if frame is not None:
            self._frame(number, line, frame)
        return header is not None or frame is not None

    def _header(self, number: int, line: str, kind: str, start: int) -> None:
        current, text = self._open, line[start:].strip()
        if current is not None and number - current.last <= DIE_LINES:
            if kind == "die" and current.kind in ("oops", "cut") and not current.died:
                # `BUG: kernel NULL pointer dereference` or `cut here` / `kernel BUG at`, then
                # the die line: one oops (named by the BUG line, else by the die line)
                current.text = current.text if current.kind == "oops" else text
                current.kind, current.died, current.last = "oops", True, number
                return
            if kind == "warning" and current.kind == "cut":
                current.kind, current.text, current.last = "warning", text, number
                return
            if kind == "hard_lockup" and current.kind in ("cut", "warning", "hard_lockup"):
                # `cut here`, `WARNING: ... watchdog_overflow_callback`, then `Watchdog detected
                # hard LOCKUP` (older kernels); a panic's `Hard LOCKUP` after the report
                current.text = current.text if current.kind == "hard_lockup" else text
                current.kind, current.last = "hard_lockup", number
                return
        stamp = parse_timestamp(line[:start])
        self._open = _Splat("oops" if kind == "die" else kind, number, number, text, stamp,
                            died=kind == "die")

    def _frame(self, number: int, line: str, frame: re.Match) -> None:
        current = self._open
        lead, rest = line[: frame.start()], line[frame.end():]
        if current is None or number - current.last > SPLAT_LINES:
            if _FRAME_LEAD.search(lead) is None or rest.strip():
                return  # not a line of a stack dump (a resource check's `caller ... [nvidia]`)
            current = self._open = _Splat("trace", number, number, "", parse_timestamp(lead))
        current.last = number
        if current.module is None:
            register = _FAULT_FRAME.search(lead)
            on_header = "WARNING: " in lead  # `WARNING: CPU: 2 PID: 7 at <file> <symbol> [nvidia]`
            module = frame.groupdict().get("module") or "nvidia"  # an untagged `_nv...rm` frame
            current.module, current.fault = module, bool(register or on_header)
            current.frame = line[register.start() if register else frame.start(): frame.end()]
            self.found.append(current)

    def events(self, others: list[KernelEvent]) -> list[KernelEvent]:
        """The `kernel_splat` events; `others` (the log's other events, in line order) name a
        splat's GPU when those within `GPU_NEAR_LINES` of it name exactly one."""
        named = [(e.line, e.pci) for e in others if e.pci is not None and e.kind != "port_state"]
        lines = [number for number, _ in named]
        out = []
        for splat in self.found:
            low = bisect_left(lines, splat.line - GPU_NEAR_LINES)
            high = bisect_right(lines, splat.last + GPU_NEAR_LINES)
            gpus = {pci for _, pci in named[low:high]}
            out.append(_event(splat, gpus.pop() if len(gpus) == 1 else None))
        return out


def _frame_in(line: str) -> re.Match | None:
    """The first NVIDIA frame in `line`: `_FRAME` searched only just before each ` [nvidia`
    (a frame's text ends there), so a long line costs one `find` and a short search per tag;
    else an untagged `_nv...rm` frame (`_RM_FRAME`) just before an `rm+0x`."""
    at = line.find(FRAME_ANCHOR)
    while at != -1:
        match = _FRAME.search(line, max(0, at - 240), at + 160)  # the pattern's widest
        if match is not None:
            return match
        at = line.find(FRAME_ANCHOR, at + 1)
    at = line.find(RM_FRAME_ANCHOR)
    while at != -1:
        match = _RM_FRAME.search(line, max(0, at - 12), at + 40)
        if match is not None:
            return match
        at = line.find(RM_FRAME_ANCHOR, at + 1)
    return None


def _may_head(line: str) -> bool:
    """True when `line` holds one of `SPLAT_HEADERS` (cheap, before the header pattern): only
    those literals open a header, so the prefiltered lines and every line give the same events."""
    return any(literal in line for literal in SPLAT_HEADERS)


def _event(splat: _Splat, pci: str | None) -> KernelEvent:
    """The `kernel_splat` event of one splat: `token` its type, `module` the NVIDIA module of its
    first NVIDIA frame, `lines` the lines it spans, the GPU `pci` when one is named near it."""
    stamp, clock, sequence = splat.stamp
    kind = "warning" if splat.kind == "cut" else splat.kind  # `cut here`, no die line after it
    where = "faulting in" if splat.fault else "call trace through"
    head = f"{splat.text}; " if splat.text else "kernel stack trace, its header not in the log; "
    message = f"{head}{where} {splat.module}: {splat.frame}"
    event = KernelEvent("kernel_splat", pci=pci, token=kind, module=splat.module,
                        timestamp=stamp, clock_kind=clock, line=splat.line, message=message,
                        sequence=sequence)
    return replace(event, lines=splat.last - splat.line + 1)
