"""`fabricmanager`: the nvidia-fabricmanager log, judged as `gpuslo inspect` judges it.

Evidence: `context.fabricmanager_log` (`--fabricmanager-log`) when configured, else
`DEFAULT_LOG` (`/var/log/fabricmanager.log`, the Fabric Manager's default LOG_FILE_NAME); the last
16 MiB are read. Judging is `policy.fabricmanager.fabricmanager_findings` (NVSwitch SXid
catalogue of the Fabric Manager user guide, FM's messages, the device-and-severity fallback),
the findings mapped to results by `policy.log_results`, so the live check and `inspect` agree on
the same log; the reading and the run are `checks.log_source.DaemonLogCheck`'s.

Applicability, fail closed: a configured log that cannot be read → `unknown`
(`dependency_missing`); the default log absent on a node without NVSwitch
(`evidence.nvswitch.count_nvswitches`: driver procfs, PCI bus) → one `ok` result,
`applicable=False`; absent on a node with NVSwitches → `unknown` (`dependency_missing`: FM must
run there and its log is where its errors are). A log with no fabric-manager record → `unknown`
(`parse_error`). Facts: `unrecognised_messages` {"fabricmanager": lines the fallback read}.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.errors import DependencyMissing
from gpuslo.exporter.checks.base import CheckContext, CheckOutput
from gpuslo.exporter.checks.log_source import DaemonLogCheck
from gpuslo.exporter.evidence.daemon_log import DaemonLog
from gpuslo.exporter.evidence.fabricmanager import parse_fabricmanager_log
from gpuslo.exporter.evidence.nvswitch import count_nvswitches
from gpuslo.exporter.policy.fabricmanager import fabricmanager_findings, packaged_fm_policy
from gpuslo.verdict import Finding

NAME = "fabricmanager"
DEFAULT_LOG = Path("/var/log/fabricmanager.log")


class FabricManagerCheck(DaemonLogCheck):
    """The `fabricmanager` check (see the module docstring)."""

    name = NAME
    what = "fabric-manager"
    option = "fabricmanager_log"
    dependencies = (str(DEFAULT_LOG),)

    def default_log(self) -> Path:
        return DEFAULT_LOG

    def parse(self, text: str, source: str) -> DaemonLog:
        return parse_fabricmanager_log(text, source)

    def judge(self, log: DaemonLog) -> list[Finding]:
        return fabricmanager_findings(log, packaged_fm_policy())

    def absent(self, context: CheckContext, path: Path, now: float) -> CheckOutput:
        switches = count_nvswitches(context.sysfs, context.procfs)
        if switches == 0:
            return self.not_applicable(
                path, now, f"no NVSwitch on this node and no {path}: the fabric manager does "
                "not apply")
        raise DependencyMissing(
            f"{path}: absent on a node with {switches} NVSwitch(es); configure "
            "--fabricmanager-log where the fabric manager writes its log"
        )
