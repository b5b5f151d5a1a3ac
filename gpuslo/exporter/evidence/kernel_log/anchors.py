"""The prefilter's anchors: the literal strings a kernel-log line must hold to reach the readers.

`ANCHORS` is the one place the candidate set is defined. Every line a recogniser of
`events.EventBuilder` uses holds one (Xid, fallen-off-the-bus and driver messages are NVRM lines;
NVSwitch errors are SXid lines and an Xid record whose tag was stripped is an `Xid (` line, both
holding `Xid`; port events are mlx5 lines; a kernel splat through an NVIDIA module, `splats`,
holds frames tagged ` [nvidia`, `FRAME_ANCHOR`), and every line holding one is read. A reader or
fallback that judges other lines (a device name such as `efa`, an error word) extends the set
here, or passes its own to `KernelLogScan(anchors=...)`; a line holding none of the anchors is
never seen by any reader, but for a splat's header.

`SPLAT_HEADERS`: a splat's header lines (`BUG: ...`, `cut here`, ...) are read only where a splat
through an NVIDIA module can use them: anywhere in a block that holds an NVIDIA frame, and in the
last `HEADER_LOOKBACK_LINES` lines of every block (a frame at the start of the next block looks
back that far: `splats.SPLAT_LINES` + `splats.DIE_LINES`). They are found with `find` there, not
in the block search, so a log without NVIDIA frames costs one short search per block: as anchors
in Vectorscan's pass the five cost the scan ~17 % more CPU (0.182 -> 0.214 s per 210 MB, the
bench's 200 MiB log, best of 6, 2026-12-07). Every header within that many lines before a frame
is read, so the events are those of every line fed (tests/exporter/test_kernel_splats.py).

Cost (bench/kernel_log_scan.py): with Vectorscan (`needles.Needles`) all anchors are one pass over
every block, as is the newline count; without it each anchor is one `bytes.find` pass, so the scan
is about (len(anchors) + 1) memory passes: a long list of words is better matched by a reader on
the candidate lines than by more anchors.

`CONTEXT_ANCHOR`: a line holding it (an Xid line) brings the `CONTEXT_LINES` lines after it,
which hold no anchor (`MMU Fault: ...`, `Fault is of type ...` continuations).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A splat's header (`splats`): `BUG:` (`BUG: kernel NULL pointer dereference`, `BUG: soft
# lockup`, ...), the `------------[ cut here ]------------` line before a WARNING and before
# `kernel BUG at`, a die line's `[#1]` counter (`Oops: 0002 [#1]`, `general protection fault:
# 0000 [#1]`), `WARNING: CPU: 3 PID: 1 at`, a hung task's `blocked for more than`, an RCU
# stall's `detected stall(s)`, a hard lockup's `LOCKUP` (`Watchdog detected hard LOCKUP on cpu
# 3`, `Kernel panic - not syncing: Hard LOCKUP`). None is in a healthy boot's lines (the H200 boot
# log, every healthy corpus case); `BUG` alone would take the H200's `DEBUGCTL`, `WARNING: `
# also takes `RETBleed: WARNING: Spectre v2 ...`, which the recogniser declines.
SPLAT_HEADERS: tuple[str, ...] = ("BUG:", "cut here", " [#", "WARNING: ", "blocked for more than",
                                  "detected stall", "LOCKUP")
HEADER_LOOKBACK_LINES = 120
# A stack frame in an NVIDIA module: `nvlogInit+0x6/0xd0 [nvidia]`, `... [nvidia_uvm]`. Not in
# `Modules linked in: nvidia_uvm(POE) nvidia(POE)` (no brackets); also in the DRM driver's
# `[drm] [nvidia-drm] [GPU ID 0x00000100] Loading driver` (once per GPU and load), which the
# recogniser declines.
FRAME_ANCHOR = " [nvidia"
# A frame in the NVIDIA driver's closed resource manager, whose symbols are `_nvNNNNNNrm`
# (`_nv011159rm+0x62/0x110`) and are the nvidia module's only: an NVIDIA frame even where the
# line shows no `[nvidia]` tag (a trace copied without it, a kernel or tool that leaves it out).
# `rm+0x` also ends other symbols (`avc_has_perm+0x`): the recogniser reads only `_nv...rm`.
RM_FRAME_ANCHOR = "rm+0x"
FRAME_ANCHORS: tuple[str, ...] = (FRAME_ANCHOR, RM_FRAME_ANCHOR)
# `Xid`, not `SXid`: every SXid line holds it too, and so does an Xid record whose `NVRM:` tag a
# log tool stripped (`Xid (PCI:0000:01:00): 79, ...`: the journal's message column as corpus
# fresh17 1913 shows it), with the same number of passes.
ANCHORS: tuple[str, ...] = ("NVRM", "Xid", "mlx5", FRAME_ANCHOR, RM_FRAME_ANCHOR)
# What every line of the PCI core's bandwidth notice holds (`pcie_notice`): not an anchor (the
# notice is no GPU event); `gpuslo inspect`'s file scan finds those lines with the fallback's
# (`inspect.kernel_log_scan.FILE_SCAN`), here so that module need not import the reader.
PCIE_NOTICE_LITERAL = "available PCIe bandwidth, limited by"
CONTEXT_ANCHOR = "Xid ("
# The head of an NVRM Xid record in any punctuation people and drivers print (`parse._XID` reads
# the rest): the NVRM tag, an optional colon, `Xid`, the opening parenthesis of the address. Here
# so that the kind detection (`read.looks_like_kernel_log`) knows the record as the reader does
# without loading the recognisers. Gaps are bounded (a hostile line of spaces stays linear).
XID_HEAD = r"NVRM[ \t]{0,8}:?[ \t]{0,8}(?:Xid|XID)[ \t]{0,8}\("
# The head of an Xid record without its NVRM tag, where a kernel message starts: at the start of
# the line or right after a prefix's `]`, `:` or `;` (`[  5.1] Xid (`, `kernel: Xid (`, a kmsg
# record's `;Xid (`), so a sentence that names an Xid (`dmesg shows Xid (PCI:...)`) is none. The
# driver's spelling only (a tool that strips the tag keeps the rest), as the anchor `Xid` finds it.
# Group `at`: where the record starts.
BARE_XID_HEAD = r"(?:^[ \t]{0,8}|[\]:;][ \t]{0,8})(?P<at>)Xid[ \t]{0,8}\("
_ERE_SPECIAL = re.compile(r"[.\[\]\\()*+?{}|^$]")
CONTEXT_LINES = 2


def check_anchors(anchors: Sequence[str]) -> tuple[str, ...]:
    """`anchors` as a tuple; ValueError for none, an empty one or one spanning lines."""
    out = tuple(anchors)
    if not out or any(not a or "\n" in a for a in out):
        raise ValueError(f"anchors must be non-empty one-line strings, not {out!r}")
    return out


def grep_pattern(anchors: Sequence[str] = ANCHORS) -> str:
    """The `grep -E` pattern (and Python `re` pattern) selecting the same lines as `anchors`:
    only the characters special to both are escaped (`re.escape` would also escape the space and
    `#`, which GNU grep 3.8+ warns of as stray backslashes)."""
    return "|".join(_ERE_SPECIAL.sub(r"\\\g<0>", a) for a in check_anchors(anchors))
