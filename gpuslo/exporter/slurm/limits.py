"""Where the Slurm health-check options come from and their time limits, apart from the file's
reader (`slurm.config`, which imports the YAML reader and the checks' registry): `gpuslo check
--help` names them (`gpuslo.cli.check_args`) without importing either (issue 30)."""

from __future__ import annotations

ENV_VAR = "GPUSLO_SLURM_CONFIG"
DEFAULT_PATH = "/etc/gpuslo/slurm-health.yaml"
DEFAULT_DEADLINE_S = 30.0
DEFAULT_SCONTROL_TIMEOUT_S = 5.0
# slurmd kills HealthCheckProgram after 60 s: the cycle, one read and one update must fit.
MAX_DEADLINE_S = 45.0
