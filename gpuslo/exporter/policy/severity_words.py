"""The error and fatal-class words of the device-and-severity fallback (`policy.unrecognised`),
alone so that the driver-message catalogue and the kernel-log file scan can use them without
importing the readers.

Sources: NVIDIA's Xid catalogue and driver README (fallen off the bus, reset required), the PCIe
base specification's error classes (uncorrectable fatal against non-fatal), the Fabric Manager
user guide (fatal against non-fatal SXids).
"""

from __future__ import annotations

import re

# A line that reads as an error (the device-and-severity fallback, `unrecognised`; here, with no
# import beyond `re`, so that the kernel-log file scan `gpuslo inspect` starts early loads it
# without the fallback's readers).
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
FATAL_WORDS = re.compile(
    r"\b(?:fallen off|uncorrectable|unrecoverable|fatal|reset required|requires? (?:a )?reset|"
    r"needs? (?:to be )?reset|must be reset)\b",
    re.IGNORECASE,
)
NOT_FATAL = re.compile(r"\bnon-?\s?fatal\b|\bnot fatal\b", re.IGNORECASE)


def is_fatal_text(text: str) -> bool:
    """True when `text` carries a fatal-class word and does not say it is non-fatal."""
    return FATAL_WORDS.search(text) is not None and NOT_FATAL.search(text) is None
