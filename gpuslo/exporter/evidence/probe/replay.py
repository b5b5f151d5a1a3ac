"""The probe replay: recorded probe measurements in place of a GPU workload, so the active probe,
the return-to-service gate and their tests run on CPU (gpuslo/data/probe_replay/README.md).

`GPUSLO_PROBE_REPLAY=<file>` selects it (the runner's child inherits the environment). The file:

```json
{"idle":   {"bf16_tflops": 779.0, "copy_tbps": 4.13, "max_relative_error": 1.3e-06,
            "pattern_ok": true, "seconds": 0.81},
 "loaded": {... the speed a probe measures beside a training job ...},
 "busy":   {"max_relative_error": ..., "pattern_ok": true, "seconds": 0.05},
 "gpus":   {"3": {"idle": {"bf16_tflops": 316.0}}}}
```
A full measurement answers `idle` (or `loaded` in mode `loaded`), a correctness-only one `busy`,
each after sleeping its `seconds`; `gpus` overrides fields per NVML index. Modes
(`GPUSLO_PROBE_REPLAY_MODE`, limited to the indices in `GPUSLO_PROBE_REPLAY_GPUS=0,3` when set):
`ok` (default), `loaded` (full measurements get the `loaded` figures: a job the probe did not
notice), `hang` (the measurement never returns), `no_context` (ContextUnavailable: an
exclusive-process GPU in use), `error` (a CUDA error).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gpuslo.errors import DependencyMissing, ParseError
from gpuslo.exporter.evidence.gpu_activity import GpuActivity
from gpuslo.exporter.evidence.probe import REPLAY_MODE_ENV, ContextUnavailable, ProbeMeasurement

GPUS_ENV = "GPUSLO_PROBE_REPLAY_GPUS"
MODES = ("ok", "loaded", "hang", "no_context", "error")
FULL_FIELDS = ("bf16_tflops", "copy_tbps", "max_relative_error", "pattern_ok", "seconds")
SMALL_FIELDS = ("max_relative_error", "pattern_ok", "seconds")
SMALL_PATTERN_BYTES = 64 << 20
PATTERN_BYTES = 1 << 30


def _number(value: Any, source: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ParseError(source, f"expected a number ≥ 0, got {value!r:.40}", field=field)
    return float(value)


def _section(entry: Any, fields: tuple[str, ...], source: str, where: str, whole: bool) -> None:
    if not isinstance(entry, dict):
        raise ParseError(source, "expected an object", field=where)
    for name in fields if whole else [f for f in fields if f in entry]:
        if name == "pattern_ok":
            if not isinstance(entry.get(name), bool):
                raise ParseError(source, "expected true or false", field=f"{where}.{name}")
        else:
            _number(entry.get(name), source, f"{where}.{name}")


def parse_replay(document: Any, source: str) -> dict[str, Any]:
    """Validate a replay document (pure); ParseError naming the field that is wrong."""
    if not isinstance(document, dict):
        raise ParseError(source, "expected a JSON object")
    sections = {"idle": FULL_FIELDS, "loaded": FULL_FIELDS, "busy": SMALL_FIELDS}
    for section, fields in sections.items():
        _section(document.get(section), fields, source, section, whole=True)
    overrides = document.get("gpus", {})
    if not isinstance(overrides, dict):
        raise ParseError(source, "expected an object of GPU index to overrides", field="gpus")
    for index, override in overrides.items():
        if not isinstance(override, dict) or not set(override) <= set(sections):
            expected = f"expected an object of {tuple(sections)}"
            raise ParseError(source, expected, field=f"gpus.{index}")
        for section, entry in override.items():
            _section(entry, sections[section], source, f"gpus.{index}.{section}", whole=False)
    return document


class ReplayBackend:
    """Answers from a replay file (see the module docstring)."""

    name = "replay"

    def __init__(self, path: str, mode: str | None = None, gpus: str | None = None) -> None:
        self.path = path
        self.mode = mode or os.environ.get(REPLAY_MODE_ENV) or "ok"
        only = gpus if gpus is not None else os.environ.get(GPUS_ENV, "")
        self.only = {g for g in only.split(",") if g}
        self.document: dict[str, Any] = {}

    def prepare(self, gpus: list[GpuActivity]) -> None:
        """Read and validate the replay file and the mode: DependencyMissing when the file
        cannot be read, ParseError when it or the mode is not valid."""
        if self.mode not in MODES:
            raise ParseError(REPLAY_MODE_ENV, f"unknown mode {self.mode!r} (one of {MODES})")
        try:
            text = Path(self.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise DependencyMissing(f"probe replay {self.path}: {error}") from None
        try:
            document = json.loads(text)
        except ValueError as error:
            raise ParseError(self.path, f"not valid JSON ({error})") from None
        self.document = parse_replay(document, self.path)

    def _figures(self, index: str, section: str) -> dict[str, Any]:
        override = self.document.get("gpus", {}).get(index, {}).get(section, {})
        return {**self.document[section], **override}

    def measure(self, gpu: GpuActivity, full: bool) -> ProbeMeasurement:
        """The recorded measurement for `gpu`, after its recorded duration."""
        mode = self.mode if not self.only or gpu.index in self.only else "ok"
        if mode == "hang":
            while True:
                time.sleep(3600)
        if mode == "no_context":
            raise ContextUnavailable("CUDA error: all CUDA-capable devices are busy or unavailable")
        if mode == "error":
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        section = ("loaded" if mode == "loaded" else "idle") if full else "busy"
        figures = self._figures(gpu.index, section)
        time.sleep(float(figures["seconds"]))
        return ProbeMeasurement(
            index=gpu.index,
            full=full,
            max_relative_error=float(figures["max_relative_error"]),
            pattern_ok=bool(figures["pattern_ok"]),
            pattern_bytes=PATTERN_BYTES if full else SMALL_PATTERN_BYTES,
            bf16_tflops=float(figures["bf16_tflops"]) if full else None,
            copy_tbps=float(figures["copy_tbps"]) if full else None,
            seconds=float(figures["seconds"]),
        )
