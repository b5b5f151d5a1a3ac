"""Rules for many clusters, one SLO: `gpuslo rules --split per-cluster,global --out DIR`.

A Prometheus adds its `external_labels` (`cluster: ...`) only to what leaves it, so the rules
come in two parts (DESIGN.md §6):

- **per-cluster**, loaded by each cluster's Prometheus: today's recording and alerting rules
  (`gpuslo.alerts.sli`, `gpuslo.alerts.rules`), aggregated without `cluster`, in one file, with
  today's promtool tests pointed at it; and an example configuration that sets
  `external_labels: {cluster: ...}` and remote-writes to the global store;
- **global**, loaded by the global store's ruler (Thanos or Mimir ruler, or vmalert over
  VictoriaMetrics): `gpuslo.alerts.global_rules`, with its promtool tests on series that carry
  `cluster` (`gpuslo.alerts.global_tests`).

Files (deterministic; `REGENERATE` rebuilds the committed copy in deploy/prometheus/multi-cluster):
  gpuslo-cluster.rules.yml        per-cluster recording + alerting rules
  gpuslo-cluster-slo_test.yml     promtool tests (burn rates, SLIs, recorded values)
  gpuslo-cluster-alerts_test.yml  promtool tests (direct alerts)
  gpuslo-cluster-fleet_test.yml   promtool tests (provisioned inventory)
  prometheus-cluster.yml          example configuration of one cluster's Prometheus
  gpuslo-global.rules.yml         global recording + alerting rules
  gpuslo-global_test.yml          promtool tests of the global rules
With a `serving:` section in the spec (newcomer 7 F3: it was dropped without a word), the
per-cluster part also carries today's serving files (`gpuslo-serving.rules.yml`, its promtool
tests; each cluster's Prometheus records and alerts per replica, and the recorded series reach
the global store with `cluster`, where the serving dashboard and `report --prometheus` read
them), and the global file a group that sums them by cluster and over the fleet
(`serving_global_groups`).
Check with `promtool check rules *.rules.yml` and, from DIR, `promtool test rules *_test.yml`.
"""

from __future__ import annotations

from gpuslo.alerts import (
    global_rules,
    global_tests,
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
from gpuslo.alerts.generate import spec_summary
from gpuslo.errors import UsageError
from gpuslo.slo_spec import SloSpec

PER_CLUSTER, GLOBAL = "per-cluster", "global"
PARTS = (PER_CLUSTER, GLOBAL)
REGENERATE = "gpuslo rules --split per-cluster,global --out deploy/prometheus/multi-cluster"
CLUSTER_RULES = "gpuslo-cluster.rules.yml"
GLOBAL_RULES = global_tests.RULE_FILE
# The example's placeholders: each cluster sets its own name; the URL is VictoriaMetrics'
# remote-write endpoint (Thanos Receive: /api/v1/receive; Mimir: /api/v1/push).
EXAMPLE_CLUSTER = "cluster-a"
EXAMPLE_REMOTE_WRITE = "http://victoria-metrics:8428/api/v1/write"


def parse_parts(text: str | None) -> tuple[str, ...]:
    """The parts named in `--split` ("per-cluster,global"), in PARTS order; () for None (the
    single-Prometheus files). Raises UsageError naming an unknown part."""
    if text is None:
        return ()
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in chosen if part not in PARTS]
    if unknown or not chosen:
        raise UsageError(f"--split: unknown {', '.join(unknown) or '(empty)'}; choose from "
                         f"{', '.join(PARTS)}")
    return tuple(part for part in PARTS if part in chosen)


def cluster_config(spec: SloSpec) -> dict:
    """One cluster's Prometheus: today's scrape jobs, the per-cluster rules, its name as an
    external label and remote write of everything to the global store (the report reads the
    raw series there too)."""
    config = scrape.prometheus_config(
        spec, [CLUSTER_RULES] + ([serving.RULE_FILE] if spec.serving else []))
    config["global"]["external_labels"] = {"cluster": EXAMPLE_CLUSTER}
    config["remote_write"] = [{"url": EXAMPLE_REMOTE_WRITE}]
    return config


