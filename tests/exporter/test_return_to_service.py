"""The return-to-service gate's pure rules, as timelines: one GPU, check cycles 30 s apart, what
its checks reported and what happened to the node (boot id, driver load, admin resume)."""

from __future__ import annotations

import pytest

from gpuslo.errors import ConfigError
from gpuslo.exporter.policy.return_to_service import (
    FAILED,
    HELD,
    VALIDATING,
    Marks,
    ValidatorOutcome,
    answered_checks,
    gate_results,
    load_gate_policy,
    step_faults,
    step_validation,
)
from gpuslo.verdict import CheckResult, gpu_verdicts

GPU = "GPU-0"
POLICY = load_gate_policy()
BOOT_A, BOOT_B = Marks("boot-a", 5.1), Marks("boot-b", 4.9)


def xid79():
    return CheckResult("xid", GPU, "fail", "fallen_off_bus", action="reset_gpu", gpu="0",
                       message="Xid 79 (fatal): GPU has fallen off the bus.")


def ok(check):
    return CheckResult(check, "node", "ok")


def cycle(gate, results, marks, t):
    reported = [r for r in results if r.status == "fail" and r.scope == GPU]
    return step_faults(gate, reported, answered_checks(results, GPU), marks, t, POLICY)


def verdict(gate, results, t):
    reported = {GPU: [r for r in results if r.status == "fail" and r.scope == GPU]}
    gated = gate_results({GPU: gate} if gate else {}, reported, {GPU: "0"}, POLICY, t)
    return gpu_verdicts(results + gated, [GPU])[GPU], gated


PROBE_PASS = [ValidatorOutcome("probe", "pass", "correct; bf16 779 TFLOPS")]
PROBE_SLOW = [ValidatorOutcome("probe", "fail", "bf16 316 TFLOPS below 545")]
NO_VALIDATOR = [ValidatorOutcome("probe", "unavailable", "PyTorch not installed"),
                ValidatorOutcome("dcgm_diag", "unavailable", "dcgmi not installed")]


def test_fault_reboot_validating_probe_passes_healthy():
    gate = cycle(None, [xid79()], BOOT_A, 0)  # t=0 Xid 79
    assert gate.phase == HELD and verdict(gate, [xid79()], 0)[0] == "unhealthy"
    gate = cycle(gate, [xid79()], BOOT_A, 30)  # t=30 still there
    assert gate.phase == HELD and gate.since == 0
    after = [ok("xid")]  # t=60 after a reboot the xid check reads a clean boot
    gate = cycle(gate, after, BOOT_B, 60)
    assert (gate.phase, gate.cleared_by, gate.since) == (VALIDATING, "reboot", 60)
    state, gated = verdict(gate, after, 60)
    assert state == "validating"
    assert (gated[0].reason, gated[0].layer) == ("validation", "platform")
    assert gated[0].message == "validating: fallen_off_bus cleared (reboot)"
    step = step_validation(gate, PROBE_PASS, BOOT_B, 60, POLICY)
    assert (step.gate, step.ended) == (None, "passed")
    assert verdict(None, after, 60)[0] == "healthy"


def test_the_gate_fails_after_max_tries_and_reopens_on_the_next_repair():
    gate = cycle(cycle(None, [xid79()], BOOT_A, 0), [ok("xid")], BOOT_B, 30)
    for t, tries in ((30, 1), (60, 2)):
        step = step_validation(gate, PROBE_SLOW, BOOT_B, t, POLICY)
        gate = step.gate
        assert (gate.phase, gate.tries, step.ended) == (VALIDATING, tries, "")
    assert verdict(gate, [ok("xid")], 60)[1][0].message == (
        "validating: fallen_off_bus cleared (reboot); try 2/3: probe: bf16 316 TFLOPS below 545")
    step = step_validation(gate, PROBE_SLOW, BOOT_B, 90, POLICY)  # the third try: 3 of 3
    gate = step.gate
    assert (gate.phase, step.ended) == (FAILED, "failed")
    state, gated = verdict(gate, [ok("xid")], 90)
    assert state == "unhealthy"
    assert (gated[0].reason, gated[0].layer, gated[0].action) == (
        "validation_failed", "node", "drain_and_reset")
    assert gated[0].message == (
        "return-to-service gate failed after 3 tries: probe: bf16 316 TFLOPS below 545")
    assert cycle(gate, [ok("xid")], BOOT_B, 120) == gate  # nothing new: still failed
    reloaded = Marks("boot-b", 700.0)  # the driver loaded again at uptime 700 s
    gate = cycle(gate, [ok("xid")], reloaded, 150)
    assert (gate.phase, gate.tries, gate.cleared_by) == (VALIDATING, 0, "driver reload")


