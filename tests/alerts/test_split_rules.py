"""`gpuslo rules --split per-cluster,global`: the per-cluster part is today's rules and tests in
one file, the global part lints, runs its own promtool tests (series carrying `cluster`) and
loads in vmalert; the committed copy in deploy/prometheus/multi-cluster matches the generator;
the default output does not change (tests/alerts/test_alert_rules.py keeps it golden)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from gpuslo import cli
from gpuslo.alerts import generate, global_rules, rules, sli, split
from gpuslo.errors import ConfigError
from gpuslo.slo_spec import SloSpec, spec_from_mapping
from tests.conftest import REPO, require_binary

DEPLOY = REPO / "deploy" / "prometheus" / "multi-cluster"


def _write(files: dict[str, str], directory: Path) -> Path:
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def _run(tool: str, directory: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([require_binary(tool), *args], cwd=directory, capture_output=True,
                          text=True, timeout=300)


def test_per_cluster_part_is_todays_rules_and_tests_in_one_file():
    spec = SloSpec()
    files = split.build_split_files(spec, (split.PER_CLUSTER,))
    assert split.GLOBAL_RULES not in files
    groups = yaml.safe_load(files[split.CLUSTER_RULES])["groups"]
    assert groups == yaml.safe_load(yaml.safe_dump(
        sli.recording_groups(spec) + rules.alert_groups(spec)))
    # no `cluster` anywhere: inside a cluster's Prometheus it does not exist
    assert "cluster" not in files[split.CLUSTER_RULES].split("\ngroups:", 1)[1]
    single = generate.build_files(spec)
    for name in ("slo", "alerts", "fleet"):
        mine = yaml.safe_load(files[f"gpuslo-cluster-{name}_test.yml"])
        today = yaml.safe_load(single[f"gpuslo-{name}_test.yml"])
        assert mine["rule_files"] == [split.CLUSTER_RULES]
        assert {**mine, "rule_files": today["rule_files"]} == today
    config = yaml.safe_load(files["prometheus-cluster.yml"])
    assert config["global"]["external_labels"] == {"cluster": split.EXAMPLE_CLUSTER}
    assert config["remote_write"] == [{"url": split.EXAMPLE_REMOTE_WRITE}]
    assert config["rule_files"] == [split.CLUSTER_RULES]


@pytest.mark.prometheus
@pytest.mark.parametrize("mapping", [{}, {"retired_clusters": ["old.dc", "b2"]}],
                         ids=["defaults", "retired-clusters"])
def test_promtool_lints_both_parts_and_runs_the_global_tests(tmp_path, mapping):
    spec = spec_from_mapping(mapping)
    directory = _write(split.build_split_files(spec, split.PARTS), tmp_path)
    checked = _run("promtool", directory, "check", "rules", split.CLUSTER_RULES,
                   split.GLOBAL_RULES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = _run("promtool", directory, "test", "rules", "gpuslo-global_test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    config = _run("promtool", directory, "check", "config", "prometheus-cluster.yml")
    assert config.returncode == 0, config.stdout + config.stderr
    if mapping:
        assert '{cluster!~"b2|old\\\\.dc"}' in (directory / split.GLOBAL_RULES).read_text()


@pytest.mark.prometheus
def test_global_tests_catch_an_average_of_ratios(tmp_path):
    """The fleet's usable ratio weighs clusters by GPUs: recording the mean of the clusters'
    ratios instead (0.84375, not 6/7) fails the generated tests."""
    directory = _write(split.build_split_files(SloSpec(), (split.GLOBAL,)), tmp_path)
    path = directory / split.GLOBAL_RULES
    name = global_rules.level_sli(global_rules.FLEET, "usable_gpu", "1h")
    text = path.read_text()
    wrong = f"avg({global_rules.level_sli(global_rules.CLUSTER, 'usable_gpu', '1h')})"
    start = text.index(f"record: {name}\n")
    expr_line = text.index("expr:", start)
    end = text.index("\n", expr_line)
    path.write_text(text[:expr_line] + f"expr: {wrong}" + text[end:])
    tests = yaml.safe_load((directory / "gpuslo-global_test.yml").read_text())
    tests["tests"] = tests["tests"][:1]  # the two clusters answering: where the ratio is checked
    (directory / "answering_test.yml").write_text(yaml.safe_dump(tests))
    tested = _run("promtool", directory, "test", "rules", "answering_test.yml")
    assert tested.returncode != 0 and name in tested.stdout + tested.stderr


@pytest.mark.prometheus
def test_vmalert_loads_both_parts(tmp_path):
    directory = _write(split.build_split_files(SloSpec(), split.PARTS), tmp_path)
    for name in (split.CLUSTER_RULES, split.GLOBAL_RULES):
        done = _run("vmalert", directory, "-dryRun", f"-rule={name}")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_deploy_multi_cluster_matches_the_generator():
    files = split.build_split_files(SloSpec(), split.PARTS)
    assert sorted(p.name for p in DEPLOY.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (DEPLOY / name).read_text(encoding="utf-8") == text, (
            f"{DEPLOY / name} drifted from the generator; regenerate with: {split.REGENERATE}")


def test_global_names_never_shadow_per_cluster_names():
    """A global series named like a per-cluster one would be summed into itself."""
    spec = SloSpec()
    assert not global_rules.recorded_names(spec) & sli.recorded_names(spec)
    assert all(name.startswith(("gpuslo_cluster:", "gpuslo_fleet:"))
               for name in global_rules.recorded_names(spec))


def test_cli_split_writes_the_parts_and_rejects_an_unknown_one(tmp_path, capsys):
    assert cli.main(["rules", "--split", "global", "--out", str(tmp_path / "g")]) == 0
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == sorted(
        split.build_split_files(SloSpec(), (split.GLOBAL,)))
    capsys.readouterr()
    assert cli.main(["rules", "--split", "per-cluster,regional", "--out",
                     str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "regional" in err and "--split" in err
    assert not (tmp_path / "bad").exists()


def test_retired_clusters_are_validated_and_every_problem_named():
    assert spec_from_mapping({"retired_clusters": ["b", "a", "b"]}).retired_clusters == ("a", "b")
    with pytest.raises(ConfigError) as error:
        spec_from_mapping({"retired_clusters": ["ok", "bad name", 3]}, "slo.yml")
    assert "retired_clusters[1]" in str(error.value) and "retired_clusters[2]" in str(error.value)
    with pytest.raises(ConfigError, match="must be a list"):
        spec_from_mapping({"retired_clusters": "a"})


SERVING_SPEC = {"serving": {"ttft_seconds": 1, "ttft_target": 0.95, "itl_seconds": 0.1,
                            "itl_target": 0.99}}  # the newcomer's spec_serving.yml (F3)


def test_newcomer7_f3_split_with_a_serving_spec_writes_the_serving_rules(tmp_path, capsys):
    """Newcomer 7 F3 (tests/data/newcomer7/FINDINGS.md): `--split per-cluster,global` with a
    `serving:` section wrote no serving rule, without a word. The per-cluster part now carries
    today's serving files (loaded by the example config) and the global file sums them."""
    spec_file = tmp_path / "spec_serving.yml"
    spec_file.write_text(yaml.safe_dump(SERVING_SPEC))
    out = tmp_path / "mcs"
    assert cli.main(["rules", "--split", "per-cluster,global", "--slo", str(spec_file),
                     "--out", str(out)]) == 0
    capsys.readouterr()
    spec = spec_from_mapping(SERVING_SPEC)
    single = generate.build_files(spec)
    for name in ("gpuslo-serving.rules.yml", "gpuslo-serving_test.yml"):
        assert yaml.safe_load((out / name).read_text()) == yaml.safe_load(single[name])
    config = yaml.safe_load((out / "prometheus-cluster.yml").read_text())
    assert config["rule_files"] == [split.CLUSTER_RULES, "gpuslo-serving.rules.yml"]
    recorded = {r["record"]: r["expr"] for g in yaml.safe_load(
        (out / split.GLOBAL_RULES).read_text())["groups"] for r in g["rules"] if "record" in r}
    assert recorded["gpuslo_fleet:serving_ttft:ratio_rate1h"] == (
        "clamp_max(sum (gpuslo:serving_ttft_good:rate1h) / (sum (gpuslo:serving_ttft_total:rate1h)"
        " > 0), 1)")
    assert "gpuslo_cluster:serving_itl:ratio_rate5m" in recorded


