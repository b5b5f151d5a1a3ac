"""The driver's own files under /proc/driver/nvidia, and the error messages NVML tools print
instead of data.

- `/proc/driver/nvidia/version`: `NVRM version: NVIDIA UNIX ... Kernel Module ... 580.159.04 ...`.
- `/proc/driver/nvidia/gpus/<bus>/information`: `Key: \\t value` lines (Model, GPU UUID, Bus
  Location, GPU Excluded, ...), one block per GPU when several are concatenated.
- NVML errors (NVML API reference, nvmlErrorString; nvidia-smi(1)): "Failed to initialize NVML:
  Driver/library version mismatch" (user-space library and kernel module differ: nothing can be
  read and CUDA cannot start until the module is reloaded or the node rebooted), "Failed to
  initialize NVML: Unknown Error", "NVIDIA-SMI has failed because it couldn't communicate with the
  NVIDIA driver", "No devices were found".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpuslo import names
from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.values import (
    GpuReading,
    SmiReading,
    clean,
    handle_error,
    pci_bus_id,
)

_NVRM = re.compile(r"^NVRM version:.*?Kernel Module\S*(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")
# The value as words matched possessively: `(.*?)\s*$`'s groups in linear time.
_INFO_LINE = re.compile(r"^([A-Za-z][A-Za-z .]*?):\s*+(\S*+(?:\s++\S++)*+)\s*$")
_INFO_KEYS = ("model", "gpu uuid", "bus location", "gpu excluded", "irq", "video bios")
MAX_LINE_CHARS = 4096


@dataclass(frozen=True)
class NvmlError:
    """One NVML error line: what it means in gpuslo's vocabulary."""

    line: int
    text: str
    signal: str
    class_: str
    reason: str
    action: str
    pci: str | None = None
    gpu: str | None = None


# (pattern, signal, class, reason, action), first match wins.
NVML_ERRORS = (
    (
        r"Unable to determine the device handle",
        "gpu_inaccessible",
        names.CLASS_FATAL,
        "gpu_inaccessible",
        names.ACTION_RESET_GPU,
    ),
    (
        r"Driver/library version mismatch",
        "driver_mismatch",
        names.CLASS_FATAL,
        "driver_mismatch",
        names.ACTION_REBOOT_NODE,
    ),
    (
        r"couldn't communicate with the NVIDIA driver|NVIDIA driver is not loaded",
        "nvml_error",
        names.CLASS_UNKNOWN,
        "dependency_missing",
        names.ACTION_NONE,
    ),
    (
        r"No devices were found",
        "gpu_missing",
        names.CLASS_FATAL,
        "gpu_missing",
        names.ACTION_REBOOT_NODE,
    ),
    (
        r"is not a valid field to query|Failed to initialize NVML|NVML: |NVML error",
        "nvml_error",
        names.CLASS_UNKNOWN,
        "tool_error",
        names.ACTION_NONE,
    ),
)
_INFO_ONLY = re.compile(r"^NVML library version:\s*\S+$")
# A container runtime's report around the NVML message it passes on (docker / compose, containerd,
# runc, the NVIDIA container toolkit's prestart hook), as people paste it, wrapped over several
# lines: `... OCI runtime create failed: runc create failed: ... error running hook #0: ...
# nvidia-container-cli: initialization error: nvml error: driver/library version mismatch:
# unknown` (fresh22 case 2404). Context, like the library-version line: it says which tool
# failed, the NVML line says why.
_RUNTIME_CONTEXT = re.compile(
    r"OCI runtime|runc create failed|failed to create shim|error running hook|"
    r"nvidia-container-cli|nvidia-container-runtime|Cannot start service|"
    r"Error response from daemon|Encountered errors while bringing up",
    re.IGNORECASE,
)


def quoted_in_prose(line: str, start: int) -> bool:
    """True when the text at `start` sits inside quotation marks opened by prose: after an odd
    number of `"` (the last one not a key's value, `msg="` or `"msg":"`), an open `“`, or an odd
    number of backticks (markdown inline code). Such a line talks about a message (`the docs say
    "Failed to initialize NVML: Driver/library version mismatch" means ...`); nvidia-smi prints
    its NVML messages bare, and a logger quotes them as a value."""
    before = line[:start]
    if before.count("`") % 2 or before.rfind("“") > before.rfind("”"):
        return True
    if before.count('"') % 2 == 0:
        return False
    opening = before.rfind('"')
    return not before[:opening].rstrip().endswith(("=", ":"))


