"""dcgm-exporter pages, dcgmi output and exporter logs: the corpus cases of those kinds through
`inspect_text`, the recorded pages in shared/corpus/dcgm-exporter, and hypothesis on every
parser."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.dcgm import dcgmi
from gpuslo.exporter.evidence.dcgm import page as dcgm_page
from gpuslo.exporter.evidence.dcgm.page import is_blank
from gpuslo.exporter.evidence.dcgm.staleness import EnergyMark, stale_gpus, track_energy
from gpuslo.exporter.inspect import dcgm
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

KINDS = ("dcgm-metrics", "dcgmi", "dcgm-exporter-log")
CASES = [e for e in yaml.safe_load((CORPUS / "expected.yaml").read_text()) if e["kind"] in KINDS]
PAGES = CORPUS / "dcgm-exporter"
SYNTHETIC = Path(__file__).resolve().parent.parent / "fixtures" / "dcgm"
H200_UUID = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"


def matches(entry: dict, finding: dict) -> bool:
    """check_corpus.py's subset match for the keys these findings use."""
    for key, want in entry.items():
        got = finding.get(key)
        if got is None:
            return False
        if isinstance(want, int) and not isinstance(want, bool):
            if float(want) != float(got):
                return False
        elif str(want) != str(got):
            return False
    return True


def test_the_corpus_has_cases_of_every_dcgm_kind():
    assert {e["kind"] for e in CASES} == set(KINDS)


@pytest.mark.parametrize("entry", CASES, ids=[e["case"] for e in CASES])
def test_corpus_case(entry):
    text = (CORPUS / "cases" / entry["case"]).read_text()
    findings = inspect_text(text, entry["case"], InspectOptions())  # kind detected
    assert findings[0].kind == entry["kind"]
    dicts = [f.to_dict() for f in findings]
    want = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
    assert verdict_from_findings(findings) in want
    for wanted in entry.get("find") or []:
        assert any(matches(wanted, d) for d in dicts), (wanted, dicts)
    for banned in entry.get("not") or []:
        assert not any(matches(banned, d) for d in dicts), (banned, dicts)


def test_mig_instances_fold_per_gpu_uuid_with_old_labels():
    page = dcgm_page.parse_dcgm_page((PAGES / "xid_errors_a30_mig.prom").read_text())
    gpu0 = page.gpus["GPU-265c9814-6156-355b-e589-ff2064894f16"]
    assert (gpu0.index, gpu0.hostname, gpu0.model, gpu0.last_xid) == (
        "0",
        "HOSTNAME_PLACEHOLDER",
        "NVIDIA A30",
        0,
    )
    assert gpu0.mig_instances == {"3", "4", "5", "6"}
    assert len(page.gpus) == 2


def test_current_labels_lowercase_hostname_and_pci_bus_id():
    page = dcgm_page.parse_dcgm_page((PAGES / "modern_mig_pod_labels_gpu_temp.prom").read_text())
    assert [g.index for g in page.gpus.values()] == ["0", "1", "2"]
    gpu = page.gpus["GPU-fc60126e-514d-3522-2828-c5daa8e99d85"]
    assert (gpu.pci_bus_id, gpu.hostname, gpu.values["DCGM_FI_DEV_GPU_TEMP"]) == (
        "00000000:B1:00.0",
        "dcgm-exporter-wwwjh",
        44,
    )


def test_old_namespace_lowercase_names_and_uuid_label():
    text = (
        'dcgm_fi_dev_xid_errors{gpu="3",uuid="GPU-aa",device="nvidia3",'
        'modelName="NVIDIA A100 80GB PCIe",'
        'GPU_I_PROFILE="4g.40gb",GPU_I_ID="1"} 48\n'
    )
    (gpu,) = dcgm_page.parse_dcgm_page(text).gpus.values()
    assert (gpu.uuid, gpu.last_xid) == ("GPU-aa", 48)
    findings = dcgm.inspect_metrics(text, InspectOptions(), "x")
    assert any(f.xid == 48 and f.class_ == "fatal" and f.uuid == "GPU-aa" for f in findings)