def test_newcomer7_f3_negative_no_serving_section_no_serving_files():
    files = split.build_split_files(SloSpec(), split.PARTS)
    assert not [name for name in files if "serving" in name]
    assert "serving" not in files[split.GLOBAL_RULES]


@pytest.mark.prometheus
def test_newcomer7_f3_promtool_lints_and_tests_the_split_serving_rules(tmp_path):
    spec = spec_from_mapping(SERVING_SPEC)
    directory = _write(split.build_split_files(spec, split.PARTS), tmp_path)
    checked = _run("promtool", directory, "check", "rules", split.CLUSTER_RULES,
                   split.GLOBAL_RULES, "gpuslo-serving.rules.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # two clusters: a answers 9 of 10 requests in time, b 1 of 10; the fleet 10 of 20, not the
    # average of the ratios either way round
    series = [{"series": f'gpuslo:serving_ttft_{kind}:rate1h{{cluster="{c}"}}',
               "values": f"{value}x5"}
              for c, good in (("a", 0.9), ("b", 0.1)) for kind, value in (("good", good),
                                                                            ("total", 1))]
    test = {"rule_files": [split.GLOBAL_RULES], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": [
                {"expr": "gpuslo_fleet:serving_ttft:ratio_rate1h", "eval_time": "2m",
                 "exp_samples": [{"labels": "gpuslo_fleet:serving_ttft:ratio_rate1h",
                                  "value": 0.5}]},
                {"expr": "gpuslo_cluster:serving_ttft:ratio_rate1h", "eval_time": "2m",
                 "exp_samples": [
                     {"labels": 'gpuslo_cluster:serving_ttft:ratio_rate1h{cluster="a"}',
                      "value": 0.9},
                     {"labels": 'gpuslo_cluster:serving_ttft:ratio_rate1h{cluster="b"}',
                      "value": 0.1}]}]}]}
    (directory / "serving_global_test.yml").write_text(yaml.safe_dump(test))
    for name in ("serving_global_test.yml", "gpuslo-serving_test.yml"):
        tested = _run("promtool", directory, "test", "rules", name)
        assert tested.returncode == 0, tested.stdout + tested.stderr
