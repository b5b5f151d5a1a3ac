"""The `xid` check's last sources: `journalctl -k` and `dmesg`, when neither a kernel-log file nor
/dev/kmsg can be read. The commands share `COMMAND_BUDGET` of the check's deadline."""

from __future__ import annotations

import subprocess
import time

from gpuslo.errors import DeadlineExceeded, DependencyMissing, ParseError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent
from gpuslo.exporter.evidence.kernel_log.read import GPU_MARKER, kernel_records

COMMANDS = (
    ("journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic"),
    ("dmesg",),
)
COMMAND_BUDGET = 0.8  # share of the check's deadline journalctl and dmesg may use together


def read_command_text(context: CheckContext) -> tuple[str, str]:
    """(source, text) from the first of `COMMANDS` that runs and prints kernel records.

    Raises DependencyMissing naming every command tried and why it gave nothing, or
    DeadlineExceeded (`check_timeout`) when one of them ran past its deadline. The commands
    share `COMMAND_BUDGET` of the check's deadline, so this deadline fires before the runner's.
    """
    budget = context.timeout_s * COMMAND_BUDGET
    deadline = time.monotonic() + budget
    tried, timed_out = [], False
    for command in COMMANDS:
        left = deadline - time.monotonic()
        if left <= 0:
            tried.append(f"{command[0]}: not run, the deadline of {budget:g} s was spent")
            timed_out = True
            continue
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=left,
                check=False,
            )
        except FileNotFoundError:
            tried.append(f"{command[0]}: not installed")
            continue
        except subprocess.TimeoutExpired:
            tried.append(f"{command[0]}: no answer within the deadline of {budget:g} s")
            timed_out = True
            continue
        if (
            done.returncode != 0
            or not done.stdout.strip()
            or "-- No entries --" in done.stdout[:200]
        ):
            detail = (done.stderr or done.stdout).strip().splitlines()[:1]
            tried.append(f"{command[0]}: exit {done.returncode} {' '.join(detail)}".strip())
            continue
        return " ".join(command), done.stdout
    message = f"no kernel log readable: {context.kmsg_path}: unreadable; " + "; ".join(tried)
    raise DeadlineExceeded(message) if timed_out else DependencyMissing(message)


def check_command_output(text: str, events: list[KernelEvent], source: str) -> int:
    """Records in journalctl/dmesg output (pure). Raises ParseError when the output ends in a
    cut-off GPU record (a command killed mid-write prints half an Xid line: that is not a healthy
    log)."""
    lines = text.split("\n")
    if not text.endswith("\n") and GPU_MARKER.search(lines[-1]):
        last = len(lines)
        complete = ("xid", "sxid", "fallen_off_bus")
        if not any(event.line == last and event.kind in complete for event in events):
            raise ParseError(source, "output ends in a cut-off kernel-log record", line=last)
    return kernel_records(text)
