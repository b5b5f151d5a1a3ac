"""`fabricmanager`: the nvidia-fabricmanager log, judged as `gpuslo inspect` judges it.

Evidence: `context.fabricmanager_log` (`--fabricmanager-log`) when configured, else
`DEFAULT_LOG` (`/var/log/fabricmanager.log`, the Fabric Manager's default LOG_FILE_NAME); the last
16 MiB are read (`checks.log_source`). Judging is `policy.fabricmanager.fabricmanager_findings`
(NVSwitch SXid catalogue of the Fabric Manager user guide, FM's messages, the
device-and-severity fallback), the findings mapped to results by `policy.log_results`, so the
live check and `inspect` agree on the same log.

Applicability, fail closed: a configured log that cannot be read → `unknown`
(`dependency_missing`); the default log absent on a node without NVSwitch
(`evidence.nvswitch.count_nvswitches`: driver procfs, PCI bus) → one `ok` result,
`applicable=False`; absent on a node with NVSwitches → `unknown` (`dependency_missing`: FM must
run there and its log is where its errors are). A log with no fabric-manager record → `unknown`
(`parse_error`). Facts: `unrecognised_messages` {"fabricmanager": lines the fallback read}.
"""

from __future__ import annotations

import time
from pathlib import Path

from gpuslo import names
from gpuslo.errors import DependencyMissing, ParseError
from gpuslo.exporter.checks.base import (
    DEFAULT_INTERVAL_S,
    CheckContext,
    CheckOutput,
    UnrecognisedFacts,
)
from gpuslo.exporter.checks.log_source import read_log_tail
from gpuslo.exporter.evidence.fabricmanager import parse_fabricmanager_log
from gpuslo.exporter.evidence.nvswitch import count_nvswitches
from gpuslo.exporter.policy.fabricmanager import fabricmanager_findings, packaged_fm_policy
from gpuslo.exporter.policy.log_results import results_from_findings, unrecognised_count
from gpuslo.verdict import NODE_SCOPE, CheckResult

NAME = "fabricmanager"
DEFAULT_LOG = Path("/var/log/fabricmanager.log")


class FabricManagerCheck:
    """The `fabricmanager` check (see the module docstring)."""

    name = NAME
    interval_s = DEFAULT_INTERVAL_S
    dependencies = (str(DEFAULT_LOG),)

    def run(self, context: CheckContext) -> CheckOutput:
        """Read, judge and map; see the module docstring."""
        now = (context.clock or time.time)()
        path = context.fabricmanager_log or DEFAULT_LOG
        if context.fabricmanager_log is None and not path.exists():
            switches = count_nvswitches(context.sysfs, context.procfs)
            if switches == 0:
                return CheckOutput([_not_applicable(path, now)], UnrecognisedFacts({}))
            raise DependencyMissing(
                f"{path}: absent on a node with {switches} NVSwitch(es); configure "
                "--fabricmanager-log where the fabric manager writes its log"
            )
        text, _ = read_log_tail(path)
        log = parse_fabricmanager_log(text, str(path))
        if not log.records:
            raise ParseError(str(path), "no fabric-manager record in it: nothing to judge by")
        findings = fabricmanager_findings(log, packaged_fm_policy())
        results = results_from_findings(NAME, findings, str(path), now)
        if not any(r.scope == NODE_SCOPE for r in results):
            results.append(CheckResult(check=NAME, scope=NODE_SCOPE, status=names.STATUS_OK,
                                       message=f"{len(log.records)} fabric-manager records read",
                                       source=str(path), observed_at=now))
        count = unrecognised_count(findings)
        return CheckOutput(results, UnrecognisedFacts({NAME: count}))


def _not_applicable(path: Path, now: float) -> CheckResult:
    return CheckResult(
        check=NAME,
        scope=NODE_SCOPE,
        status=names.STATUS_OK,
        applicable=False,
        message=f"no NVSwitch on this node and no {path}: the fabric manager does not apply",
        source=str(path),
        observed_at=now,
    )
