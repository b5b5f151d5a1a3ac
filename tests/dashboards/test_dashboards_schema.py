"""Every generated dashboard type-checks against the dashboard types Grafana 11 publishes
(@grafana/schema 11.6 and the foundation SDK's Prometheus query, installed by `npm ci` in
tests/dashboards/grafana_types, which .ci/run does): one `const board: Board = <JSON>;` file per
dashboard, `tsc --noEmit --strict`. A second run proves the check bites: legacy grafanalib keys,
a misspelt option, a time-series-formatted table query and a null where Grafana wants a value
are each an error."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuslo.dashboards import generate
from gpuslo.slo_spec import SloSpec
from tests.conftest import REPO

TYPES = REPO / "tests" / "dashboards" / "grafana_types"
TSC = TYPES / "node_modules" / ".bin" / "tsc"
FLAGS = (
    "--noEmit",
    "--strict",
    "--skipLibCheck",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
    "--target",
    "es2022",
)


@pytest.fixture(scope="module")
def tsc() -> Path:
    if shutil.which("node") and TSC.exists():
        return TSC
    message = f"node or {TSC} missing: run `npm ci --prefix {TYPES.relative_to(REPO)}`"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (.ci/run must do it)")
    pytest.skip(message)


def type_check(tsc: Path, root: Path, boards: dict[str, dict]) -> dict[str, str]:
    """tsc's errors per board name ("" when it type-checks); `root` is a scratch directory."""
    (root / "node_modules").symlink_to(TYPES / "node_modules")
    shutil.copy(TYPES / "board.ts", root / "board.ts")
    files = {}
    for name, board in boards.items():
        path = root / (re.sub(r"\W", "_", name) + ".ts")
        path.write_text(
            'import { type Board, asDashboard } from "./board";\n'
            f"const board: Board = {json.dumps(board, indent=2)};\n"
            "asDashboard(board);\n"
        )
        files[name] = path.name
    done = subprocess.run(
        [str(tsc), *FLAGS, *files.values()], cwd=root, capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.splitlines()
    errors = {n: "\n".join(x for x in lines if x.startswith(f)) for n, f in files.items()}
    assert "board.ts" not in done.stdout.split("(")[0], done.stdout  # the shapes themselves
    assert (done.returncode == 0) == (not any(errors.values())), done.stdout + done.stderr
    return errors


def test_every_dashboard_type_checks_against_grafana_11(tsc, tmp_path):
    boards = {name: json.loads(text) for name, text in generate.build_files(SloSpec()).items()}
    errors = type_check(tsc, tmp_path, boards)
    assert not any(errors.values()), "\n".join(e for e in errors.values() if e)


def _broken(board: dict) -> dict[str, dict]:
    """Copies of `board`, each with one mistake Grafana 11's types forbid."""
    kinds = {panel["type"]: index for index, panel in enumerate(board["panels"])}
    mistakes = {
        "legacy panel key": lambda b: b["panels"][0].update(span=12),
        "legacy target key": lambda b: b["panels"][0]["targets"][0].update(step=10),
        "misspelt stat option": lambda b: b["panels"][kinds["stat"]]["options"].update(
            colourMode="value"
        ),
        "unknown stat colour mode": lambda b: b["panels"][kinds["stat"]]["options"].update(
            colorMode="rainbow"
        ),
        "missing table option": lambda b: b["panels"][kinds["table"]]["options"].pop("showHeader"),
        "query format": lambda b: b["panels"][kinds["table"]]["targets"][0].update(format="grid"),
        "null description": lambda b: b["panels"][0].update(description=None),
        "legacy dashboard key": lambda b: b.update(rows=[]),
        "annotation without a name": lambda b: b["annotations"]["list"][1].pop("name"),
    }
    out = {}
    for name, mistake in mistakes.items():
        copied = copy.deepcopy(board)
        mistake(copied)
        out[name] = copied
    return out


def test_the_type_check_rejects_what_grafana_11_does_not_read(tsc, tmp_path):
    board = json.loads(generate.build_files(SloSpec())["gpuslo-node-drilldown.json"])
    errors = type_check(tsc, tmp_path, _broken(board))
    assert all(errors.values()), [name for name, error in errors.items() if not error]
