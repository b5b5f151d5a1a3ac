"""The parsed copies of the packaged policy files (`gpuslo.packaged`): every copy
is current and holds what its YAML holds, type for type; a copy is read only while its header
matches the YAML's bytes, and an edited YAML is read as YAML."""

from __future__ import annotations

import shutil

import pytest

from gpuslo import packaged
from gpuslo.exporter.policy import (
    diagnostics,
    driver_messages,
    fabricmanager,
    health_event,
    hostengine,
    xid,
)

REWRITE = "python -m gpuslo.packaged"


@pytest.mark.parametrize("name", packaged.COPIED)
def test_every_copy_is_current(name):
    written = (packaged.PARSED / f"{name}.txt").read_text(encoding="utf-8")
    assert written == packaged.copy_text(name), f"gpuslo/data/parsed/{name}.txt is stale: {REWRITE}"


@pytest.mark.parametrize("name", packaged.COPIED)
def test_a_copy_reads_as_its_yaml_type_for_type(name):
    from_yaml = packaged.parse_packaged((packaged.DATA / name).read_text(encoding="utf-8"), name)
    # repr, not ==: 1 == 1.0 == True, and dict equality ignores order
    assert repr(packaged.packaged_yaml(name)) == repr(from_yaml)


def test_every_policy_file_has_a_copy():
    names = {xid.PACKAGED, driver_messages.PACKAGED, health_event.PACKAGED, hostengine.PACKAGED,
             fabricmanager.PACKAGED, diagnostics.PACKAGED}
    assert names <= set(packaged.COPIED)


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data directory holding the Xid policy and its current parsed copy."""
    (tmp_path / "parsed").mkdir()
    shutil.copy(packaged.DATA / "xid_policy.yaml", tmp_path / "xid_policy.yaml")
    shutil.copy(packaged.PARSED / "xid_policy.yaml.txt", tmp_path / "parsed")
    monkeypatch.setattr(packaged, "DATA", tmp_path)
    monkeypatch.setattr(packaged, "PARSED", tmp_path / "parsed")
    return tmp_path


def test_a_current_copy_is_what_is_read(data):
    copy = data / "parsed" / "xid_policy.yaml.txt"
    first = copy.read_text().partition("\n")[0]
    copy.write_text(f"{first}\n{{'read': 'from the copy'}}\n")
    assert packaged.packaged_yaml("xid_policy.yaml") == {"read": "from the copy"}


def test_an_edited_yaml_is_read_as_yaml_not_from_its_stale_copy(data):
    policy = data / "xid_policy.yaml"
    policy.write_text(policy.read_text().replace("version: 1", "version: 2", 1))
    assert packaged.packaged_yaml("xid_policy.yaml")["version"] == 2
    assert packaged.packaged_yaml("xid_policy.yaml")["xid"]["default"][79]["action"] == (
        "reboot_node"
    )


def test_a_missing_copy_falls_back_to_the_yaml(data):
    (data / "parsed" / "xid_policy.yaml.txt").unlink()
    assert packaged.packaged_yaml("xid_policy.yaml")["version"] == 1


def test_a_damaged_copy_under_a_matching_header_falls_back_to_the_yaml(data):
    copy = data / "parsed" / "xid_policy.yaml.txt"
    first = copy.read_text().partition("\n")[0]
    copy.write_text(f"{first}\n{{'cut off': [1, 2,\n")
    assert packaged.packaged_yaml("xid_policy.yaml")["version"] == 1
