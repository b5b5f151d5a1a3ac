"""The options of `gpuslo inspect`'s scan of a kernel-log file (`FILE_SCAN`, pure data), apart
from its findings (`inspect.kernel_log`): this module imports the scan and the fallback's words
only, so that `gpuslo.cli.inspect_early` can fork the scan of a large log before the inspectors,
policies and detectors are imported (issue 30).
"""

from __future__ import annotations

from gpuslo.exporter.evidence.kernel_log.read import file_scanner
from gpuslo.exporter.policy.severity_words import KERNEL_LOG_EXTRA, KERNEL_LOG_EXTRA_LITERALS

KIND = "kernel-log"
# `scan_kernel_log_file`'s options: the device-and-severity fallback's lines and the PCIe
# bandwidth notices (`evidence.kernel_log.pcie_notice`, which hold no anchor and no error word)
# found in the same pass (`severity_words.KERNEL_LOG_EXTRA`, the live `xid` check's too), a last
# line without its newline not read (inspect says it was incomplete). The fallback judges only
# its own lines among them (`judge_lines`).
EXTRA = KERNEL_LOG_EXTRA
FILE_SCAN = {"complete_lines": True, "extra": EXTRA, "extra_literals": KERNEL_LOG_EXTRA_LITERALS}


def file_scan() -> tuple:
    """`read.file_scanner` with `FILE_SCAN`: what the child `gpuslo inspect` forks at its start
    for a large file scans with (`halves.prestart`), in that child."""
    return file_scanner(**FILE_SCAN)
