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

Only the console-script process calls this (`gpuslo.cli.main`), for the batch commands in
`gpuslo.cli.KEEP_FREED`; a long-lived exporter keeps glibc's defaults. Best effort: without
glibc (musl, macOS) there is no `mallopt` or it refuses, and nothing changes.
"""

from __future__ import annotations

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
