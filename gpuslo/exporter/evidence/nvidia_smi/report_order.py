"""Tell a `nvidia-smi -q` capture CUT short from one FILTERED by `-d` (pure).

nvidia-smi prints the full `-q` report of a GPU in a fixed order (NVIDIA's nvidia-smi(1) manual,
"-q, --query" and its list of output sections; the same order from driver 410 to 580 in the real
reports under ../shared/fixtures/h200 and tests/data/corpus): identity first (Product Name, Brand,
Display and Persistence Mode, Serial Number, GPU UUID, VBIOS, Inforom, GPU Operation Mode), then
PCI, performance and memory usage, then the fault sections (ECC Mode, ECC Errors, Retired Pages,
Remapped Rows), then the closing ones (Temperature, Power Readings, Clocks, ..., Processes).

`-q -d TYPE` (ECC, CLOCK, PERFORMANCE, MEMORY, ...) prints only the chosen sections after the GPU
header, with none of the identity fields: it never starts with `Product Name`. So a GPU block
that starts with the report's first field, shows only sections that come before the fault ones
and none of the sections after them is the full report stopped part-way: a paste cut before the
fault fields, whose health was not read. A filtered or user-chosen excerpt (`-q -d CLOCK`, a
trimmed paste that keeps ECC) is judged on what it shows.
"""

from __future__ import annotations

# The leading fields every full report prints, in its order (drivers 410 to 580 alike; newer
# drivers add others between them, such as Product Architecture or MIG Mode, which are not
# required). A cut shows a prefix of these with no gap; user-joined line ranges skip some.
LEADING = (
    "product_name",
    "product_brand",
    "display_mode",
    "display_active",
    "persistence_mode",
    "accounting_mode",
    "accounting_mode_buffer_size",
    "driver_model",
    "serial_number",
    "gpu_uuid",
    "minor_number",
    "vbios_version",
    "multigpu_board",
    "board_id",
    "inforom_version",
    "gpu_operation_mode",
    "pci",
    "performance_state",
    "fb_memory_usage",
    "bar1_memory_usage",
    "compute_mode",
    "utilization",
)
# Sections (top-level keys) that carry GPU faults, in the report's order.
FAULT_SECTIONS = frozenset({"ecc_mode", "ecc_errors", "retired_pages", "remapped_rows"})
# Sections the full report prints after the fault ones (older and newer drivers' names).
CLOSING_SECTIONS = frozenset(
    {
        "temperature",
        "power_readings",
        "gpu_power_readings",
        "gpu_memory_power_readings",
        "module_power_readings",
        "workload_power_profiles",
        "power_smoothing",
        "clocks",
        "applications_clocks",
        "default_applications_clocks",
        "deferred_clocks",
        "max_clocks",
        "max_customer_boost_clocks",
        "clock_policy",
        "supported_clocks",
        "voltage",
        "fabric",
        "processes",
        "accounted_processes",
        "capabilities",
    }
)
_FAULTS = "ECC Mode, ECC Errors, Retired Pages, Remapped Rows"


def stops_before_faults(fields: list[tuple[str, int]]) -> tuple[int, str] | None:
    """(line, what) when one GPU block's fields, as (normalised key, 1-based line) in output
    order, are the full `-q` report stopped before its fault sections, else None.

    The block must open with the report's first field (a `-d` filtered block never does), show
    the `LEADING` fields in their order with none skipped up to the last one shown (ranges of
    lines a reader joined skip some: tests/data/corpus/fresh case 210 is judged on what it
    shows), and show no key in `FAULT_SECTIONS` or `CLOSING_SECTIONS`; `what` names the last
    field shown, where the capture stops. An empty block is None (the caller's "no health
    section" covers it)."""
    if not fields or fields[0][0] != LEADING[0]:
        return None
    tops = list(dict.fromkeys(key.split("/", 1)[0] for key, _ in fields))
    if set(tops) & (FAULT_SECTIONS | CLOSING_SECTIONS):
        return None
    leading = [key for key in tops if key in LEADING]
    if leading != list(LEADING[: len(leading)]):
        return None  # a leading field skipped or out of NVIDIA's order: an excerpt
    key, line = max(fields, key=lambda pair: pair[1])
    shown = " / ".join(part.replace("_", " ") for part in key.split("/"))
    return line, f"the full -q report stops at {shown!r}, before its fault sections ({_FAULTS})"
