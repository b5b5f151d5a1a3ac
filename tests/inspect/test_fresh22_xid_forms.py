"""The Xid record by its shape, from the twenty-second fresh first-contact corpus batch (tests/data/
corpus/fresh22, scored 16/20 on 2026-12-07 at d0b7d41, tests/data/first_contact/
corpus_fresh22_2026-12-07.txt): the real lines, the driver's format with the punctuation people
and old consoles vary, and near-misses that must not be read as an Xid.

- 2405 (dmesg of an 11x GTX 750 mining rig, retyped: `NVRM Xid (PCI:0000:0b:00) : 32, Channel ID
  00000009 intr 00008000` twice): no colon after NVRM and a space before the colon read healthy
  and lost the Xid. The driver prints `NVRM: Xid (PCI:%04x:%02x:%02x): %d, ...`
  (open-gpu-kernel-modules kernel_rc.c); `kernel_log.parse._XID` reads the NVRM tag, an optional
  colon, `Xid`, the address in parentheses, an optional colon and the code, spaces and tabs
  between them.
- The deeper class: an NVRM line holding the word Xid that no form reads went to the driver-message
  catalogue, whose `unreadable_records` held only `NVRM: Xid`, and carried no error word: chatter,
  dropped (every NVRM line is the kernel-log reader's, `read.CLAIMED_LINE`, so the device-and-
  severity fallback never saw it). Now such a line is `unknown` (parse_error), naming the line, in
  `inspect` and in the live check.
"""

from __future__ import annotations

import pytest

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from tests.inspect.corpus_classes import corpus_case, inspect

RIG = corpus_case("fresh22", 2405)
PCI = "00000000:0B:00.0"
# The same record as the driver prints it (shared/corpus/kernel_log_lines.txt, Bumblebee #677:
# `[24128.828315] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000`).
DRIVER = "[12146.826127] NVRM: Xid (PCI:0000:0b:00): 32, Channel ID 00000009 intr 00008000"


def _xids(text: str) -> list[tuple]:
    return [(e.code, e.pci) for e in parse_kernel_log(text) if e.kind == "xid"]


# --- 2405: the real lines -----------------------------------------------------------------------


def test_the_retyped_rig_lines_are_two_xid_32_on_0b_never_healthy():
    assert _xids(RIG) == [(32, PCI), (32, PCI)]
    findings, verdict = inspect(RIG)
    xid = [f for f in findings if f.xid == 32]
    assert verdict == "unhealthy" and len(xid) == 2
    assert {f.pci for f in xid} == {PCI}
    assert not {f.class_ for f in xid} & {names.CLASS_APPLICATION, names.CLASS_OK,
                                          names.CLASS_NOISE}


def test_the_rig_lines_read_as_the_driver_line_reads():
    assert [(f.xid, f.class_, f.pci) for f in inspect(RIG)[0] if f.xid] == [
        (f.xid, f.class_, f.pci) for f in inspect(f"{DRIVER}\n{DRIVER}\n")[0] if f.xid
    ]


@pytest.mark.parametrize(
    "record",
    [
        "NVRM Xid (PCI:0000:0b:00) : 32, Channel ID 00000009 intr 00008000",  # 2405
        "NVRM: Xid (PCI:0000:0b:00) : 32, Channel ID 00000009 intr 00008000",
        "NVRM Xid (PCI:0000:0b:00): 32, Channel ID 00000009 intr 00008000",
        "NVRM:Xid (PCI:0000:0b:00):32, Channel ID 00000009 intr 00008000",
        "NVRM :  Xid(PCI:0000:0b:00)  :  32 , Channel ID 00000009 intr 00008000",
        "NVRM:\tXid (PCI:0000:0b:00):\t32, Channel ID 00000009 intr 00008000",
        "NVRM: XID (PCI:0000:0b:00): 32, Channel ID 00000009 intr 00008000",
        "NVRM: Xid (0000:0b:00): 32, Channel ID 00000009 intr 00008000",  # old: no `PCI:`
        "NVRM: Xid (PCI: 0000:0b:00): 32, Channel ID 00000009 intr 00008000",
        "NVRM: Xid (PCI:0000:0b:00) 32, Channel ID 00000009 intr 00008000",  # no colon at all
    ],
    ids=["rig", "space-before-colon", "no-nvrm-colon", "no-spaces", "spaces-everywhere", "tabs",
         "upper-case", "no-pci-tag", "space-after-pci", "no-code-colon"],
)
def test_every_punctuation_of_the_record_reads_the_same_xid(record):
    (event,) = parse_kernel_log(f"[12146.826127] {record}\n")
    assert (event.kind, event.code, event.pci) == ("xid", 32, PCI)
    assert event.timestamp == pytest.approx(12146.826127)
    assert event.message.startswith("NVRM") and event.message.endswith("intr 00008000")


