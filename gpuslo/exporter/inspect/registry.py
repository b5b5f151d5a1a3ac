"""The kinds `gpuslo inspect` reads: `KINDS`, kind -> (detector, inspector), in detection order,
and detection over it (`detect_kind`, `detect_kinds`, `remembered`).

A detector is `looks_like(text) -> bool` (pure), an inspector `inspect(text, options, source) ->
list[Finding]` (pure). Both are named "module:function" in `_REGISTRY` and imported when they
first run (`_Lazy`): detection runs every detector on every file but needs no inspector or
policy, and with `--kind` no detector runs at all (issue 30; tests/test_startup.py resolves every
inspector named here and holds the import sets). The kernel log's pair is imported with this module.
`gpuslo.exporter.inspect.kinds` reads the files and folds the findings with this table;
`kind_names.INSPECT_KINDS` is its static copy for the CLI's `--kind` choices.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from gpuslo.exporter.evidence.kernel_log.read import looks_like_kernel_log
from gpuslo.exporter.inspect import kernel_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import Finding

Inspector = Callable[[str, InspectOptions, str], list[Finding]]
Detector = Callable[[str], bool]


class _Lazy:
    """The function `name` of the module `module` (full name), imported when first called and
    kept: detection runs every detector on every file, but only the kinds detected need their
    inspector, its policy and its findings, and with `--kind` no detector runs at all, so
    `gpuslo inspect --kind kernel-log` imports no other kind's parser (issue 30)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name
        self._function: Callable | None = None

    def __call__(self, *args):
        if self._function is None:
            self._function = getattr(importlib.import_module(self.module), self.name)
        return self._function(*args)

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


def _lazy(module: str, name: str) -> Inspector:
    """An inspector under `gpuslo.exporter.inspect`."""
    return _Lazy(f"gpuslo.exporter.inspect.{module}", name)


def _found(module: str, name: str) -> Detector:
    """A detector (or a reader's own claims) under `gpuslo.exporter`."""
    return _Lazy(f"gpuslo.exporter.{module}", name)


# The lines a log reader reads itself beyond the shared claims (`fallback.log_lines`), loaded
# with it: `line -> bool`.
OWN_CLAIMS: dict[str, Detector] = {
    "dcgm-exporter-log": _found("inspect.exporter_log", "claims_line"),
}


# kind -> (detector, inspector). Detection tries kinds in this order, most specific first; the
# kernel log is last because its detector is the loosest. Detectors (parsers only, under
# `gpuslo.exporter`: `inspect.detectors` and the evidence modules) and inspectors (under
# `gpuslo.exporter.inspect`) are named "module:function" and imported when they first run
# (`_Lazy`); the kernel log's are imported here.
_REGISTRY: dict[str, tuple[str, str]] = {
    "nvml-error": ("inspect.detectors:looks_like_nvml_error", "nvidia_smi:inspect_nvml_error"),
    "health-event": (
        "evidence.health_event:looks_like_health_event", "health_event:inspect_health_event"
    ),
    "dcgm-exporter-log": (
        "evidence.dcgm.dcgmi:looks_like_exporter_log", "dcgm:inspect_exporter_log"
    ),
    "dcgm-metrics": ("inspect.detectors:looks_like_metrics", "dcgm:inspect_metrics"),
    "dcgmi": ("inspect.detectors:looks_like_dcgmi", "dcgm:inspect_dcgmi"),
    "nvidia-smi-xml": ("inspect.detectors:looks_like_xml", "nvidia_smi:inspect_xml"),
    "nvidia-smi-q": ("inspect.detectors:looks_like_query", "nvidia_smi:inspect_query"),
    "nvidia-smi-table": ("evidence.nvidia_smi.table:looks_like_table", "nvidia_smi:inspect_table"),
    "nvlink-status": (
        "inspect.detectors:looks_like_nvlink_status", "nvidia_smi:inspect_nvlink_status"
    ),
    "nvlink-errors": (
        "inspect.detectors:looks_like_nvlink_errors", "nvidia_smi:inspect_nvlink_errors"
    ),
    "smi-csv": ("evidence.nvidia_smi.csv_output:looks_like_csv", "nvidia_smi:inspect_csv"),
    "proc-driver": (
        "evidence.nvidia_smi.proc:looks_like_proc_driver", "nvidia_smi:inspect_proc_driver"
    ),
    "ibstat": ("evidence.fabric.tools:looks_like_ibstat", "fabric:inspect_ibstat"),
    "ibstatus": ("evidence.fabric.tools:looks_like_ibstatus", "fabric:inspect_ibstatus"),
    "fi-info": ("evidence.fabric.tools:looks_like_fi_info", "fabric:inspect_fi_info"),
    "ibdev2netdev": (
        "evidence.fabric.tools:looks_like_ibdev2netdev", "fabric:inspect_ibdev2netdev"
    ),
    "ibv-devinfo": (
        "evidence.fabric.ibv_devinfo:looks_like_ibv_devinfo", "fabric:inspect_ibv_devinfo"
    ),
    "lspci": ("evidence.lspci:looks_like_lspci", "pcie:inspect_lspci"),
    "fabricmanager-log": (
        "evidence.fabricmanager:looks_like_fabricmanager_log",
        "daemon_logs:inspect_fabricmanager_log",
    ),
    "hostengine-log": (
        "evidence.hostengine:looks_like_hostengine_log", "daemon_logs:inspect_hostengine_log"
    ),
    "device-plugin-log": (
        "evidence.device_plugin:looks_like_device_plugin_log",
        "schedulers:inspect_device_plugin_log",
    ),
    "slurm-node": ("inspect.detectors:looks_like_slurm_node", "schedulers:inspect_slurm_node"),
}
KINDS: dict[str, tuple[Detector, Inspector]] = {
    kind: (_found(*detector.split(":")), _lazy(*inspector.split(":")))
    for kind, (detector, inspector) in _REGISTRY.items()
}
KINDS["kernel-log"] = (looks_like_kernel_log, kernel_log.inspect_kernel_log)


# Kinds that are logs: lines their readers do not claim go to the device-and-severity fallback
# (`inspect.fallback`), once per text whatever log readers share it.
LOG_KINDS = ("kernel-log", "fabricmanager-log", "hostengine-log", "dcgm-exporter-log")


def detect_kind(text: str) -> str | None:
    """The first kind in `KINDS` whose detector accepts `text`, or None."""
    kinds = detect_kinds(text)
    return kinds[0] if kinds else None


def detect_kinds(text: str) -> tuple[str, ...]:
    """Every kind in `KINDS` whose detector accepts `text`, in `KINDS` order."""
    return tuple(kind for kind in KINDS if KINDS[kind][0](text))


def remembered(detect: Callable[[str], tuple[str, ...]]) -> Callable[[str], tuple[str, ...]]:
    """`detect` (pure) keeping its answer per text, for one file: `split_evidence` asks again
    about the whole text its caller has just detected (a kernel log's 64 KiB head: ~20 ms of
    detectors each time)."""
    seen: dict[str, tuple[str, ...]] = {}

    def detect_once(text: str) -> tuple[str, ...]:
        if text not in seen:
            seen[text] = detect(text)
        return seen[text]

    return detect_once
