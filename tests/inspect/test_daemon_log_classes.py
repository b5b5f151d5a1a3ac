"""The classes the first-contact holdout of issue 24 found missing (cases 105, 107, 109, 113, 137),
each on its real excerpt (tests/fixtures/evidence/issue24/SOURCES.md), a hand-varied variant that
is not the case's text, and a negative that must raise no alarm:

- `systemctl status` of a service that wraps a daemon's log (any such service: the fabric
  manager's, DCGM's);
- a crash-looping service (a config value FM cannot use, systemd's restart counter);
- a module error the host engine repeats: its own trouble (observability), not a GPU fault;
- a source that failed to start: `source_unavailable`, unknown, never healthy;
- a `dcgmi discovery -l` listing: inventory.
The live checks draw the same conclusions from the same logs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuslo.exporter.checks import fabricmanager as fm_check
from gpuslo.exporter.checks import hostengine as he_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.fabricmanager import claims_line
from gpuslo.exporter.inspect.kinds import detect_kinds, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import node_verdict, verdict_from_findings

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "evidence" / "issue24"


def read(name: str) -> str:
    return (EXCERPTS / name).read_text()


def inspect(text: str, **options):
    findings = inspect_text(text, "f", InspectOptions(**options))
    return findings, verdict_from_findings(findings)


def signals(findings) -> dict[str, list]:
    out: dict[str, list] = {}
    for finding in findings:
        out.setdefault(finding.signal, []).append(finding)
    return out


def live(tmp_path: Path, check: str, text: str):
    path = tmp_path / f"{check}.log"
    path.write_text(text)
    ctx = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
                       **{f"{check}_log": path})
    runner = fm_check.FabricManagerCheck() if check == "fabricmanager" else (
        he_check.HostEngineCheck())
    return node_verdict(runner.run(ctx).results)


# --- systemctl status of a service wrapping a daemon's log -----------------------------------

FM_AUTO_RESTART = """\
$ systemctl status nvidia-fabricmanager.service
× nvidia-fabricmanager.service - NVIDIA fabric manager service
     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; preset: enabled)
     Active: activating (auto-restart) (Result: exit-code) since Tue 2025-03-04 09:12:40 UTC; 3s ago
    Process: 90211 ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricm\
anager.cfg (code=exited, status=1/FAILURE)
"""
DCGM_FAILED = """\
● nvidia-dcgm.service - NVIDIA DCGM service
     Loaded: loaded (/usr/lib/systemd/system/nvidia-dcgm.service; enabled; vendor preset: enabled)
     Active: failed (Result: exit-code) since Wed 2024-10-02 11:04:51 UTC; 2min ago
   Main PID: 3121 (code=exited, status=255/EXCEPTION)