def test_the_mig_and_caused_by_fields_survive_the_loose_punctuation():
    mig, teardown = parse_kernel_log(
        "NVRM Xid (PCI:0000:01:00 GPU-I:05) : 43, pid=7, name=python3, Ch 00000002\n"
        "NVRM Xid (PCI:0000:dc:00) : 45, pid=1818990, name=python3, Ch 00000001 caused by "
        "previous Xid 149\n"
    )
    assert (mig.code, mig.pci, mig.gpu_instance) == (43, "00000000:01:00.0", 5)
    assert (teardown.code, teardown.caused_by) == (45, 149)


# --- the deeper class: an NVRM Xid line no form reads is unknown, never dropped ------------------


@pytest.mark.parametrize(
    "line",
    [
        "[12146.826127] NVRM Xid [PCI:0000:0b:00] 32, Channel ID 00000009 intr 00008000",
        "[12146.826127] NVRM: Xid (PCI:0000:0b:00): , Channel ID 00000009 intr 00008000",
        "[12146.826127] NVRM: Xid (PCI:0000:0b:0",
        "[12146.826127] NVRM: xid (PCI:0000:0b:00): 32, Channel ID 00000009 intr 00008000",
        "[12146.826127] NVRM - Xid - PCI 0000:0b:00 - 32",
    ],
    ids=["brackets", "no-code", "cut-off", "lower-case", "dashes"],
)
def test_an_nvrm_xid_line_no_form_reads_is_unknown_naming_the_line(line, tmp_path):
    findings, verdict = inspect(line + "\n")
    (unread,) = [f for f in findings if f.reason == "parse_error" and f.kind == "kernel-log"]
    assert verdict == "unknown" and unread.class_ == names.CLASS_UNKNOWN
    assert line.split("] ", 1)[1] in unread.message
    log = tmp_path / "kern.log"
    log.write_text(line + "\n")
    output = XidCheck().run(CheckContext(kernel_log=log, state_dir=tmp_path))
    assert names.STATUS_OK not in {r.status for r in output.results if r.reason}
    assert names.STATUS_UNKNOWN in {r.status for r in output.results}


