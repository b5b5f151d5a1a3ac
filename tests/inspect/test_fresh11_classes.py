"""One test per class of evidence the eleventh fresh first-contact batch (tests/data/corpus/fresh11,
scored 17/19 on 2026-12-06 at 6711620 against this round's merged work,
tests/data/first_contact/corpus_fresh11_2026-12-06.txt) found misread: the real excerpt, a
variant, and negatives that must not be read the same way."""

from __future__ import annotations

from tests.inspect.corpus_classes import corpus_case, fatal, inspect

BAR_INVALID_VM = corpus_case("fresh11", 1319)  # one GPU, the banner's PCI on the indented line
BAR_INVALID_TWO = corpus_case("fresh11", 1318)  # two GPUs, probe failed, then the load banner


def _pcis(findings, signal="driver_message"):
    return sorted(f.pci for f in fatal(findings) if f.signal == signal and f.pci)


def test_an_unstamped_indented_nvrm_line_names_the_gpu_of_the_message_above():
    findings, verdict = inspect(BAR_INVALID_VM, "kernel-log")
    assert verdict == "unhealthy"
    assert _pcis(findings) == ["00000000:00:05.0"]
    findings, _ = inspect(BAR_INVALID_TWO, "kernel-log")
    assert _pcis(findings) == ["00000000:14:00.0", "00000000:1C:00.0"]


def test_a_stamped_or_unindented_line_stays_a_message_of_its_own():
    # negatives: the same second line with a stamp of its own, or not indented, is its own
    # message; the message above keeps no GPU
    lines = BAR_INVALID_VM.splitlines()
    for second in ("[    1.121035] NVRM: BAR2 is 0M @ 0x0 (PCI:0000:00:05.0)",
                   "NVRM: BAR2 is 0M @ 0x0 (PCI:0000:00:05.0)"):
        findings, _ = inspect("\n".join([*lines[:3], second]) + "\n", "kernel-log")
        banner = [f for f in fatal(findings) if "I/O region" in (f.message or "")]
        assert banner and all(f.pci is None for f in banner), second


def test_the_load_banner_after_an_init_failure_is_the_same_load_not_a_reload():
    findings, _ = inspect(BAR_INVALID_TWO, "kernel-log")
    assert not [f for f in fatal(findings) if (f.extra or {}).get("later") == "driver_reloaded"]


def test_a_second_load_after_an_init_failure_is_a_reload():
    # negative: a banner printed again later (another load) still says the driver loaded again
    banner = next(line for line in BAR_INVALID_TWO.splitlines() if "loading NVIDIA UNIX" in line)
    again = BAR_INVALID_TWO + banner.replace("83260.106441", "83990.000001") + "\n"
    findings, _ = inspect(again, "kernel-log")
    later = {f.pci: (f.extra or {}).get("later") for f in fatal(findings) if f.pci}
    assert later == {"00000000:14:00.0": "driver_reloaded", "00000000:1C:00.0": "driver_reloaded"}
