"""Every manifest in deploy/kubernetes loads into the `kubernetes` client's models with no field
lost on the way: a misspelt field name is dropped by the model and fails the round trip; and
kustomization.yaml lists every manifest, namespace first, so `kubectl apply -k` applies it all in
one go (`kubectl apply -f` of the directory took configmap.yaml before namespace.yaml)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gpuslo.slo_spec import SloSpec, load_spec
from tests.conftest import REPO

kubernetes = pytest.importorskip("kubernetes")

KUSTOMIZATION = REPO / "deploy" / "kubernetes" / "kustomization.yaml"
MANIFESTS = sorted(p for p in KUSTOMIZATION.parent.glob("*.yaml") if p != KUSTOMIZATION)
# Custom resources of the Prometheus Operator (monitoring.coreos.com/v1) are not in the client's
# models; their spec fields are checked against the CRD's documented fields instead.
OPERATOR_SPEC_FIELDS = {
    "PodMonitor": {
        "selector",
        "podMetricsEndpoints",
        "namespaceSelector",
        "jobLabel",
        "podTargetLabels",
    },
    "PrometheusRule": {"groups"},
}
OPERATOR_ENDPOINT_FIELDS = {
    "port",
    "path",
    "interval",
    "scrapeTimeout",
    "scheme",
    "relabelings",
    "metricRelabelings",
    "honorLabels",
    "tlsConfig",
}


def _documents() -> list[tuple[Path, dict]]:
    docs = []
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((path, doc))
    return docs


def _strip_empty(value):
    if isinstance(value, dict):
        return {k: _strip_empty(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_empty(v) for v in value]
    return value


def test_manifests_exist():
    kinds = {doc["kind"] for _, doc in _documents()}
    assert {"DaemonSet", "Service", "PodMonitor", "PrometheusRule", "ConfigMap"} <= kinds


@pytest.mark.parametrize(
    "path,doc", _documents(), ids=lambda v: v.name if isinstance(v, Path) else v.get("kind")
)
def test_manifest_round_trips_through_client_models(path, doc):
    api = kubernetes.client.ApiClient()
    kind = doc["kind"]
    if kind in OPERATOR_SPEC_FIELDS:
        meta = api._ApiClient__deserialize(doc["metadata"], "V1ObjectMeta")
        assert _strip_empty(api.sanitize_for_serialization(meta)) == doc["metadata"]
        assert set(doc["spec"]) <= OPERATOR_SPEC_FIELDS[kind], f"{path}: unknown spec field"
        for endpoint in doc["spec"].get("podMetricsEndpoints", []):
            assert set(endpoint) <= OPERATOR_ENDPOINT_FIELDS, f"{path}: unknown endpoint field"
        return
    version = doc["apiVersion"].split("/")[-1].capitalize()
    model = f"{version}{kind}"
    loaded = api._ApiClient__deserialize(doc, model)
    assert _strip_empty(api.sanitize_for_serialization(loaded)) == doc, (
        f"{path}: a field was dropped"
    )


def test_daemonset_is_least_privilege_with_read_only_host_mounts():
    daemonset = next(doc for _, doc in _documents() if doc["kind"] == "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    container = pod["containers"][0]
    security = container["securityContext"]
    assert security.get("privileged") is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert security["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    for host_path in ("/host/sys", "/host/proc", "/dev/kmsg", "/var/lib/kubelet/pod-resources",
                      "/var/log/pods"):
        assert mounts[host_path]["readOnly"] is True
    args = container["args"]
    assert "--pod-resources-kubelet-socket=/var/lib/kubelet/pod-resources/kubelet.sock" in args
    assert "--job-log=/var/log/pods/*/*/*.log" in args
    assert container["resources"]["limits"]["memory"]
    assert container["livenessProbe"]


def test_prometheus_rule_wraps_the_generated_rules():
    rule = next(doc for _, doc in _documents() if doc["kind"] == "PrometheusRule")
    generated = []
    for path in sorted((REPO / "deploy" / "prometheus").glob("*.rules.yml")):
        generated += yaml.safe_load(path.read_text())["groups"]
    assert rule["spec"]["groups"] == generated


def test_generated_manifests_have_not_drifted():
    from gpuslo.deploy.kubernetes import render

    for path, text in render(REPO / "deploy").items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} drifted: python -m gpuslo.deploy.kubernetes deploy"
        )


def test_node_config_in_the_config_map_is_valid():
    from gpuslo.exporter.node_config import parse_node_config

    config_map = next(
        doc for _, doc in _documents() if doc["metadata"]["name"] == "gpuslo-node-config"
    )
    parse_node_config(config_map["data"]["node.yaml"], "configmap.yaml")


def test_slo_spec_in_the_config_map_is_valid_and_the_exporter_reads_it(tmp_path):
    config_map = next(
        doc for _, doc in _documents() if doc["metadata"]["name"] == "gpuslo-node-config"
    )
    (tmp_path / "slo.yaml").write_text(config_map["data"]["slo.yaml"])
    assert load_spec(tmp_path / "slo.yaml").slowdown_rule() == SloSpec().slowdown_rule()
    daemonset = next(doc for _, doc in _documents() if doc["kind"] == "DaemonSet")
    args = daemonset["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--slo=/etc/gpuslo/slo.yaml" in args


def test_kustomization_lists_every_manifest_namespace_first():
    kustomization = yaml.safe_load(KUSTOMIZATION.read_text())
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert kustomization["kind"] == "Kustomization"
    resources = kustomization["resources"]
    assert sorted(resources) == sorted(p.name for p in MANIFESTS)
    assert len(resources) == len(set(resources))
    first = next(yaml.safe_load_all((KUSTOMIZATION.parent / resources[0]).read_text()))
    assert first["kind"] == "Namespace"
    assert "namespace" not in kustomization  # the NPD ConfigMap stays in kube-system


def test_kubectl_kustomize_renders_the_namespace_before_what_lives_in_it():
    kubectl = shutil.which("kubectl")
    if not kubectl:
        pytest.skip("kubectl not installed")
    done = subprocess.run(
        [kubectl, "kustomize", str(KUSTOMIZATION.parent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    kinds = [d["kind"] for d in docs]
    assert kinds[0] == "Namespace"
    assert sorted(kinds) == sorted(doc["kind"] for _, doc in _documents())
