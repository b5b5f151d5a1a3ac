"""One test per class of evidence the sixteenth fresh first-contact corpus batch (tests/data/
corpus/fresh16, scored 12/16 on 2026-12-07 at e97fb08, tests/data/first_contact/
corpus_fresh16_2026-12-07.txt) found misread: the real lines (the case file itself), variants in
the other forms of the class, and negatives that must not be read the same way.

- 1803 (ibstat from a vendor page): an `ibstat` / `ibstatus` block whose indentation was lost
  or changed is read by its field names (`evidence.fabric.tools`).
- 1804 (`nvidia-smi` then its one-line NVML failure, then `ubuntu-drivers devices`): the NVML
  line ends nvidia-smi's output (`inspect.split.NVML_LAST`) and is read below the command that
  printed it (`inspect.detectors.looks_like_nvml_error`).
- 1812 (fabricmanager.log lines quoted without stamp and thread id): a bare `[LEVEL]` record
  naming FM or an NVSwitch is FM's (`evidence.fabricmanager`), and FM failing to configure the
  GPUs / NVSwitches is FM failed (`fabric_manager.yaml` `configure_failed`).
- 1818 (`--query-gpu` CSV sampled with `-l`): rows that repeat one GPU's identity are samples
  of that GPU (`inspect.nvidia_smi_findings.distinct_gpus`).
"""

from __future__ import annotations

import time

from gpuslo.exporter.checks import fabricmanager as fm_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.fabric.tools import parse_ibstat, parse_ibstatus
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

FLAT_IBSTAT = corpus_case("fresh16", 1803)
NVML_THEN_OTHER = corpus_case("fresh16", 1804)
FM_CONFIGURE = corpus_case("fresh16", 1812)
SAMPLED_CSV = corpus_case("fresh16", 1818)


# --- 1803: ibstat / ibstatus with their indentation lost or changed ---------------------------

def test_the_flattened_ibstat_reads_one_active_port():
    findings, verdict = inspect(FLAT_IBSTAT)
    assert verdict == "healthy"
    (active,) = of(findings, "ports_active")
    assert active.count == 1
    (port,) = parse_ibstat(FLAT_IBSTAT).ports
    assert (port.device, port.port, port.state, port.physical_state, port.rate_gbps) == (
        "mlx4_0", 1, "Active", "LinkUp", 40)
    assert port.model == "MT4099"


def test_a_flattened_or_reindented_ibstat_port_down_is_still_down():
    # Negative: the same field-name reading must not make a down port active, at any indentation.
    for indent in ("", "    ", "\t\t"):
        text = "\n".join(indent + line if line.startswith(("State", "Physical")) else line
                         for line in FLAT_IBSTAT.splitlines())
        down = text.replace("State: Active", "State: Down").replace("LinkUp", "Polling")
        findings, verdict = inspect(down)
        assert verdict == "unhealthy" and of(findings, "port_down")
    indented = "\n".join("    " + line for line in FLAT_IBSTAT.splitlines())
    assert [p.state for p in parse_ibstat(indented).ports] == ["Active"]


def test_a_flattened_ibstatus_block_is_read():
    text = (
        "Infiniband device 'mlx5_0' port 1 status:\n"
        "default gid: fe80:0000:0000:0000:0c42:a103:00e2:1a2b\n"
        "base lid: 0x5\nsm lid: 0x1\nstate: 4: ACTIVE\nphys state: 5: LinkUp\n"
        "rate: 200 Gb/sec (4X HDR)\nlink_layer: InfiniBand\n"
    )
    (port,) = parse_ibstatus(text)
    assert (port.state, port.physical_state, port.rate_gbps) == ("Active", "LinkUp", 200)
    (down,) = parse_ibstatus(text.replace("4: ACTIVE", "1: DOWN"))
    assert down.state == "Down"


# --- 1804: nvidia-smi's one-line NVML failure with another command's output after it ----------

def test_the_version_mismatch_is_read_above_the_other_commands_output():
    findings, verdict = inspect(NVML_THEN_OTHER)
    assert verdict == "unhealthy"
    (mismatch,) = of(findings, "driver_mismatch")
    assert (mismatch.class_, mismatch.line) == ("fatal", 2)
    assert not of(findings, "gpus_seen")
    (rest,) = of(findings, "nothing_recognised")  # ubuntu-drivers' listing: named, not dropped
    assert "lines 3-13" in rest.message