def test_not_supported_sentinel_is_no_data_never_a_temperature():
    text = (PAGES / "readme_excerpt_not_supported_sentinel.txt").read_text()
    (gpu,) = dcgm_page.parse_dcgm_page(text).gpus.values()
    assert "DCGM_FI_DEV_MEMORY_TEMP" not in gpu.values
    assert gpu.blank == {"DCGM_FI_DEV_MEMORY_TEMP"}
    assert gpu.values["DCGM_FI_DEV_SM_CLOCK"] == 139
    assert is_blank(0x7FFFFFFFFFFFFFF2) and is_blank(0x7FFFFFF2) and is_blank(2.0**47)
    assert not is_blank(34) and not is_blank(1_234_567_890)


def test_type_line_naming_another_family_is_a_parse_error():
    with pytest.raises(ParseError) as caught:
        dcgm_page.parse_dcgm_page((PAGES / "exp_xid_count_pr239.prom").read_text(), "pr239.prom")
    assert caught.value.line == 3 and caught.value.field == "DCGM_FI_DEV_XID_ERRORS_ACTIVE"


def test_windowed_xid_count_family_reports_its_xid_label():
    text = (
        (PAGES / "exp_xid_count_pr239.prom")
        .read_text()
        .replace("DCGM_FI_DEV_XID_ERRORS_ACTIVE{", "DCGM_EXP_XID_ERRORS_COUNT{")
    )
    findings = dcgm.inspect_metrics(text, InspectOptions(), "x")
    assert any(f.xid == 42 and f.gpu == "0" for f in findings)


def test_last_xid_nonzero_is_classified_by_the_policy():
    text = (SYNTHETIC / "h200_xid79.synthetic.prom").read_text()
    findings = {f.xid or f.signal: f for f in dcgm.inspect_metrics(text, InspectOptions(), "x")}
    # Xid 79's reason comes from its policy entry, as in the kernel log.
    assert (findings[79].class_, findings[79].reason, findings[79].uuid) == (
        "fatal",
        "fallen_off_bus",
        H200_UUID,
    )
    assert findings["row_remap_pending"].action == "drain_and_reset"
    assert findings["ecc_uncorrectable"].count == 1


def test_healthy_synthetic_h200_page_is_healthy():
    text = (SYNTHETIC / "h200_healthy.synthetic.prom").read_text()
    findings = inspect_text(text, "h200", InspectOptions())
    assert verdict_from_findings(findings) == "healthy"
    status = dcgm_page.gpu_status(dcgm_page.parse_dcgm_page(text).gpus[H200_UUID])
    assert (status.family, status.recovery_action, status.hw_thermal_slowdown) == (
        "hopper",
        "None",
        False,
    )
    assert (status.pcie_gen_current, status.pcie_width_current, status.ecc_dbe_volatile) == (
        5,
        16,
        0,
    )


def test_hardware_thermal_slowdown_bit_and_recovery_action_codes():
    base = 'DCGM_FI_DEV_{}{{gpu="0",UUID="GPU-x"}} {}\n'
    text = base.format("CLOCKS_EVENT_REASONS", 0x40) + base.format("GPU_RECOVERY_ACTION", 4)
    status = dcgm_page.gpu_status(dcgm_page.parse_dcgm_page(text).gpus["GPU-x"])
    assert (status.hw_thermal_slowdown, status.recovery_action) == (True, "Drain_and_Reset")
    signals = {f.signal for f in dcgm.inspect_metrics(text, InspectOptions(), "x")}
    assert {"thermal_slowdown", "recovery_action"} <= signals


