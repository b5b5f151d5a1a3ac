"""Staleness of a dcgm-exporter page across scrapes (pure).

dcgm-exporter keeps serving its last values when DCGM's host engine stops updating them, so a page
can look healthy while it is frozen. The GPU's energy counter
(`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, mJ) must advance while the GPU draws power
(`DCGM_FI_DEV_POWER_USAGE` > 0 W); one that stands still marks the page stale, and the `dcgm`
check then reports `unknown` (`stale_data`), never healthy.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuslo.exporter.evidence.dcgm.page import ENERGY, POWER, DcgmPage

# dcgm-exporter refreshes its values every 30 s by default (`-c 30000`), so two scrapes inside one
# collection interval legitimately see the same counter. A counter is stale only once it has stood
# still for three collection intervals (the same 3x rule as a check's own staleness).
STALE_AFTER_S = 90.0


@dataclass(frozen=True)
class EnergyMark:
    """The last energy counter value seen for one GPU (mJ) and since when it has read that value
    (Unix seconds)."""

    energy_mj: float
    since: float


def energy_counters(page: DcgmPage) -> dict[str, float]:
    """`{uuid: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION in mJ}` for the GPUs that report it."""
    return {uuid: gpu.values[ENERGY] for uuid, gpu in page.gpus.items() if ENERGY in gpu.values}


def track_energy(
    previous: dict[str, EnergyMark], page: DcgmPage, now: float
) -> dict[str, EnergyMark]:
    """The marks after this scrape: a counter with the value it had keeps its `since`; a new or
    changed value (advanced, or reset by a driver reload) starts at `now`."""
    marks = {}
    for uuid, energy in energy_counters(page).items():
        before = previous.get(uuid)
        same = before is not None and before.energy_mj == energy
        marks[uuid] = before if same else EnergyMark(energy, now)
    return marks


def stale_gpus(
    marks: dict[str, EnergyMark], page: DcgmPage, now: float, stale_after_s: float = STALE_AFTER_S
) -> dict[str, str]:
    """GPUs whose data is frozen: `{uuid: why}` (pure).

    A GPU drawing power (`DCGM_FI_DEV_POWER_USAGE` > 0 W) whose energy counter (the `marks` from
    `track_energy` for this page) has not moved for more than `stale_after_s` seconds is served
    from a frozen cache: the host engine stopped updating. A GPU without both fields is not judged
    here (the check reports missing families itself).
    """
    out = {}
    for uuid, mark in marks.items():
        gpu = page.gpus.get(uuid)
        power = gpu.values.get(POWER) if gpu else None
        still = now - mark.since
        if power is not None and power > 0 and still > stale_after_s:
            out[uuid] = (
                f"energy counter stuck at {mark.energy_mj:.0f} mJ for {still:.0f} s "
                f"while drawing {power:.1f} W"
            )
    return out
