"""`nvidia-smi -q` text and `nvidia-smi -q -x` XML.

Text: sections are nested by indentation; fields are `Name<spaces>: value`; a GPU block starts
with `GPU 00000000:55:00.0` (older drivers print `GPU0000:09:00.0`). Partial output (`-q -d ECC`,
a pasted section without its GPU header, several `-q -d` runs concatenated) is accepted: fields
before any GPU header form an anonymous block, which joins the GPU when the text names exactly one
GPU. Blocks for the same PCI address (several NVSMI LOGs) are merged. A `grep -A/-B/-C` excerpt
(`nvidia-smi -q | grep -A2 Fabric`) separates its groups of lines with a `--` line: the section
nesting starts afresh after it, and a field that an anonymous block already holds starts another
anonymous block (the same section of the next GPU, which grep cut its header from; tests/data/
corpus/fresh15 case 1717), so no GPU's value overwrites another's.

XML: `<nvidia_smi_log><gpu id="...">`, parsed with xml.etree after refusing entity declarations
(the "billion laughs" expansion) and inputs over `MAX_XML_CHARS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.report_order import stops_before_faults
from gpuslo.exporter.evidence.nvidia_smi.status import reading_from_fields
from gpuslo.exporter.evidence.nvidia_smi.values import (
    GpuReading,
    SmiReading,
    clean,
    handle_error,
    key_of,
    pci_bus_id,
    to_int,
)

if TYPE_CHECKING:  # imported by `parse_xml`: detecting `-q` text needs no XML reader
    import xml.etree.ElementTree as ET  # noqa: N817 - the conventional alias

MAX_XML_CHARS = 64 * 1024 * 1024
MAX_LINE_CHARS = 4096  # longer lines are not nvidia-smi -q fields
_GPU_HEADER = re.compile(r"^GPU\s*([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")
# Possessive whitespace keeps it linear (the lazy key backtracked over long runs of spaces).
_KEY_VALUE = re.compile(r"^(\s*+)([^:]*?[^\s:])\s++:\s*+(.*)$")
# A shell prompt and the command pasted above the output (`$ nvidia-smi -q | grep ...`).
_PROMPT = re.compile(r"^\S{0,60}[$#%>] {1,4}\S")
_GREP_SEPARATOR = "--"  # grep's line between groups of context lines (grep(1), --group-separator)
_NODE_KEYS = ("timestamp", "driver_version", "cuda_version", "attached_gpus")
# Sections and top-level fields that only nvidia-smi -q prints: what makes a block recognisable.
_SECTIONS = frozenset(
    {
        "ecc_mode",
        "ecc_errors",
        "remapped_rows",
        "retired_pages",
        "fabric",
        "temperature",
        "pci",
        "clocks_event_reasons",
        "clocks_throttle_reasons",
        "fb_memory_usage",
        "utilization",
    }
)
_TOP_FIELDS = frozenset(
    {"product_name", "gpu_uuid", "gpu_recovery_action", "product_architecture", "serial_number"}
)


@dataclass
class _Block:
    pci: str | None
    line: int
    fields: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    error: str | None = None


def _known(block: _Block) -> bool:
    if block.pci or block.error:
        return True
    return any(k in _TOP_FIELDS or k.split("/", 1)[0] in _SECTIONS for k in block.fields)


def _merge(blocks: list[_Block]) -> list[_Block]:
    """Merge blocks of the same PCI address; an anonymous block joins the only named GPU."""
    named: dict[str, _Block] = {}
    anonymous, errors = [], []
    for block in blocks:
        if block.pci is None and block.error:
            errors.append(block)  # a handle error naming its GPU by index: that GPU, not this
        elif block.pci is None:
            anonymous.append(block)
        elif block.pci in named:
            named[block.pci].fields.update(block.fields)
            named[block.pci].error = named[block.pci].error or block.error
        else:
            named[block.pci] = block
    if len(named) == 1 and anonymous:
        only = next(iter(named.values()))
        for block in anonymous:
            only.fields = {**block.fields, **only.fields}
        anonymous = []
    return [*named.values(), *anonymous, *errors]


def _scan(text: str) -> tuple[list[_Block], dict[str, tuple[str, int]]]:
    blocks: list[_Block] = []
    node: dict[str, tuple[str, int]] = {}
    current: _Block | None = None
    stack: list[tuple[int, str]] = []
    grouped = False  # a grep group separator was seen: a repeated field is another GPU's
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.expandtabs(8).rstrip()
        stripped = line.strip()
        if not stripped or len(line) > MAX_LINE_CHARS or _PROMPT.match(line):
            continue
        if stripped == _GREP_SEPARATOR:
            stack, grouped = [], True
            continue
        if stripped.startswith("=====") or _GPU_HEADER.match(stripped):
            header = _GPU_HEADER.match(stripped)
            current = _Block(pci_bus_id(header.group(1)), number) if header else None
            blocks += [current] if current else []
            stack = []
            continue
        handle = handle_error(stripped)
        if handle:
            blocks.append(_Block(handle.pci, number, error=stripped))
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        pair = _KEY_VALUE.match(line)
        if pair is None:
            stack.append((indent, key_of(stripped)))
            continue
        key = "/".join([*(part for _, part in stack), key_of(pair.group(2))])
        if current is None and key in _NODE_KEYS:
            node[key] = (pair.group(3), number)
            continue
        if current is None or (grouped and current.pci is None and key in current.fields):
            current = _Block(None, number)
            blocks.append(current)
        current.fields[key] = (pair.group(3), number)
    return blocks, node


def _readings(blocks: list[_Block], attached: int | None, source: str) -> list[GpuReading]:
    named = [b for b in blocks if b.pci]
    out = []
    for block in blocks:
        index = str(named.index(block)) if block.pci and len(named) == attached else None
        if block.error and not block.fields:
            handle = handle_error(block.error)
            failed_index = handle.index if handle else None
            status = GpuStatus(
                index=index or failed_index, pci_bus_id=block.pci, accessible=False,
                error=block.error,
            )
            out.append(GpuReading(status=status, line=block.line))
            continue
        reading = reading_from_fields(block.fields, source, block.pci, index, block.line)
        out.append(replace(reading, health_shown=_shows_health(block)))
    return out


def _shows_health(block: _Block) -> bool:
    """Whether a text block shows any value inside a section (`ECC Errors/...`, `Clocks Event
    Reasons/...`, `Temperature/...`) or the recovery action: a block of identity fields alone
    (name, UUID, serial, minor number) is an output cut short, whose health was not read."""
    return any("/" in key or key == "gpu_recovery_action" for key in block.fields)


_BANNER = re.compile(r"^\s*=+\s*NVSMI LOG\s*=+\s*$")


def cut_off(text: str) -> tuple[int, str] | None:
    """(line, what) when a `-q` capture shows it was cut off, else None (pure). Two shapes tell:

    - the last line has no newline and stops inside nvidia-smi's padding: a field name followed
      by spaces and no colon, or a colon with no value (`Correctable Error ` at the end of a
      file): nvidia-smi pads every name to its colon and prints a value after it;
    - a whole capture (from the `NVSMI LOG` banner on) whose last line is a section header with
      nothing under it: nvidia-smi prints each section's fields (or `None` / `N/A` on the header
      line itself), so its output never ends on a bare header.

    An excerpt (no banner) that ends on a header is a reader's cut of what they chose to show
    (tests/data/corpus/fresh3 case 416) and is judged on what it shows."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or len(lines[-1]) > MAX_LINE_CHARS:
        return None
    last, number = lines[-1].expandtabs(8), len(lines)
    indented = last[:1].isspace()
    pair = _KEY_VALUE.match(last.rstrip())
    if not text.endswith(("\n", "\r")) and indented and (
        (pair is None and last != last.rstrip()) or last.rstrip().endswith(":")
    ):
        return number, f"the last line stops inside a field ({last.strip()!r})"
    banner = any(_BANNER.match(line) for line in lines[:8])
    if banner and indented and pair is None and not last.rstrip().endswith(":"):
        return number, f"the output ends on the section header {last.strip()!r} with no field"
    return None


