"""Issue 12: every shape error in a policy overlay, node config, SLO spec or web config is a
ConfigError naming the file and field (exit 2), never a traceback, and a loaded policy never
breaks the xid check later. Exhaustive over the packaged policy's fields, fuzzed elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ConfigError
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.node_config import parse_node_config
from gpuslo.exporter.policy.classify import classify_events
from gpuslo.exporter.policy.xid import packaged_policy, policy_from_mapping
from gpuslo.exporter.web.config import parse_web_config
from gpuslo.slo_spec import load_spec, spec_from_mapping

EVENTS = parse_kernel_log((CORPUS / "cases" / "026_xid48-xid171-xid63-xid154-drain-and-reset-"
                           "journal.txt").read_text())
HOSTILE = (None, [], "x", 1, -1, {}, [None], {"a": None}, True, 1e308)


def _paths(value, prefix=()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from _paths(inner, (*prefix, key))


def _overlay(path: tuple, value):
    for key in reversed(path):
        value = {key: value}
    return value


POLICY_PATHS = sorted({p[:3] for p in _paths(packaged_policy().data)}, key=str)


@pytest.mark.parametrize("path", POLICY_PATHS, ids=[".".join(map(str, p)) for p in POLICY_PATHS])
def test_every_policy_field_with_a_hostile_value_is_a_config_error_or_works(path: tuple) -> None:
    base = packaged_policy()
    for value in HOSTILE:
        try:
            policy = policy_from_mapping(base.data, "packaged", _overlay(path, value), "o.yaml")
        except ConfigError as error:
            assert "o.yaml" in str(error)
            continue
        for family in (None, "hopper", "blackwell", "ampere"):  # the check uses it every run
            classify_events(EVENTS, policy, family)
        assert policy.escalations is not None and policy.boot_noise_window_s >= 0


def test_families_null_is_refused_at_start(tmp_path: Path) -> None:
    """`xid: {families: null}` was accepted and left the xid check unknown forever."""
    overlay = tmp_path / "o.yaml"
    overlay.write_text("xid: {families: null}\n")
    done = subprocess.run([sys.executable, "-m", "gpuslo", "check", "--check", "xid",
                           "--policy", str(overlay), "--state-dir", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "o.yaml" in done.stderr and "xid.families" in done.stderr


_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
_values = st.recursive(_scalars,
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


def _mapping(keys: list[str]):
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=5), _values, max_size=5)


NODE_KEYS = ["node", "instance_type", "expect_gpus", "expect_network_devices", "expect_nvlinks",
             "dcgm_url", "kernel_log", "policy", "state_dir", "check_timeout_s", "interval_s",
             "checks"]
SPEC_KEYS = ["objectives", "period_days", "week", "job_stall_factor", "price_per_gpu_hour",
             "exporter_job"]
WEB_KEYS = ["tls_server_config", "http_server_config", "basic_auth_users"]


@settings(max_examples=200, deadline=None)
@given(_mapping(NODE_KEYS) | _values)
def test_fuzz_node_config_raises_only_config_errors(data) -> None:
    try:
        parse_node_config(yaml.safe_dump(data), "node.yaml")
    except ConfigError as error:
        assert "node.yaml" in str(error)


@settings(max_examples=200, deadline=None)
@given(_mapping(SPEC_KEYS) | _values)
def test_fuzz_slo_spec_raises_only_config_errors(data) -> None:
    try:
        spec_from_mapping(data, "spec.yaml")
    except ConfigError as error:
        assert "spec.yaml" in str(error)


@settings(max_examples=200, deadline=None)
@given(_mapping(WEB_KEYS) | _values)
def test_fuzz_web_config_raises_only_config_errors(data) -> None:
    try:
        parse_web_config(data, "web.yml")
    except ConfigError as error:
        assert "web.yml" in str(error)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["xid", "boot_noise", "escalation", "sxid", "nvlink5",
                                        "unknown_code", "recovery_actions"]), _values, max_size=3))
def test_fuzz_policy_overlay_raises_only_config_errors(overlay) -> None:
    try:
        policy = policy_from_mapping(packaged_policy().data, "packaged", overlay, "o.yaml")
    except ConfigError:
        return
    classify_events(EVENTS, policy, "hopper")


def test_an_empty_slo_spec_file_is_an_error(tmp_path: Path) -> None:
    spec = tmp_path / "slo.yaml"
    spec.write_text("# nothing here yet\n")
    with pytest.raises(ConfigError, match="empty SLO spec"):
        load_spec(spec)
    done = subprocess.run([sys.executable, "-m", "gpuslo", "rules", "--slo", str(spec), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "empty SLO spec" in done.stderr
