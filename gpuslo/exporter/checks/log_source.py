"""A live check over a daemon's log, shared by the `fabricmanager` and `hostengine` checks: the
reading (I/O at the edge) and the one `run` both use, so the live check and `inspect` judge the
same log with the very same functions.

Reading: a log configured explicitly that cannot be read is `DependencyMissing` (the runner
reports `unknown`/`dependency_missing`: fail closed); the default path absent is the check's call
(`DaemonLogCheck.absent`: not applicable, or unknown). Only the last `MAX_BYTES` of a long log are
read (its start is cut at a line boundary), so a log that grew for months costs the same each
run.

Judging: the log's findings (the policy `inspect` uses) mapped to results by
`policy.log_results`; a log with no record of the daemon is `ParseError` (nothing to judge by);
when no finding concerns the node as a whole, one `ok` node result says how many records were
read. Facts: `unrecognised_messages` {check name: lines the fallback read}.
"""

from __future__ import annotations

import os
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
from gpuslo.exporter.evidence.daemon_log import DaemonLog
from gpuslo.exporter.policy.log_results import results_from_findings, unrecognised_count
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

MAX_BYTES = 16 * 1024 * 1024


def read_log_tail(path: Path, max_bytes: int = MAX_BYTES) -> tuple[str, int]:
    """(text of the last `max_bytes` of the file from a line start, number of lines skipped
    before it: 0 when read whole, else -1 as the count is not known). Raises DependencyMissing
    naming the path when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            skipped = 0
            if size > max_bytes:
                handle.seek(size - max_bytes)
                handle.readline()
                skipped = -1
            data = handle.read(max_bytes)
    except OSError as error:
        raise DependencyMissing(f"{path}: {error.strerror or error}") from None
    return data.decode("utf-8", errors="replace"), skipped


class DaemonLogCheck:
    """The `run` of a daemon-log check; a subclass names the check (`name`, `what`: the
    daemon's records in messages), the context field of its configured log (`option`), its
    default path (`default_log`), and how the log is parsed, judged and read when absent."""

    name = ""
    what = ""
    option = ""
    interval_s = DEFAULT_INTERVAL_S

    def default_log(self) -> Path:
        """The path read when none is configured."""
        raise NotImplementedError

    def parse(self, text: str, source: str) -> DaemonLog:
        """The daemon's reader (`evidence`)."""
        raise NotImplementedError

    def judge(self, log: DaemonLog) -> list[Finding]:
        """The daemon's policy, as `inspect` applies it."""
        raise NotImplementedError

    def absent(self, context: CheckContext, path: Path, now: float) -> CheckOutput:
        """The output when the default log is absent (raise to make it unknown)."""
        raise NotImplementedError

    def not_applicable(self, path: Path, now: float, why: str) -> CheckOutput:
        """One `ok` node result, `applicable=False`, saying `why`."""
        result = CheckResult(check=self.name, scope=NODE_SCOPE, status=names.STATUS_OK,
                             applicable=False, message=why, source=str(path), observed_at=now)
        return CheckOutput([result], UnrecognisedFacts({}))

    def run(self, context: CheckContext) -> CheckOutput:
        """Read, judge and map; see the module docstring."""
        now = (context.clock or time.time)()
        configured = getattr(context, self.option)
        path = configured or self.default_log()
        if configured is None and not path.exists():
            return self.absent(context, path, now)
        text, _ = read_log_tail(path)
        log = self.parse(text, str(path))
        if not log.records:
            raise ParseError(str(path), f"no {self.what} record in it: nothing to judge by")
        findings = self.judge(log)
        results = results_from_findings(self.name, findings, str(path), now)
        if not any(r.scope == NODE_SCOPE for r in results):
            results.append(CheckResult(check=self.name, scope=NODE_SCOPE, status=names.STATUS_OK,
                                       message=f"{len(log.records)} {self.what} records read",
                                       source=str(path), observed_at=now))
        count = unrecognised_count(findings)
        return CheckOutput(results, UnrecognisedFacts({self.name: count}))