"""
DCGM_RUNNING = DCGM_FAILED.replace(
    "failed (Result: exit-code)", "active (running)"
).replace("(code=exited, status=255/EXCEPTION)", "(nv-hostengine)") + (
    "\n2024-10-02 11:07:00.101 INFO  [3121:3121] Started host engine version 3.3.7\n"
)


def test_systemctl_status_of_the_fabric_manager_reads_its_state():
    text = read("fm-systemctl-status-active.txt")  # real: active (running), NVL5 GPU probe
    assert "fabricmanager-log" in detect_kinds(text)
    findings, verdict = inspect(text)
    (running,) = signals(findings)["fabric_manager_running"]
    assert running.message.startswith("nvidia-fabricmanager.service: active (running)")
    assert verdict == "healthy" and not [f for f in findings if f.class_ != "ok"]
    findings, verdict = inspect(FM_AUTO_RESTART)  # varied: a crash loop under systemd
    assert [f.class_ for f in signals(findings)["fabric_manager_failed"]] == ["fatal"]
    assert verdict == "unhealthy"


def test_systemctl_status_of_any_service_wrapping_a_log():
    findings, verdict = inspect(DCGM_FAILED)  # DCGM's service, not the fabric manager's
    (source,) = signals(findings)["source_unavailable"]
    assert (source.class_, source.layer, verdict) == ("unknown", "observability", "unknown")
    findings, verdict = inspect(DCGM_RUNNING)  # negative: running, one INFO line
    assert verdict == "healthy" and not [f for f in findings if f.class_ != "ok"]


# --- a crash-looping service ------------------------------------------------------------------

FM_RESTARTING = (
    "Mar 04 09:12:40 node-01 nv-fabricmanager[90211]: fabric manager config file item: "
    "FABRIC_MODE has an invalid value\n"
    "Mar 04 09:12:45 node-01 systemd[1]: nvidia-fabricmanager.service: Scheduled restart job, "
    "restart counter is at 7.\n"
)


def test_a_config_value_the_fabric_manager_cannot_use_is_a_failed_fabric():
    findings, verdict = inspect(read("fm-config-invalid-value.txt"))  # real: one stderr line
    (failed,) = signals(findings)["fabric_manager_failed"]
    assert (failed.class_, failed.reason, verdict) == ("fatal", "fabric_unhealthy", "unhealthy")
    findings, verdict = inspect(FM_RESTARTING)  # varied: journal + systemd restart counter
    assert len(signals(findings)["fabric_manager_failed"]) == 2 and verdict == "unhealthy"


def test_a_crash_loop_on_a_node_without_nvswitch_is_not_a_fault():
    text = FM_RESTARTING + (
        "Mar 04 09:12:40 node-01 nv-fabricmanager[90211]: request to query NVSwitch device "
        "information from NVSwitch driver failed with error:WARNING Nothing to do "
        "[NV_WARN_NOTHING_TO_DO]\n"
    )
    findings, verdict = inspect(text)
    assert "fabric_manager_failed" not in signals(findings)
    assert "fabric_manager_not_applicable" in signals(findings) and verdict == "healthy"


def test_a_kernel_line_about_an_nvswitch_is_not_claimed_as_fabric_manager_console():
    assert not claims_line("[   12.5] nvidia-nvswitch: failed to initialize NVSwitch 0, 0x1f")
    assert claims_line("fabric manager is not running")


def test_an_uncatalogued_console_failure_is_never_healthy():
    findings, verdict = inspect("fabric manager crashed while loading the topology file\n")
    (error,) = signals(findings)["fabric_manager_error"]
    assert (error.class_, verdict) == ("unknown", "unknown")


# --- repeated module errors --------------------------------------------------------------------

PROFILING = "".join(
    f"2024-06-0{day} 0{day}:00:00.000 ERROR [812:840] [[Profiling]] GetLatestSample for fieldId "
    f"{1000 + day} returned -37 [/w/modules/profiling/DcgmModuleProfiling.cpp:12] [f]\n"
    for day in (1, 2, 3)
)


def test_a_repeated_module_error_is_the_host_engines_trouble():
    findings, verdict = inspect(read("hostengine-nvswitch-module-repeated.log"))  # real: 5x
    (module,) = signals(findings)["hostengine_module_error"]
    assert (module.class_, module.layer, module.events) == ("warn", "observability", 5)
    assert verdict == "healthy"
    findings, verdict = inspect(PROFILING)  # varied: another module, numbers differ per line
    (module,) = signals(findings)["hostengine_module_error"]
    assert (module.events, verdict) == (3, "healthy")


def test_a_module_error_naming_a_device_is_never_read_healthy():
    line = PROFILING.splitlines()[0].replace(
        "GetLatestSample for fieldId 1001 returned -37", "NvSwitch 3 link 12 failed training"
    )
    findings, verdict = inspect(line)
    assert "hostengine_module_error" not in signals(findings)
    (device,) = signals(findings)["unrecognised_message"]
    assert (device.device, verdict) == ("nvidia-nvswitch3", "unknown")
    findings, verdict = inspect(line.replace("failed training", "fatal error, reset required"))
    assert verdict == "unhealthy"


def test_module_lines_below_error_and_health_reports_are_no_module_error():
    quiet = PROFILING.replace(" ERROR ", " DEBUG ")
    findings, verdict = inspect(quiet)
    assert "hostengine_module_error" not in signals(findings) and verdict == "healthy"
    findings, _ = inspect(read("hostengine-thermal-warning.log"))  # [[Health]] at ERROR
    assert "hostengine_module_error" not in signals(findings)
    assert "dcgm_health" in signals(findings)


# --- a source that failed to start -------------------------------------------------------------

HE_DID_NOT_START = (
    "Oct 02 11:04:51 node-01 systemd[1]: nvidia-dcgm.service: Main process exited, "
    "code=exited, status=255/EXCEPTION\n"
    "Oct 02 11:04:51 node-01 systemd[1]: nvidia-dcgm.service: Failed with result 'exit-code'.\n"
)


@pytest.mark.parametrize(
    "text",
    [
        read("hostengine-failed-to-start.txt"),  # real: nv-hostengine's stderr
        "Err: Failed to start DCGM Server: -40\n",  # varied: another code, a prefix
        HE_DID_NOT_START,  # varied: systemd about DCGM's service
    ],
)
def test_a_host_engine_that_failed_to_start_is_unknown(text):
    findings, verdict = inspect(text)
    assert [f.class_ for f in signals(findings)["source_unavailable"]][:1] == ["unknown"]
    assert all(f.layer == "observability" for f in signals(findings)["source_unavailable"])
    assert verdict == "unknown" and not [f for f in findings if f.class_ == "fatal"]


# --- dcgmi discovery -l -------------------------------------------------------------------------

DISCOVERY_NULL_NAMES = """\
$ dcgmi discovery -l
4 GPUs found (Active).
+--------+----------------------------------------------------------------------+
| GPU ID | Device Information                                                   |
+--------+----------------------------------------------------------------------+
| 0      | Name: <<<NULL>>>                                                     |
|        | PCI Bus ID: 00000000:4C:00.0                                         |
|        | Device UUID: GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de                |
+--------+----------------------------------------------------------------------+
| 1      | Name: <<<NULL>>>                                                     |
|        | PCI Bus ID: 00000000:5D:00.0                                         |
|        | Device UUID: GPU-75c4ee16-a840-6f6c-9a7b-5ed8f41598b8                |
+--------+----------------------------------------------------------------------+
4 NvSwitches found.
+-----------+
| Switch ID |
+-----------+
| 8         |
| 9         |
| 10        |
| 11        |
+-----------+
"""


def test_dcgmi_discovery_is_inventory():
    findings, verdict = inspect(read("dcgmi-discovery-l-pcie.txt"))  # real: 0 NvSwitches
    seen = signals(findings)["gpus_seen"]
    assert seen[0].count == 2 and "0 NvSwitches" in seen[0].message
    assert {(f.gpu, f.pci) for f in seen[1:]} == {
        ("0", "00000000:21:00.0"), ("1", "00000000:81:00.0")
    }
    assert verdict == "healthy"
    findings, verdict = inspect(DISCOVERY_NULL_NAMES)  # varied: DCGM 4, names not read
    seen = signals(findings)["gpus_seen"]
    assert seen[0].count == 4 and "4 NvSwitches" in seen[0].message
    assert seen[1].message == "GPU model not reported" and verdict == "healthy"


def test_dcgmi_discovery_short_of_the_expected_gpus_fails():
    findings, verdict = inspect(read("dcgmi-discovery-l-pcie.txt"), expect_gpus=4)
    assert "gpu_missing" in signals(findings) and verdict == "unhealthy"


# --- the live checks agree ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "text"),
    [
        ("fabricmanager", read("fm-systemctl-status-active.txt")),
        ("fabricmanager", read("fm-config-invalid-value.txt")),
        ("fabricmanager", FM_AUTO_RESTART),
        ("hostengine", read("hostengine-nvswitch-module-repeated.log")),
        ("hostengine", read("hostengine-failed-to-start.txt")),
        ("hostengine", DCGM_RUNNING),
    ],
)
def test_live_checks_draw_inspects_conclusions(tmp_path, check, text):
    assert live(tmp_path, check, text) == inspect(text)[1]
