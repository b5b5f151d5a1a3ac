"""`hostengine`: DCGM's nv-hostengine log, judged as `gpuslo inspect` judges it.

Evidence: `context.hostengine_log` (`--hostengine-log`) when configured, else `DEFAULT_LOG`
(`/var/log/nv-hostengine.log`, nv-hostengine's default `--log-filename`); the last 16 MiB are
read. Judging is `policy.hostengine.hostengine_findings` (DCGM health watch results per GPU and
system, the host engine's own failures, the device-and-severity fallback), mapped to results by
`policy.log_results`: a health FAILURE fails its GPU, a WARNING warns, a host engine that could
not start is `unknown`; the reading and the run are `checks.log_source.DaemonLogCheck`'s.

Fail closed: a configured log that cannot be read → `unknown` (`dependency_missing`); the default
log absent → one `ok` result, `applicable=False` (DCGM's host engine does not run here, or logs
elsewhere: configure the path). A log with no host-engine record → `unknown` (`parse_error`).
Facts: `unrecognised_messages` {"hostengine": lines the fallback read}.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.checks.base import CheckContext, CheckOutput
from gpuslo.exporter.checks.log_source import DaemonLogCheck
from gpuslo.exporter.evidence.daemon_log import DaemonLog
from gpuslo.exporter.evidence.hostengine import parse_hostengine_log
from gpuslo.exporter.policy.hostengine import hostengine_findings, packaged_hostengine_policy
from gpuslo.verdict import Finding

NAME = "hostengine"
DEFAULT_LOG = Path("/var/log/nv-hostengine.log")


class HostEngineCheck(DaemonLogCheck):
    """The `hostengine` check (see the module docstring)."""

    name = NAME
    what = "host-engine"
    option = "hostengine_log"
    dependencies = (str(DEFAULT_LOG),)

    def default_log(self) -> Path:
        return DEFAULT_LOG

    def parse(self, text: str, source: str) -> DaemonLog:
        return parse_hostengine_log(text, source)

    def judge(self, log: DaemonLog) -> list[Finding]:
        return hostengine_findings(log, packaged_hostengine_policy())

    def absent(self, context: CheckContext, path: Path, now: float) -> CheckOutput:
        return self.not_applicable(path, now, f"no {path}: DCGM's host engine does not log here")