def test_energy_counter_standing_still_while_drawing_power_is_stale():
    first = dcgm_page.parse_dcgm_page((SYNTHETIC / "h200_healthy.synthetic.prom").read_text())
    later = dcgm_page.parse_dcgm_page((SYNTHETIC / "h200_healthy_next.synthetic.prom").read_text())
    t0 = 1_700_000_000.0
    marks = track_energy({}, first, t0)
    assert marks == {H200_UUID: EnergyMark(1_234_567_890.0, t0)}
    # 30 s later the same value: dcgm-exporter may not have collected again yet
    assert stale_gpus(track_energy(marks, first, t0 + 30), first, t0 + 30) == {}
    # 120 s later still the same value while drawing 124.5 W: frozen
    frozen = stale_gpus(track_energy(marks, first, t0 + 120), first, t0 + 120)
    assert list(frozen) == [H200_UUID] and "120 s" in frozen[H200_UUID]
    # the counter moved: the mark restarts and nothing is stale
    moved = track_energy(marks, later, t0 + 120)
    assert moved[H200_UUID].since == t0 + 120 and stale_gpus(moved, later, t0 + 120) == {}


def test_idle_gpu_without_power_is_never_called_stale():
    text = (SYNTHETIC / "h200_healthy.synthetic.prom").read_text()
    text = "\n".join(line for line in text.splitlines() if "DCGM_FI_DEV_POWER_USAGE" not in line)
    page = dcgm_page.parse_dcgm_page(text)
    assert stale_gpus(track_energy({}, page, 0.0), page, 1000.0) == {}


def test_dcgmi_health_failure_and_text_report():
    text = '{"body": {"Overall Health": {"value": "Failure"}}, "header": ["Health Monitor Report"]}'
    assert verdict_from_findings(dcgm.inspect_dcgmi(text, InspectOptions(), "x")) == "unhealthy"
    boxed = "| Overall Health            | Warning                       |\n"
    assert dcgmi.parse_health(boxed) == "Warning"
    with pytest.raises(ParseError):
        dcgmi.parse_health('{"body": {"Overall Health": 3}}')


def test_exporter_log_without_host_engine_trouble_is_not_healthy():
    text = 'time="2024-01-01T00:00:00Z" level=info msg="Starting webserver"\n'
    assert dcgmi.looks_like_exporter_log(text)
    assert verdict_from_findings(inspect_text(text, "log", InspectOptions())) == "unknown"


SEEDS = [(CORPUS / "cases" / e["case"]).read_text() for e in CASES] + [
    p.read_text() for p in sorted(PAGES.glob("*.prom"))
]
PARSERS = (
    dcgm_page.parse_dcgm_page,
    dcgmi.parse_dmon,
    dcgmi.parse_health,
    lambda t: dcgm.inspect_metrics(t, InspectOptions(), "x"),
    lambda t: dcgm.inspect_dcgmi(t, InspectOptions(), "x"),
    lambda t: dcgm.inspect_exporter_log(t, InspectOptions(), "x"),
)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.sampled_from(SEEDS),
    cut=st.integers(min_value=0, max_value=3000),
    noise=st.text(max_size=200),
    raw=st.binary(max_size=300),
)
def test_every_parser_returns_or_raises_parse_error(seed, cut, noise, raw):
    for text in (seed[:cut] + noise, raw.decode("utf-8", errors="replace"), noise + seed):
        for parse in PARSERS:
            with contextlib.suppress(ParseError):
                parse(text)