def parse_nvml_errors(text: str, source: str) -> list[NvmlError]:
    """Classify every NVML error line of `text`; "NVML library version: X" lines and a container
    runtime's report around the message (`_RUNTIME_CONTEXT`) are context. Raises ParseError
    (with the line) for a line that is neither, such as a sentence quoting the message
    (`quoted_in_prose`), and for a runtime's report that passes on no NVML message."""
    out = []
    context = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or _INFO_ONLY.match(line):
            continue
        known = _nvml_message(line) if len(line) < MAX_LINE_CHARS else None
        if known is None:
            if len(line) < MAX_LINE_CHARS and _RUNTIME_CONTEXT.search(line):
                context = context or number
                continue
            raise ParseError(source, f"not an NVML error message: {line[:60]!r}", number)
        signal, klass, reason, action = known
        handle = handle_error(line)
        pci, index = (handle.pci, handle.index) if handle else (None, None)
        if signal == "gpu_inaccessible" and re.search(r"\breboot", line, re.IGNORECASE):
            action = names.ACTION_REBOOT_NODE  # "GPU is lost. Reboot the system ..."
        out.append(NvmlError(number, line, signal, klass, reason, action, pci, index))
    if context and not out:
        raise ParseError(source, "a container runtime's error without an NVML message", context)
    return out


def _nvml_message(line: str) -> tuple[str, str, str, str] | None:
    """(signal, class, reason, action) of the first `NVML_ERRORS` message `line` holds, as prose
    does not quote it (`quoted_in_prose`); None when it holds none."""
    for pattern, signal, klass, reason, action in NVML_ERRORS:
        found = re.search(pattern, line, re.IGNORECASE)
        if found and not quoted_in_prose(line, found.start()):
            return signal, klass, reason, action
    return None


def looks_like_nvml_error(text: str) -> bool:
    """Every non-blank line is an NVML error message (or its library-version context line), and
    not only device-handle errors."""
    if len(text) > 65536:
        return False
    try:
        errors = parse_nvml_errors(text, "<detect>")
    except ParseError:
        return False
    # A lone "Unable to determine the device handle" is nvidia-smi -q's output for that GPU.
    return any(error.signal != "gpu_inaccessible" for error in errors)


def _info_blocks(text: str) -> list[tuple[int, dict[str, str]]]:
    blocks: list[tuple[int, dict[str, str]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        match = _INFO_LINE.match(raw.strip()) if len(raw) < MAX_LINE_CHARS else None
        if not match:
            continue
        key = match.group(1).strip().lower()
        if key == "model" or not blocks:
            blocks.append((number, {}))
        blocks[-1][1][key] = match.group(2)
    return [(n, b) for n, b in blocks if "model" in b or "gpu uuid" in b or "bus location" in b]


def parse_proc_driver(text: str, source: str) -> SmiReading:
    """Parse /proc/driver/nvidia/version and/or gpus/*/information text. A GPU the driver lists
    as excluded (`GPU Excluded: Yes`, NVreg_ExcludedGpus) is not accessible to jobs."""
    driver = None
    for line in text.splitlines()[:64]:
        match = _NVRM.match(line.strip()) if len(line) < MAX_LINE_CHARS else None
        driver = driver or (match.group(1) if match else None)
    gpus = []
    for number, block in _info_blocks(text):
        model = clean(block.get("model"))
        excluded = (block.get("gpu excluded") or "").strip().lower() == "yes"
        status = GpuStatus(
            model=model,
            family=family_of(model) if model else None,
            uuid=clean(block.get("gpu uuid")),
            pci_bus_id=pci_bus_id(block.get("bus location")),
            accessible=False if excluded else None,
            error="excluded by the driver (GPU Excluded: Yes)" if excluded else None,
        )
        gpus.append(GpuReading(status=status, line=number))
    return SmiReading(gpus=tuple(gpus), driver_version=driver)


def looks_like_proc_driver(text: str) -> bool:
    """`NVRM version:` first, or an information file (Model and Bus Location fields)."""
    head = text[:16384]
    if head.lstrip().startswith("NVRM version:"):
        return True
    return bool(re.search(r"^Model:", head, re.M) and re.search(r"^Bus Location:", head, re.M))


def read_gpu_information(procfs: str | Path) -> list[tuple[str, str]]:
    """(path, text) of every readable `<procfs>/driver/nvidia/gpus/*/information`, in path order
    (the driver's own inventory, readable without NVML); [] when there are none. A file that
    cannot be read is left out: the callers treat what is missing as nothing known."""
    found = []
    for info in sorted((Path(procfs) / "driver" / "nvidia" / "gpus").glob("*/information")):
        try:
            found.append((str(info), info.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return found
