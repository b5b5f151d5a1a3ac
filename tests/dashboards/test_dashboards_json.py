"""Dashboard JSON checks: ids, grid, targets, uids, units, descriptions, rate windows, the
committed copy in deploy/grafana, and the CLI."""

from __future__ import annotations

import json
import re

import pytest

from gpuslo import cli
from gpuslo.dashboards import generate
from gpuslo.slo_spec import SloSpec
from tests.conftest import REPO

DEPLOY = REPO / "deploy" / "grafana"
UIDS = {
    "gpuslo-fleet-slo",
    "gpuslo-lost-gpu-hours",
    "gpuslo-check-liveness",
    "gpuslo-node-drilldown",
    "gpuslo-job-goodput",
}


@pytest.fixture(scope="module")
def boards() -> dict[str, dict]:
    return {name: json.loads(text) for name, text in generate.build_files(SloSpec()).items()}


def test_uids_are_unique_stable_and_name_the_files(boards):
    assert {board["uid"] for board in boards.values()} == UIDS
    assert sorted(boards) == sorted(f"{uid}.json" for uid in UIDS)


def test_panel_ids_unique_and_inside_the_grid_without_overlap(boards):
    for board in boards.values():
        ids = [panel["id"] for panel in board["panels"]]
        assert len(ids) == len(set(ids)), board["uid"]
        cells = set()
        for panel in board["panels"]:
            grid = panel["gridPos"]
            assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24
            mine = {
                (x, y)
                for x in range(grid["x"], grid["x"] + grid["w"])
                for y in range(grid["y"], grid["y"] + grid["h"])
            }
            assert not cells & mine, f"{board['uid']}: {panel['title']} overlaps"
            cells |= mine


def test_every_panel_has_unit_description_and_expressions(boards):
    for board in boards.values():
        for panel in board["panels"]:
            where = f"{board['uid']}: {panel['title']}"
            assert panel["fieldConfig"]["defaults"]["unit"], where
            steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
            assert isinstance(steps, list) and steps and steps[0]["value"] is None, where
            assert len(panel["description"]) > 20, where
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, where
            assert panel["targets"], where
            for target in panel["targets"]:
                assert target["expr"].strip() and target["refId"], where


def test_datasource_variable_and_rate_windows(boards):
    for board in boards.values():
        variables = board["templating"]["list"]
        assert variables[0]["name"] == "datasource" and variables[0]["type"] == "datasource"
        for panel in board["panels"]:
            for target in panel["targets"]:
                for window in re.findall(
                    r"\b(?:rate|increase)\([^\[]*\[([^\]]+)\]", target["expr"]
                ):
                    assert window in ("$__rate_interval", "$__range"), target["expr"]


def test_empty_on_healthy_fleet_list_is_explicit_and_documented(boards):
    titles = {panel["title"] for board in boards.values() for panel in board["panels"]}
    assert generate.EMPTY_ON_HEALTHY_FLEET.issubset(titles)
    for board in boards.values():
        for panel in board["panels"]:
            documented = "Empty on a healthy fleet" in panel["description"]
            assert documented == (panel["title"] in generate.EMPTY_ON_HEALTHY_FLEET), panel["title"]


def test_generation_is_deterministic():
    assert generate.build_files(SloSpec()) == generate.build_files(SloSpec())


def test_deploy_grafana_matches_the_generator():
    for name, text in generate.build_files(SloSpec()).items():
        path = DEPLOY / name
        assert path.is_file() and path.read_text(encoding="utf-8") == text, (
            f"{path} drifted from the generator; regenerate with: {generate.REGENERATE}"
        )


def test_cli_writes_dashboards_and_rejects_a_bad_spec(tmp_path, capsys):
    assert cli.main(["dashboards", "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{uid}.json" for uid in UIDS
    )
    bad = tmp_path / "slo.yml"
    bad.write_text("period_days: [28]\n")
    assert cli.main(["dashboards", "--slo", str(bad), "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "period_days" in err
    assert not (tmp_path / "bad").exists()


def test_grafanalib_is_imported_only_in_the_dashboards_package():
    package = REPO / "gpuslo"
    importers = {
        path.relative_to(package).parts[0]
        for path in package.rglob("*.py")
        if re.search(r"^\s*(from|import)\s+grafanalib", path.read_text(encoding="utf-8"), re.M)
    }
    assert importers == {"dashboards"}
