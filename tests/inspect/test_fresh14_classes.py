"""One test per class of evidence the fourteenth fresh first-contact batch (tests/data/corpus/
fresh14, scored 16/21 on 2026-12-07 at 3128df0, tests/data/first_contact/
corpus_fresh14_2026-12-07.txt) found misread: the real lines (the case file itself), variants in
the other forms of the class, and negatives that must not be read the same way.

- 1606 (personal notes): a shell prompt of another theme than `user@host:dir$` (zsh agnoster
  segments copied as text, `alex@exi > ~/Downloads > nvidia-smi`; oh-my-zsh `➜`, starship `❯`,
  fish `~>`, PowerShell `PS C:\\...>`) before a tool `inspect` reads starts that command's output
  (`inspect.split.PROMPTED_TOOL`).
- 1609 (systemctl start of nvidia-fabricmanager in a VM): a console line ending with a colon whose
  reason is wrapped onto the next line is read with that line (`policy.daemon_log.catalogue_text`):
  `NV_WARN_NOTHING_TO_DO` is the fabric manager not applicable.
- 1612 (dmesg -T): the PCI-less lines of one GPU's adapter-initialisation burst (`RmInitAdapter
  failed!`, `osInitNvMapping: *** Cannot attach gpu`) are that GPU's when the burst names exactly
  one GPU (`evidence.kernel_log.adapter_init`).
- 1617 (journal of dcgm-exporter and nv-hostengine): the exporter's own lines behind a journal
  prefix are its log; systemd's lines of its unit and of the host engine's unit exiting non-zero
  or killed are the source gone (`inspect.exporter_log`).
- 1619 (nvlink -s fragment): `Link N:` status lines with no `GPU N:` header are one unnamed GPU's
  links (`evidence.nvidia_smi.nvlink.headerless_links`), judged, not counted as the node's GPUs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuslo.exporter.checks import fabricmanager as fm_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.evidence.daemon_log import LogRecord
from gpuslo.exporter.evidence.dcgm.dcgmi import exporter_line, looks_like_exporter_log
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.evidence.nvidia_smi.nvlink import headerless_links
from gpuslo.exporter.inspect.exporter_log import claims_line
from gpuslo.exporter.inspect.registry import detect_kinds
from gpuslo.exporter.inspect.split import is_command_prompt, without_prompt
from gpuslo.exporter.policy.daemon_log import catalogue_text
from tests.inspect.corpus_classes import CORPUS, corpus_case, fatal, inspect, of

MISMATCH_NOTES = corpus_case("fresh14", 1606)
FM_WRAPPED = corpus_case("fresh14", 1609)
INIT_BURST = corpus_case("fresh14", 1612)
EXPORTER_JOURNAL = corpus_case("fresh14", 1617)
NVLINK_FRAGMENT = corpus_case("fresh14", 1619)

NVRM_VERSION = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.144.03  Mon Dec 30 17:44:08 UTC 2024\n"
)
MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\n"


def _case_path(number: int) -> Path:
    (path,) = (CORPUS / "fresh14" / "cases").glob(f"{number}_*")
    return path


# --- 1606: a prompt of another theme starts the command's output ------------------------------

def test_the_agnoster_prompt_notes_read_as_a_driver_mismatch():
    findings, verdict = inspect(MISMATCH_NOTES)
    assert verdict == "unhealthy"
    (mismatch,) = of(findings, "driver_mismatch")
    assert (mismatch.class_, mismatch.line) == ("fatal", 2)
    assert of(findings, "driver_version")[0].extra["driver_version"] == "550.144.03"
    assert not of(findings, "gpus_seen") and not of(findings, "nothing_recognised")


@pytest.mark.parametrize(
    "prompt",
    [
        "alex@exi > ~/Downloads > nvidia-smi",  # agnoster / powerline segments as text
        "➜  ~ nvidia-smi",  # oh-my-zsh robbyrussell
        "➜  gpu-notes git:(main) ✗ nvidia-smi",
        "❯ nvidia-smi",  # starship
        "alex@exi ~> nvidia-smi",  # fish
        "PS C:\\Users\\alex> nvidia-smi",  # PowerShell
    ],
)
def test_other_prompt_themes_start_the_command(prompt):
    assert is_command_prompt(prompt)
    assert without_prompt(f"{prompt}\n{MISMATCH}") == f"\n{MISMATCH}"
    cat = prompt.replace("nvidia-smi", "cat /proc/driver/nvidia/version")
    findings, verdict = inspect(f"{prompt}\n{MISMATCH}{cat}\n{NVRM_VERSION}")
    assert verdict == "unhealthy", prompt
    assert [f.signal for f in findings] == ["driver_mismatch", "driver_version"], prompt


@pytest.mark.parametrize(
    "line",
    [
        "run nvidia-smi > out.txt",  # a redirection: the glyph is followed by a file
        "GPU temperature > 85 C for 10 minutes",
        "see ~> notes for nvidia-smi",  # the tool is not the command after the glyph
        "cat > nvidia-smi.log",
        "alex@exi > ~/Downloads > ls -la",  # a prompt, but not of a tool inspect reads
    ],
)
def test_a_glyph_not_followed_by_a_tool_is_no_prompt(line):
    assert not is_command_prompt(line)


# --- 1609: a console line wrapped after its colon ---------------------------------------------

def test_nothing_to_do_wrapped_onto_the_next_line_is_not_applicable():
    findings, verdict = inspect(FM_WRAPPED)
    assert verdict == "healthy"
    (absent,) = of(findings, "fabric_manager_not_applicable")
    assert absent.class_ == "ok" and absent.line == 3
    assert "[NV_WARN_NOTHING_TO_DO]" in absent.message
    assert not fatal(findings) and not of(findings, "fabric_manager_error")


def test_the_wrapped_reason_decides_and_an_error_reason_is_no_absence():
    # Negative: the same head wrapped over an error reason is an error, never "not applicable".
    text = (
        "nv-fabricmanager: request to query NVSwitch device information failed:\n"
        "  ERROR Generic error [NV_ERR_GENERIC]\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "unknown"
    assert not of(findings, "fabric_manager_not_applicable")
    assert [f.class_ for f in of(findings, "fabric_manager_error")] == ["unknown"]


def test_only_a_console_head_ending_in_a_colon_takes_the_next_line():
    wrapped = LogRecord(3, 2, "", "console", None, "nv-fabricmanager: query failed:\nNothing to do")
    assert catalogue_text(wrapped) == "nv-fabricmanager: query failed: Nothing to do"
    # Negative: a console line that ends its sentence, and a status block's property lines.
    closed = LogRecord(3, 2, "", "console", None, "fabric manager is not active\nNothing to do")
    assert catalogue_text(closed) == "fabric manager is not active"
    status = LogRecord(1, 3, "", "systemctl", None,
                       "nvidia-fabricmanager.service: failed:\n● nvidia-fabricmanager.service")
    assert catalogue_text(status) == "nvidia-fabricmanager.service: failed:"


def test_the_live_fabric_manager_check_reads_the_wrapped_line_as_inspect(tmp_path):
    path = tmp_path / "fabricmanager.log"
    path.write_text(FM_WRAPPED)
    context = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
                           fabricmanager_log=path)
    output = fm_check.FabricManagerCheck().run(context)
    assert not [r for r in output.results if r.status in ("fail", "unknown")]


# --- 1612: the PCI-less lines of one GPU's initialisation burst --------------------------------

def test_rm_init_adapter_without_pci_is_the_gpu_the_burst_names():
    findings, verdict = inspect(INIT_BURST)
    assert verdict == "unhealthy"
    (failed,) = fatal(findings)
    assert (failed.pci, failed.reason) == ("00000000:82:00.0", "gpu_init_failed")
    assert all(f.pci == "00000000:82:00.0" for f in findings if f.kind == "kernel-log" and f.line)


def test_the_cannot_attach_lines_between_named_lines_are_that_gpus():
    # NVIDIA/open-gpu-kernel-modules#1151 (journal) and Cyridd/cmpunlocker#4 (dmesg): the PCI-less
    # osInitNvMapping lines sit between lines that name 0000:09:00.0.
    text = (
        "May 27 16:50:10 fedora kernel: NVRM: GPU 0000:09:00.0: rm_init_adapter failed, device "
        "minor number 0\n"
        "May 27 16:50:10 fedora kernel: NVRM: osInitNvMapping: *** Cannot attach gpu\n"
        "May 27 16:50:10 fedora kernel: NVRM: RmInitAdapter: osInitNvMapping failed, bailing out "
        "of RmInitAdapter\n"
        "May 27 16:50:10 fedora kernel: NVRM: GPU 0000:09:00.0: RmInitAdapter failed! "
        "(0x22:0x56:894)\n"
    )
    events = parse_kernel_log(text, "k")
    assert [e.pci for e in events] == ["00000000:09:00.0"] * 4


def _pcis(text: str) -> list[str | None]:
    return [e.pci for e in parse_kernel_log(text, "k")]


def test_a_burst_naming_two_gpus_gives_its_unnamed_lines_none():
    text = (
        "[   21.10] NVRM: GPU 0000:01:00.0: Failed to enable MSI-X.\n"
        "[   21.10] NVRM: GPU 0000:02:00.0: Failed to enable MSI-X.\n"
        "[   21.10] NVRM: RmInitAdapter failed! (0x22:0x56:742)\n"
    )
    assert _pcis(text) == ["00000000:01:00.0", "00000000:02:00.0", None]


def test_lines_apart_from_the_burst_or_off_the_init_path_keep_no_gpu():
    later = (
        "[   21.10] NVRM: GPU 0000:82:00.0: Failed to enable MSI-X.\n"
        "[   35.70] NVRM: RmInitAdapter failed! (0x22:0x56:742)\n"  # 14 s later: another moment
    )
    assert _pcis(later) == ["00000000:82:00.0", None]
    apart = (
        "[   21.10] NVRM: GPU 0000:82:00.0: Failed to enable MSI-X.\n"
        "[   21.10] pcieport 0000:80:01.1: AER: Corrected error received\n"
        "[   21.10] NVRM: RmInitAdapter failed! (0x22:0x56:742)\n"  # not adjacent: another burst
    )
    assert _pcis(apart)[-1] is None
    node_wide = (
        "[   21.10] NVRM: GPU 0000:82:00.0: Failed to enable MSI-X.\n"
        "[   21.10] NVRM: API mismatch: the client has the version 550.54.15, but\n"
    )
    assert _pcis(node_wide) == ["00000000:82:00.0", None]


def test_the_live_xid_check_fails_the_gpu_the_burst_names(tmp_path):
    context = CheckContext(kernel_log=_case_path(1612), state_dir=tmp_path, clock=lambda: 1.0)
    output = XidCheck().run(context)
    (failed,) = [r for r in output.results if r.status == "fail"]
    assert (failed.scope, failed.reason) == ("pci:00000000:82:00.0", "gpu_init_failed")


# --- 1617: dcgm-exporter's log through the journal --------------------------------------------

def test_the_exporter_journal_with_a_fatal_and_the_engine_killed_is_the_source_gone():
    assert detect_kinds(EXPORTER_JOURNAL)[:1] == ("dcgm-exporter-log",)
    findings, verdict = inspect(EXPORTER_JOURNAL)
    assert verdict == "unknown"
    unavailable = of(findings, "source_unavailable")
    assert [f.line for f in unavailable] == [19, 22]  # the fatal line; nvidia-dcgm killed by SEGV
    assert all(f.layer == "observability" for f in unavailable)
    assert of(findings, "source_stale")[0].line == 17
    assert not fatal(findings) and not of(findings, "gpu_missing")


JOURNAL = "Feb 28 16:29:08 gx01 dcgm-exporter[1298060]: "


def test_a_clean_start_through_the_journal_is_read_and_no_failure():
    # Negative: the same prefix on a clean start is a log read, not the source gone.
    text = "".join(
        f'{JOURNAL}time="2024-02-28T16:29:08+01:00" level=info msg="{msg}"\n'
        for msg in ("Starting dcgm-exporter", "DCGM successfully initialized!",
                    "Starting webserver")
    )
    assert looks_like_exporter_log(text)
    findings, _ = inspect(text)
    assert [f.signal for f in findings] == ["log_read"]


def test_systemd_lines_of_the_units_exiting_cleanly_are_no_failure():
    assert exporter_line(JOURNAL + "level=fatal") == "level=fatal"
    assert exporter_line("Feb 28 gx01 nv-hostengine[1]: x") == "Feb 28 gx01 nv-hostengine[1]: x"
    assert claims_line("Feb 28 16:29:14 gx01 systemd[1]: nvidia-dcgm.service: Main process "
                       "exited, code=killed, status=11/SEGV")
    for line in (
        "Feb 28 16:29:14 gx01 systemd[1]: dcgm-exporter.service: Main process exited, "
        "code=exited, status=0/SUCCESS",
        "Feb 28 16:29:14 gx01 systemd[1]: nvidia-dcgm.service: Deactivated successfully.",
        "Feb 28 16:29:14 gx01 systemd[1]: Started NVIDIA DCGM service.",
    ):
        assert not claims_line(line), line


# --- 1619: nvlink -s link lines with no GPU header --------------------------------------------

def test_a_headerless_nvlink_fragment_judges_its_links():
    assert detect_kinds(NVLINK_FRAGMENT)[:1] == ("nvlink-status",)
    findings, verdict = inspect(NVLINK_FRAGMENT, expect_gpus=2)
    assert verdict == "unhealthy"
    (down,) = of(findings, "nvlink_inactive")
    assert (down.class_, down.links, down.gpu) == ("fatal", [1], None)
    assert of(findings, "nvlink_active")[0].links == [0]
    # one unnamed GPU's links: not the node's GPU count
    assert not of(findings, "gpus_seen") and not of(findings, "gpu_missing")


def test_all_links_of_the_fragment_down_is_still_fatal():
    findings, verdict = inspect("Link 0: <inactive>\nLink 1: <inactive>\n")
    assert verdict == "unhealthy"
    assert of(findings, "nvlink_inactive")[0].links == [0, 1]


@pytest.mark.parametrize(
    "text",
    [
        "Link 1: <inactive>\n",  # one line: too little to call it nvlink -s
        "Link 0: Replay Errors: 0\nLink 1: Replay Errors: 0\n",  # counters (-e), not states
        "ethtool eth0\nLink 0: 25.781 GB/s\nLink 1: <inactive>\n",  # other text beside them
    ],
)
def test_other_link_lines_are_not_a_headerless_fragment(text):
    assert not headerless_links(text)


def test_link_lines_under_a_gpu_header_stay_that_gpus():
    # Negative: a header then its links is one nvlink -s output, never a `-L` list and an unnamed
    # fragment (fresh3 case 430, unindented link lines, read as before).
    text = "GPU 3: NVIDIA H100 (UUID: GPU-4f49)\nLink 0: 26.562 GB/s\nLink 1: <inactive>\n"
    findings, verdict = inspect(text)
    assert verdict == "unhealthy"
    assert [(f.gpu, f.links) for f in of(findings, "nvlink_inactive")] == [("3", [1])]
    findings, verdict = inspect(corpus_case("fresh3", 430))
    assert verdict == "healthy"
    assert not of(findings, "nothing_recognised") and not of(findings, "nvlink_inactive")
