"""An example Prometheus configuration that loads the generated rules and scrapes the exporters
the way the rules expect (`promtool check config` passes on it).

Two things the rules depend on:
- the scrape job is named `SloSpec.exporter_job` (GpusloExporterDown reads `up{job=...}`);
- `honor_labels: true`, because the exporter's job metrics carry the *training* job in a label
  named `job` (DESIGN.md §4). Without it Prometheus renames that label to `exported_job` and the
  goodput, step-time and stall rules would group every job under the scrape job's name.
Targets come from file-based service discovery (`targets/*.json`, `host:9835` entries with a
`node` label naming the Kubernetes node), which every Prometheus build supports — Debian's
package has no Kubernetes discovery; with an upstream build, swap in `kubernetes_sd_configs`.
kube-state-metrics is scraped for `kube_node_spec_unschedulable`.
"""

from __future__ import annotations

from gpuslo.slo_spec import SloSpec

EXPORTER_PORT = 9835  # gpuslo's default listen port (gpuslo/exporter/server.py)


def prometheus_config(spec: SloSpec, rule_files: list[str]) -> dict:
    """The example configuration as a YAML-ready dict."""
    return {
        "global": {"scrape_interval": "30s", "evaluation_interval": "30s"},
        "rule_files": sorted(rule_files),
        "scrape_configs": [
            {
                "job_name": spec.exporter_job,
                "honor_labels": True,
                "file_sd_configs": [{"files": [f"targets/{spec.exporter_job}-*.json"]}],
            },
            {
                "job_name": "kube-state-metrics",
                "file_sd_configs": [{"files": ["targets/kube-state-metrics-*.json"]}],
            },
        ],
    }