def _stopped(blocks: list[_Block]) -> tuple[int, str] | None:
    """`report_order.stops_before_faults` on the last block with fields: a cut ends the output,
    so only the last block can be one. Neither the node header nor the GPU's is needed: a paste
    that starts at a GPU's header and stops in its leading sections (tests/data/corpus/fresh11
    case 1308) is cut, and so is one whose stored copy lost its first lines too (NVIDIA/DCGM#152,
    from `Pending` to `PCI`: an anonymous block)."""
    shown = [b for b in blocks if b.fields]
    if not shown:
        return None
    fields = [(key, line) for key, (_, line) in shown[-1].fields.items() if line is not None]
    return stops_before_faults(fields)


def parse_query(text: str, source: str) -> SmiReading:
    """Parse `nvidia-smi -q` text (whole or partial). Raises ParseError naming line and field when
    a known field has a value of the wrong shape. A text with no recognisable GPU field gives an
    empty `gpus`; a capture cut off before nvidia-smi finished sets `cut` (`cut_off`, or the full
    report stopped before its fault sections: `report_order.stops_before_faults`)."""
    blocks, node = _scan(text)
    stopped = _stopped(blocks)  # before `_merge`, which reorders merged fields
    blocks = [b for b in _merge(blocks) if _known(b)]
    attached = node.get("attached_gpus")
    attached_gpus = to_int(attached[0], source, attached[1], "Attached GPUs") if attached else None
    return SmiReading(
        gpus=tuple(_readings(blocks, attached_gpus, source)),
        driver_version=clean(node.get("driver_version", ("", 0))[0]),
        cuda_version=clean(node.get("cuda_version", ("", 0))[0]),
        attached_gpus=attached_gpus,
        cut=cut_off(text) or stopped,
    )


