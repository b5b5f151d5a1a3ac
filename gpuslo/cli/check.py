"""`gpuslo check`: run the node checks once and print text, JSON or node-problem-detector output.

Exit 0 when the node verdict is healthy, 1 otherwise (unhealthy or unknown: unknown is never
healthy). `--format npd` follows node-problem-detector's custom-plugin protocol (see
`gpuslo.exporter.npd`): exit 0 ok, 1 problem, one line of at most 80 bytes, and 1 — not 2 — on
its own errors. `--format slurm` is the HealthCheckProgram/Prolog mode (`gpuslo.cli.slurm_check`).
Its arguments are `gpuslo.cli.check_args` (imported alone for `--help`); the source flags,
shared with `gpuslo exporter`, are `gpuslo.cli.source_args`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from gpuslo import names
from gpuslo.cli.slurm_check import run_slurm
from gpuslo.cli.sources import gate_from_args, runner_from_args
from gpuslo.exporter.npd import run_plugin
from gpuslo.exporter.policy.return_to_service import CHECK as GATE
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import NODE_SCOPE, CheckResult, gpu_scoped, gpu_verdicts, node_verdict


def gpu_table(snapshot: NodeSnapshot) -> list[dict[str, str]]:
    """One row per GPU (inventory, plus GPUs only seen in results) with its verdict."""
    rows = {
        g.uuid: {"gpu": g.index, "uuid": g.uuid, "pci_bus_id": g.pci_bus_id, "model": g.model}
        for g in snapshot.gpus
    }
    for result in snapshot.results:
        if result.gpu and result.scope not in rows:
            rows[result.scope] = {
                "gpu": result.gpu,
                "uuid": result.scope,
                "pci_bus_id": "",
                "model": "",
            }
    # a kernel-log result named by bus id (no `GPU at PCI` line in the log) is its GPU's
    verdicts = gpu_verdicts(gpu_scoped(list(snapshot.results), snapshot.gpus), list(rows))
    ordered = sorted(rows.values(), key=lambda row: (int(row["gpu"] or 0), row["uuid"]))
    return [{**row, "verdict": verdicts[row["uuid"]]} for row in ordered]


def report(snapshot: NodeSnapshot) -> dict[str, Any]:
    """The JSON document of `--format json` (sorted keys when dumped)."""
    return {
        "node": snapshot.node,
        "verdict": node_verdict(snapshot.results),
        "driver_version": snapshot.driver_version,
        "cuda_version": snapshot.cuda_version,
        "gpus": gpu_table(snapshot),
        "results": [r.to_dict() for r in gpu_scoped(list(snapshot.results), snapshot.gpus)],
        "heartbeats": [dict(sorted(vars(h).items())) for h in snapshot.heartbeats],
        "taken_at": snapshot.taken_at,
    }


def render_text(snapshot: NodeSnapshot) -> str:
    """A table, one line per check result, then the GPU and node verdicts. Nothing is cut:
    columns widen to their longest cell and the message, last, is printed whole."""
    header = ("CHECK", "SCOPE", "STATUS", "REASON", "ACTION")
    rows = [
        (r.check, f"gpu{r.gpu}" if r.gpu else r.scope, r.status, r.reason or "-", r.action)
        + (r.message,)
        for r in gpu_scoped(list(snapshot.results), snapshot.gpus)  # a bus id the run named
    ]
    widths = [max(len(str(cells[i])) for cells in [header, *rows]) for i in range(len(header))]

    def line(cells) -> str:
        padded = "  ".join(f"{str(c):{w}}" for c, w in zip(cells, widths, strict=False))
        return f"{padded}  {cells[5]}".rstrip() if len(cells) > 5 else padded.rstrip()

    lines = [line((*header, "MESSAGE"))] + [line(cells) for cells in rows]
    for row in gpu_table(snapshot):
        lines.append(f"gpu {row['gpu']} {row['uuid']} {row['pci_bus_id']}: {row['verdict']}")
    lines.append(f"node {snapshot.node}: {node_verdict(snapshot.results)}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Run the checks once and print; 0 healthy, 1 otherwise (`npd.run_plugin` for npd)."""
    if args.format == "npd":
        return run_plugin(lambda: _cycle(args))
    if args.format == "slurm":
        return run_slurm(args, _cycle)
    snapshot = _cycle(args)
    if args.format == "json":
        sys.stdout.write(json.dumps(report(snapshot), sort_keys=True, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(snapshot))
    return 0 if node_verdict(snapshot.results) == names.VERDICT_HEALTHY else 1


def _cycle(args: argparse.Namespace) -> NodeSnapshot:
    """One cycle of the checks, then the return-to-service gate: stepped (and validating) when
    every check ran; when `--check` chose some, the faults they saw are recorded and nothing
    is stepped (`ReturnToService.view`), so a fault one NPD rule saw is held after the log
    rotates; `--check validation` runs every check and keeps the gate's results alone."""
    chosen = getattr(args, "check", None) or []
    gate_only = GATE in chosen
    if gate_only:
        args = argparse.Namespace(**{**vars(args), "check": None})
    runner = runner_from_args(args)
    try:
        snapshot = runner.cycle(force=True)
    finally:
        runner.close()
    gate = gate_from_args(args, runner.context)
    if chosen and not gate_only:
        return gate.view(snapshot, set(chosen))
    snapshot = gate.apply(snapshot)
    return gate_answer(snapshot) if gate_only else snapshot


def gate_answer(snapshot: NodeSnapshot) -> NodeSnapshot:
    """The snapshot with the gate's results alone, and the faults that hold its held GPUs (the
    checks' own fail results on them); one `ok` saying so when it holds no GPU."""
    held = {g.uuid for g in snapshot.validation.gpus} if snapshot.validation else set()
    scoped = gpu_scoped(list(snapshot.results), snapshot.gpus)
    own = tuple(r for r in scoped if r.check == GATE or (r.scope in held and r.status == "fail"))
    if not own:
        own = (CheckResult(check=GATE, scope=NODE_SCOPE, status=names.STATUS_OK,
                           message="the return-to-service gate holds no GPU",
                           source="return-to-service gate"),)
    return dataclasses.replace(snapshot, results=own)
