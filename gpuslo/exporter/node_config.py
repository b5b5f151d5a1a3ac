"""The node config file (YAML): what this node should have and how its checks run.

```yaml
node: gpu-node-17                 # default: the hostname
instance_type: p5.48xlarge        # for the expected EFA count
expect_gpus: 8
expect_network_devices: {efa: 32} # or {infiniband: 8}; a bare number means InfiniBand
expect_nvlinks: 18                # active NVLink links per GPU (nvlink check)
dcgm_url: http://127.0.0.1:9400/metrics
kernel_log: /var/log/kern.log     # default: /dev/kmsg, then journalctl -k, then dmesg
policy: /etc/gpuslo/xid-overlay.yaml
state_dir: /var/lib/gpuslo
check_timeout_s: 10               # deadline of each check (seconds)
interval_s: 30                    # how often each check runs in the exporter (seconds)
pod_resources_kubelet_socket: /var/lib/kubelet/pod-resources/kubelet.sock  # exporter: GPU → pod
job_log: /var/log/pods/*/*/*.log  # exporter: container logs to read training progress from
checks:                           # per check overrides
  xid: {interval_s: 10, timeout_s: 5}
  gpu_probe: {timeout_s: 60, min_d2d_tbps: 3.3}   # also min_tflops, base_s, per_gpu_s
probe_speeds: /etc/gpuslo/probe-speeds.yaml  # overlay of gpuslo/data/probe_speeds.yaml
validation: {validators: [probe], max_tries: 3}  # overlay of gpuslo/data/return_to_service.yaml
degradation_status:               # a degradation signal is warn (usable) unless made fail here
  clocks_sw_power_cap: fail       # SW power cap/thermal count only when named here (warn|fail)
port_error_threshold: 10          # port errors per run interval that count (default: any, 1)
```
`load_node_config(path)` reads it (I/O); `parse_node_config(text, source)` validates it (pure) and
raises one `ConfigError` listing every invalid field by name. Unknown keys are errors too: a typo
must not silently drop an expectation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.config_file import empty_file, parse_yaml, read_config_text
from gpuslo.errors import ConfigError
from gpuslo.exporter.checks.registry import CHECKS

NETWORK_KINDS = ("infiniband", "efa")
_TEXT_KEYS = ("node", "instance_type", "dcgm_url", "kernel_log", "policy", "state_dir",
              "pod_resources_kubelet_socket", "job_log", "probe_speeds")
_COUNT_KEYS = ("expect_gpus", "expect_nvlinks")  # 0 would mean "nothing to check": not a count
_SECONDS_KEYS = ("check_timeout_s", "interval_s")
_CHECK_KEYS = ("interval_s", "timeout_s", "min_d2d_tbps", "min_tflops", "base_s", "per_gpu_s")


@dataclass(frozen=True)
class NodeConfig:
    """A validated node config; None / empty means "not configured". Seconds are floats."""

    node: str | None = None
    instance_type: str | None = None
    expect_gpus: int | None = None
    expect_nvlinks: int | None = None
    expect_network_devices: dict[str, int] = field(default_factory=dict)
    dcgm_url: str | None = None
    kernel_log: str | None = None
    policy: str | None = None
    state_dir: str | None = None
    check_timeout_s: float | None = None
    interval_s: float | None = None
    checks: dict[str, dict[str, float]] = field(default_factory=dict)
    pod_resources_kubelet_socket: str | None = None
    job_log: str | None = None
    probe_speeds: str | None = None
    validation: dict[str, Any] = field(default_factory=dict)
    degradation_status: dict[str, str] = field(default_factory=dict)
    port_error_threshold: int | None = None


# The degradation signals a check reports as warn unless the node config makes them fail.
WARN_DEGRADATIONS = (
    "clocks_sw_thermal",
    "clocks_sw_power_cap",
    "network_port_errors",
    "network_link_flap",
)


def _degradation_status(value: Any, problems: list[str]) -> dict[str, str]:
    if not isinstance(value, dict):
        problems.append("degradation_status: expected a mapping of reason to warn or fail")
        return {}
    out = {}
    for reason, status in value.items():
        if reason not in WARN_DEGRADATIONS or status not in (names.STATUS_WARN, names.STATUS_FAIL):
            problems.append(
                f"degradation_status.{reason}: expected one of {WARN_DEGRADATIONS} with warn or "
                f"fail, got {status!r}"
            )
            continue
        out[reason] = status
    return out


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _positive_count(value: Any) -> bool:
    return _count(value) and value > 0


def _seconds(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 86400


def _network(value: Any, problems: list[str]) -> dict[str, int]:
    if _count(value):
        return {"infiniband": value}
    if not isinstance(value, dict):
        problems.append("expect_network_devices: expected a count or {infiniband|efa: count}")
        return {}
    for kind, count in value.items():
        if kind not in NETWORK_KINDS or not _count(count):
            problems.append(
                f"expect_network_devices.{kind}: expected one of {NETWORK_KINDS} with a count ≥ 0"
            )
    return {k: v for k, v in value.items() if k in NETWORK_KINDS and _count(v)}


def _checks(value: Any, problems: list[str]) -> dict[str, dict[str, float]]:
    if not isinstance(value, dict):
        problems.append("checks: expected a mapping of check name to settings")
        return {}
    out = {}
    for name, settings in value.items():
        if name not in CHECKS:
            problems.append(f"checks.{name}: unknown check (known: {', '.join(CHECKS)})")
            continue
        if not isinstance(settings, dict):
            problems.append(f"checks.{name}: expected a mapping")
            continue
        for key, number in settings.items():
            if key not in _CHECK_KEYS or not _seconds(number):
                problems.append(f"checks.{name}.{key}: expected one of {_CHECK_KEYS}, a number > 0")
        out[name] = {k: float(v) for k, v in settings.items() if k in _CHECK_KEYS and _seconds(v)}
    return out


def _validate(data: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in _TEXT_KEYS:
            ok = isinstance(value, str) and value.strip() != ""
            message = "expected non-empty text"
        elif key in _COUNT_KEYS:
            ok, message = _positive_count(value), "expected a whole number ≥ 1"
        elif key in _SECONDS_KEYS:
            ok, message = _seconds(value), "expected seconds > 0"
        elif key == "expect_network_devices":
            values[key] = _network(value, problems)
            continue
        elif key == "checks":
            values[key] = _checks(value, problems)
            continue
        elif key == "degradation_status":
            values[key] = _degradation_status(value, problems)
            continue
        elif key == "validation":  # checked field by field by load_gate_policy
            ok, message = isinstance(value, dict), "expected a mapping (return_to_service.yaml)"
        elif key == "port_error_threshold":
            ok, message = _positive_count(value), "expected a whole number ≥ 1"
        else:
            problems.append(f"{key}: unknown field")
            continue
        if ok:
            values[key] = float(value) if key in _SECONDS_KEYS else value
        else:
            problems.append(f"{key}: {message}, got {value!r}")
    return values


def parse_node_config(text: str, source: str) -> NodeConfig:
    """Validate a node config's YAML text; `ConfigError` names `source` and every bad field (a
    YAML error on one line with its line number; a text that sets nothing is an error too)."""
    data = parse_yaml(text, source)
    if data is None:
        raise empty_file(source, "node config")
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of fields at the top level")
    problems: list[str] = []
    values = _validate(data, problems)
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return NodeConfig(**values)


def load_node_config(path: str | Path) -> NodeConfig:
    """Read and validate a node config file (`gpuslo.config_file`); `ConfigError` when it cannot
    be read, is not a regular file, is too large, is not UTF-8 text or is not a valid config."""
    return parse_node_config(read_config_text(path, "node config"), str(path))
