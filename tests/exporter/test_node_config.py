"""The node config file's reader: every problem is one `ConfigError` line naming the file, the
line (YAML and encoding errors) or the field; never a traceback."""

from __future__ import annotations

import pytest

from gpuslo.errors import ConfigError
from gpuslo.exporter.node_config import NodeConfig, load_node_config, parse_node_config
from gpuslo.exporter.policy.xid import load_policy


def test_a_valid_config_reads():
    config = parse_node_config(
        "expect_gpus: 8\ncheck_timeout_s: 7\nchecks: {xid: {timeout_s: 5}}\n", "n.yaml"
    )
    assert config == NodeConfig(
        expect_gpus=8, check_timeout_s=7.0, checks={"xid": {"timeout_s": 5.0}}
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("expect_gpus: 8\nchecks: [\n", "n.yaml:3: not valid YAML"),
        ("node: a\n\0\n", "n.yaml:2: not valid YAML"),
        ("node: a\n  bad: indent\n", "n.yaml:2: not valid YAML"),
    ],
)
def test_yaml_errors_are_one_line_with_the_line_number(text, where):
    with pytest.raises(ConfigError) as error:
        parse_node_config(text, "n.yaml")
    assert str(error.value).startswith(where) and "\n" not in str(error.value)


def test_a_binary_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "g.bin"
    path.write_bytes(b"node: a\n\xd1\xff\xfe garbage")
    with pytest.raises(ConfigError, match=r"g.bin:2: not UTF-8"):
        load_node_config(path)


def test_a_binary_policy_overlay_names_the_file(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_bytes(b"xid: {}\n\x01\x02")
    with pytest.raises(ConfigError) as error:
        load_policy(str(path))
    assert str(error.value).startswith(f"{path}:2: not valid YAML") and "\n" not in str(error.value)
