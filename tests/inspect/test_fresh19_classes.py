"""One test per class of evidence the nineteenth fresh first-contact corpus batch (tests/data/
corpus/fresh19, scored 18/20 on 2026-12-07 at f55b5c6, tests/data/first_contact/
corpus_fresh19_2026-12-07.txt) found misread: the real lines (the case files), variants, and
negatives that must not be read the same way.

- 2108 (an nvidia-smi table fragment, GPU 14's fan cell `ERR!`): a fan or GPU temperature NVML
  failed to read (`ERR!`, `Unknown Error`; `N/A` is a sensor the GPU does not have) leaves the
  GPU's thermal health untold, in every nvidia-smi form (table, `-q`, `-q -x`, CSV):
  `gpu_error` of class unknown (`nvidia_smi.values.COOLING_FIELDS`). A power draw `ERR!` stays
  a warn (Azure/azhpc-diagnostics#77: transient, no action).
- 2112 (nv-hostengine lines posted without their stamps): "Cannot load NVML; DCGM will proceed
  without managing GPUs." is the host engine running blind, `source_unavailable` (unknown,
  layer observability) with or without the stamp (`dcgm_hostengine.yaml`); the NVSwitch library
  messages after it stay module warnings.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuslo.exporter.checks import hostengine as he_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.verdict import node_verdict
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of, per_model

TESTS = Path(__file__).resolve().parent.parent
H200 = TESTS.parent.parent / "shared" / "fixtures" / "h200"
HE_FIXTURES = TESTS / "fixtures" / "evidence" / "issue24"

FAN_ERR = corpus_case("fresh19", 2108)
HE_UNSTAMPED = corpus_case("fresh19", 2112)


def _h200(name: str) -> str:
    return (H200 / name).read_text()


# --- 2108: a fan or temperature NVML could not read --------------------------------------------


def test_a_fan_err_cell_leaves_that_gpus_health_unknown():
    findings, verdict = inspect(FAN_ERR)
    assert verdict == "unknown" and not fatal(findings)
    (unread,) = of(findings, "gpu_error")
    assert (unread.gpu, unread.pci, unread.class_) == ("14", "00000000:CC:00.0", "unknown")
    assert "fan" in unread.message and unread.reason == "tool_error"
    # GPU 13 (c9:00) read in full: nothing but its place in the inventory
    assert not [f for f in findings if f.pci == "00000000:C9:00.0" and f.class_ != "ok"]
    (seen,) = per_model(findings)
    assert seen.count == 2


def test_a_temperature_err_cell_is_read_the_same_way():
    text = FAN_ERR.replace("|ERR!   68C    P2", "| 30%  ERR!    P2", 1)
    findings, verdict = inspect(text)
    (unread,) = of(findings, "gpu_error")
    assert unread.class_ == "unknown" and "temperature" in unread.message and verdict == "unknown"


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("nvidia-smi-q.txt", "Fan Speed                                          : N/A",
         "Fan Speed                                          : Unknown Error"),
        ("nvidia-smi-q.txt", "GPU Current Temp                               : 34 C",
         "GPU Current Temp                               : Unknown Error"),
        ("nvidia-smi-q.xml", "<fan_speed>N/A</fan_speed>", "<fan_speed>ERR!</fan_speed>"),
    ],
)
def test_the_q_and_xml_forms_judge_an_unread_fan_or_temperature_alike(name, old, new):
    text = _h200(name)
    assert text.count(old) == 1
    findings, verdict = inspect(text.replace(old, new))
    (unread,) = of(findings, "gpu_error")
    assert unread.class_ == "unknown" and verdict == "unknown" and not fatal(findings)


def test_the_csv_form_judges_an_unread_fan_alike():
    text = (
        "index, name, pci.bus_id, fan.speed [%], temperature.gpu, "
        "ecc.errors.uncorrected.volatile.total\n"
        "0, NVIDIA RTX 4000 Ada Generation, 00000000:C9:00.0, 30 %, 33, 0\n"
        "1, NVIDIA RTX 4000 Ada Generation, 00000000:CC:00.0, [Unknown Error], 68, 0\n"
    )
    findings, verdict = inspect(text)
    (unread,) = of(findings, "gpu_error")
    assert (unread.gpu, unread.class_, verdict) == ("1", "unknown", "unknown")


def test_no_false_alarm_a_read_fan_a_passive_board_and_a_power_err():
    # negative: GPU 13's box alone (30 % fan, 33 C) is a healthy GPU
    healthy_box = "\n".join(FAN_ERR.splitlines()[:7]) + "\n"
    findings, verdict = inspect(healthy_box)
    assert verdict == "healthy" and not of(findings, "gpu_error")
    # negative: the H200's fan `N/A` (no fan of its own) in every form is no read error
    for name in ("nvidia-smi.txt", "nvidia-smi-q.txt", "nvidia-smi-q.xml"):
        findings, verdict = inspect(_h200(name))
        assert verdict == "healthy" and not of(findings, "gpu_error"), name
    # negative: a power draw `ERR!` alone stays a warn (shared case 015's line)
    power_err = "| 30%   68C    P2            ERR!"
    text = FAN_ERR.replace("|ERR!   68C    P2             99W", power_err, 1)
    findings, verdict = inspect(text)
    (unread,) = of(findings, "gpu_error")
    assert (unread.class_, verdict) == ("warn", "healthy") and "power_draw" in unread.message


# --- 2112: the host engine without NVML, stamped or not ---------------------------------------


def test_a_host_engine_that_cannot_load_nvml_is_blind_with_or_without_stamps():
    findings, verdict = inspect(HE_UNSTAMPED)
    assert verdict == "unknown" and not fatal(findings)
    (blind,) = of(findings, "source_unavailable")
    assert (blind.class_, blind.layer, blind.line) == ("unknown", "observability", 1)
    modules = of(findings, "hostengine_module_error")
    assert len(modules) == 3 and {f.class_ for f in modules} == {"warn"}
    # DCGM 4's stamped form, with the NVML return code after the sentence
    stamped = (
        "2025-11-04 09:12:01.113 ERROR [7:7] Cannot load NVML; DCGM will proceed without managing "
        "GPUs. ret: 12 [/builds/dcgm/dcgm/dcgmlib/src/DcgmHostEngineHandler.cpp:1545] "
        "[DcgmHostEngineHandler::LoadNvml]\n"
    )
    findings, verdict = inspect(stamped)
    (blind,) = of(findings, "source_unavailable")
    assert blind.class_ == "unknown" and verdict == "unknown"


def test_no_false_alarm_a_normal_start_and_the_nvswitch_messages_alone():
    # negative: a normal DCGM 4 start stays healthy, nothing unread
    findings, verdict = inspect((HE_FIXTURES / "hostengine-dcgm4-startup.log").read_text())
    assert verdict == "healthy" and not of(findings, "source_unavailable")
    # negative: the NVSDM / NSCQ lines without the NVML one (a node with no NVSwitch library)
    # are the host engine's module warnings, not a blind host engine
    rest = "\n".join(HE_UNSTAMPED.splitlines()[2:]) + "\n"
    findings, verdict = inspect(rest)
    assert verdict == "healthy" and not of(findings, "source_unavailable")
    assert {f.class_ for f in of(findings, "hostengine_module_error")} == {"warn"}


def test_the_live_hostengine_check_draws_the_same_conclusion(tmp_path):
    path = tmp_path / "nv-hostengine.log"
    path.write_text(HE_UNSTAMPED)
    output = he_check.HostEngineCheck().run(
        CheckContext(procfs=tmp_path, clock=time.time, hostengine_log=path)
    )
    assert node_verdict(output.results) == inspect(HE_UNSTAMPED)[1] == "unknown"
    assert not [r for r in output.results if r.status == "fail"]