def test_the_nvml_version_line_after_the_mismatch_stays_with_it():
    text = (
        "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\n"
        "NVML library version: 535.183\n$ uname -r\n6.8.0-45-generic\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "unhealthy"
    (mismatch,) = of(findings, "driver_mismatch")
    assert mismatch.extra.get("nvml_version") == "535.183"


def test_an_nvidia_smi_table_is_not_cut_by_the_rule():
    # Negative: a healthy capture that holds no NVML failure line keeps its one part, and a
    # command line above other text is no NVML error by itself.
    findings, verdict = inspect("nvidia-smi\nubuntu-drivers devices\nmodel : GK107\n")
    assert verdict == "unknown" and not of(findings, "driver_mismatch")
    assert not fatal(findings)


# --- 1812: FM lines quoted without stamp and thread id -----------------------------------------

def test_fm_failing_to_configure_the_fabric_is_fm_failed():
    findings, verdict = inspect(FM_CONFIGURE)
    assert verdict == "unhealthy"
    failed = of(findings, "fabric_manager_failed")
    assert [f.line for f in failed] == [1, 2, 3]
    assert {(f.class_, f.reason) for f in failed} == {("fatal", "fabric_unhealthy")}
    assert not of(findings, "fabric_manager_running")
    assert not of(findings, "fabric_manager_not_applicable")


def test_the_same_lines_with_stamp_and_tid_read_the_same():
    stamped = "".join(f"[May 12 2026 10:00:0{n}] [ERROR] [tid 4242] {line[8:]}\n"
                      for n, line in enumerate(FM_CONFIGURE.splitlines()))
    findings, _ = inspect(stamped)
    assert len(of(findings, "fabric_manager_failed")) == 3


def test_an_fm_info_line_naming_configure_stays_healthy():
    # Negatives: FM's success line names "configured"; a bare `[ERROR]` line that names neither
    # FM nor an NVSwitch is no FM record.
    text = (
        "[INFO] fabric manager is configuring all the available GPUs and NVSwitches\n"
        "[INFO] Successfully configured all the available NVSwitches to route GPU NVLink traffic\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "healthy" and not of(findings, "fabric_manager_failed")
    assert of(findings, "fabric_manager_running")
    other, _ = inspect("[ERROR] failed to configure the web server\n")
    assert not [f for f in other if f.kind == "fabricmanager-log"]


def test_the_live_fabric_manager_check_fails_on_the_configuration_failure(tmp_path):
    path = tmp_path / "fabricmanager.log"
    path.write_text(FM_CONFIGURE)
    context = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
                           fabricmanager_log=path)
    output = fm_check.FabricManagerCheck().run(context)
    assert {r.status for r in output.results} >= {"fail"}
    healthy = tmp_path / "ok.log"
    healthy.write_text("[INFO] Successfully configured all the available NVSwitches\n")
    context = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
                           fabricmanager_log=healthy)
    assert "fail" not in {r.status for r in fm_check.FabricManagerCheck().run(context).results}


# --- 1818: one GPU sampled in a CSV --------------------------------------------------------------

def test_thirteen_samples_of_gpu_0_are_one_gpu():
    findings, verdict = inspect(SAMPLED_CSV)
    assert verdict == "healthy"
    (seen,) = of(findings, "gpus_seen")
    assert (seen.count, seen.gpu) == (1, "0")
    assert not fatal(findings)


def test_thirteen_different_gpus_stay_thirteen():
    # Negative: distinct indexes are distinct GPUs.
    lines = SAMPLED_CSV.splitlines()
    text = "\n".join([lines[0], *(f"{n}{row[1:]}" for n, row in enumerate(lines[1:]))]) + "\n"
    findings, _ = inspect(text)
    assert [f.count for f in of(findings, "gpus_seen")] == [13]


def test_a_field_error_in_two_samples_is_one_finding_and_gpus_count_once():
    lines = SAMPLED_CSV.splitlines()
    broken = [line.replace("83.67 W", "[Unknown Error]").replace("82.81 W", "[Unknown Error]")
              for line in lines]
    findings, _ = inspect("\n".join(broken) + "\n")
    (error,) = of(findings, "gpu_error")
    assert (error.gpu, error.line, error.class_) == ("0", 6, "warn")  # its first sample's line
    short, verdict = inspect(SAMPLED_CSV, expect_gpus=2)
    assert verdict == "unhealthy"
    (missing,) = of(short, "gpu_missing")
    assert missing.count == 1