def _flatten(element: ET.Element, prefix: str, out: dict[str, tuple[str, int | None]]) -> None:
    for child in element:
        key = f"{prefix}{key_of(child.tag)}"
        if len(child):
            _flatten(child, f"{key}/", out)
        else:
            out[key] = ((child.text or "").strip(), None)


def parse_xml(text: str, source: str) -> SmiReading:
    """Parse `nvidia-smi -q -x` XML. Raises ParseError for entity declarations, oversize input,
    XML that is not well-formed (with its line), or a root that is not `nvidia_smi_log`.
    xml.etree is imported here, not with the module: `gpuslo inspect` imports this module to
    detect `-q` text on every file (~2.5 ms of its start-up, issue 30)."""
    import xml.etree.ElementTree as ET  # noqa: N817 - the conventional alias

    if len(text) > MAX_XML_CHARS:
        raise ParseError(source, f"XML larger than {MAX_XML_CHARS // 2**20} MiB")
    if re.search(r"<!ENTITY", text, re.IGNORECASE):
        raise ParseError(source, "XML entity declarations are refused (entity expansion)")
    try:
        root = ET.fromstring(text.lstrip())
    except ET.ParseError as error:
        raise ParseError(source, f"XML not well-formed: {error}", error.position[0]) from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(source, f"root element is <{root.tag[:40]}>, not <nvidia_smi_log>")
    attached = to_int(root.findtext("attached_gpus"), source, None, "attached_gpus")
    gpus = root.findall("gpu")
    readings = []
    for position, gpu in enumerate(gpus):
        fields: dict[str, tuple[str, int | None]] = {}
        _flatten(gpu, "", fields)
        index = str(position) if len(gpus) == attached else None
        readings.append(reading_from_fields(fields, source, gpu.get("id"), index))
    return SmiReading(
        gpus=tuple(readings),
        driver_version=clean(root.findtext("driver_version")),
        cuda_version=clean(root.findtext("cuda_version")),
        attached_gpus=attached,
    )