def _retarget(document: dict) -> dict:
    """A promtool test document of the single-Prometheus files, pointed at CLUSTER_RULES."""
    return {**document, "rule_files": [CLUSTER_RULES]}


def per_cluster_files(spec: SloSpec) -> dict[str, str]:
    """File name -> YAML text of the per-cluster part. Pure."""
    summary = spec_summary(spec)
    head = render.header(REGENERATE, "per-cluster recording and alerting rules (load them in "
                                     "every cluster's Prometheus)", summary)
    unreachable = rules.unreachable_pairs(spec)
    skipped = ("# Burn-rate window pairs left out (factor x error budget >= 1, cannot fire): "
               + "; ".join(unreachable) + "\n") if unreachable else ""
    tests = {
        "gpuslo-cluster-slo_test.yml": tests_gen.slo_test_file(spec),
        "gpuslo-cluster-alerts_test.yml": tests_direct.alerts_test_file(spec),
        "gpuslo-cluster-fleet_test.yml": inventory_tests.fleet_test_file(spec),
    }
    test_head = render.header(REGENERATE, "promtool tests of the per-cluster rules", summary)
    files = {CLUSTER_RULES: render.dump_yaml(
        {"groups": sli.recording_groups(spec) + rules.alert_groups(spec)}, head + skipped)}
    files |= {name: render.dump_yaml(_retarget(doc), test_head) for name, doc in tests.items()}
    files["prometheus-cluster.yml"] = render.dump_yaml(
        cluster_config(spec),
        render.header(REGENERATE, "example configuration of one cluster's Prometheus (set "
                                  "external_labels.cluster and the remote_write url)", summary))
    if spec.serving:  # today's serving files, unchanged: they hold no `cluster` either
        files[serving.RULE_FILE] = render.dump_yaml(
            {"groups": serving.groups(spec)},
            render.header(REGENERATE, "per-cluster serving rules", summary))
        files[serving.TEST_FILE] = render.dump_yaml(
            serving_tests.test_file(spec),
            render.header(REGENERATE, "promtool tests of the serving rules", summary))
    return files


def serving_global_groups(spec: SloSpec) -> list[dict]:
    """The global serving group (none without a `serving:` section): per SLI (ttft, itl) and
    window, `gpuslo_cluster:serving_<sli>:ratio_rate<w>` (by cluster) and
    `gpuslo_fleet:serving_<sli>:ratio_rate<w>`, each the sum of the per-cluster recorded good
    rates over the sum of their totals (never an average of ratios), capped at 1."""
    if not spec.serving:
        return []
    rules_ = []
    for level, by in ((global_rules.CLUSTER, "sum by (cluster)"), (global_rules.FLEET, "sum")):
        for sli_ in serving.SLIS:
            for w in spec.sli_windows:
                good, total = f"gpuslo:{sli_}_good:rate{w}", f"gpuslo:{sli_}_total:rate{w}"
                rules_.append({"record": f"{level}:{sli_}:ratio_rate{w}",
                               "expr": f"clamp_max({by} ({good}) / ({by} ({total}) > 0), 1)"})
    return [{"name": "gpuslo-global-serving", "rules": rules_}]


def global_files(spec: SloSpec) -> dict[str, str]:
    """File name -> YAML text of the global part. Pure."""
    summary = spec_summary(spec)
    groups = (global_rules.recording_groups(spec) + serving_global_groups(spec)
              + global_rules.alert_groups(spec))
    return {
        GLOBAL_RULES: render.dump_yaml(
            {"groups": groups},
            render.header(REGENERATE, "global recording and alerting rules (load them in the "
                                      "global store's ruler: Thanos, Mimir or vmalert)", summary)),
        "gpuslo-global_test.yml": render.dump_yaml(
            global_tests.global_test_file(spec),
            render.header(REGENERATE, "promtool tests of the global rules", summary)),
    }


def build_split_files(spec: SloSpec, parts: tuple[str, ...]) -> dict[str, str]:
    """File name -> YAML text of the chosen parts (PARTS). Pure."""
    files: dict[str, str] = {}
    if PER_CLUSTER in parts:
        files |= per_cluster_files(spec)
    if GLOBAL in parts:
        files |= global_files(spec)
    return files
