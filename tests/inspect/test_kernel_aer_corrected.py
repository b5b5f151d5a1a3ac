"""The kernel's AER report of a *corrected* PCIe error is a warn, not an unknown node (newcomer 2
finding 9: `AER: Corrected error received` and `severity=Corrected ... RxErr` on a GPU made
`inspect` say unknown, rc 1). Documentation/PCI/pcieaer-howto.rst: correctable errors are
recovered by hardware. Uncorrected blocks stay with the fallback (negatives).

Lines in the kernel's own format (drivers/pci/pcie/aer.c `aer_print_error`, as quoted in the
howto and in corpus cases 328, 621 and 1307): the `received` line from the root port, the
`PCIe Bus Error: severity=` line, the status/mask line and one line per status bit; 621 is the
Linux 6.10+ wording (`Correctable error message received from`).
"""

from __future__ import annotations

import pytest

from gpuslo import names
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.kernel_aer import split_corrected
from gpuslo.exporter.policy.unrecognised import judge_lines
from gpuslo.verdict import verdict_from_findings

LOAD = "[Tue Nov  3 09:00:00 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"


def _block(severity: str, received: str, bit: str) -> list[str]:
    stamp = "[Tue Nov  3 10:14:00 2026]"
    return [f"{stamp} pcieport 0000:17:01.0: AER: {received}",
            f"{stamp} nvidia 0000:18:00.0: PCIe Bus Error: severity={severity}, type=Physical "
            "Layer, (Receiver ID)",
            f"{stamp} nvidia 0000:18:00.0:   device [10de:2330] error status/mask="
            "00001000/0000e000",
            f"{stamp} nvidia 0000:18:00.0:    [12] {bit}"]


def _inspect(lines: list[str]):
    findings = inspect_text("\n".join(lines) + "\n", "dmesg", InspectOptions(), "kernel-log")
    return findings, verdict_from_findings(findings)


@pytest.mark.parametrize(("severity", "received"), [
    ("Corrected", "Corrected error received: 0000:18:00.0"),
    ("Corrected", "Multiple Corrected error received: 0000:18:00.0"),
    ("Correctable", "Correctable error message received from 0000:18:00.0"),
])
def test_a_corrected_aer_block_is_a_counted_warn(severity: str, received: str) -> None:
    findings, verdict = _inspect([LOAD, *_block(severity, received, "Timeout")])
    assert verdict == names.VERDICT_HEALTHY
    aer = [f for f in findings if f.signal == "pcie_aer_corrected"]
    assert aer and all(f.class_ == names.CLASS_WARN for f in aer)
    assert sum(f.events for f in aer) == 4  # every line with an error word, `[12] Timeout` too
    assert not any(f.signal == "unrecognised_message" for f in findings)


@pytest.mark.parametrize("severity", ["Uncorrected (Non-Fatal)", "Uncorrected (Fatal)"])
def test_an_uncorrected_aer_block_stays_with_the_fallback(severity: str) -> None:
    # negative: uncorrectable errors are not recovered by hardware; the status line under them
    # is not taken as a corrected one's
    lines = [LOAD, *_block(severity, f"{severity} error received: 0000:18:00.0",
                           "Completion Timeout")]
    findings, verdict = _inspect(lines)
    assert verdict != names.VERDICT_HEALTHY
    assert not any(f.signal == "pcie_aer_corrected" for f in findings)


def test_a_status_line_takes_its_own_devices_last_severity() -> None:
    # negative: a corrected block on the GPU, then an uncorrected one: the second block's status
    # line is the fallback's, the first block's is taken
    lines = _block("Corrected", "Corrected error received: 0000:18:00.0", "Timeout")
    lines += _block("Uncorrected (Non-Fatal)",
                    "Uncorrected (Non-Fatal) error received: 0000:18:00.0", "Completion Timeout")
    corrected, rest = split_corrected(judge_lines(enumerate(lines, 1)))
    assert [i.line for i in corrected] == [1, 2, 3, 4]
    assert [i.line for i in rest] == [5, 6, 7, 8]
