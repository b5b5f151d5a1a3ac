"""The device-and-severity fallback in `inspect`: lines no reader claims, and files no parser
knows, never dropped (the rules are `gpuslo.exporter.policy.unrecognised`).

- `log_lines`: for a log read by the kernel-log, fabric-manager, host-engine or dcgm-exporter-log
  reader, the lines none of those readers claims (`evidence.log_lines.claimed`; the exporter-log
  reader's `exporter_log.claims_line` when that reader read the text) that name a device and read
  as an error;
- `unread_text`: for a file (or a part of one) no parser recognises, an `unrecognised_output`
  finding naming the tool it looks like (when it looks like one), plus one finding per device
  its error lines name — a fatal-class word makes it fatal, so a fallen-off-the-bus line in an
  unknown shape still fails closed;
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuslo import names
from gpuslo.exporter.evidence.log_lines import Skip, claimed
from gpuslo.exporter.policy.kernel_aer import fallback_findings
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

# Kinds whose readers' claims are `evidence.log_lines.claimed`.
_SHARED_CLAIMS = ("kernel-log", "fabricmanager-log", "hostengine-log")


def _claims(kinds: Sequence[str], own: Sequence[Skip]) -> Skip:
    """What the readers of `kinds` claim: `claimed` (the kernel-log, fabric-manager and host-engine
    readers together, as they share journals) when one of those read the text, or when no reader
    brings claims of its own, and each reader's `own` claims (the dcgm-exporter-log reader's
    `exporter_log.claims_line`, given by the caller, which loads that reader lazily). A
    dcgm-exporter log alone is not skimmed by the others' claims: its `GPU ... has fallen off the
    bus` is no kernel line the kernel-log reader judged."""
    skips = list(own)
    if any(kind in _SHARED_CLAIMS for kind in kinds) or not skips:
        skips.insert(0, claimed)
    if len(skips) == 1:
        return skips[0]
    return lambda line: any(skip(line) for skip in skips)


def log_lines(text: str, kinds: Sequence[str], own: Sequence[Skip] = ()) -> list[Finding]:
    """`unrecognised_message` findings (kind `kinds[0]`) for the device error lines of a log read
    by the readers of `kinds` that none of them claims (`own`: the claims of readers beyond the
    shared ones, `_claims`)."""
    return fallback_findings(kinds[0], judge_lines(error_lines(text, _claims(kinds, own))))


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
