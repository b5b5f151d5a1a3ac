"""The Slurm health-check config file: the options of `gpuslo check --format slurm` for a program
slurmd starts with no arguments (HealthCheckProgram, Prolog, Epilog).

```yaml
# /etc/gpuslo/slurm-health.yaml (or the file $GPUSLO_SLURM_CONFIG names)
drain: true                 # drain on a problem, resume gpuslo's own drains when healthy
scontrol: /usr/bin/scontrol # default: scontrol on PATH
node: gpu-node-17           # Slurm NodeName (default: $SLURMD_NODENAME, else the short hostname)
deadline_s: 30              # gpuslo's own deadline for the whole check cycle (slurmd kills at 60)
scontrol_timeout_s: 5       # deadline of each scontrol call
node_config: /etc/gpuslo/node.yaml   # the node config (gpuslo/exporter/node_config.py)
checks: [gpu_inventory, xid]         # default: every default check
kernel_log: /var/log/kern.log
check_timeout_s: 10
state_dir: /var/lib/gpuslo
```
`parse_slurm_config(text, source)` is pure and raises one ConfigError naming every bad field;
`load_slurm_config(path)` reads the file (`gpuslo.config_file`; ConfigError when it cannot).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuslo.config_file import empty_file, parse_yaml, read_config_text
from gpuslo.errors import ConfigError
from gpuslo.exporter.checks.registry import CHECKS
from gpuslo.exporter.slurm.limits import MAX_DEADLINE_S

_TEXT = ("scontrol", "node", "node_config", "kernel_log", "state_dir")
_SECONDS = ("deadline_s", "scontrol_timeout_s", "check_timeout_s")


@dataclass(frozen=True)
class SlurmConfig:
    """Validated options; None means "not set here" (the flag or the default applies)."""

    drain: bool | None = None
    scontrol: str | None = None
    node: str | None = None
    deadline_s: float | None = None
    scontrol_timeout_s: float | None = None
    node_config: str | None = None
    checks: tuple[str, ...] | None = None
    kernel_log: str | None = None
    check_timeout_s: float | None = None
    state_dir: str | None = None


def _field(key: str, value: Any, problems: list[str]) -> Any:
    if key == "drain":
        if isinstance(value, bool):
            return value
        problems.append(f"drain: expected true or false, got {value!r}")
    elif key in _TEXT:
        if isinstance(value, str) and value.strip():
            return value
        problems.append(f"{key}: expected non-empty text, got {value!r}")
    elif key in _SECONDS:
        limit = MAX_DEADLINE_S if key == "deadline_s" else 60.0
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= limit:
            return float(value)
        problems.append(f"{key}: expected seconds > 0 and ≤ {limit:g}, got {value!r}")
    elif key == "checks":
        if isinstance(value, list) and value and all(v in CHECKS for v in value):
            return tuple(value)
        problems.append(f"checks: expected a list of check names ({', '.join(CHECKS)})")
    else:
        problems.append(f"{key}: unknown field")
    return None


def parse_slurm_config(text: str, source: str) -> SlurmConfig:
    """Validate the YAML text; ConfigError names `source` and every bad field (a text that sets
    nothing is an error: `gpuslo.config_file.empty_file`)."""
    data = parse_yaml(text, source)
    if data is None:  # an empty file must not turn `drain: true` off unseen
        raise empty_file(source, "Slurm health-check config")
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of fields at the top level")
    problems: list[str] = []
    values = {key: _field(str(key), value, problems) for key, value in data.items()}
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return SlurmConfig(**values)


def load_slurm_config(path: str | Path) -> SlurmConfig:
    """Read and validate the file at `path` (`gpuslo.config_file`); ConfigError when it cannot
    be read or is not a valid config."""
    return parse_slurm_config(read_config_text(path, "Slurm health-check config"), str(path))
