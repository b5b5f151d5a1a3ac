"""The `--query-gpu` column names gpuslo knows (`nvidia-smi --help-query-gpu`) and the check of
`gpuslo inspect --csv-columns`: apart from the CSV reader (`csv_output`, which re-exports them) so
that the CLI checks its arguments without importing the reader and its GPU model (issue 30).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuslo.errors import UsageError

__all__ = ["KNOWN_COLUMNS", "OTHER_COLUMNS", "check_columns", "column_name"]

# Query names gpuslo reads; a header must name at least one of them.
KNOWN_COLUMNS = frozenset(
    {
        "index",
        "uuid",
        "gpu_uuid",
        "name",
        "gpu_name",
        "pci.bus_id",
        "gpu_bus_id",
        "ecc.mode.current",
        "ecc.errors.corrected.volatile.total",
        "ecc.errors.uncorrected.volatile.total",
        "ecc.errors.uncorrected.aggregate.total",
        "retired_pages.pending",
        "remapped_rows.uncorrectable",
        "remapped_rows.pending",
        "remapped_rows.failure",
        "gpu_recovery_action",
        "reset_status.reset_required",
        "reset_status.drain_and_reset_recommended",
        "clocks_event_reasons.active",
        "clocks_throttle_reasons.active",
        "clocks_event_reasons.hw_thermal_slowdown",
        "clocks_throttle_reasons.hw_thermal_slowdown",
        "clocks_event_reasons.hw_slowdown",
        "clocks_throttle_reasons.hw_slowdown",
        "temperature.gpu",
        "pcie.link.gen.current",
        "pcie.link.gen.max",
        "pcie.link.width.current",
        "pcie.link.width.max",
        "fabric.state",
        "fabric.status",
        "driver_version",
        "remapped_rows.dbe",
        "pcie.link.gen.gpucurrent",
        "pcie.link.gen.gpumax",
        "fabric.health.summary",
        "ecc.errors.uncorrected.volatile.dram",
        "ecc.errors.uncorrected.volatile.sram",
    }
)
# `--query-gpu` names gpuslo does not read but a capture may carry (`nvidia-smi --help-query-gpu`):
# valid in --csv-columns, so a user can name every column of the capture.
OTHER_COLUMNS = frozenset(
    {
        "timestamp",
        "count",
        "serial",
        "gpu_serial",
        "vbios_version",
        "inforom.img",
        "pci.domain",
        "pci.bus",
        "pci.device",
        "pci.device_id",
        "pci.sub_device_id",
        "persistence_mode",
        "display_mode",
        "display_active",
        "compute_mode",
        "accounting.mode",
        "driver_model.current",
        "mig.mode.current",
        "mig.mode.pending",
        "ecc.mode.pending",
        "gpu_operation_mode.current",
        "temperature.memory",
        "fan.speed",
        "pstate",
        "power.management",
        "power.draw",
        "power.draw.average",
        "power.draw.instant",
        "power.limit",
        "enforced.power.limit",
        "power.default_limit",
        "power.min_limit",
        "power.max_limit",
        "clocks.current.graphics",
        "clocks.current.sm",
        "clocks.current.memory",
        "clocks.current.video",
        "clocks.gr",
        "clocks.sm",
        "clocks.mem",
        "clocks.max.graphics",
        "clocks.max.sm",
        "clocks.max.memory",
        "utilization.gpu",
        "utilization.memory",
        "memory.total",
        "memory.used",
        "memory.free",
        "memory.reserved",
        "remapped_rows.correctable",
        "retired_pages.single_bit_ecc.count",
        "retired_pages.double_bit.count",
        "ecc.errors.corrected.aggregate.total",
        "ecc.errors.corrected.volatile.dram",
        "ecc.errors.corrected.volatile.sram",
        "clocks_event_reasons.gpu_idle",
        "clocks_throttle_reasons.gpu_idle",
        "clocks_event_reasons.sw_power_cap",
        "clocks_throttle_reasons.sw_power_cap",
        "clocks_event_reasons.sw_thermal_slowdown",
        "clocks_throttle_reasons.sw_thermal_slowdown",
        "clocks_event_reasons.hw_power_brake_slowdown",
        "clocks_throttle_reasons.hw_power_brake_slowdown",
        "fabric.clusteruuid",
        "fabric.cliqueid",
    }
)


def column_name(cell: str) -> str:
    """`power.draw [W]` -> `power.draw`."""
    return re.sub(r"\s*\[[^\]]*\]$", "", cell.strip()).lower()


def check_columns(columns: Sequence[str]) -> tuple[str, ...]:
    """The `--csv-columns` names, without unit suffixes and lower-cased. Raises UsageError naming
    every name that is not a `--query-gpu` column (`KNOWN_COLUMNS` or `OTHER_COLUMNS`), a name
    given twice, or no name at all: a misspelt column would silently hide its health field."""
    names = [column_name(c) for c in columns]
    if not names:
        raise UsageError("--csv-columns: give the column names, separated by commas")
    unknown = [n for n in names if n not in KNOWN_COLUMNS | OTHER_COLUMNS]
    if unknown:
        listed = ", ".join(repr(n) for n in unknown)
        raise UsageError(
            f"--csv-columns: unknown column(s) {listed} (use nvidia-smi --query-gpu names, "
            f"e.g. index,uuid,gpu_recovery_action)"
        )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--csv-columns: column {', '.join(repr(n) for n in twice)} given twice")
    return tuple(names)
