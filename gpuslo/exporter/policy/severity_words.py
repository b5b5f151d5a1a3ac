"""The fatal-class words of the device-and-severity fallback (`policy.unrecognised`), alone so
that the driver-message catalogue can use them without importing the readers.

Sources: NVIDIA's Xid catalogue and driver README (fallen off the bus, reset required), the PCIe
base specification's error classes (uncorrectable fatal against non-fatal), the Fabric Manager
user guide (fatal against non-fatal SXids).
"""

from __future__ import annotations

import re

FATAL_WORDS = re.compile(
    r"\b(?:fallen off|uncorrectable|unrecoverable|fatal|reset required|requires? (?:a )?reset|"
    r"needs? (?:to be )?reset|must be reset)\b",
    re.IGNORECASE,
)
NOT_FATAL = re.compile(r"\bnon-?\s?fatal\b|\bnot fatal\b", re.IGNORECASE)


def is_fatal_text(text: str) -> bool:
    """True when `text` carries a fatal-class word and does not say it is non-fatal."""
    return FATAL_WORDS.search(text) is not None and NOT_FATAL.search(text) is None