def test_the_live_check_fails_the_rigs_gpu(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text(RIG)
    output = XidCheck().run(CheckContext(kernel_log=log, state_dir=tmp_path))
    assert names.STATUS_FAIL in {r.status for r in output.results}


# --- negatives: what is not an NVRM Xid record ---------------------------------------------------


def test_a_sentence_about_xid_is_no_xid_and_no_finding():
    """A user's sentence in a pasted log (no NVRM tag) names no event and no unread record."""
    text = (
        "[12140.000001] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
        "After a few hours the miner stops and dmesg shows Xid (PCI:0000:0b:00) : 32 again\n"
    )
    assert _xids(text) == []
    findings, _ = inspect(text)
    assert not [f for f in findings if f.xid or f.reason == "parse_error"]


def test_an_nvswitch_sxid_is_not_taken_for_an_xid():
    """The loose Xid form needs the NVRM tag: an SXid (no NVRM) stays an SXid
    (shared/corpus/kernel_log_lines.txt line 87)."""
    (event,) = parse_kernel_log(
        "[ 1108.858286] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 28 "
        "sourcetrack timeout error (First)\n"
    )
    assert (event.kind, event.code) == ("sxid", 24007)


def test_xid_inside_a_driver_function_name_is_no_unread_record():
    """`_kgspLogXid119` (the GSP timeout banner of corpus fresh 225 and fresh10 1215) names a
    function, not an Xid record: no parse_error for it."""
    line = "[Sun Apr 26 23:12:26 2026] NVRM: _kgspLogXid119: Note: Please also check logs above.\n"
    findings, _ = inspect(line)
    assert not [f for f in findings if f.reason == "parse_error"]
    assert not _xids(line)


# --- the Xid line family under every prefix and line ending (audit) -----------------------------

# Real records: 2405's (retyped), the driver's own Xid 32 (shared/corpus/kernel_log_lines.txt,
# Bumblebee #677) and Xid 79 without pid/name (the same file, NVSentinel #155).
RECORDS = {
    "2405": ("NVRM Xid (PCI:0000:0b:00) : 32, Channel ID 00000009 intr 00008000", 32, PCI),
    "bumblebee-677": ("NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000", 32,
                      "00000000:01:00.0"),
    "nvsentinel-155": ("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus", 79,
                       "00000000:44:00.0"),
}
# Prefixes as the tools print them: dmesg's uptime (padded, unpadded, no space after), a journal
# without and with host, the bare `kernel:` tag (journalctl -o cat after a grep keeps it), an
# RFC 5424 record (rsyslog's RSYSLOG_SyslogProtocol23Format), /dev/kmsg, tab-separated fields,
# none (the message column alone).
PREFIXES = [
    "[    5.826127] ", "[12146.826127] ", "[12146.826127]", "Dec 07 21:00:01 kernel: ",
    "Dec 07 21:00:01 rig kernel: ", "kernel: ", "kernel: [12146.826127] ",
    "<4>1 2026-12-07T21:00:01.123456+00:00 rig kernel - - - ", "4,1234,12146826127,-;",
    "Dec 07 21:00:01\trig\tkernel:\t", "",
]


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("record", sorted(RECORDS))
def test_an_xid_record_is_read_under_every_prefix_and_line_ending(record, prefix, ending):
    line, code, pci = RECORDS[record]
    text = f"{prefix}{line}{ending}" * 2
    events = parse_kernel_log(text)
    assert [(e.kind, e.code, e.pci) for e in events] == [("xid", code, pci)] * 2
    assert not events[0].message.endswith("\r")
    findings, verdict = inspect(text)
    assert {f.xid for f in findings if f.xid} == {code} and verdict != "healthy"


def test_prose_naming_an_xid_address_is_not_taken_for_a_kernel_log():
    """The kind detection knows the record by its NVRM head: a user's sentence is not one."""
    from gpuslo.exporter.evidence.kernel_log.read import looks_like_kernel_log

    assert looks_like_kernel_log("NVRM Xid (PCI:0000:0b:00) : 32, Channel ID 00000009\n")
    assert not looks_like_kernel_log("The card at PCI:0000:0b:00 shows Xid (32) every hour.\n")
    assert not looks_like_kernel_log("my NVRM module logs an Xid now and then\n")


# --- the record without its NVRM tag (a log tool stripped it) -----------------------------------

MESSAGE_ONLY = corpus_case("fresh17", 1913)  # the journal's message column: `Xid (PCI:...): 79,`


def test_the_message_column_xid_79_is_read_as_xid_79_on_its_gpu():
    assert _xids(MESSAGE_ONLY) == [(79, "00000000:01:00.0")]
    findings, verdict = inspect(MESSAGE_ONLY)
    (xid,) = [f for f in findings if f.xid == 79]
    assert verdict == "unhealthy" and xid.class_ == names.CLASS_FATAL


@pytest.mark.parametrize(
    "prefix", ["", "Dec 07 21:00:01 rig kernel: ", "[12146.826127] ", "4,1234,12146826127,-;"],
    ids=["message-column", "journal", "uptime", "kmsg"],
)
def test_the_rig_record_without_its_tag_is_still_an_xid_32(prefix):
    """2405's record as the driver prints it, with the NVRM tag stripped: an Xid without error
    words, which no fallback would catch."""
    line = f"{prefix}Xid (PCI:0000:0b:00): 32, Channel ID 00000009 intr 00008000\n"
    assert _xids(line) == [(32, PCI)]
    assert {f.xid for f in inspect(line)[0] if f.xid} == {32}


def test_the_live_check_counts_a_tagless_xid_in_a_log_file(tmp_path):
    """A file is scanned through the prefilter's anchors (`Xid` finds the tag-less line)."""
    log = tmp_path / "kern.log"
    log.write_text("Dec 07 21:00:01 rig kernel: Xid (PCI:0000:0b:00): 32, Channel ID 00000009 "
                   "intr 00008000\n")
    output = XidCheck().run(CheckContext(kernel_log=log, state_dir=tmp_path))
    assert output.facts[0].xid_events == {(PCI, "32", "warn"): 1}


def test_a_tagless_record_no_form_reads_is_unknown_and_a_sentence_is_nothing():
    unread = "[12146.826127] Xid (0000:0b:00): 32, Channel ID 00000009 intr 00008000\n"
    findings, verdict = inspect(unread)
    assert verdict == "unknown" and [f for f in findings if f.reason == "parse_error"]
    sentence = "[12146.826127] usb 1-1: new device\nthen dmesg shows Xid (PCI:0000:0b:00): 32\n"
    assert _xids(sentence) == []
    assert not [f for f in inspect(sentence)[0] if f.xid or f.reason == "parse_error"]
