"""Dashboard JSON checks: ids, grid, targets, uids, units, descriptions, rate windows; what an
SRE reads on sight (Grafana 11's schemaVersion, tables as tables, stats that can turn red, states
by name, "never" for a check that never answered, node and cluster variables, annotations,
intervals); the committed copy in deploy/grafana, and the CLI. The types themselves are checked
by tsc in test_dashboards_schema.py."""

from __future__ import annotations

import json
import re

import pytest

from gpuslo import cli, names
from gpuslo.dashboards import generate, grafana11, node_boards
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


def _panels(boards, kind=None):
    return [
        (board["uid"], panel)
        for board in boards.values()
        for panel in board["panels"]
        if kind is None or panel["type"] == kind
    ]


def _panel(boards, title):
    (panel,) = [panel for _, panel in _panels(boards) if panel["title"] == title]
    return panel


def _mapped(panel) -> dict[str, tuple[str, str | None]]:
    """value -> (text, colour) of a panel's value mappings."""
    return {
        value: (option["text"], option.get("color"))
        for mapping in panel["fieldConfig"]["defaults"]["mappings"]
        for value, option in mapping["options"].items()
    }


def test_grafana_11_schema_version_and_no_grafanalib_legacy_keys(boards):
    legacy = {"rows", "style", "sharedCrosshair", "hideControls", "__inputs", "gnetId"}
    for board in boards.values():
        assert board["schemaVersion"] == grafana11.SCHEMA_VERSION == 41
        assert not legacy & set(board), board["uid"]
        for _, panel in _panels({0: board}):
            assert not {"span", "height", "error", "minSpan", "editable"} & set(panel)
            assert panel["pluginVersion"].startswith("11.")
            for target in panel["targets"]:
                assert not {"step", "intervalFactor", "metric", "target", "query"} & set(target)


def test_tables_are_instant_table_queries_with_named_columns(boards):
    tables = _panels(boards, "table")
    assert {panel["title"] for _, panel in tables} >= {
        "Active problems",
        "GPUs",
        "Check status",
        "Heartbeat age in intervals",
        "Node",
    }
    for uid, panel in tables:
        for target in panel["targets"]:
            assert target["format"] == "table" and target["instant"] and not target["range"]
        shown = panel["transformations"][0]["options"]["include"]["names"]
        assert "Time" not in shown and "__name__" not in shown, (uid, panel["title"])


def test_a_stat_is_coloured_only_where_it_can_turn_red(boards):
    for uid, panel in _panels(boards, "stat"):
        steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
        colours = {step["color"] for step in steps} | {c for _, c in _mapped(panel).values()}
        if panel["options"]["colorMode"] == "none":
            assert colours <= {"text", None}, (uid, panel["title"])
            assert "informational" in panel["description"], (uid, panel["title"])
        else:  # green when good, and a warning colour it can turn
            assert "green" in colours and colours - {"green", "text", None}, (uid, panel["title"])


def test_exporters_down_is_red_from_one_and_node_usable_red_on_no(boards):
    down = _panel(boards, "Exporters down")["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert down == [{"color": "green", "value": None}, {"color": "red", "value": 1}]
    usable = _panel(boards, "Node usable")
    assert usable["options"]["colorMode"] == "value"
    assert _mapped(usable) == {"0": ("No", "red"), "1": ("Yes", "green")}


def test_node_verdict_shows_state_names(boards):
    verdict = _panel(boards, "Node verdict")
    mapped = _mapped(verdict)
    assert {text for text, _ in mapped.values()} == set(names.VERDICTS)
    assert mapped[str(node_boards.VERDICT_CODE["unhealthy"])] == ("unhealthy", "red")
    assert mapped[str(node_boards.VERDICT_CODE["healthy"])] == ("healthy", "green")
    assert set(node_boards.STATUS_COLOUR) == set(names.STATUSES)


def test_a_check_that_never_answered_reads_never(boards):
    last = _panel(boards, "Last answer")
    assert last["fieldConfig"]["defaults"]["unit"] == "dateTimeFromNow"
    assert _mapped(last) == {"0": ("never", "red")}
    since = _panel(boards, "Time since last answer")["targets"][0]["expr"]
    assert "gpuslo_check_last_success_timestamp_seconds{" in since and "> 0)" in since


def test_node_and_cluster_variables_not_instance(boards):
    for board in boards.values():
        variables = {v["name"]: v for v in board["templating"]["list"]}
        assert "instance" not in variables, board["uid"]
        assert variables["cluster"]["query"] == "label_values(gpuslo_node_info, cluster)"
        if "node" in variables:
            assert variables["node"]["query"].startswith("label_values(gpuslo_node_info{")
            assert variables["node"]["query"].endswith(", node)")
    picked = {
        uid for uid, b in boards.items() if "node" in {v["name"] for v in b["templating"]["list"]}
    }
    assert picked == {"gpuslo-node-drilldown.json"}


def test_the_drill_down_reads_one_nodes_series_not_a_regex_over_all(boards):
    """`$node` is single-select; the hidden `$exporter` (its instances, All = their alternation,
    not `.*`) selects every raw series, so a panel reads one node's series (issue 30)."""
    board = boards["gpuslo-node-drilldown.json"]
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert not variables["node"]["multi"] and not variables["node"]["includeAll"]
    exporter = variables["exporter"]
    assert exporter["hide"] == 2 and exporter["includeAll"] and "allValue" not in exporter
    assert exporter["query"].endswith(", instance)") and '"$node"' in exporter["query"]
    for panel in board["panels"]:
        for target in panel["targets"]:
            selectors = re.findall(r"\b(gpuslo_\w+)\{([^}]*)\}", target["expr"])
            for name, matchers in selectors:
                if name != "gpuslo_node_info":
                    assert 'instance=~"$exporter"' in matchers, (panel["title"], name)


def test_check_liveness_draws_checks_from_recorded_series_only(boards):
    """One line per check, never per node: every expression reads `gpuslo:` recorded series (or
    `up`), so the board costs the same on any fleet size (issue 30)."""
    board = boards["gpuslo-check-liveness.json"]
    for panel in board["panels"]:
        for target in panel["targets"]:
            assert not re.search(r"\bgpuslo_\w+", target["expr"]), panel["title"]
            assert "instance" not in target["expr"] and "node" not in target["expr"]
    titles = {panel["title"] for panel in board["panels"]}
    assert {"Stale checks", "Oldest heartbeat per check", "Slowest check duration"} <= titles


def test_annotations_for_alerts_and_verdict_changes(boards):
    for board in boards.values():
        notes = {note["name"]: note for note in board["annotations"]["list"]}
        assert "ALERTS{" in notes["gpuslo alerts firing"]["target"]["expr"]
        verdict = notes["Node verdict changes"]["target"]["expr"]
        assert "gpuslo_node_verdict{" in verdict and 'verdict!="healthy"' in verdict


def test_intervals_and_no_100_point_cap(boards):
    for uid, panel in _panels(boards):
        assert "maxDataPoints" not in panel, (uid, panel["title"])
        if panel["type"] == "timeseries":
            assert panel["interval"] == grafana11.MIN_INTERVAL
            assert all(t["range"] and not t["instant"] for t in panel["targets"])
        else:
            assert all(t["instant"] for t in panel["targets"]), (uid, panel["title"])
