"""evaluate_gpu's rules on hand-built GpuStatus records: one rule per test, the healthy H200 as
the baseline (its values from shared/fixtures/h200/nvidia-smi-q.txt)."""

from __future__ import annotations

import dataclasses

import pytest

from gpuslo import names, signal_names
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.policy.gpu import GpuProblem, evaluate_gpu, recovery_action_of

HEALTHY_H200 = GpuStatus(
    index="0",
    uuid="GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5",
    pci_bus_id="00000000:00:06.0",
    model="NVIDIA H200",
    family="hopper",
    ecc_mode="Enabled",
    ecc_sbe_volatile=0,
    ecc_dbe_volatile=0,
    ecc_dbe_aggregate=0,
    remapped_rows_pending=False,
    remapped_rows_failure=False,
    remapped_rows_uncorrectable=0,
    recovery_action="None",
    hw_thermal_slowdown=False,
    hw_slowdown=False,
    temperature_c=34.0,
    pcie_gen_current=5,
    pcie_gen_max=5,
    pcie_width_current=16,
    pcie_width_max=16,
    fabric_state="N/A",
    fabric_status="N/A",
    accessible=True,
)


def one(status: GpuStatus) -> GpuProblem:
    problems = evaluate_gpu(status)
    assert len(problems) == 1, problems
    return problems[0]


def test_healthy_h200_has_no_problem():
    assert evaluate_gpu(HEALTHY_H200) == []


def test_nothing_reported_is_no_problem_here():
    # evaluate_gpu judges what was reported; callers turn missing fields into unknown.
    assert evaluate_gpu(GpuStatus()) == []


def test_volatile_dbe_is_fatal():
    p = one(dataclasses.replace(HEALTHY_H200, ecc_dbe_volatile=2))
    assert (p.signal, p.class_, p.reason, p.count) == (
        "ecc_uncorrectable",
        "fatal",
        "ecc_uncorrectable",
        2,
    )


def test_aggregate_dbe_alone_is_history_not_a_problem():
    assert evaluate_gpu(dataclasses.replace(HEALTHY_H200, ecc_dbe_aggregate=3)) == []


def test_row_remap_pending_asks_drain_and_reset():
    # After correctable errors only (the H200's uncorrectable count is 0): reset at the next
    # drain, usable until then; with an uncorrectable remapped row: fatal (test_row_remap.py).
    p = one(dataclasses.replace(HEALTHY_H200, remapped_rows_pending=True))
    assert (p.signal, p.class_, p.action) == ("row_remap_pending", "warn", "drain_and_reset")
    after_dbe = dict(remapped_rows_pending=True, remapped_rows_uncorrectable=1)
    p = one(dataclasses.replace(HEALTHY_H200, **after_dbe))
    assert (p.signal, p.class_, p.action) == ("row_remap_pending", "fatal", "drain_and_reset")


def test_row_remap_failure_asks_support():
    p = one(dataclasses.replace(HEALTHY_H200, remapped_rows_failure=True))
    assert (p.signal, p.class_, p.action) == ("row_remap_failure", "fatal", "contact_support")


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("Reset", "reset_gpu"),
        ("Drain_and_Reset", "drain_and_reset"),
        ("Drain P2P", "drain_and_reset"),
        ("Reboot", "reboot_node"),
        ("NVML_GPU_RECOVERY_ACTION_NODE_REBOOT", "reboot_node"),
        ("Something New", "drain_and_reset"),
    ],
)
def test_recovery_action(text, action):
    p = one(dataclasses.replace(HEALTHY_H200, recovery_action=text))
    assert (p.signal, p.class_, p.reason, p.action) == (
        "recovery_action",
        "fatal",
        "recovery_action",
        action,
    )


def test_recovery_action_none_and_absent():
    assert recovery_action_of("None") == names.ACTION_NONE
    assert recovery_action_of(None) is None


def test_hw_thermal_slowdown_is_fatal():
    p = one(dataclasses.replace(HEALTHY_H200, hw_thermal_slowdown=True))
    assert (p.signal, p.class_) == ("thermal_slowdown", "fatal")


def test_pcie_width_below_max_warns_but_generation_alone_does_not():
    p = one(dataclasses.replace(HEALTHY_H200, pcie_width_current=8))
    assert (p.signal, p.class_) == ("pcie_degraded", "warn")
    assert evaluate_gpu(dataclasses.replace(HEALTHY_H200, pcie_gen_current=1)) == []


