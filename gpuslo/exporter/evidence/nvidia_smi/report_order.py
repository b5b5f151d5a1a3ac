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
fault fields, whose health was not read. So is one whose first lines were lost too (a stored
copy that starts at `Driver Model`'s `Pending`, NVIDIA/DCGM#152): it opens inside the identity
head, with two or more of the fields no `-d` prints (`HEAD_ONLY`) in the report's order, and
stops before the fault sections in the same way. A filtered or user-chosen excerpt (`-q -d
CLOCK`, a trimmed paste that keeps ECC, a range of lines from PCI on: tests/data/corpus/holdout
case 129 and fresh3 case 416, which show none of the identity head) is judged on what it shows.
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
# The LEADING fields only the full report prints (no `-q -d` type prints them: nvidia-smi(1),
# "-d, --display"; ACCOUNTING prints the accounting ones, so they are not here).
HEAD_ONLY = frozenset(LEADING[: LEADING.index("pci")]) - {
    "accounting_mode", "accounting_mode_buffer_size"}
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

    The block must open with the report's first field (a `-d` filtered block never does), or
    inside its identity head: its first `LEADING` field one of `HEAD_ONLY` and two or more of
    those shown (the lines above it lost). It must show the `LEADING` fields in their order with
    none skipped from the first one shown to the last (ranges of lines a reader joined skip
    some: tests/data/corpus/fresh case 210 is judged on what it shows), and show no key in
    `FAULT_SECTIONS` or `CLOSING_SECTIONS`; `what` names the last field shown, where the capture
    stops. An empty block is None (the caller's "no health section" covers it)."""
    if not fields:
        return None
    tops = list(dict.fromkeys(key.split("/", 1)[0] for key, _ in fields))
    if set(tops) & (FAULT_SECTIONS | CLOSING_SECTIONS):
        return None
    leading = [key for key in tops if key in LEADING]
    whole = fields[0][0] == LEADING[0]
    if not whole and (not leading or leading[0] not in HEAD_ONLY
                      or len(HEAD_ONLY.intersection(leading)) < 2):
        return None
    start = LEADING.index(leading[0])
    if leading != list(LEADING[start : start + len(leading)]):
        return None  # a leading field skipped or out of NVIDIA's order: an excerpt
    key, line = max(fields, key=lambda pair: pair[1])
    shown = " / ".join(part.replace("_", " ") for part in key.split("/"))
    report = "the full -q report stops" if whole else (
        f"the -q report's leading sections, shown from {leading[0].replace('_', ' ')!r}, stop")
    return line, f"{report} at {shown!r}, before its fault sections ({_FAULTS})"
