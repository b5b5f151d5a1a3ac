"""The options of `gpuslo inspect`'s scan of a kernel-log file (`FILE_SCAN`, pure data), apart
from its findings (`inspect.kernel_log`): this module imports the scan and the fallback's words
only, so that `gpuslo.cli.inspect_early` can fork the scan of a large log before the inspectors,
policies and detectors are imported (issue 30).
"""

from __future__ import annotations

from gpuslo.exporter.evidence.kernel_log.read import file_scanner
from gpuslo.exporter.policy.severity_words import ERROR_LITERALS, ERROR_WORDS

KIND = "kernel-log"
# `scan_kernel_log_file`'s options: the device-and-severity fallback's lines found in the same
# pass, a last line without its newline not read (inspect says it was incomplete).
FILE_SCAN = {"complete_lines": True, "extra": ERROR_WORDS, "extra_literals": ERROR_LITERALS}


def file_scan() -> tuple:
    """`read.file_scanner` with `FILE_SCAN`: what the child `gpuslo inspect` forks at its start
    for a large file scans with (`halves.prestart`), in that child."""
    return file_scanner(**FILE_SCAN)
