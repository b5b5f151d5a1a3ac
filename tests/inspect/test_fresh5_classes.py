"""One test per class of evidence the fifth fresh first-contact batch (tests/data/corpus/fresh5,
scored 27/32 on 2026-12-06 at ab56305; tests/data/first_contact/corpus_fresh5_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a hand-varied variant that is not the
case's text, and a negative that must not be read the same way."""

from __future__ import annotations

import pytest

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.clock_events import reason_of_key
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page
from gpuslo.exporter.evidence.nvidia_smi.csv_output import looks_like_csv
from gpuslo.exporter.evidence.nvidia_smi.table import match_mig_row, parse_table
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of, per_model


def case(number: int) -> str:
    return corpus_case("fresh5", number)


def seen(findings) -> list[int]:
    """The counts of the `gpus_seen` findings that name no single GPU (the node totals)."""
    return [f.count for f in of(findings, "gpus_seen") if not (f.pci or f.uuid or f.gpu)]


# --- (a) a dcgm-exporter page of MIG instances, cut with an editorial `[...]` mark ---

SERIES = (
    'DCGM_FI_DEV_GPU_TEMP{{gpu="{gpu}",UUID="GPU-0000000{gpu}-aaaa-bbbb-cccc-000000000000",'
    'pci_bus_id="00000000:{bus}:00.0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",'
    'GPU_I_ID="{gi}",Hostname="n1"}} 41\n'
)


def _page(*gpus: tuple[int, str, int]) -> str:
    head = "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature.\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
    return head + "".join(SERIES.format(gpu=g, bus=b, gi=i) for g, b, i in gpus)


def test_mig_instances_of_one_gpu_on_a_cut_page_are_one_gpu():
    findings, verdict = inspect(case(611))
    assert seen(findings) == [1] and verdict == "healthy"
    (gpu,) = parse_dcgm_page(case(611)).gpus.values()
    assert gpu.mig_instances == {"7", "8", "9"}
    text = _page((0, "1A", 1), (0, "1A", 2), (1, "1B", 1)) + "[…]\n"
    text += SERIES.format(gpu=1, bus="1B", gi=2)
    findings, verdict = inspect(text)
    assert seen(findings) == [2] and verdict == "healthy"


def test_a_mig_page_short_of_its_gpus_still_fails():
    findings, verdict = inspect(case(611), expect_gpus=2)
    (missing,) = of(findings, "gpu_missing")
    assert missing.count == 1 and missing.class_ == "fatal" and verdict == "unhealthy"


def test_a_broken_line_that_is_no_elision_mark_is_still_unreadable():
    text = _page((0, "1A", 1)) + "[ GPU 1 series follow ]\n"
    findings, verdict = inspect(text)
    assert of(findings, "nothing_recognised") and verdict == "unknown"


# --- (b) the default table of a MIG-enabled GPU: ECC mode in the GPU row, counts per MIG device ---


def test_mig_devices_are_not_gpus_and_carry_the_ecc_counts():
    for number in (615, 630):
        findings, verdict = inspect(case(number))
        assert [f.count for f in of(findings, "gpus_seen")] == [1] and verdict == "healthy"
        (gpu,) = parse_table(case(number), "t").gpus
        assert gpu.status.ecc_dbe_volatile == 0 and gpu.status.index == "0"
    row = "|  0    2   1   1  |  16925MiB / 71424MiB    | 32      0 |  3   0    3    0    3 |"
    assert match_mig_row(row) == ("0", "0")
    assert match_mig_row("|   0  NVIDIA H200   On  |   00000000:83:00.0 Off |   On |") is None


def test_an_uncorrectable_count_or_err_on_a_mig_device_is_its_gpus():
    text = case(615).replace("| 60      0 |", "| 60      2 |", 1)
    findings, verdict = inspect(text)
    assert of(findings, "ecc_uncorrectable") and verdict == "unhealthy"
    findings, verdict = inspect(case(615).replace("| 60      0 |", "| 60   ERR! |", 1))
    assert of(findings, "gpu_error") and verdict == "unknown"


def test_a_mig_table_short_of_its_gpus_or_with_an_unreadable_ecc_cell_fails():
    findings, verdict = inspect(case(630), expect_gpus=2)
    assert [f.count for f in of(findings, "gpu_missing")] == [1] and verdict == "unhealthy"
    broken = case(615).replace("Off |                   On |", "Off |                  Yes |", 1)
    with pytest.raises(ParseError, match="Volatile Uncorr. ECC"):
        parse_table(broken, "t")


# --- (c) a 410-era table of two models, cut inside its closing rule: the node total ---


def test_a_table_of_two_models_gives_the_node_total():
    findings, verdict = inspect(case(624), expect_gpus=3)
    assert not fatal(findings) and verdict == "healthy"
    total, *models = per_model(findings)
    assert total.count == 3 and "model" not in total.extra
    assert sorted(f.count for f in models) == [1, 2]
    cut = case(624).split("| 23%   24C")[0] + "[... cut ...]\n"  # GPU 2's second line cut too
    findings, verdict = inspect(cut, expect_gpus=3)
    assert of(findings, "gpus_seen")[0].count == 3 and verdict == "healthy"
    findings, verdict = inspect(case(624), expect_gpus=4)
    assert [f.count for f in of(findings, "gpu_missing")] == [1] and verdict == "unhealthy"


def test_a_gpu_row_cut_before_its_ecc_cell_is_counted_with_its_health_unread():
    text = case(624).split("| 23%   24C")[0]
    text = text[: text.rindex("00000000:DB") + 13] + "\n[... cut ...]\n"
    findings, verdict = inspect(text, expect_gpus=3)
    assert of(findings, "gpus_seen")[0].count == 3 and not of(findings, "gpu_missing")
    (unread,) = of(findings, "gpu_error")
    assert (unread.gpu, unread.class_, verdict) == ("2", "unknown", "unknown")
    processes = case(630).replace("/root/tools/memhog                     2194MiB |", "/root/t", 1)
    findings, verdict = inspect(processes)  # a process row cut is no GPU row
    assert [f.count for f in of(findings, "gpus_seen")] == [1] and verdict == "healthy"


def test_a_table_of_one_model_has_no_separate_total():
    text = case(624).replace("GeForce GTX 108...", "Tesla V100-PCIE...")
    findings, _ = inspect(text)
    assert [f.count for f in per_model(findings)] == [3]


# --- (d) a wide --query-gpu CSV: the active mask is now, the event counters are history ---


def test_clock_event_counters_are_history_not_a_current_reason():
    findings, verdict = inspect(case(618))
    assert looks_like_csv(case(618)) and len(case(618).splitlines()[0]) > 4096
    assert not of(findings, "clock_event") and verdict == "healthy"
    assert reason_of_key("clocks_event_reasons_counters.sw_power_cap") is None
    assert reason_of_key("clocks_event_reasons.sw_power_cap") == "sw_power_cap"


def test_an_active_hw_slowdown_in_the_mask_is_still_caught():
    for mask, reason in (("0x08", "hw_slowdown"), ("0x40", "hw_thermal")):
        findings, verdict = inspect(case(618).replace("0x0000000000000000", mask, 1))
        (event,) = of(findings, "clock_event")
        assert (event.reason, event.class_, verdict) == (reason, "fatal", "unhealthy")
    findings, _ = inspect(case(618).replace("0x0000000000000000", "0x04", 1))
    assert [f.reason for f in of(findings, "clock_event")] == ["sw_power_cap"]
