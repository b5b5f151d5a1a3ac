"""The speed a healthy GPU reaches in the active probe, per SKU, as data.

The packaged table is `gpuslo/data/probe_speeds.yaml` (public dense peaks with their sources, and
what was measured here on an H200); an operator overlay file (node config `probe_speeds:`) merges
over it: a SKU with the same `name` replaces the packaged one, new SKUs are tried first, and
`fail_below` / `busy` fields replace the packaged ones. The node config's
`checks.gpu_probe.min_tflops` / `min_d2d_tbps` win over both.

`SpeedPolicy.thresholds_for(model)` is pure: the first SKU whose `match` (a regular expression)
is found in the NVML name gives `SpeedThresholds`: `fail_below.measured` × the low end of the
measured range where a GPU of the SKU was measured, else `fail_below.peak` × the public peak
(bf16 dense TFLOP/s; memory bandwidth for the copy). A model no SKU matches has no thresholds:
its speed is reported, not judged. Raises ConfigError naming the file and every bad field.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpuslo.config_file import load_yaml, parse_yaml
from gpuslo.errors import ConfigError

PACKAGED = "probe_speeds.yaml"
TOP_KEYS = ("version", "fail_below", "busy", "skus")
SKU_KEYS = ("name", "match", "peak", "measured")


@dataclass(frozen=True)
class SpeedThresholds:
    """Below these a GPU fails the probe on speed. `basis` says where they come from:
    `measured` / `peak` (the table, SKU `sku`) or `configured` (the node config)."""

    sku: str
    min_bf16_tflops: float
    min_copy_tbps: float
    basis: str

    def describe(self) -> str:
        """`H200, 0.7 x measured` style words for messages."""
        return self.sku if self.basis == "configured" else f"{self.sku}, {self.basis}"


@dataclass(frozen=True)
class Sku:
    """One row of the table: bf16 dense peak (TFLOP/s) and memory bandwidth (TB/s) from the
    vendor, and the (low, high) ranges measured with this probe, None when never measured."""

    name: str
    pattern: re.Pattern[str]
    peak_bf16_tflops: float
    peak_memory_tbps: float
    measured_bf16_tflops: tuple[float, float] | None = None
    measured_copy_tbps: tuple[float, float] | None = None


@dataclass(frozen=True)
class SpeedPolicy:
    """The table and its rules (see the module docstring)."""

    skus: tuple[Sku, ...]
    fail_below_measured: float
    fail_below_peak: float
    busy_utilization: float

    def sku_for(self, model: str) -> Sku | None:
        """The first SKU whose pattern is found in `model`, None when none is."""
        return next((sku for sku in self.skus if sku.pattern.search(model)), None)

    def thresholds_for(self, model: str) -> SpeedThresholds | None:
        """Speed thresholds for an NVML model name; None when no SKU matches. Pure."""
        sku = self.sku_for(model)
        if sku is None:
            return None
        if sku.measured_bf16_tflops and sku.measured_copy_tbps:
            ratio = self.fail_below_measured
            return SpeedThresholds(
                sku.name,
                ratio * sku.measured_bf16_tflops[0],
                ratio * sku.measured_copy_tbps[0],
                f"{ratio:g} x measured",
            )
        ratio = self.fail_below_peak
        return SpeedThresholds(
            sku.name,
            ratio * sku.peak_bf16_tflops,
            ratio * sku.peak_memory_tbps,
            f"{ratio:g} x peak",
        )


def _ratio(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _range(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list) and len(value) == 2 and all(_positive(v) for v in value):
        low, high = float(value[0]), float(value[1])
        return (low, high) if low <= high else None
    return None


def _sku(entry: Any, where: str, problems: list[str]) -> Sku | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: expected a mapping with {SKU_KEYS}")
        return None
    problems += [f"{where}.{key}: unknown field" for key in entry if key not in SKU_KEYS]
    name, match = entry.get("name"), entry.get("match")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}.name: expected non-empty text")
    try:
        pattern = re.compile(match) if isinstance(match, str) and match else None
    except re.error as error:
        pattern = None
        problems.append(f"{where}.match: not a regular expression ({error})")
    if pattern is None and not any(p.startswith(f"{where}.match") for p in problems):
        problems.append(f"{where}.match: expected a regular expression")
    peak = entry.get("peak")
    if not isinstance(peak, dict) or not all(
        _positive(peak.get(k)) for k in ("bf16_tflops", "memory_tbps")
    ):
        problems.append(f"{where}.peak: expected {{bf16_tflops, memory_tbps}} numbers > 0")
        return None
    measured = entry.get("measured") or {}
    ranges = {k: _range(measured.get(k)) for k in ("bf16_tflops", "copy_tbps")}
    if measured and (not isinstance(measured, dict) or None in ranges.values()):
        problems.append(f"{where}.measured: expected {{bf16_tflops, copy_tbps}} as [low, high]")
    if pattern is None or not isinstance(name, str):
        return None
    return Sku(name, pattern, float(peak["bf16_tflops"]), float(peak["memory_tbps"]),
               ranges["bf16_tflops"], ranges["copy_tbps"])


def policy_from_mapping(data: Any, source: str) -> SpeedPolicy:
    """Validate a merged table (pure); ConfigError naming `source` and every bad field."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of fields at the top level")
    problems = [f"{key}: unknown field" for key in data if key not in TOP_KEYS]
    fail = data.get("fail_below") or {}
    if not isinstance(fail, dict) or not all(_ratio(fail.get(k)) for k in ("measured", "peak")):
        problems.append("fail_below: expected {measured, peak} ratios in (0, 1]")
        fail = {"measured": 1.0, "peak": 1.0}
    busy = data.get("busy") or {}
    if not isinstance(busy, dict) or not _ratio(busy.get("utilization_at_least")):
        problems.append("busy.utilization_at_least: expected a ratio in (0, 1]")
        busy = {"utilization_at_least": 1.0}
    entries = data.get("skus")
    if not isinstance(entries, list):
        problems.append("skus: expected a list of SKUs")
        entries = []
    skus = [_sku(entry, f"skus[{i}]", problems) for i, entry in enumerate(entries)]
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return SpeedPolicy(tuple(s for s in skus if s is not None), float(fail["measured"]),
                       float(fail["peak"]), float(busy["utilization_at_least"]))


