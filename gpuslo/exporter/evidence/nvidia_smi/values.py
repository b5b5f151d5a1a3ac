"""What nvidia-smi's outputs have in common: the reading records, value cleaning, and one builder
that turns a GPU's fields (from `-q` text, `-q -x` XML or `--query-gpu` CSV) into a `GpuStatus`.

Value conventions are nvidia-smi(1)'s: `N/A` / `[N/A]` / `[Not Supported]` (and NVML's
"Requested functionality has been deprecated") mean not reported;
`ERR!`, `Unknown Error` and `GPU is lost` mean the driver could not read the field. Fields are
keyed by a normalised path: lower case, spaces and hyphens as `_`, sections joined by `/`
(`remapped_rows/pending` from the text form, `remapped_rows/remapped_row_pending` from XML,
`remapped_rows.pending` from CSV).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.pci import normalise_pci

NOT_REPORTED = frozenset(
    {
        "",
        "n/a",
        "[n/a]",
        "not supported",
        "[not supported]",
        "not available",
        "[not available]",
        # NVML_ERROR_DEPRECATED's string: 570 drivers print it for the GPU Reset Status fields,
        # which "GPU Recovery Action" replaced (corpus fresh8 case 1006)
        "requested functionality has been deprecated",
        "[requested functionality has been deprecated]",
    }
)
ERROR_VALUES = frozenset(
    {
        "err!",
        "unknown error",
        "[unknown error]",
        "gpu is lost",
        "[gpu is lost]",
        "insufficient permissions",
        "[insufficient permissions]",
        "gpu requires reset",
        "[gpu requires reset]",
    }
)
_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(?:[a-z%()/.!]*)?$", re.IGNORECASE)
_TRUE = frozenset({"yes", "true", "active", "enabled", "on"})
_FALSE = frozenset({"no", "false", "not active", "disabled", "off", "inactive"})
# Lines nvidia-smi prints instead of data (nvidia-smi(1), NVML error strings). The GPU is named
# by its PCI address (`for GPU0000:3B:00.0: Unknown Error`), by its index (`for GPU 2: Unknown
# Error`), or by both (`for GPU3: 0000:04:00.0: Unknown Error`): read them with `handle_error`.
_PCI_TEXT = r"[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2}(?:\.[0-7])?"
DEVICE_HANDLE_ERROR = re.compile(
    r"Unable to determine the device handle for (?:GPU|gpu)\s*#?"
    rf"(?:(?P<pci>{_PCI_TEXT})|(?P<index>\d{{1,3}})\s*:(?:\s*(?P<index_pci>{_PCI_TEXT})(?=\s*:))?)"
    r":?\s*(?P<rest>.*)$"
)


@dataclass(frozen=True)
class HandleError:
    """A device-handle error line: the GPU it names (index and/or NVML PCI form, each None
    when the line does not give it) and the line itself."""

    index: str | None
    pci: str | None
    text: str


def handle_error(line: str) -> HandleError | None:
    """`line` as a device-handle error (`DEVICE_HANDLE_ERROR`), None when it is none. Every
    nvidia-smi output kind prints the same line for a GPU NVML cannot open (the table, `-q`,
    `-L`, `--query-gpu` CSV), so every reader takes the GPU from here."""
    match = DEVICE_HANDLE_ERROR.search(line)
    if match is None:
        return None
    pci = pci_bus_id(match.group("pci") or match.group("index_pci"))
    return HandleError(index=match.group("index"), pci=pci, text=line.strip())
NO_DEVICES = re.compile(r"^\s*No devices were found\s*$", re.IGNORECASE)

# Health fields: a read error in one of these means the GPU's health cannot be told (unknown).
HEALTH_FIELDS = frozenset(
    {
        "ecc_dbe_volatile",
        "remapped_rows_pending",
        "remapped_rows_failure",
        "recovery_action",
        "reset_required",
        "drain_and_reset_recommended",
        "retired_pages_pending",
        "fabric_state",
        "fabric_status",
    }
)

# Cooling fields: the fan and the GPU's temperature, as every form names them (the table's `fan`
# and `temperature` cells, `-q` / XML `fan_speed`, CSV `fan.speed`, `temperature_c` from any
# form). nvidia-smi prints `N/A` where the GPU has no such sensor (a passively cooled board's
# fan: NVML_ERROR_NOT_SUPPORTED) and `ERR!` / `Unknown Error` where NVML failed to read one the
# GPU has: a fan or sensor that cannot be read may be a fan that stopped (NVIDIA/gpu-monitoring-
# tools#84, utkuozdemir/nvidia_gpu_exporter#393: a fan `ERR!` on a GPU whose `-q` asks for a
# reset), so the GPU's thermal health cannot be told: unknown, like a health field. The power
# draw is telemetry, not cooling: its `ERR!` alone is transient and not actionable
# (Azure/azhpc-diagnostics#77, maintainers), a warn like every other unread field.
COOLING_FIELDS = frozenset({"fan", "fan_speed", "fan.speed", "temperature", "temperature_c"})
# The fields whose read error makes the GPU's health unknown (the rest are warn).
UNKNOWN_WHEN_UNREAD = HEALTH_FIELDS | COOLING_FIELDS


# The keys (sections of `-q` text and XML, `--query-gpu` column prefixes) of the fields that carry
# GPU faults: what a healthy reading of a GPU's health needs to have seen. nvidia-smi prints them
# as `N/A` where the GPU has no such feature, which is still an answer.
FAULT_KEYS = (
    "ecc_errors",
    "ecc.errors.uncorrected",
    "remapped_rows",
    "retired_pages",
    "gpu_recovery_action",
    "gpu_reset_status",
    "reset_status.",
)


def shows_faults(keys) -> bool:
    """True when any of `keys` (normalised field keys) is a fault-carrying field (`FAULT_KEYS`)."""
    return any(key.startswith(FAULT_KEYS) for key in keys)


@dataclass(frozen=True)
class GpuReading:
    """One GPU as one nvidia-smi output shows it.

    Attributes:
        status: the normalised record (`gpu_health.GpuStatus`).
        field_errors: (field, value) pairs the driver could not read (`ERR!`, `Unknown Error`).
        line: 1-based line where the GPU's block starts, None when unknown.
        architecture: "Product Architecture" as reported, None when absent.
        health_shown: False when the block shows no section's value and no recovery action
            (a `-q` output cut right after the GPU header): its health was not read.
        faults_shown: False when the output shows none of the fields that carry GPU faults
            (`FAULT_KEYS`: ECC errors, row remapping, retired pages, recovery action, reset
            status), even as `N/A`: a `-q -d PERFORMANCE` section, `--query-gpu` columns of
            temperature and utilisation. What it shows is judged; those faults were not read.
        unread_faults: (field, why) fault-carrying fields the GPU carries but shows only as
            `N/A` (`nvidia_smi.unread`: an uncorrectable-ECC count with ECC enabled).
    """

    status: GpuStatus
    field_errors: tuple[tuple[str, str], ...] = ()
    line: int | None = None
    architecture: str | None = None
    health_shown: bool = True
    faults_shown: bool = True
    unread_faults: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SmiReading:
    """Everything one nvidia-smi output says.

    Attributes:
        gpus: the GPUs in output order.
        driver_version, cuda_version: from the header, None when absent.
        attached_gpus: nvidia-smi -q's "Attached GPUs" (a `-i` query shows fewer blocks).
        no_devices: the output says "No devices were found".
        errors: (line, text) error lines that are not GPU data.
        cut: (line, what) when the capture shows it was cut off before nvidia-smi finished
            (`query.cut_off`): what follows that line was not seen. None otherwise.
    """

    gpus: tuple[GpuReading, ...] = ()
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    no_devices: bool = False
    errors: tuple[tuple[int, str], ...] = ()
    cut: tuple[int, str] | None = None


def clean(value: str | None) -> str | None:
    """`value` stripped, or None when nvidia-smi marks it not reported (N/A, [Not Supported])."""
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in NOT_REPORTED else value


def is_error(value: str | None) -> bool:
    """True when `value` is nvidia-smi's way of saying it could not read the field."""
    return value is not None and value.strip().lower() in ERROR_VALUES


