"""The error and fatal-class words of the device-and-severity fallback (`policy.unrecognised`),
alone so that the driver-message catalogue and the kernel-log file scan can use them without
importing the readers.

Sources: NVIDIA's Xid catalogue and driver README (fallen off the bus, reset required), the PCIe
base specification's error classes (uncorrectable fatal against non-fatal), the Fabric Manager
user guide (fatal against non-fatal SXids).

A logger's own level is no such word: `level=fatal`, `FATA[0000]`, `[FATAL]` or a zap/log4j
`FATAL` column say how the program logged the line (logrus, slog, zap, klog/glog, syslog, Python
logging conventions), not what happened to a device, so `without_log_level` takes them out before
the words are looked for (`policy.unrecognised.judge_line`). The message's own words still count:
`level=error msg="GPU ... has fallen off the bus"` is fatal.
"""

from __future__ import annotations

import re

from gpuslo.exporter.evidence.kernel_log.anchors import PCIE_NOTICE_LITERAL

# A line that reads as an error (the device-and-severity fallback, `unrecognised`; here, with no
# import beyond `re` and the kernel-log anchors, so that the kernel-log file scan `gpuslo
# inspect` starts early loads it without the fallback's readers).
ERROR_WORDS = re.compile(
    r"\b(?:errors?|fail(?:s|ed|ing|ures?)?|fault(?:s|ed)?|time ?out|timed out|uncorrectable|"
    r"uncorrected|fatal|fallen off|lost|hang|hung|not responding|unrecoverable|"
    r"reset required|panic)\b",
    re.IGNORECASE,
)
# Every ERROR_WORDS match starts with one of these (ASCII case ignored): without Vectorscan the
# kernel-log file scan finds them with `find` and tries ERROR_WORDS from each hit only
# (`KernelLogScan(extra_literals=...)`, `needles.Needles`;
# tests/exporter/test_unrecognised_literals.py holds the two together).
ERROR_LITERALS = ("error", "fail", "fault", "time", "uncorrect", "fatal", "fallen off", "lost",
                  "hang", "hung", "not responding", "unrecoverable", "reset required", "panic")
# What a kernel-log file scan keeps beside its anchors (`KernelLogScan(extra=...,
# extra_literals=...)`), the same for `gpuslo inspect` (`inspect.kernel_log_scan.FILE_SCAN`) and
# the live `xid` check (`checks.xid_file.scan_file`): the fallback's lines (ERROR_WORDS) and the PCI
# core's bandwidth notice (`evidence.kernel_log.pcie_notice`, no anchor and no error word in it).
# Each reader takes only its own lines among them.
KERNEL_LOG_EXTRA = re.compile(f"{ERROR_WORDS.pattern}|{re.escape(PCIE_NOTICE_LITERAL)}",
                              ERROR_WORDS.flags)
KERNEL_LOG_EXTRA_LITERALS = (*ERROR_LITERALS, PCIE_NOTICE_LITERAL)
FATAL_WORDS = re.compile(
    r"\b(?:fallen off|uncorrectable|unrecoverable|fatal|reset required|requires? (?:a )?reset|"
    r"needs? (?:to be )?reset|must be reset)\b",
    re.IGNORECASE,
)
# The level field or column of a log line, in the forms GPU-node daemons write (logrus, slog, zap,
# klog/glog, syslog, Python logging): anywhere, a level key=value or JSON field (`level=fatal`,
# `"level":"fatal"`, `lvl=crit`, `"severity":"FATAL"`); at the head of the line (after a syslog
# priority `<3>` and a timestamp, ISO/Go or bracketed, when there are), logrus's terminal prefix
# (`FATA[0000]`), a bracketed level (`[FATAL]`, `<error>`), a klog/glog prefix (`F1205
# 10:00:00.123456`) or an upper-case level word (zap console `...Z\tFATAL\t`, dcgm-exporter 4.x
# `2025/04/02 21:28:12 ERROR`, Python `FATAL:root:`). Bare words in upper case only and at the
# head only: a message's own "fatal" is never taken for a level.
_LEVEL = (r"(?:fatal|panic|dpanic|crit(?:ical)?|emerg(?:ency)?|alert|err(?:or)?|warn(?:ing)?|"
          r"notice|info|debug|trace)")
_HEAD = (r"^\s*(?:<\d{1,3}>\s*)?(?:(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?"
         r"(?:Z|[+-]\d\d:?\d\d)?|\[[^\]\n]{1,40}\])\s*)?")
LOG_LEVEL = re.compile(
    rf"\b(?:level|lvl|log_?level|levelname)\"?\s*[=:]\s*\"?{_LEVEL}\b\"?|"
    rf"\"severity\"\s*:\s*\"{_LEVEL}\"|"
    rf"{_HEAD}(?:(?:\x1b\[[\d;]*m)?(?-i:PANI|FATA|ERRO|WARN|INFO|DEBU|TRAC)(?:\x1b\[[\d;]*m)?"
    rf"\[[^\]\n]{{0,40}}\]|[\[<]{_LEVEL}[\]>]|(?-i:[IWEF])\d{{4}} \d\d:\d\d:\d\d(?:\.\d+)?|"
    r"(?-i:FATAL|PANIC|DPANIC|CRITICAL|CRIT|EMERG|ALERT|ERROR|ERR|WARN|WARNING|NOTICE|INFO|DEBUG|"
    r"TRACE)(?=[:\s])|<\d{1,3}>)",
    re.IGNORECASE,
)
NOT_FATAL = re.compile(r"\bnon-?\s?fatal\b|\bnot fatal\b", re.IGNORECASE)


def without_log_level(text: str) -> str:
    """`text` with its logger's level fields and prefixes (`LOG_LEVEL`) made a space each."""
    return LOG_LEVEL.sub(" ", text)


def is_fatal_text(text: str) -> bool:
    """True when `text` carries a fatal-class word and does not say it is non-fatal."""
    return FATAL_WORDS.search(text) is not None and NOT_FATAL.search(text) is None