def merge(packaged: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The overlay over the packaged table (pure): overlay SKUs first, a packaged SKU with the
    same name dropped; other keys replace, mappings key by key."""
    merged = dict(packaged)
    for key, value in overlay.items():
        if key == "skus" and isinstance(value, list):
            names = {s.get("name") for s in value if isinstance(s, dict)}
            kept = [s for s in packaged.get("skus", []) if s.get("name") not in names]
            merged["skus"] = [*value, *kept]
        elif isinstance(value, dict) and isinstance(packaged.get(key), dict):
            merged[key] = {**packaged[key], **value}
        else:
            merged[key] = value
    return merged


@functools.cache
def _packaged() -> dict[str, Any]:
    text = resources.files("gpuslo").joinpath("data", PACKAGED).read_text(encoding="utf-8")
    return parse_yaml(text, f"gpuslo/data/{PACKAGED}")


def load_speed_policy(overlay_path: str | None = None) -> SpeedPolicy:
    """The packaged table with the overlay file at `overlay_path` merged over it (I/O,
    `gpuslo.config_file`). ConfigError when the overlay cannot be read or a field is invalid."""
    data = _packaged()
    source = f"gpuslo/data/{PACKAGED}"
    if overlay_path is not None:
        overlay = load_yaml(overlay_path, "probe speeds")
        if not isinstance(overlay, dict):
            raise ConfigError(f"{overlay_path}: expected a mapping of fields at the top level")
        data, source = merge(data, overlay), overlay_path
    return policy_from_mapping(data, source)
