"""`nvidia-smi -L`: one line per GPU the driver can open, and an NVML error line for one it
cannot (evidence, no judging).

Format (nvidia-smi(1), `-L, --list-gpus`; shared/corpus case 046):

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1b2c3d-0001-4e5f-8a9b-00000000a001)
      MIG 1g.10gb     Device  0: (UUID: MIG-...)
    Unable to determine the device handle for gpu 0000:18:00.0: Unknown Error

A GPU the driver lists but cannot open has no index line (the indices of the others keep their
numbers, so they may start at 1); its error line names its PCI address. MIG lines belong to the
GPU above them and are not GPUs. A shell prompt line above the output is allowed.
"""

from __future__ import annotations

import re

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.values import (
    GpuReading,
    SmiReading,
    handle_error,
)

GPU_LINE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: ([^)]*)\))?\s*$")
MIG_LINE = re.compile(r"^\s+MIG \S+\s+Device\s+\d+: \(UUID: [^)]*\)\s*$")
PROMPT = re.compile(r"^\s*\S*[$#%>]\s+\S+")
# A prompt line that ran `nvidia-smi -L` / `--list-gpus`: what follows is its output.
LIST_PROMPT = re.compile(r"^\s*\S*[$#%>]\s+(?:\S+/)?nvidia-smi\s+(?:\S+\s+)*(?:-L|--list-gpus)\b")
MAX_LINE_CHARS = 4096


def is_listing_line(line: str) -> bool:
    """True for a `GPU N: <model> (UUID: ...)` or MIG line of `nvidia-smi -L`."""
    return len(line) < MAX_LINE_CHARS and bool(GPU_LINE.match(line) or MIG_LINE.match(line))


def parse_gpu_list(text: str, source: str = "<nvidia-smi -L>") -> SmiReading:
    """The GPUs `nvidia-smi -L` lists (index, model, family, UUID) and, as inaccessible GPUs,
    those it names in a device-handle error (PCI address, the error text). Other lines are
    returned in `errors` (line, text) for the caller to classify. Raises ParseError naming the
    line when a `GPU N:` line has no model."""
    gpus, errors = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or MIG_LINE.match(line) or (number == 1 and PROMPT.match(line)):
            continue
        if len(line) >= MAX_LINE_CHARS:
            errors.append((number, line[:200]))
            continue
        if match := GPU_LINE.match(line):
            index, model, uuid = match.groups()
            if not model.strip():
                raise ParseError(source, "GPU line without a model", number)
            status = GpuStatus(
                index=index,
                model=model.strip(),
                family=family_of(model),
                uuid=(uuid or "").strip() or None,
            )
            gpus.append(GpuReading(status=status, line=number))
        elif handle := handle_error(line):
            status = GpuStatus(
                index=handle.index,
                pci_bus_id=handle.pci,
                accessible=False,
                error=handle.text[:200],
            )
            gpus.append(GpuReading(status=status, line=number))
        else:
            errors.append((number, line.strip()))
    return SmiReading(gpus=tuple(gpus), errors=tuple(errors))


def has_listing(text: str) -> bool:
    """True when some of the first lines are `nvidia-smi -L` GPU lines, or the text starts with
    a prompt line that ran `nvidia-smi -L`."""
    lines = text[:65536].splitlines()[:200]
    first = next((line for line in lines if line.strip()), "")
    return bool(LIST_PROMPT.match(first)) or any(GPU_LINE.match(line) for line in lines)


def list_shape(text: str, is_error_line) -> tuple[bool, bool]:
    """(is `nvidia-smi -L` output, holds error lines): every non-blank line (a first prompt line
    aside) is a GPU or MIG line or an error line (`is_error_line(line) -> bool`), and at least
    one is a GPU line, or the prompt line ran `nvidia-smi -L`."""
    if len(text) > 1_000_000:
        return False, False
    listed = errors = 0
    prompted = bool(LIST_PROMPT.match(text.lstrip("\n").split("\n", 1)[0]))
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or (number == 1 and PROMPT.match(line)) or MIG_LINE.match(line):
            continue
        if GPU_LINE.match(line) and len(line) < MAX_LINE_CHARS:
            listed += 1
        elif not line[0].isspace() and is_error_line(line.strip()):  # indented: not -L's
            errors += 1
        else:
            return False, False
    return listed > 0 or (prompted and errors > 0), errors > 0
