"""One test per class of evidence the twentieth fresh first-contact corpus batch (tests/data/
corpus/fresh20, scored 18/20 on 2026-12-07 at 31c2e59, tests/data/first_contact/
corpus_fresh20_2026-12-07.txt) found misread: the real lines (the case files), variants, and
negatives that must not be read the same way.

- 2201 (`nvidia-smi -q` pasted into a MATLAB file, every line `% `): a tool's output quoted under
  a constant comment or quote marker (`% `, `# `, `> `, `// `, `;`, `+ `) is read under it, for
  every kind `inspect` reads (`inspect.quoted`); a prefix that is a word (a host name), a quote of
  prose and a marker only some lines carry are left as they are.
- 2215 (`lspci -vv` of an RTX 4090 on a bifurcated riser, `Width x8 (downgraded)` of x16): a GPU
  link at half its lanes is a x8-wired slot or lost lanes, which lspci's own capability cannot
  tell apart (pciutils marks any endpoint below its LnkCap); the port above the GPU can. Without
  it the link is `unknown`, with it warn (slot as narrow) or fatal (port wider)
  (`policy.pcie_width.lspci_narrow`).
"""

from __future__ import annotations

import pytest

from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.inspect.quoted import quoted_blocks, unquoted
from gpuslo.exporter.inspect.registry import detect_kinds
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.pcie_width import lspci_narrow
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of, per_model

SMI_Q_MATLAB = corpus_case("fresh20", 2201)
KERNEL_HOST = corpus_case("fresh20", 2208)  # every line starts with the same host name
IBSTAT = corpus_case("fresh20", 2206)
LSPCI_OK = corpus_case("fresh20", 2212)
LSPCI_RISER = corpus_case("fresh20", 2215)


def _quote(text: str, marker: str) -> str:
    """`text` with every line under `marker` (a blank line as the marker alone, as editors do)."""
    return "\n".join(f"{marker} {line}".rstrip() if line.strip() else marker
                     for line in text.split("\n"))


def _plain(text: str) -> str:
    """2201's text with the `% ` taken off by hand: what the reader should see."""
    return "\n".join(line[2:] if line.startswith("% ") else line.lstrip("%")
                     for line in text.split("\n"))


def _summary(findings) -> list[tuple]:
    return sorted((f.signal or "", f.class_, f.xid or 0, f.pci or "", f.count or 0)
                  for f in findings)


# --- 2201: a tool's output quoted under a constant marker ---------------------------------------


def test_smi_q_pasted_as_matlab_comments_shows_its_two_gpus():
    findings, verdict = inspect(SMI_Q_MATLAB)
    (seen,) = per_model(findings)
    assert seen.count == 2 and verdict in ("healthy", "unknown")
    assert not fatal(findings) and not of(findings, "pcie_degraded")
    assert not of(findings, "thermal_slowdown") and not of(findings, "nothing_recognised")
    assert _summary(findings) == _summary(inspect(_plain(SMI_Q_MATLAB))[0])


@pytest.mark.parametrize("marker", ["#", ">", "> >", ">>", "//", ";", ";;", "+"])
def test_the_same_output_under_every_comment_or_quote_marker_reads_the_same(marker):
    plain = _plain(SMI_Q_MATLAB)
    assert _summary(inspect(_quote(plain, marker))[0]) == _summary(inspect(plain)[0])


@pytest.mark.parametrize(
    ("text", "marker"),
    [(KERNEL_HOST, ">"), (IBSTAT, "%"), (LSPCI_OK, "//"), (LSPCI_RISER, "#"), (IBSTAT, "    %")],
    ids=["kernel-log-email-quote", "ibstat-matlab", "lspci-c-comment", "lspci-shell-comment",
         "indented-comment"],
)
def test_every_kind_is_read_under_a_quote_as_without_it(text, marker):
    quoted = _quote(text, marker)
    assert _summary(inspect(quoted)[0]) == _summary(inspect(text)[0])


def test_a_kernel_logs_xid_is_found_in_a_mail_quote_among_the_replys_own_lines():
    mail = "On Fri, Nov 15, you wrote:\n" + _quote(KERNEL_HOST, ">") + "\n\nThanks, Xid 62 again.\n"
    findings, verdict = inspect(mail)
    assert verdict == "unhealthy"
    assert any(f.class_ == "fatal" and f.xid == 62 and f.pci == "00000000:03:00.0"
               for f in findings)


def test_a_host_name_on_every_line_is_no_quote_marker():
    # Negative: 2208's lines all begin `Nov 15 14:05:01 sdu-dpai-turing-1 kernel:`: a word, read
    # as the kernel log it is, the text untouched.
    assert unquoted(KERNEL_HOST, detect_kinds) is KERNEL_HOST
    assert quoted_blocks(KERNEL_HOST.split("\n")) == []


