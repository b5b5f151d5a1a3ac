"""Slurm health-check answers and gpuslo's drain/resume decision, as LBNL NHC does it.

`answer(snapshot) -> (exit code, line)`: 0 and `gpuslo: ok` when the node verdict is healthy,
else 1 and one line `gpuslo: <check> <reason> <gpu/device>` (at most `MAX_REASON_BYTES`, one
line, no quotes) fit for a Slurm node reason. `decide(node, exit_code, line)` is the pure drain
rule: drain an unhealthy node with that line unless an administrator's reason is already there;
resume a healthy node only when the reason on it is gpuslo's own (never an administrator's
drain); change nothing otherwise. `apply(decision, ...)` runs `scontrol update` through an
injected runner, with a timeout.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuslo import names
from gpuslo.exporter.evidence.slurm import (
    DEFAULT_SCONTROL,
    DEFAULT_TIMEOUT_S,
    Run,
    SlurmNode,
    SlurmUnavailable,
    failure_text,
    run_command,
)
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import node_verdict, problems

REASON_PREFIX = "gpuslo:"
MAX_REASON_BYTES = 80
EXIT_OK, EXIT_PROBLEM = 0, 1
DRAIN, RESUME, NOTHING = "drain", "resume", "none"


@dataclass(frozen=True)
class Decision:
    """What to do with the node: `action` DRAIN (with `reason`), RESUME or NOTHING; `why` says
    why, for the log."""

    action: str
    reason: str = ""
    why: str = ""


def reason_line(check: str, reason: str, where: str) -> str:
    """`gpuslo: <check> <reason> <where>`, one line of at most MAX_REASON_BYTES bytes without
    quotes or `[`/`]` (Slurm appends `[user@time]` to a reason). Pure."""
    words = [" ".join(str(w).replace('"', "").replace("'", "").split()) or "-"
             for w in (check, reason, where)]  # fmt: skip
    line = f"{REASON_PREFIX} {' '.join(words)}".replace("[", "(").replace("]", ")")
    return line.encode()[:MAX_REASON_BYTES].decode(errors="ignore")


def answer(snapshot: NodeSnapshot) -> tuple[int, str]:
    """(exit code, line) for a finished check cycle: 0 only when the node verdict is healthy;
    otherwise the first problem (a fail before an unknown, then `verdict.problems` order), or
    `gpuslo: checks no_data node` when the verdict is not healthy and no result says why."""
    if node_verdict(snapshot.results) == names.VERDICT_HEALTHY:
        return EXIT_OK, f"{REASON_PREFIX} ok"
    bad = sorted(problems(snapshot.results), key=lambda r: r.status != names.STATUS_FAIL)
    if not bad:
        return EXIT_PROBLEM, reason_line("checks", "no_data", "node")
    first = bad[0]
    where = f"gpu{first.gpu}" if first.gpu else (first.scope or "node")
    return EXIT_PROBLEM, reason_line(first.check, first.reason, where)


def is_own(reason: str) -> bool:
    """True when a Slurm node reason is one gpuslo set (it starts with `gpuslo:`)."""
    return reason.strip().startswith(REASON_PREFIX)


def own_reason_word(reason: str) -> str | None:
    """The names.REASONS word in a gpuslo reason line (`gpuslo: xid xid_fatal gpu0` → xid_fatal);
    None when the text is not gpuslo's or names no known reason. Pure."""
    if not is_own(reason):
        return None
    words = reason.strip()[len(REASON_PREFIX):].split()
    return words[1] if len(words) >= 2 and words[1] in names.REASON_LAYER else None


def decide(node: SlurmNode, exit_code: int, line: str) -> Decision:
    """The drain rule (pure). Unhealthy (`exit_code` != 0): drain with `line`, unless the node
    already carries exactly that reason, or an administrator's reason (a drained or down node
    whose reason is not gpuslo's: theirs stays). Healthy: resume only a node drained with
    gpuslo's own reason."""
    theirs = bool(node.reason) and not is_own(node.reason)
    if exit_code != EXIT_OK:
        if node.drained and node.reason == line:
            return Decision(NOTHING, why="already drained with this reason")
        if theirs and (node.drained or node.down):
            return Decision(NOTHING, why=f"left alone: an administrator's reason {node.reason!r}")
        return Decision(DRAIN, line, why="unhealthy")
    if node.drained and is_own(node.reason):
        return Decision(RESUME, why=f"healthy again; the drain was gpuslo's ({node.reason})")
    return Decision(NOTHING, why="healthy")


def apply(decision: Decision, node: str, scontrol: str = DEFAULT_SCONTROL,
          run: Run = run_command, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Carry out `decision` with `scontrol update nodename=NODE state=drain reason=...` or
    `state=resume` (each argument one argv word; no shell). Raises SlurmUnavailable when scontrol
    is missing, fails or times out."""
    if decision.action == NOTHING:
        return
    argv = [scontrol, "update", f"nodename={node}"]
    if decision.action == DRAIN:
        argv += ["state=drain", f"reason={decision.reason}"]
    else:
        argv += ["state=resume"]
    done = run(argv, timeout_s)
    if done.returncode != 0:
        raise SlurmUnavailable("tool_error", failure_text(scontrol, done))