def test_truncated_page_is_a_parse_error_naming_the_line():
    text = (CORPUS / "cases" / "017_dcgm-mig-xid-errors-and-temp-per-instance.txt").read_text()
    cut = text[: text.index("\n", len(text) // 2) + 40]  # stop inside a sample line
    with pytest.raises(ParseError) as caught:
        dcgm_page.parse_dcgm_page(cut, "017")
    assert caught.value.line == cut.count("\n") + 1
    assert (
        verdict_from_findings(inspect_text(cut, "017", InspectOptions(), "dcgm-metrics"))
        == "unknown"
    )


def test_fewer_gpus_than_expected_is_gpu_missing():
    page = (CORPUS / "cases" / "019_dcgm-prof-nvlink-bytes-always-zero-a100.txt").read_text()
    findings = inspect_text(page, "019", InspectOptions(expect_gpus=8))
    assert any(f.signal == "gpu_missing" and f.count == 4 and f.class_ == "fatal" for f in findings)
    dmon = (CORPUS / "cases" / "034_dcgmi-dmon-xider-120-but-dcgmi-health-healthy.txt").read_text()
    assert not any(
        f.signal == "gpu_missing" for f in inspect_text(dmon, "034", InspectOptions(expect_gpus=8))
    )
    assert any(
        f.signal == "gpu_missing" for f in inspect_text(dmon, "034", InspectOptions(expect_gpus=9))
    )


def test_each_mig_instance_last_xid_is_reported():
    text = (PAGES / "xid_errors_a30_mig.prom").read_text()
    lines = text.splitlines()
    lines[1] = lines[1].replace("} 0", "} 31")  # instance 3 of GPU 0: an MMU fault (application)
    lines[2] = lines[2].replace("} 0", "} 94")  # instance 4: a contained ECC error
    findings = dcgm.inspect_metrics(
        "\n".join(lines) + "\n", InspectOptions(gpu_family="ampere"), "x"
    )
    assert sorted(f.xid for f in findings if f.xid) == [31, 94]


def test_exporter_json_log_with_host_engine_gone_is_stale():
    line = (
        '{"time":"2025-01-01T00:00:00Z","level":"ERROR","msg":"Failed to watch metrics: '
        'Host engine connection invalid/disconnected"}\n'
    )
    findings = inspect_text(line * 3, "log.json", InspectOptions())
    assert [(f.signal, f.events, f.layer) for f in findings] == [
        ("source_stale", 3, "observability")
    ]


def test_software_clocks_event_reasons_are_warnings_with_their_reason():
    base = 'DCGM_FI_DEV_{}{{gpu="0",UUID="GPU-x"}} {}\n'
    for field_name in ("CLOCKS_EVENT_REASONS", "CLOCK_THROTTLE_REASONS"):  # new and old name
        status = dcgm_page.gpu_status(
            dcgm_page.parse_dcgm_page(base.format(field_name, 0x24)).gpus["GPU-x"]
        )
        assert (status.sw_power_cap, status.sw_thermal_slowdown, status.hw_slowdown) == (
            True, True, False)
    page = base.format("CLOCKS_EVENT_REASONS", 0x04)
    findings = dcgm.inspect_metrics(page, InspectOptions(), "x")
    capped = [f for f in findings if f.signal == "clocks_sw_power_cap"]
    assert [(f.class_, f.reason) for f in capped] == [("warn", "clocks_sw_power_cap")]


INTEGER_FIELDS = ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                  "DCGM_FI_DEV_PCIE_LINK_GEN", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                  "DCGM_FI_DEV_GPU_RECOVERY_ACTION", "DCGM_FI_DEV_ROW_REMAP_PENDING")


@pytest.mark.parametrize("value", ["1.9e308", "-1.9e308", "1e400", "NaN", "+Inf", "-Inf"])
def test_a_sample_that_is_not_a_finite_number_is_no_data_never_a_crash(value, tmp_path, capsys):
    """Issue 25 #7: a sample beyond ±1.8e308 parses as infinity; int() of it (or of NaN) made
    `gpuslo inspect` a traceback. Such a sample is no data, like DCGM's blank sentinels; in a
    fault-carrying field the GPU is unknown (exit 1), never healthy (newcomer3 #2)."""
    from gpuslo.cli import main

    uuid = "GPU-9a63752e-af8d-fe52-7f0d-968bca6d52e3"
    text = "".join(f'# TYPE {f} gauge\n{f}{{gpu="0",UUID="{uuid}",modelName="NVIDIA A30"}} '
                   f"{value}\n" for f in INTEGER_FIELDS)
    gpu = dcgm_page.parse_dcgm_page(text).gpus[uuid]
    assert not gpu.values and gpu.blank == set(INTEGER_FIELDS)
    status = dcgm_page.gpu_status(gpu)
    assert status.ecc_dbe_volatile is None and status.pcie_gen_current is None
    page = tmp_path / "dcgm.prom"
    page.write_text(text)
    assert main(["inspect", str(page)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "verdict: unknown" in captured.out