def test_a_fatal_xid_that_scrolls_away_without_a_repair_stays_unhealthy():
    gate = cycle(None, [xid79()], BOOT_A, 0)
    gate = cycle(gate, [ok("xid")], BOOT_A, 30)  # dmesg overwritten: gone, same boot
    assert gate.phase == HELD
    state, gated = verdict(gate, [ok("xid")], 30)
    assert state == "unhealthy" and gated[0].reason == "fallen_off_bus"
    assert gated[0].message == ("xid fallen_off_bus not reported now but not cleared: waiting "
                                "for reboot or driver reload or admin resume")


def test_an_admin_resume_clears_a_fatal_xid():
    gate = cycle(None, [xid79()], BOOT_A, 0)
    gate = cycle(gate, [ok("xid")], Marks("boot-a", 5.1, resumes=1), 30)
    assert (gate.phase, gate.cleared_by) == (VALIDATING, "admin resume")


def test_row_remap_pending_clears_when_nvml_no_longer_reports_it():
    pending = CheckResult("gpu_memory", GPU, "fail", "row_remap_pending", gpu="0")
    gate = cycle(None, [pending], BOOT_A, 0)
    gate = cycle(gate, [CheckResult("gpu_memory", GPU, "ok")], BOOT_A, 30)
    assert (gate.phase, gate.cleared_by) == (VALIDATING, "no longer reported")


def test_a_check_that_did_not_answer_clears_nothing():
    pending = CheckResult("gpu_memory", GPU, "fail", "row_remap_pending", gpu="0")
    gate = cycle(None, [pending], BOOT_A, 0)
    timed_out = CheckResult("gpu_memory", "node", "unknown", "check_timeout")
    assert cycle(gate, [timed_out], BOOT_A, 30).phase == HELD
    assert cycle(gate, [ok("xid")], BOOT_A, 30).phase == HELD  # gpu_memory did not run at all


def test_a_new_fault_while_validating_holds_it_again():
    gate = cycle(cycle(None, [xid79()], BOOT_A, 0), [ok("xid")], BOOT_B, 30)
    pending = CheckResult("gpu_memory", GPU, "fail", "row_remap_pending", gpu="0")
    gate = cycle(gate, [ok("xid"), pending], BOOT_B, 60)
    assert (gate.phase, gate.since) == (HELD, 60)


def test_no_validator_available_holds_down_n_clean_cycles_never_forever():
    gate = cycle(cycle(None, [xid79()], BOOT_A, 0), [ok("xid")], BOOT_B, 30)
    for t, cycles in ((30, 1), (60, 2)):
        step = step_validation(gate, NO_VALIDATOR, BOOT_B, t, POLICY)
        gate = step.gate
        assert (gate.phase, gate.clean_cycles) == (VALIDATING, cycles)
    assert verdict(gate, [ok("xid")], 60)[1][0].message.endswith(
        "gate_unavailable (probe: PyTorch not installed; dcgm_diag: dcgmi not installed): "
        "hold-down 2/3")
    step = step_validation(gate, NO_VALIDATOR, BOOT_B, 90, POLICY)
    assert (step.gate, step.ended) == (None, "held_down")


def test_busy_or_timed_out_validators_spend_a_try():
    gate = cycle(cycle(None, [xid79()], BOOT_A, 0), [ok("xid")], BOOT_B, 30)
    busy = [ValidatorOutcome("probe", "inconclusive", "busy: speed not judged"),
            ValidatorOutcome("dcgm_diag", "unavailable", "dcgmi not installed")]
    assert step_validation(gate, busy, BOOT_B, 30, POLICY).gate.tries == 1


def test_policy_overlay_and_its_errors():
    policy = load_gate_policy({"validators": ["probe"], "max_tries": 5,
                               "clears": {"probe_failed": ["reboot"]}})
    assert policy.validators == ("probe",) and policy.max_tries == 5
    assert policy.clears_for("probe_failed") == ("reboot",)
    assert policy.clears_for("xid_fatal") == ("reboot", "driver_reload", "admin_resume")
    assert policy.clears_for("thermal_slowdown") == ("check_ok", "admin_resume")
    with pytest.raises(ConfigError) as error:
        load_gate_policy({"validators": ["nccl"], "max_tries": 0, "clears": {"xid": ["prayer"]},
                          "colour": 1})
    text = str(error.value)
    for words in ("node config: validation", "colour: unknown field", "validators:",
                  "max_tries:", "clears.xid: not a reason", "clears.xid: expected a list"):
        assert words in text, text
