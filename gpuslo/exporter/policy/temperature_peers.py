"""A GPU much hotter than its peers in one output while drawing no more power (pure).

NVIDIA documents the limits that make a temperature a fault, and `policy.gpu` judges them: a
temperature at or above the GPU's own "GPU Slowdown Temp" (`nvidia-smi -q`, NVML
NVML_TEMPERATURE_THRESHOLD_SLOWDOWN) is warn, and the HW Thermal Slowdown clock-event reason
(nvmlClocksEventReasonHwThermalSlowdown) is fatal. The default `nvidia-smi` table shows neither
limit nor reason, so a temperature there crosses no documented limit.

What the table can still show is a GPU far hotter than the same model beside it while drawing no
more power than they do (tests/data/newcomer4_node: GPU 6 of eight H100s at 86 C and 226 W, its
peers at 36-41 C and 330-362 W): heat its work does not explain, the sign of a cooling fault or
of a GPU held back by its temperature. With no limit crossed that is a note, never a fault:
`temperature_outlier`, class ok, naming the figures, the limit when the output shows it, and the
command that tells (`nvidia-smi -q -d TEMPERATURE,PERFORMANCE`). A GPU hotter because it works
harder (a busy GPU among idle ones) is no outlier: it is compared only with the GPUs of its model
that draw at least as much power.
"""

from __future__ import annotations

from statistics import median

from gpuslo import names
from gpuslo.exporter.evidence.gpu_status import GpuStatus, latest_per_gpu
from gpuslo.verdict import Finding

OUTLIER_C = 20.0  # °C above the peers' median temperature
MIN_PEERS = 3  # other GPUs of its model, as busy or busier, with temperature and power shown
# Peers are the GPUs of one node (8 on an HGX board, 16 on the largest single nodes); an output
# with more distinct GPUs than this is not one node's, and the comparison (quadratic) is skipped.
MAX_GPUS = 64


def _peers(status: GpuStatus, shown: list[GpuStatus]) -> list[GpuStatus]:
    """The other GPUs of its model that draw at least as much power (do at least as much work):
    a GPU still warm from work among idle ones, or busy among idle ones, is compared with GPUs
    as busy as it is, never with cooler idle ones."""
    return [p for p in shown if p is not status and p.model == status.model
            and p.power_draw_w >= status.power_draw_w]


def limit_crossed(status: GpuStatus) -> bool:
    """True when the output shows the GPU past one of NVIDIA's limits: at or above its slowdown
    temperature, or a thermal clock-event reason active (`policy.gpu` judges those)."""
    limit, temp = status.slowdown_temperature_c, status.temperature_c
    at_limit = bool(limit and limit > 0 and temp is not None and temp >= limit)
    return at_limit or bool(status.hw_thermal_slowdown or status.sw_thermal_slowdown)


def _limit_note(status: GpuStatus) -> str:
    """What the output shows of NVIDIA's limits for a GPU that crossed none."""
    limit = status.slowdown_temperature_c
    if limit and limit > 0:
        return f"below its slowdown temperature {limit:g} C"
    if status.clock_events is not None or status.hw_thermal_slowdown is not None:
        return "no slowdown temperature shown, no thermal clock-event reason active"
    return ("no slowdown temperature or clock-event reason shown (nvidia-smi -q -d "
            "TEMPERATURE,PERFORMANCE on it tells)")


def temperature_outliers(kind: str, statuses: list[GpuStatus], where) -> list[Finding]:
    """One `temperature_outlier` finding (class ok) per GPU at least `OUTLIER_C` hotter than the
    median of at least `MIN_PEERS` GPUs of its model in the same output that draw at least as
    much power as it does (W), and past none of NVIDIA's limits (`limit_crossed`).
    `where(status)` gives the Finding keys naming the GPU. GPUs without temperature or power
    shown take no part; a GPU shown more than once (by UUID, PCI address or index, as inspect
    counts GPUs: `gpu_status.latest_per_gpu`; `nvidia-smi -l` samples) counts once, its last
    sample; none is judged past `MAX_GPUS` distinct GPUs."""
    latest = latest_per_gpu(statuses, lambda status: status)
    if len(latest) > MAX_GPUS:
        return []  # not one node's GPUs: several nodes, or a capture repeated without names
    shown = [s for s in latest
             if s.temperature_c is not None and s.power_draw_w is not None]
    out = []
    for status in shown:
        peers = _peers(status, shown)
        if len(peers) < MIN_PEERS:
            continue
        temp = median(p.temperature_c for p in peers)
        power = median(p.power_draw_w for p in peers)
        if status.temperature_c - temp < OUTLIER_C:
            continue
        if limit_crossed(status):
            continue  # a documented limit crossed: `policy.gpu`'s finding says it
        out.append(Finding(
            kind=kind, class_=names.CLASS_OK, signal="temperature_outlier", **where(status),
            message=f"GPU {status.index or '?'} at {status.temperature_c:g} C and "
            f"{status.power_draw_w:g} W; {len(peers)} {status.model} GPUs drawing as much or "
            f"more at median {temp:g} C and {power:g} W: hotter with no more work, a cooling or "
            f"throttling sign; {_limit_note(status)}: a note, no limit crossed",
        ))
    return out
