"""The Prometheus recording and alerting rules for an SLO spec and their promtool unit tests, as
files (`gpuslo rules [--slo FILE] --out DIR`, in `gpuslo.cli.rules`, calls `generate_rules`).

Files written (deterministic; regenerate the committed copy with the command in their header):
  gpuslo-slo.rules.yml     recording rules: SLIs at every window, lost GPUs, objectives, budgets
  gpuslo-alerts.rules.yml  burn-rate and direct alerts
  gpuslo-slo_test.yml      promtool tests: burn-rate boundaries, end-to-end SLIs, recorded values
  gpuslo-alerts_test.yml   promtool tests: every direct alert firing and not firing
  gpuslo-fleet_test.yml    promtool tests: the provisioned inventory blindness cannot shrink
  prometheus.yml           example configuration: loads the rules, scrapes with honor_labels
Check them with `promtool check rules *.rules.yml` and, from DIR, `promtool test rules *_test.yml`.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.alerts import (
    inventory_tests,
    render,
    rules,
    scrape,
    serving,
    serving_tests,
    sli,
    tests_direct,
    tests_gen,
)
from gpuslo.slo_spec import SloSpec, format_number

REGENERATE = "gpuslo rules --out deploy/prometheus"


def spec_summary(spec: SloSpec) -> str:
    """One line naming the objectives and the period (goes into every generated header)."""
    objectives = ", ".join(f"{k} {format_number(v)}" for k, v in sorted(spec.objectives.items()))
    return f"objectives {objectives}; period {spec.period}; exporter job {spec.exporter_job}"


def build_files(spec: SloSpec) -> dict[str, str]:
    """File name -> YAML text of every generated file. Pure."""
    summary = spec_summary(spec)
    skipped = rules.unreachable_pairs(spec)
    note = (
        "# Burn-rate window pairs left out (factor x error budget >= 1, cannot fire): "
        + "; ".join(skipped)
        + "\n"
        if skipped
        else ""
    )
    recording = {"groups": sli.recording_groups(spec)}
    alerting = {"groups": rules.alert_groups(spec)}
    rule_files = list(tests_gen.RULE_FILES) + ([serving.RULE_FILE] if spec.serving else [])
    files = {
        tests_gen.RULE_FILES[0]: render.dump_yaml(
            recording, render.header(REGENERATE, "recording rules", summary)
        ),
        tests_gen.RULE_FILES[1]: render.dump_yaml(
            alerting, render.header(REGENERATE, "alerting rules", summary) + note
        ),
        "gpuslo-slo_test.yml": render.dump_yaml(
            tests_gen.slo_test_file(spec), render.header(REGENERATE, "promtool tests", summary)
        ),
        "gpuslo-alerts_test.yml": render.dump_yaml(
            tests_direct.alerts_test_file(spec),
            render.header(REGENERATE, "promtool tests", summary),
        ),
        "gpuslo-fleet_test.yml": render.dump_yaml(
            inventory_tests.fleet_test_file(spec),
            render.header(REGENERATE, "promtool tests", summary),
        ),
        "prometheus.yml": render.dump_yaml(
            scrape.prometheus_config(spec, rule_files),
            render.header(REGENERATE, "example Prometheus configuration", summary),
        ),
    }
    if spec.serving:  # only a spec with a `serving` section: the default files stay unchanged
        files[serving.RULE_FILE] = render.dump_yaml(
            {"groups": serving.groups(spec)}, render.header(REGENERATE, "serving rules", summary))
        files[serving.TEST_FILE] = render.dump_yaml(
            serving_tests.test_file(spec), render.header(REGENERATE, "promtool tests", summary))
    return files


def generate_rules(spec: SloSpec, out_dir: str | Path) -> list[Path]:
    """Write every file of `build_files(spec)` into `out_dir` (created if missing), all or
    nothing; returns the paths written, in name order. Raises InputError naming what could not
    be written."""
    return render.write_atomically(Path(out_dir), build_files(spec))
