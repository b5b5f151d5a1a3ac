"""The serving dashboard (issue 29): generated only for a spec with a `serving` section, byte for
byte its golden file, held to the same JSON checks and Grafana 11 type check as the others, and
every panel on a series the serving rules record. That its panels return data on real engine
pages is checked in tests/slo/test_serving_replay.py (a real Prometheus running the rules).

Regenerate the golden file (after a deliberate change to the board):

    UPDATE_GOLDEN=1 python -m pytest -q tests/dashboards/test_dashboards_serving.py

which writes `gpuslo dashboards --slo <SPEC below> --out DIR`'s gpuslo-serving.json.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
import yaml

from gpuslo.alerts import generate as rules_generate
from gpuslo.alerts import serving
from gpuslo.cli import main
from gpuslo.dashboards import generate, serving_board
from gpuslo.slo_spec import SloSpec, spec_from_mapping
from tests.conftest import REPO, require_binary
from tests.dashboards import test_dashboards_json as checks
from tests.dashboards.test_dashboards_prometheus import substitute
from tests.dashboards.test_dashboards_schema import tsc, type_check  # noqa: F401 (fixture)

GOLDEN = REPO / "tests" / "golden" / "dashboards" / "gpuslo-serving.json"
SPEC = {"serving": {"ttft_seconds": 0.5, "ttft_target": 0.95, "itl_seconds": 0.1,
                    "itl_target": 0.95}}
NAME = f"{serving_board.UID}.json"


@pytest.fixture(scope="module")
def board_text() -> str:
    return generate.build_files(spec_from_mapping(SPEC))[NAME]


def test_serving_board_matches_golden_and_the_cli(board_text, tmp_path):
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(board_text)
    assert board_text == GOLDEN.read_text(), "see this module's docstring"
    spec = tmp_path / "slo.yml"
    spec.write_text(yaml.safe_dump(SPEC))
    assert main(["dashboards", "--slo", str(spec), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / NAME).read_text() == board_text


def test_only_a_spec_with_serving_gets_the_board():
    assert NAME not in generate.build_files(SloSpec())


def test_serving_board_passes_the_dashboard_json_checks(board_text):
    boards = {NAME: json.loads(board_text)}
    for check in (checks.test_panel_ids_unique_and_inside_the_grid_without_overlap,
                  checks.test_every_panel_has_unit_description_and_expressions,
                  checks.test_datasource_variable_and_rate_windows,
                  checks.test_grafana_11_schema_version_and_no_grafanalib_legacy_keys,
                  checks.test_a_stat_is_coloured_only_where_it_can_turn_red,
                  checks.test_intervals_and_no_100_point_cap):
        check(boards)


def test_serving_board_type_checks_against_grafana_11(tsc, tmp_path, board_text):  # noqa: F811
    errors = type_check(tsc, tmp_path, {NAME: json.loads(board_text)})
    assert not any(errors.values()), "\n".join(e for e in errors.values() if e)


def expressions(board_text: str) -> list[tuple[str, str]]:
    """(panel title, expression with Grafana's variables substituted) of every target."""
    board = json.loads(board_text)
    return [(panel["title"], substitute(target["expr"])) for panel in board["panels"]
            for target in panel["targets"]]


def test_every_panel_reads_only_series_the_serving_rules_record(board_text):
    rules = rules_generate.build_files(spec_from_mapping(SPEC))[serving.RULE_FILE]
    recorded = set(re.findall(r"record: (\S+)", rules))
    for title, expr in expressions(board_text):
        used = set(re.findall(r"[a-z_]+:[a-z_:0-9]+", expr))
        assert used and used <= recorded, (title, used - recorded)


def test_every_serving_expression_passes_promtool(board_text, tmp_path):
    promtool = require_binary("promtool")
    rules = [{"record": f"gpuslo_dashboard_check:{n}", "expr": expr}
             for n, (_, expr) in enumerate(expressions(board_text))]
    path = tmp_path / "serving-board.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "board", "rules": rules}]}))
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