def test_a_root_prompt_without_a_space_is_no_marker():
    assert unquoted(IBSTAT, detect_kinds) is IBSTAT  # `#ibstat`: the prompt, not a comment


def test_a_markdown_quote_of_prose_and_a_metrics_pages_comments_stay_as_they_are():
    prose = "> The GPU was slow again\n> after the driver update,\n> see the log below.\n"
    assert unquoted(prose, detect_kinds) is prose
    page = (
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n"
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
        "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1",device="nvidia0"} 34\n'
        'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",device="nvidia0"} 61.2\n'
    )
    assert unquoted(page, detect_kinds) is page


def test_lines_outside_a_quoted_block_keep_every_character():
    # A `% `-quoted -q between lines that carry no marker or another one: only the block changes.
    table = "+-----+\n| GPU |\n+-----+"
    text = "# a note\n" + SMI_Q_MATLAB + "\n" + table + "\n; one\n"
    out = unquoted(text, detect_kinds).split("\n")
    lines = text.split("\n")
    assert out[0] == "# a note" and out[-4:] == lines[-4:]
    assert out[1] == "!nvidia-smi -q" and out[3] == "==============NVSMI LOG============== "
    assert len(out) == len(lines)  # line numbers kept


def test_a_quoted_block_needs_three_marked_lines():
    assert quoted_blocks(["% a", "", "% b", "c"]) == []
    assert quoted_blocks(["x", "% a", "%", "% b", "", "% c", "y"]) == [("%", 1, 5)]


# --- 2215: a GPU link at half its lanes, told against the port above it -------------------------

# The root port above the GPU, from the real capture of tests/fixtures/evidence/
# lspci-vv-a100-and-bridge.txt (Sky Lake-E Root Port A), its secondary bus made 2215's 03.
ROOT_PORT = (
    "00:01.1 PCI bridge: Intel Corporation Sky Lake-E PCI Express Root Port A (rev 04) "
    "(prog-if 00 [Normal decode])\n"
    "\tControl: I/O+ Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- "
    "FastB2B- DisINTx-\n"
    "\tBus: primary=00, secondary=03, subordinate=03, sec-latency=0\n"
    "\tCapabilities: [90] Express (v2) Root Port (Slot+), MSI 00\n"
    "\t\tLnkCap:\tPort #5, Speed 16GT/s, Width x{width}, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 2.5GT/s, Width x8, TrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-\n"
    "\n"
)


def test_a_halved_gpu_link_without_its_port_is_unknown_not_healthy():
    findings, verdict = inspect(LSPCI_RISER)
    (degraded,) = of(findings, "pcie_degraded")
    assert (degraded.class_, degraded.pci) == ("unknown", "00000000:03:00.0")
    assert "x8" in degraded.message and "lost lanes" in degraded.message
    assert degraded.action == "check_cabling"
    assert [f.class_ for f in of(findings, "pcie_aer_corrected")] == ["warn"]
    assert verdict == "unknown" and not fatal(findings)


def test_the_port_above_wired_x8_makes_the_same_link_the_slots_width():
    # Negative: a bifurcated or x8-electrical slot shows in its port's LnkCap: as built, warn.
    findings, verdict = inspect(ROOT_PORT.format(width=8) + LSPCI_RISER)
    (degraded,) = of(findings, "pcie_degraded")
    assert degraded.class_ == "warn" and "wired x8" in degraded.message
    assert verdict == "healthy"


def test_the_port_above_wider_than_the_link_is_lanes_lost():
    findings, verdict = inspect(ROOT_PORT.format(width=16) + LSPCI_RISER)
    (degraded,) = of(findings, "pcie_degraded")
    assert degraded.class_ == "fatal" and "lanes lost" in degraded.message
    assert verdict == "unhealthy"


def test_lspci_narrow_grades():
    assert lspci_narrow(16, 16, False, None) is None
    assert lspci_narrow(8, 16, True, None)[0] == "unknown"
    assert lspci_narrow(None, None, True, None)[0] == "unknown"  # marked, widths not shown
    assert lspci_narrow(8, 16, True, 8)[0] == "warn"
    assert lspci_narrow(8, 16, True, 16)[0] == "fatal"
    assert lspci_narrow(4, 16, True, 4)[0] == "fatal"  # below half: lanes lost whatever the port


def test_nvml_half_width_is_not_graded_against_a_port():
    # NVML's maximum already takes the system into account (nvmlDeviceGetMaxPcieLinkWidth):
    # x8 of x16 there stays the warn of policy.pcie_width.narrow_class.
    status = GpuStatus(index="0", pcie_width_current=8, pcie_width_max=16, pcie_gen_current=4,
                       pcie_gen_max=4, utilization_gpu=0.9)
    assert [(p.signal, p.class_) for p in evaluate_gpu(status)] == [("pcie_degraded", "warn")]
