"""Slurm evidence: run `scontrol` (with a deadline) and parse what it says about one node.

`read_node(node, scontrol=..., run=run_command, timeout_s=...)` asks
`scontrol --json show node NAME` (Slurm 23.02+ takes `--json` as a global option) and falls back
to the plain text of `scontrol show node NAME` when the installed scontrol rejects `--json`
(Debian 12 ships Slurm 22.05, whose scontrol has no `--json`). `parse_node_json` and
`parse_node_text` are pure. Every command goes through `run`, injected so tests can replace it,
and each call has a timeout: `scontrol` blocks for as long as slurmctld does not answer. The
command runs in a session (process group) of its own, killed whole at the deadline, so a hung
scontrol (or a wrapper script around it) leaves no child running.

Errors are `SlurmUnavailable` with a bounded `reason` from names.REASONS: `dependency_missing`
(no scontrol binary), `check_timeout` (it did not answer in time), `tool_error` (it failed, or does
not know the node), `parse_error` (output of an unexpected shape).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuslo.errors import SourceUnavailable

if TYPE_CHECKING:
    import subprocess

DEFAULT_SCONTROL = "scontrol"
DEFAULT_TIMEOUT_S = 10.0
# `Reason=<text> [<user>@<time>]`: Slurm appends who set the reason and when.
_REASON_SUFFIX = re.compile(r"\[([^\[\]@]*)@([^\[\]]*)\]\s*$")  # no leading \s*: quadratic
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=(\S*)")


@dataclass(frozen=True)
class Completed:
    """What one command returned: exit status, stdout and stderr as text."""

    returncode: int
    stdout: str
    stderr: str


Run = Callable[[Sequence[str], float], Completed]


class SlurmUnavailable(SourceUnavailable):
    """scontrol could not tell: `reason` is one of dependency_missing, check_timeout, tool_error,
    parse_error (names.REASONS, layer observability)."""


@dataclass(frozen=True)
class SlurmNode:
    """One node as slurmctld sees it.

    Attributes:
        name: the NodeName.
        state: base state, upper case (IDLE, ALLOCATED, MIXED, DOWN, FUTURE, UNKNOWN, ...).
        flags: state flags, upper case (DRAIN, MAINT, NOT_RESPONDING, RESERVED, ...).
        reason: the reason text without Slurm's `[user@time]` suffix; "" when none.
        reason_user: who set the reason ("" when unknown).
    """

    name: str
    state: str
    flags: tuple[str, ...] = ()
    reason: str = ""
    reason_user: str = ""

    @property
    def drained(self) -> bool:
        """True when the node takes no new work because of a drain (DRAINING or DRAINED)."""
        return "DRAIN" in self.flags

    @property
    def down(self) -> bool:
        """True when the node is DOWN (or FAIL, which Slurm shows as DOWN+FAIL)."""
        return self.state == "DOWN" or "FAIL" in self.flags


def run_command(argv: Sequence[str], timeout_s: float) -> Completed:
    """Run `argv` with a deadline (seconds); never a shell. Raises SlurmUnavailable
    (dependency_missing when the binary is absent, not executable or no program the kernel can
    run, check_timeout past the deadline: its whole process group is killed then).
    `subprocess` is imported here, not with the module: `gpuslo inspect` imports this module
    to detect `scontrol show node` text and runs no command (~4 ms of its start-up, issue 30)."""
    import subprocess

    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except FileNotFoundError:
        raise SlurmUnavailable("dependency_missing", f"{argv[0]}: not found") from None
    except PermissionError:
        raise SlurmUnavailable("dependency_missing", f"{argv[0]}: cannot run (permission "
                               "denied: not an executable file)") from None
    except OSError as error:  # ENOEXEC: a file that is no program (empty, binary, text)
        raise SlurmUnavailable("dependency_missing", f"{argv[0]}: cannot run "
                               f"({error.strerror or error})") from None
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(process)
        message = f"{argv[0]}: no answer in {timeout_s:g} s"
        raise SlurmUnavailable("check_timeout", message) from None
    finally:
        if process.poll() is None:  # interrupted otherwise (KeyboardInterrupt): no orphan
            kill_group(process)
    return Completed(process.returncode, decode(stdout), decode(stderr))


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group `process` leads (it was started with `start_new_session`),
    reap it and close its pipes; what already exited is skipped."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def decode(data: bytes) -> str:
    """scontrol's output as text: UTF-8, any other byte replaced (a Latin-1 reason an admin's
    tool wrote, `L\\xfcfter defekt`, reads as `L\\ufffdfter defekt`, never a crash). Pure."""
    return data.decode("utf-8", errors="replace")


def split_state(text: str) -> tuple[str, tuple[str, ...]]:
    """`IDLE+DRAIN`, `DOWN*`, `MIXED+DRAIN+NOT_RESPONDING` → ("IDLE", ("DRAIN",)) etc. A
    trailing `*` (not responding) becomes the NOT_RESPONDING flag. Pure."""
    parts = [p for p in text.strip().upper().split("+") if p]
    if not parts:
        return "UNKNOWN", ()
    flags = []
    base = parts[0]
    if base.endswith("*"):
        base = base.rstrip("*")
        flags.append("NOT_RESPONDING")
    for part in parts[1:]:
        flag = part.rstrip("*")
        if flag not in flags:
            flags.append(flag)
    return base or "UNKNOWN", tuple(flags)


def split_reason(text: str) -> tuple[str, str]:
    """`gpuslo: xid xid_fatal gpu0 [root@2026-01-01T00:00:00]` → (reason text, user). Pure."""
    text = text.strip()
    match = _REASON_SUFFIX.search(text)
    if not match:
        return text, ""
    return text[: match.start()].strip(), match.group(1).strip()


def _node(block: str) -> SlurmNode | None:
    """The node of one `NodeName=` block, None when it has no name or no State."""
    fields = dict(_FIELD.findall(block))
    if "NodeName" not in fields or "State" not in fields:
        return None
    state, flags = split_state(fields["State"])
    reason, user = "", ""
    where = re.search(r"(?:^|\s)Reason=(.*)$", block, re.MULTILINE)
    if where and where.group(1).strip() not in ("", "(null)", "None"):
        reason, user = split_reason(where.group(1))
    return SlurmNode(fields["NodeName"], state, flags, reason, user)


def parse_node_text(text: str, node: str, source: str = "scontrol show node") -> SlurmNode:
    """Parse the plain text of `scontrol show node NAME` (one or more nodes, multi-line or `-o`
    one-line form). Raises SlurmUnavailable(parse_error) when `node` is not in it."""
    for block in re.split(r"\n(?=NodeName=)", text.strip()):
        if dict(_FIELD.findall(block)).get("NodeName") != node:
            continue
        found = _node(block)
        if found is None:
            raise SlurmUnavailable("parse_error", f"{source}: node {node} has no State")
        return found
    raise SlurmUnavailable("parse_error", f"{source}: no NodeName={node} in the output")


def parse_nodes_text(text: str) -> list[SlurmNode]:
    """Every node of `scontrol show node` plain text (multi-line or `-o`), in order; a block
    without a name or a State is skipped. Pure."""
    blocks = re.split(r"\n(?=[ \t]*NodeName=)", text.strip())
    return [node for block in blocks if (node := _node(block)) is not None]


# slurmctld's reason when a registering slurmd reports fewer of a GRES than slurm.conf configures
# (Slurm src/common/gres.c, `_node_config_validate`: "%s count reported lower than configured
# (%lu < %lu)", "count too low" in older releases); the node is drained (INVALID_REG).
GRES_SHORTFALL = re.compile(
    r"\bgres/([A-Za-z0-9_-]{1,64})(?::[^\s(]{1,64})? count "
    r"(?:reported lower than configured|too low) \((\d{1,9}) < (\d{1,9})\)"
)


def gres_shortfall(text: str) -> tuple[str, int, int] | None:
    """(GRES name, count reported, count configured) of Slurm's shortfall reason
    (`GRES_SHORTFALL`) in `text`, None when it holds none. Pure."""
    match = GRES_SHORTFALL.search(text[:4096])
    return (match.group(1), int(match.group(2)), int(match.group(3))) if match else None


def looks_like_scontrol_node(text: str) -> bool:
    """`scontrol show node` text: a `NodeName=` line and the `CPUAlloc=` field it always prints
    (slurm.conf's `NodeName=` lines have no CPUAlloc)."""
    head = text[:200_000]
    return bool(re.search(r"^[ \t]*NodeName=\S", head, re.M) and re.search(r"\sCPUAlloc=", head))


def parse_node_json(text: str, node: str, source: str = "scontrol --json show node") -> SlurmNode:
    """Parse `scontrol --json show node NAME` (data_parser shapes of Slurm 23.02+: `state` a list
    of words; and the older `state` string plus `state_flags` list). Raises
    SlurmUnavailable(parse_error) for text that is not such a document or lacks the node."""
    try:
        document = json.loads(text)
        nodes = document["nodes"]
    except (ValueError, KeyError, TypeError):
        raise SlurmUnavailable("parse_error", f"{source}: not a nodes document") from None
    for entry in nodes if isinstance(nodes, list) else []:
        if not isinstance(entry, dict) or entry.get("name") != node:
            continue
        words = entry.get("state")
        if isinstance(words, str):
            words = [words, *(entry.get("state_flags") or [])]
        if not isinstance(words, list) or not words:
            raise SlurmUnavailable("parse_error", f"{source}: node {node} has no state")
        state, flags = split_state("+".join(str(w) for w in words))
        reason = str(entry.get("reason") or "")
        text_reason, user = split_reason(reason)
        user = str(entry.get("reason_set_by_user") or user)
        return SlurmNode(node, state, flags, text_reason, user)
    raise SlurmUnavailable("parse_error", f"{source}: no node {node} in the output")


def read_node(node: str, scontrol: str = DEFAULT_SCONTROL, run: Run = run_command,
              timeout_s: float = DEFAULT_TIMEOUT_S) -> SlurmNode:
    """The node's state and reason from slurmctld: JSON when scontrol supports it, else text.
    Raises SlurmUnavailable (see the module docstring)."""
    done = run([scontrol, "--json", "show", "node", node], timeout_s)
    if done.returncode == 0 and done.stdout.lstrip().startswith("{"):
        return parse_node_json(done.stdout, node)
    if done.returncode != 0 and "unrecognized option" not in done.stderr + done.stdout:
        raise SlurmUnavailable("tool_error", failure_text(scontrol, done))
    done = run([scontrol, "show", "node", node], timeout_s)
    if done.returncode != 0:
        raise SlurmUnavailable("tool_error", failure_text(scontrol, done))
    return parse_node_text(done.stdout, node)


def failure_text(scontrol: str, done: Completed) -> str:
    said = " ".join((done.stderr or done.stdout).split())[:200]
    return f"{scontrol} exited with code {done.returncode}: {said}"

