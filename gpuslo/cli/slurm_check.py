"""`gpuslo check --format slurm [--drain]`: the HealthCheckProgram / Prolog / Epilog mode.

Prints one line and exits 0 when the node is healthy (`gpuslo: ok`), else 1 with
`gpuslo: <check> <reason> <gpu/device>`. With `--drain` it also drains the node with that line
as the Slurm reason, and resumes it when healthy again only when the reason on it is gpuslo's
own (`gpuslo.exporter.slurm.drain.decide`) — so after a fault only once the return-to-service
gate has validated the GPUs (`gpuslo.exporter.gate`: while it runs the line is
`gpuslo: validation validation gpu<N>`, and a failed gate drains with `validation_failed`); the
gate learns from the node's Slurm state whether gpuslo's drain is on, and counts an admin's
resume of it as a clearing event. Fails closed: the whole cycle runs under gpuslo's own
deadline (`--deadline`, default 30 s, well under slurmd's 60 s kill), and overrunning it answers
`gpuslo: gpuslo check_timeout node`; a library error answers `gpuslo: gpuslo <reason> node`
(dependency_missing, tool_error) — and drains with it. The drain path fails closed too: when
scontrol answers something gpuslo cannot use (a reason it cannot parse, an error status) or the
path raises anything else, the answer becomes `gpuslo: gpuslo tool_error node` and the node is
drained with it; only a missing or silent scontrol (nothing can be drained then) leaves the
answer as it was, with one line on stderr. Options come from flags, then from the
file `--slurm-config` or $GPUSLO_SLURM_CONFIG names (slurmd passes no arguments), then defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuslo.cli.sources import context_from_args, gate_from_args
from gpuslo.errors import DependencyMissing, GpusloError
from gpuslo.exporter.evidence.slurm import SlurmNode, SlurmUnavailable, read_node, run_command
from gpuslo.exporter.slurm.config import SlurmConfig, load_slurm_config
from gpuslo.exporter.slurm.drain import (
    DRAIN,
    EXIT_PROBLEM,
    NOTHING,
    RESUME,
    Decision,
    answer,
    apply,
    decide,
    is_own,
    reason_line,
)
from gpuslo.exporter.slurm.limits import DEFAULT_DEADLINE_S, DEFAULT_SCONTROL_TIMEOUT_S, ENV_VAR
from gpuslo.exporter.snapshot import NodeSnapshot


def merge_config(args: argparse.Namespace, config: SlurmConfig) -> argparse.Namespace:
    """A copy of `args` with every option the flags left unset taken from `config`."""
    merged = argparse.Namespace(**vars(args))
    pairs = {"drain": "drain", "scontrol": "scontrol", "node": "node", "deadline": "deadline_s",
             "config": "node_config", "kernel_log": "kernel_log",
             "check_timeout": "check_timeout_s", "state_dir": "state_dir"}  # fmt: skip
    for flag, key in pairs.items():
        if getattr(merged, flag, None) is None and getattr(config, key) is not None:
            setattr(merged, flag, getattr(config, key))
    if not getattr(merged, "check", None) and config.checks:
        merged.check = list(config.checks)
    merged.scontrol_timeout = config.scontrol_timeout_s or DEFAULT_SCONTROL_TIMEOUT_S
    return merged


def node_name(args: argparse.Namespace) -> str:
    """--node / the config's node, else $SLURMD_NODENAME (slurmd sets it), else the short host."""
    return args.node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def cycle_within(cycle: Callable[[], NodeSnapshot], deadline_s: float) -> tuple[int, str, bool]:
    """Run `cycle` on a daemon thread for at most `deadline_s`: (exit code, line, timed out)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["answer"] = answer(cycle())
        except DependencyMissing:
            box["answer"] = (EXIT_PROBLEM, reason_line("gpuslo", "dependency_missing", "node"))
        except GpusloError as error:
            box["error"] = error
            box["answer"] = (EXIT_PROBLEM, reason_line("gpuslo", "tool_error", "node"))
        except Exception as error:  # noqa: BLE001 - fail closed: a crash is a problem, not a pass
            box["error"] = error
            box["answer"] = (EXIT_PROBLEM, reason_line("gpuslo", "tool_error", "node"))

    worker = threading.Thread(target=work, name="gpuslo-slurm-cycle", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        return EXIT_PROBLEM, reason_line("gpuslo", "check_timeout", "node"), True
    if "error" in box:
        print(f"gpuslo check: error: {box['error']}", file=sys.stderr)
    code, line = box["answer"]
    return code, line, False


def run_slurm(args: argparse.Namespace, cycle: Callable[[argparse.Namespace], NodeSnapshot]) -> int:
    """The slurm format end to end (see the module docstring); returns the exit code. When the
    cycle overran its deadline the process ends at once (`os._exit`): the stuck cycle cannot be
    joined, and slurmd must not wait for it."""
    path = args.slurm_config or os.environ.get(ENV_VAR)
    args = merge_config(args, load_slurm_config(path) if path else SlurmConfig())
    deadline = args.deadline if args.deadline and args.deadline > 0 else DEFAULT_DEADLINE_S
    before = _note_resume(args) if args.drain else None
    code, line, timed_out = cycle_within(lambda: cycle(args), deadline)
    if args.drain:
        code, line = _drain(args, code, line, before)
    print(line, flush=True)
    if timed_out:
        sys.stderr.flush()
        kill_descendants(os.getpid())
        os._exit(code)
    return code


def kill_descendants(pid: int, proc: Path = Path("/proc")) -> int:
    """SIGKILL every descendant of `pid` (from /proc/<pid>/stat parent links): the check children
    a stuck cycle left behind would otherwise hold slurmd's pipe open. Returns how many it
    signalled; best effort (processes that vanish meanwhile are skipped)."""
    parents: dict[int, list[int]] = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo, found = list(parents.get(pid, [])), []
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(parents.get(child, []))
    for child in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
    return len(found)


def _gate(args: argparse.Namespace) -> Any:
    """The node's return-to-service gate (its state file holds whether gpuslo's drain is on)."""
    return gate_from_args(args, context_from_args(args))


def _note_resume(args: argparse.Namespace) -> SlurmNode | None:
    """Before the cycle: a node gpuslo had drained that is neither drained nor down now was
    resumed by someone else, an admin resume the gate counts (`ReturnToService.note_slurm`).
    Returns the node as read (None when scontrol or the gate state cannot be read: nothing is
    counted; the drain step reports scontrol's failure)."""
    try:
        node = read_node(node_name(args), args.scontrol or "scontrol", run_command,
                         args.scontrol_timeout)
        if _gate(args).note_slurm(None, resumed_by_someone=not (node.drained or node.down)):
            print(f"gpuslo check: {node.name} was resumed by someone else: an admin resume",
                  file=sys.stderr)
    except Exception:  # noqa: BLE001 - nothing counted; the drain step fails closed on its own
        return None
    return node


def _drain(args: argparse.Namespace, code: int, line: str,
           before: SlurmNode | None) -> tuple[int, str]:
    """Drain or resume by `decide`, and tell the gate whether gpuslo's drain is on now: gpuslo
    resumes its own drain only once the verdict is healthy, i.e. after the gate passed. Returns
    the answer to give: `gpuslo: gpuslo tool_error node` when the drain path failed (module
    docstring)."""
    scontrol, timeout = args.scontrol or "scontrol", args.scontrol_timeout
    node = node_name(args)
    try:
        state = read_node(node, scontrol, run_command, timeout)
        decision = decide(state, code, line)
        apply(decision, node, scontrol, run_command, timeout)
    except SlurmUnavailable as error:
        if error.reason in ("dependency_missing", "check_timeout"):
            print(f"gpuslo check: cannot {'resume' if code == 0 else 'drain'} {node}: {error}",
                  file=sys.stderr)
            return code, line
        return _drain_on_error(args, node, f"{error.reason}: {error}")
    except Exception as error:  # noqa: BLE001 - fail closed: never a traceback, always drained
        return _drain_on_error(args, node, f"{type(error).__name__}: {error}")
    own = {DRAIN: True, RESUME: False}.get(decision.action, state.drained and is_own(state.reason))
    with contextlib.suppress(GpusloError, OSError):  # the gate reports its own state problems
        _gate(args).note_slurm(own, resumed_by_someone=False)
    if decision.action != NOTHING:
        print(f"gpuslo check: {decision.action} {node}: {decision.why}", file=sys.stderr)
    return code, line


def _drain_on_error(args: argparse.Namespace, node: str, why: str) -> tuple[int, str]:
    line = reason_line("gpuslo", "tool_error", "node")
    said = " ".join(why.split())[:300]
    try:
        apply(Decision(DRAIN, line), node, args.scontrol or "scontrol", run_command,
              args.scontrol_timeout)
        print(f"gpuslo check: drain {node}: the drain path failed ({said})", file=sys.stderr)
        with contextlib.suppress(Exception):  # gpuslo's own drain is on now
            _gate(args).note_slurm(True, resumed_by_someone=False)
    except Exception as error:  # noqa: BLE001 - the answer is still given
        print(f"gpuslo check: cannot drain {node} after the drain path failed ({said}): "
              f"{' '.join(str(error).split())[:200]}", file=sys.stderr)
    return EXIT_PROBLEM, line