def test_inactive_nvlink_names_the_links():
    p = one(dataclasses.replace(HEALTHY_H200, nvlink_states={0: True, 3: False, 5: False}))
    assert (p.signal, p.class_, p.reason, p.links) == (
        "nvlink_inactive",
        "fatal",
        "nvlink_down",
        (3, 5),
    )


def test_nvlink_error_counters_warn():
    counts = {0: {"Replay Errors": 0}, 2: {"CRC Errors": 4}}
    p = one(dataclasses.replace(HEALTHY_H200, nvlink_error_counts=counts))
    assert (p.signal, p.class_, p.links, p.count) == ("nvlink_errors", "warn", (2,), 4)


@pytest.mark.parametrize(
    ("state", "status", "health", "klass"),
    [
        ("Completed", "Insufficient Resources", None, "fatal"),
        ("In Progress", "Success", None, "fatal"),
        ("Completed", "Success", "Unhealthy", "fatal"),
        ("Completed", "Success", "Limited Capacity", "warn"),
    ],
)
def test_fabric(state, status, health, klass):
    s = dataclasses.replace(
        HEALTHY_H200, fabric_state=state, fabric_status=status, fabric_health=health
    )
    p = one(s)
    assert (p.signal, p.class_) == ("fabric_unhealthy", klass)


def test_fabric_completed_success_healthy_is_fine():
    s = dataclasses.replace(
        HEALTHY_H200, fabric_state="Completed", fabric_status="Success", fabric_health="Healthy"
    )
    assert evaluate_gpu(s) == []


def test_inaccessible_gpu_hides_everything_else():
    s = dataclasses.replace(
        HEALTHY_H200, accessible=False, error="Unknown Error", ecc_dbe_volatile=5
    )
    p = one(s)
    assert (p.signal, p.class_, p.reason) == ("gpu_inaccessible", "fatal", "gpu_inaccessible")
    assert "Unknown Error" in p.message


def test_every_problem_uses_the_vocabulary():
    worst = dataclasses.replace(
        HEALTHY_H200,
        ecc_dbe_volatile=1,
        remapped_rows_pending=True,
        remapped_rows_failure=True,
        retired_pages_pending=True,
        recovery_action="Reboot",
        hw_thermal_slowdown=True,
        pcie_width_current=4,
        nvlink_states={1: False},
        nvlink_error_counts={1: {"x errors": 1}},
        fabric_state="Not Started",
    )
    problems = evaluate_gpu(worst)
    assert len(problems) == 10
    for p in problems:
        assert p.signal in signal_names.SIGNALS and p.reason in names.REASON_LAYER
        assert p.action in names.ACTIONS and p.class_ in (names.CLASS_FATAL, names.CLASS_WARN)


def test_problem_rejects_names_outside_the_vocabulary():
    with pytest.raises(ValueError):
        GpuProblem(
            signal="made_up", class_="fatal", reason="ecc_uncorrectable", action="none", message=""
        )


def test_blackwell_memory_repair_pending_and_unrepairable_memory():
    p = one(dataclasses.replace(HEALTHY_H200, memory_repair_pending=True))
    assert (p.signal, p.class_, p.action) == ("row_remap_pending", "fatal", "drain_and_reset")
    p = one(dataclasses.replace(HEALTHY_H200, unrepairable_memory=True))
    assert (p.signal, p.class_, p.action) == ("row_remap_failure", "fatal", "contact_support")


def test_temperature_at_slowdown_threshold_warns():
    p = one(dataclasses.replace(HEALTHY_H200, temperature_c=89.0, slowdown_temperature_c=89.0))
    assert (p.signal, p.class_) == ("thermal_slowdown", "warn")
    assert (
        evaluate_gpu(
            dataclasses.replace(HEALTHY_H200, temperature_c=88.0, slowdown_temperature_c=89.0)
        )
        == []
    )


def test_lost_gpu_that_asks_for_a_reboot():
    error = (
        "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  "
        "Reboot the system to recover this GPU"
    )
    p = one(GpuStatus(pci_bus_id="00000000:3B:00.0", accessible=False, error=error))
    assert (p.signal, p.action) == ("gpu_inaccessible", "reboot_node")
