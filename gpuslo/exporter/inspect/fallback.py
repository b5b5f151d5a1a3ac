"""The device-and-severity fallback in `inspect`: lines no reader claims, and files no parser
knows, never dropped (the rules are `gpuslo.exporter.policy.unrecognised`).

- `log_lines`: for a log read by the kernel-log, fabric-manager or host-engine reader, the lines
  none of those readers claims (`evidence.log_lines.claimed`) that name a device and read as an
  error;
- `unread_text`: for a file (or a part of one) no parser recognises, an `unrecognised_output`
  finding naming the tool it looks like (when it looks like one), plus one finding per device
  its error lines name — a fatal-class word makes it fatal, so a fallen-off-the-bus line in an
  unknown shape still fails closed;
"""

from __future__ import annotations

import re

from gpuslo import names
from gpuslo.exporter.evidence.log_lines import claimed
from gpuslo.exporter.policy.unrecognised import (
    error_lines,
    judge_lines,
    unrecognised_findings,
)
from gpuslo.verdict import Finding

# Markers of known tools' outputs (first match names the tool), for text no parser recognises.
TOOLS = (
    ("nvidia-smi", re.compile(r"NVIDIA-SMI|nvidia-smi|NVSMI|Driver Version|Attached GPUs")),
    ("dcgmi / DCGM", re.compile(r"\bdcgmi\b|\bDCGM\w*|nv-hostengine|hostengine")),
    ("nvidia-fabricmanager", re.compile(r"fabric ?manager|NVSwitch|nvswitch", re.IGNORECASE)),
    ("NVIDIA kernel driver", re.compile(r"\bNVRM\b|\bXid\b|nvidia\.ko")),
    ("ibstat / ibstatus / ibv_devinfo", re.compile(r"\bCA '|\bmlx\d_\d|Base lid|phys_state")),
    ("fi_info / libfabric", re.compile(r"\bfi_info\b|libfabric|\bprovider: |\befa\b")),
    ("lspci", re.compile(r"LnkSta|LnkCap|\blspci\b")),
    ("NVML", re.compile(r"\bNVML\b")),
)


def log_lines(text: str, kind: str) -> list[Finding]:
    """`unrecognised_message` findings for the device error lines of a log no reader claims."""
    return unrecognised_findings(kind, judge_lines(error_lines(text, claimed)))


def looks_like_tool(text: str) -> str | None:
    """The known tool `text` looks like the output of, None when it looks like none."""
    head = text[:65536]
    return next((tool for tool, marker in TOOLS if marker.search(head)), None)


def unread_text(text: str, where: str) -> list[Finding]:
    """Findings for text no parser recognises (`where` names the file or its lines): an
    `unrecognised_output` finding (unknown) when it looks like a known tool's output, and one
    `unrecognised_message` finding per device its error lines name."""
    findings = unrecognised_findings("unknown", judge_lines(error_lines(text)))
    tool = looks_like_tool(text)
    if tool is not None:
        findings.insert(
            0,
            Finding(
                kind="unknown",
                class_=names.CLASS_UNKNOWN,
                signal="unrecognised_output",
                reason="parse_error",
                message=f"{where}: looks like {tool} output in a shape no parser knows",
                extra={"tool": tool},
            ),
        )
    return findings
