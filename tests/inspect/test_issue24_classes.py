"""One test per class of evidence issue 24 found misread, on real excerpts
(tests/fixtures/evidence/issue24/SOURCES.md): 3 driver messages in other shapes, 4 clock-event
reasons as the full bitmask, 5 links against their own reference, 6 tool failures that are
answers, 7 MIG-aware identity and Xid 94/95. Classes 1 and 2 (fabric manager, host engine) are
tests/exporter/test_fabricmanager.py and test_hostengine.py; the health events the collector
added, here too."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS

from gpuslo.exporter.evidence.clock_events import reason_of_key, reasons_of_mask
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.ports import degraded_findings
from gpuslo.verdict import verdict_from_findings

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "evidence" / "issue24"
EVIDENCE = EXCERPTS.parent


def read(name: str) -> str:
    return (EXCERPTS / name).read_text()


def inspect(text: str, **options):
    findings = inspect_text(text, "f", InspectOptions(**options))
    return findings, verdict_from_findings(findings)


# --- 3. driver messages in other shapes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pci"),
    [
        ("nvrm-kgspbootgsprm-wpr2.txt", "00000000:A1:00.0"),  # NVRM GPU6 ..., RmInitAdapter
        ("nvrm-280-not-supported.txt", "00000000:01:00.0"),  # a timestamp on every line
        ("nvrm-open-no-gsp.txt", "00000000:AF:00.0"),  # continuation lines, no timestamps
        ("nvrm-331-column-0.txt", "00000000:01:00.0"),  # continuation at column 0
        ("xid120-gsp-dump.txt", "00000000:06:00.0"),  # GSP firmware dump after an Xid
    ],
)
def test_driver_messages_in_other_shapes_fail_their_gpu(name, pci):
    findings, verdict = inspect(read(name))
    assert verdict == "unhealthy"
    assert any(f.class_ == "fatal" and f.pci == pci for f in findings)
    assert not [f for f in findings if f.class_ == "application"]


def test_gsp_dump_is_one_event_and_nvrm_without_colon_is_never_healthy():
    findings, _ = inspect(read("xid120-gsp-dump.txt"))
    (xid,) = [f for f in findings if f.xid == 120]
    assert xid.events == 1 and xid.uuid == "GPU-604d3abb-43d5-088f-f873-9dc453a081a5"
    findings, verdict = inspect(read("nvrm-no-colon-booter.txt"))
    assert verdict in ("unhealthy", "unknown")
    assert any("Booter failed" in (f.message or "") for f in findings)


# --- 4. clock-event reasons as the full bitmask -------------------------------------------------


def test_nvml_bitmask_and_field_names():
    assert reasons_of_mask(0x88) == ("hw_slowdown", "hw_power_brake")
    assert reasons_of_mask(0x1FF) == (
        "idle", "app_clocks", "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal",
        "hw_thermal", "hw_power_brake", "display_clocks",
    )
    assert reason_of_key("clocks_throttle_reasons/hw_power_brake_slowdown") == "hw_power_brake"
    assert reason_of_key("clocks_event_reasons/clocks_event_reason_sw_power_cap") == "sw_power_cap"
    assert reason_of_key("clocks_event_reasons.applications_clocks_setting") == "app_clocks"
    assert reason_of_key("temperature/gpu_current_temp") is None


def test_hw_slowdown_and_power_brake_are_not_usable_at_speed():
    findings, verdict = inspect(read("smi-q-hw-power-brake.txt"))
    reasons = {f.reason for f in findings if f.signal == "clock_event" and f.class_ == "fatal"}
    assert reasons == {"hw_slowdown", "hw_power_brake"}
    assert verdict == "unhealthy"


def test_idle_and_sw_power_cap_are_the_workloads_own():
    findings, verdict = inspect(read("smi-q-idle-only.txt"))  # under a `$ nvidia-smi` prompt
    assert [(f.reason, f.class_) for f in findings if f.signal == "clock_event"] == [("idle", "ok")]
    assert verdict == "healthy"
    # SW power cap under full load: warn, layer training — never the node's fault by itself
    problems = evaluate_gpu(GpuStatus(index="0", clock_events=("sw_power_cap",)))
    assert problems == []
    capped = read("smi-q-idle-only.txt").replace("SW Power Cap                : Not Active",
                                                 "SW Power Cap                : Active")
    findings, verdict = inspect(capped)
    (cap,) = [f for f in findings if f.reason == "sw_power_cap"]
    assert (cap.class_, cap.layer, verdict) == ("warn", "training", "healthy")


def test_dcgm_clocks_event_mask_reaches_the_same_rule():
    page = (
        '# TYPE DCGM_FI_DEV_CLOCKS_EVENT_REASONS gauge\n'
        'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{gpu="0",UUID="GPU-a",modelName="Tesla V100"} 136\n'
    )
    findings, verdict = inspect(page)
    assert {f.reason for f in findings if f.signal == "clock_event"} >= {"hw_power_brake"}
    assert verdict == "unhealthy"


# --- 5. links against their own reference ------------------------------------------------------


def test_nic_judged_against_its_own_adapter_not_the_fastest_port():
    cx6 = Port("mlx5_0", 1, "Active", "LinkUp", 200.0, "InfiniBand", model="MT4123")
    cx7 = Port("mlx5_1", 1, "Active", "LinkUp", 400.0, "InfiniBand", model="MT4129")
    assert degraded_findings("ibstat", [cx6, cx7]) == []  # mixed models: neither degraded
    slow_cx7 = Port("mlx5_2", 1, "Active", "LinkUp", 200.0, "InfiniBand", model="MT4129")
    (degraded,) = degraded_findings("ibstat", [cx6, cx7, slow_cx7])
    assert degraded.device == "mlx5_2"
    # ibstatus has no model: the lane speed in the rate string groups the ports
    edr = Port("mlx5_0", 1, "Active", "LinkUp", 100.0, rate_text="100 Gb/sec (4X EDR)")
    hdr = Port("mlx5_1", 1, "Active", "LinkUp", 200.0, rate_text="200 Gb/sec (4X HDR)")
    assert degraded_findings("ibstatus", [edr, hdr]) == []


def test_shared_ibstat_cases_keep_their_model():
    text = (CORPUS / "cases" / "055_ibstat-two-roce-cx6dx-active-rate-100.txt").read_text()
    findings, verdict = inspect(text)
    assert verdict == "healthy" and not [f for f in findings if f.signal == "port_degraded"]


def test_pcie_speed_drop_counts_under_load_or_when_marked_downgraded():
    findings, _ = inspect(read("smi-q-width-8x-busy.txt"))  # width 8x of 16x at 100 %
    assert any(f.signal == "pcie_degraded" for f in findings)
    idle = GpuStatus(index="0", pcie_gen_current=1, pcie_gen_max=4, pcie_width_current=16,
                     pcie_width_max=16, utilization_gpu=0.0)
    assert evaluate_gpu(idle) == []  # speed drop at idle: by design
    busy = GpuStatus(index="0", pcie_gen_current=1, pcie_gen_max=4, pcie_width_current=16,
                     pcie_width_max=16, utilization_gpu=0.97)
    assert [p.signal for p in evaluate_gpu(busy)] == ["pcie_degraded"]
    # the A100 of the real lspci capture (LnkCap 16GT/s x16), its LnkSta made 2.5GT/s marked
    # downgraded with the width held, as pciutils >= 3.6 prints it
    lspci = (EVIDENCE / "lspci-vv-a100-and-bridge.txt").read_text().replace(
        "LnkSta:\tSpeed 8GT/s, Width x8,", "LnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok),", 1
    )
    findings, _ = inspect(lspci)
    assert any(f.signal == "pcie_degraded" and "slower" in f.message for f in findings)


def test_dcgmi_health_nvlink_failure_text_reaches_its_gpu():
    # the real boxed report of tests/fixtures/evidence, its InfoROM incident replaced by DCGM's
    # DCGM_FR_NVLINK_DOWN message (dcgm_errors.h) under the NVLink system
    text = (EVIDENCE / "dcgmi-health-c-warning.txt").read_text()
    text = text.replace("Warning", "Failure").replace("InfoROM system", "NVLink system ")
    text = text.replace("A problem was found with the InfoROM of GPU 3.",
                        "GPU 3's NvLink link 4 is currently down")
    findings, verdict = inspect(text)
    assert any(f.signal == "dcgm_health" and f.gpu == "3" and f.extra["system"] == "nvlink"
               for f in findings)
    (links,) = [f for f in findings if f.signal == "nvlink_inactive"]
    assert (links.gpu, links.links) == ("3", [4])
    assert verdict == "unhealthy"


# --- 6. tool failures that are answers ---------------------------------------------------------


def test_fi_info_negative_code_alone_is_zero_efa_devices():
    findings, verdict = inspect(read("fi-info-cxi-verbs.txt"), expect_efa_devices=1)
    (efa,) = [f for f in findings if f.signal == "efa_devices"]
    assert efa.count == 0 and "-61 (No data available)" in efa.message
    assert verdict == "unhealthy"
    assert inspect(read("fi-info-cxi-verbs.txt"))[1] == "unknown"  # none expected: cannot tell


def test_device_handle_errors_name_the_failing_gpu():
    text = (
        "Unable to determine the device handle for GPU 2: Unknown Error\n"
        "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the "
        "system to recover this GPU\n"
    )
    findings, verdict = inspect(text)
    lost = {(f.gpu, f.pci, f.action) for f in findings if f.signal == "gpu_inaccessible"}
    assert lost == {("2", None, "reset_gpu"), (None, "00000000:3B:00.0", "reboot_node")}
    assert verdict == "unhealthy"


# --- 7. identity: MIG and Xid 94/95 ------------------------------------------------------------


def test_mig_suffix_keeps_its_gpu_and_94_95_differ_in_scope_and_action():
    findings, verdict = inspect(read("xid94-mig-xid95.txt"))
    by = {(f.xid, f.extra.get("gpu_instance")): f for f in findings if f.xid}
    contained = by[(94, 5)]
    assert (contained.pci, contained.class_, contained.action) == (
        "00000000:01:00.0", "contained", "restart_app"
    )
    assert by[(94, None)].class_ == "contained"
    whole = by[(95, None)]
    assert (whole.class_, whole.action) == ("fatal", "reset_gpu")
    scopes = (contained.extra["scope"], by[(94, None)].extra["scope"], whole.extra["scope"])
    assert scopes == ("gpu_instance", "process", "gpu")
    assert verdict == "unhealthy"


def test_dcgm_page_with_mig_instances_counts_physical_gpus():
    page = parse_dcgm_page(
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-aaaa",GPU_I_ID="1"} 35\n'
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="MIG-bbbb",GPU_I_ID="2"} 36\n'
        'DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-cccc"} 34\n'
    )
    assert sorted(page.gpus) == ["GPU-aaaa", "GPU-cccc"]
    assert page.gpus["GPU-aaaa"].mig_instances == {"1", "2"}
    shared = (CORPUS / "cases" / "017_dcgm-mig-xid-errors-and-temp-per-instance.txt").read_text()
    findings, _ = inspect(shared)
    assert any(f.signal == "gpus_seen" and f.count == 2 and f.gpu is None for f in findings)


# --- health events (NVSentinel conditions with DCGM error codes) ---------------------------------


def test_health_events_by_dcgms_error_table_and_the_xid_policy():
    findings, verdict = inspect(read("nvsentinel-imex.txt"))
    (imex,) = [f for f in findings if f.signal == "dcgm_health"]
    assert (imex.class_, imex.gpu) == ("warn", "0")  # no IMEX domain: not a GPU fault
    assert verdict == "healthy"
    findings, verdict = inspect(read("nvsentinel-xid31.txt"))
    (xid,) = [f for f in findings if f.xid == 31]
    assert (xid.class_, xid.gpu) == ("application", "4")  # the job's fault, whatever the watch
    assert verdict == "healthy"
    findings, verdict = inspect(read("nvsentinel-power.txt"))
    (power,) = [f for f in findings if f.signal == "dcgm_health"]
    assert (power.class_, power.extra["system"]) == ("warn", "power")