def to_number(value: str | None, source: str, line: int | None, name: str) -> float | None:
    """A number with an optional unit (`34 C`, `16x`, `0 us`, `3072 bank(s)`, `0x40`); None when
    not reported. Raises ParseError naming the field when it is something else."""
    value = clean(value)
    if value is None or is_error(value):
        return None
    if value.lower().startswith("0x"):
        try:
            return float(int(value, 16))
        except ValueError:
            raise ParseError(source, f"not a hex number: {value[:40]!r}", line, name) from None
    match = _NUMBER.match(value)
    if not match:
        raise ParseError(source, f"not a number: {value[:40]!r}", line, name)
    return float(match.group(1))


def to_int(value: str | None, source: str, line: int | None, name: str) -> int | None:
    """`to_number` as an int (counts, generations, lanes)."""
    number = to_number(value, source, line, name)
    return None if number is None else int(number)


# A reader's mark pasted after a value to point at it (`Pending : Yes   <===`, `<--`, `# !`).
_ANNOTATION = re.compile(r"\s+(?:<[=-]+|[=-]+>|#|\*+|!+|\u2190|\(!+\)).*$")


def to_bool(value: str | None, source: str, line: int | None, name: str) -> bool | None:
    """Yes/No, Active/Not Active, Enabled/Disabled as a bool; None when not reported. A mark a
    reader pasted after the value (`Yes   <===`) is not part of it."""
    value = clean(value)
    if value is None or is_error(value):
        return None
    lowered = _ANNOTATION.sub("", value).lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ParseError(source, f"not a yes/no value: {value[:40]!r}", line, name)


def pci_bus_id(value: str | None) -> str | None:
    """NVML's form of a PCI address (`00000000:00:06.0`, `gpuslo.exporter.evidence.pci`) from
    any width of domain; None when `value` is not a PCI address."""
    return normalise_pci(clean(value))


def key_of(*parts: str) -> str:
    """Normalised field key: lower case, spaces and hyphens as `_`, parts joined by `/`."""
    return "/".join(re.sub(r"[\s-]+", "_", part.strip().lower()) for part in parts)
