"""Keep freed memory in a short-lived batch process (`gpuslo report`), so the heap is reused
instead of being handed back to the kernel and faulted in again, zeroed, a moment later.

glibc's malloc (mallopt(3)) serves a request at or over its mmap threshold (128 KiB at start,
raised to the size of each such chunk freed, up to 32 MiB on 64-bit) with its own mmap(), and
unmaps it on free; and it trims the heap's free top beyond its trim threshold (twice the mmap
threshold). The report's columns at 10,000 GPUs (~10^6 rows, 8 MB per column) are made and
dropped by the hundred, so a new process faulted ~120,000 pages (~0.2-0.4 s of system time,
bench/report_files.py) where the same work in a warm process reuses its heap. Fixing the mmap
threshold at 32 MiB (glibc's DEFAULT_MMAP_THRESHOLD_MAX, accepted on every 64-bit build) and the
trim threshold at 2 GiB halves the faults (~58,000) for ~30 MB more peak RSS (322 -> 351 MB at
10,000 GPUs). Setting the trim threshold alone would switch the dynamic threshold off at
128 KiB and fault far more (~540,000), so both are set, the mmap threshold first.

The same process also asks numpy not to advise transparent huge pages for its arrays
(`no_huge_page_advice`): numpy, at import, calls madvise(MADV_HUGEPAGE) on every array of
4 MiB or more unless NUMPY_MADVISE_HUGEPAGE=0, and where the kernel's THP `defrag` setting is
`madvise` (the kernel's default) each such first touch may compact memory synchronously to find
2 MiB pages. A new 10,000-GPU report spent 0.34-0.48 s of system time with the advice and
0.18-0.25 s without, user time the same within the noise (median of 6 alternating runs each,
2.76 -> 2.52 s CPU, bench/HISTORY.md "report_files.py", round 15): a short batch process gains
nothing from huge pages that it pays for in faults.

Only the console-script process calls these (`gpuslo.cli.main`), for the batch commands in
`gpuslo.cli.KEEP_FREED`, before numpy is imported; a long-lived exporter keeps the defaults. Best
effort: without glibc (musl, macOS) there is no `mallopt` or it refuses, and nothing changes;
a NUMPY_MADVISE_HUGEPAGE the user set is kept.
"""

from __future__ import annotations

import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc <malloc.h>
MMAP_THRESHOLD = 32 * 1024 * 1024  # bytes
TRIM_THRESHOLD = 2 * 1024 * 1024 * 1024 - 1  # bytes; an int, as mallopt takes


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds (module docstring) for this process. Returns True
    when both were accepted, False where there is no glibc `mallopt` or it refused one."""
    import ctypes  # only here: the other commands need no FFI

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    if not mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD):
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def no_huge_page_advice() -> str:
    """Set NUMPY_MADVISE_HUGEPAGE=0 for this process unless it is set (module docstring); it
    takes effect only if numpy is imported after this call. Returns the value in force."""
    return os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
