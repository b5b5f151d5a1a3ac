"""The typed contract between checks and the snapshot (checks/base.py `FACT_TYPES`, in the manner
of node_exporter's `Collector.Update`): every fact is a `NodeSnapshot` attribute of the same
name and type, every fact must be given (no defaults), and the runner carries each one into the
snapshot."""

import dataclasses
import typing

import pytest

from gpuslo.exporter.answers import keep_facts, results_of, with_facts
from gpuslo.exporter.checks.base import (
    FACT_TYPES,
    CheckOutput,
    InventoryFacts,
    KernelLogFacts,
    NetworkFacts,
    ProbeFacts,
    UnrecognisedFacts,
)
from gpuslo.exporter.snapshot import GpuInfo, NodeSnapshot
from gpuslo.verdict import NODE_SCOPE, CheckResult

GPU = GpuInfo("0", "GPU-a", "00000000:00:06.0", "H200", "hopper")
EVERY = (
    InventoryFacts((GPU,), driver_version="580.159.04", cuda_version="13.0"),
    KernelLogFacts({("00000000:00:06.0", "79", "fatal"): 2}, {("sw0", "22013", "benign"): 1}, 7),
    NetworkFacts({"efa": 31, "infiniband": 0}, {"efa": 32}),
    ProbeFacts({("GPU-a", "busy"): 3}),
    UnrecognisedFacts({"xid": 2, "fabricmanager": 1}),
)


def _hints(cls) -> dict[str, object]:
    return typing.get_type_hints(cls, vars(__import__(cls.__module__, fromlist=["_"])))


@pytest.mark.parametrize("facts", FACT_TYPES, ids=lambda t: t.__name__)
def test_every_fact_is_a_snapshot_attribute_of_its_type_and_has_no_default(facts):
    snapshot = _hints(NodeSnapshot)
    for field in dataclasses.fields(facts):
        assert field.name in snapshot, f"{facts.__name__}.{field.name} is no NodeSnapshot field"
        wanted = snapshot[field.name]
        assert _hints(facts)[field.name] in (wanted, wanted | None), field.name
        assert field.default is dataclasses.MISSING, f"{field.name} must be given by the check"
        assert field.default_factory is dataclasses.MISSING, field.name


def test_a_fact_a_check_forgets_fails_where_the_check_builds_it():
    with pytest.raises(TypeError):
        KernelLogFacts({}, {})  # kernel_log_records_lost forgotten
    with pytest.raises(TypeError):
        InventoryFacts((GPU,))  # the versions forgotten: None must be said, not implied


def test_the_snapshot_reads_every_fact():
    # one of every kind: a kind left out here was once never carried (UnrecognisedFacts, so
    # gpuslo_unrecognised_messages_total never left the checks)
    assert {type(facts) for facts in EVERY} == set(FACT_TYPES)
    snapshot = with_facts(NodeSnapshot("n1"), *EVERY)
    for facts in EVERY:
        for field in dataclasses.fields(facts):
            assert getattr(snapshot, field.name) == getattr(facts, field.name), field.name
    assert snapshot != NodeSnapshot("n1")


def test_an_inventory_read_from_the_bus_alone_keeps_the_last_versions():
    kept: dict = {}
    keep_facts(kept, EVERY[0])
    keep_facts(kept, InventoryFacts((), driver_version=None, cuda_version=None))
    snapshot = with_facts(NodeSnapshot("n1"), *kept.values())
    assert (snapshot.gpus, snapshot.driver_version, snapshot.cuda_version) == (
        (), "580.159.04", "13.0")
    fresh = with_facts(NodeSnapshot("n1"), InventoryFacts((GPU,), None, None))
    assert (fresh.driver_version, fresh.cuda_version) == ("", "")


def test_facts_of_another_kind_are_a_tool_error_not_a_silent_default():
    ok = CheckResult(check="xid", scope=NODE_SCOPE, status="ok")
    kept: dict = {}
    results = results_of("xid", "ok", CheckOutput([ok], {"xid_events": {}}), kept)
    assert [(r.status, r.reason) for r in results] == [("unknown", "tool_error")] and not kept
    assert results_of("xid", "ok", CheckOutput([ok], EVERY[1]), kept) == [ok]
    assert kept == {KernelLogFacts: EVERY[1]}
