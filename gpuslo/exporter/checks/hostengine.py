"""`hostengine`: DCGM's nv-hostengine log, judged as `gpuslo inspect` judges it.

Evidence: `context.hostengine_log` (`--hostengine-log`) when configured, else `DEFAULT_LOG`
(`/var/log/nv-hostengine.log`, nv-hostengine's default `--log-filename`); the last 16 MiB are
read (`checks.log_source`). Judging is `policy.hostengine.hostengine_findings` (DCGM health
watch results per GPU and system, the host engine's own failures, the device-and-severity
fallback), mapped to results by `policy.log_results`: a health FAILURE fails its GPU, a WARNING
warns, a host engine that could not start is `unknown`.

Fail closed: a configured log that cannot be read → `unknown` (`dependency_missing`); the default
log absent → one `ok` result, `applicable=False` (DCGM's host engine does not run here, or logs
elsewhere: configure the path). A log with no host-engine record → `unknown` (`parse_error`).
Facts: `unrecognised_messages` {"hostengine": lines the fallback read}.
"""

from __future__ import annotations

import time
from pathlib import Path

from gpuslo import names
from gpuslo.errors import ParseError
from gpuslo.exporter.checks.base import (
    DEFAULT_INTERVAL_S,
    CheckContext,
    CheckOutput,
    UnrecognisedFacts,
)
from gpuslo.exporter.checks.log_source import read_log_tail
from gpuslo.exporter.evidence.hostengine import parse_hostengine_log
from gpuslo.exporter.policy.hostengine import hostengine_findings, packaged_hostengine_policy
from gpuslo.exporter.policy.log_results import results_from_findings, unrecognised_count
from gpuslo.verdict import NODE_SCOPE, CheckResult

NAME = "hostengine"
DEFAULT_LOG = Path("/var/log/nv-hostengine.log")


class HostEngineCheck:
    """The `hostengine` check (see the module docstring)."""

    name = NAME
    interval_s = DEFAULT_INTERVAL_S
    dependencies = (str(DEFAULT_LOG),)

    def run(self, context: CheckContext) -> CheckOutput:
        """Read, judge and map; see the module docstring."""
        now = (context.clock or time.time)()
        path = context.hostengine_log or DEFAULT_LOG
        common = {"check": NAME, "scope": NODE_SCOPE, "source": str(path), "observed_at": now}
        if context.hostengine_log is None and not path.exists():
            result = CheckResult(status=names.STATUS_OK, applicable=False,
                                 message=f"no {path}: DCGM's host engine does not log here",
                                 **common)
            return CheckOutput([result], UnrecognisedFacts({}))
        text, _ = read_log_tail(path)
        log = parse_hostengine_log(text, str(path))
        if not log.records:
            raise ParseError(str(path), "no host-engine record in it: nothing to judge by")
        findings = hostengine_findings(log, packaged_hostengine_policy())
        results = results_from_findings(NAME, findings, str(path), now)
        if not any(r.scope == NODE_SCOPE for r in results):
            message = f"{len(log.records)} host-engine records read"
            results.append(CheckResult(status=names.STATUS_OK, message=message, **common))
        count = unrecognised_count(findings)
        return CheckOutput(results, UnrecognisedFacts({NAME: count}))
