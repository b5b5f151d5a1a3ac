"""The Grafana dashboards for an SLO spec, as files (`gpuslo dashboards [--slo FILE] --out DIR`,
in `gpuslo.cli.dashboards`, calls `generate_dashboards`).

One JSON file per dashboard, named after its uid (`gpuslo-fleet-slo.json`, …), encoded with
grafanalib's DashboardEncoder, sorted keys and 2-space indent, so the committed copy in
deploy/grafana is byte-for-byte reproducible: regenerate it with `REGENERATE`.
"""

from __future__ import annotations

import json
from pathlib import Path

from grafanalib._gen import DashboardEncoder

from gpuslo.dashboards import (
    clusters,
    job_board,
    liveness_board,
    node_boards,
    serving_board,
    slo_boards,
)
from gpuslo.files import write_text_files
from gpuslo.slo_spec import SloSpec

REGENERATE = "gpuslo dashboards --out deploy/grafana"
BOARDS = (
    slo_boards.fleet_slo,
    slo_boards.lost_gpu_hours,
    liveness_board.check_liveness,
    node_boards.node_drilldown,
    job_board.job_goodput,
)
# Panels that show nothing on a healthy fleet (they list problems); the Prometheus test may find
# them empty. Every other panel must return data on the test fixture.
EMPTY_ON_HEALTHY_FLEET = frozenset(
    {
        "Lost GPU-hours by layer",
        "Lost GPU-hours by layer and reason",
        "Lost GPUs by layer",
        "Lost GPUs by reason",
        "Active problems",
        clusters.SILENT_TITLE,
        job_board.GOODPUT_UNKNOWN_TITLE,
    }
)


def build_dashboards(spec: SloSpec) -> dict[str, dict]:
    """uid -> dashboard JSON data (dicts and grafanalib objects). Pure. The serving board only
    for a spec with a `serving` section (the rules it reads exist only then)."""
    boards = [board(spec) for board in BOARDS]
    if spec.serving:
        boards.append(serving_board.serving(spec))
    return {board["uid"]: board for board in boards}


def build_files(spec: SloSpec) -> dict[str, str]:
    """File name -> JSON text of every dashboard. Pure and deterministic."""
    return {
        f"{uid}.json": json.dumps(board, cls=DashboardEncoder, sort_keys=True, indent=2) + "\n"
        for uid, board in build_dashboards(spec).items()
    }


def write_atomically(directory: Path, files: dict[str, str]) -> list[Path]:
    """Write each `name -> text` into `directory`, all or nothing (`gpuslo.files`). Raises
    InputError naming what could not be written."""
    return write_text_files(directory, files)


def generate_dashboards(spec: SloSpec, out_dir: str | Path) -> list[Path]:
    """Write every dashboard of `build_files(spec)` into `out_dir` (created if missing), all or
    nothing; returns the paths written, in name order. Raises InputError naming what could not
    be written."""
    return write_atomically(Path(out_dir), build_files(spec))
