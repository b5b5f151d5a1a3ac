"""One test per class of evidence the eighteenth fresh first-contact corpus batch (tests/data/
corpus/fresh18, scored 19/20 on 2026-12-07 at 0578a12, tests/data/first_contact/
corpus_fresh18_2026-12-07.txt) found misread: the real lines (the case files), variants, and
negatives that must not be read the same way.

- 2014 (a Talos kernel log's GSP RPC history rows, the Xid 119/120 line above them not in the
  excerpt): a GSP RPC error report's own lines (`driver_messages.yaml` `gsp_rpc_report`) are
  `unknown` once when the report's Xid is not shown, and add nothing under their Xid
  (`exporter.policy.classify`).
"""

from __future__ import annotations

from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

HISTORY_ROWS = corpus_case("fresh18", 2014)
XID119_REPORT = corpus_case("fresh18", 2013)
XID119_LINE = XID119_REPORT.splitlines()[0]


def _reports(findings) -> list:
    return [f for f in of(findings, "driver_message") if "GSP_RM_CONTROL" in (f.message or "")]


def test_gsp_rpc_history_rows_without_their_xid_are_one_unknown_finding():
    findings, verdict = inspect(HISTORY_ROWS)
    assert verdict == "unknown"
    (report,) = _reports(findings)
    assert report.class_ == "unknown" and report.reason == "parse_error"
    assert report.gpu is None and report.pci is None  # the rows name no GPU
    assert not fatal(findings)


def test_the_rows_under_their_xid_119_add_nothing_to_it():
    findings, verdict = inspect(XID119_LINE + "\n" + HISTORY_ROWS)
    assert verdict == "unhealthy"
    assert [f.xid for f in fatal(findings)] == [119]
    assert not _reports(findings)


def test_the_report_headers_in_dmesg_form_are_read_as_the_report():
    text = (
        "[ 2638.641531] NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data "
        "0x000000002080a097 0x0000000000000490.\n"
        "[ 2638.641541] NVRM: GPU0 RPC history (CPU -> GSP):\n"
        "[ 2638.641545] NVRM:     entry function                   data0              data1    "
        "          ts_start           ts_end             duration actively_polling\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "unknown"
    assert [f.class_ for f in of(findings, "driver_message")] == ["unknown"]


def test_a_report_below_its_xids_dumps_in_the_same_moment_is_still_its_report():
    # The real report (2013): the Xid 119 line, then mailbox and core dumps in the same second;
    # its RPC history rows printed after those dumps belong to it.
    stamp = "192.168.11.119: kern: warning: [2026-04-22T21:30:51.5300{:02d}Z]: "
    rows = [stamp.format(i) + line.split("]: ", 1)[1] for i, line in
            enumerate(HISTORY_ROWS.splitlines())]
    findings, verdict = inspect(XID119_REPORT.rstrip("\n") + "\n" + "\n".join(rows) + "\n")
    assert verdict == "unhealthy"
    assert not _reports(findings)


def test_history_rows_a_minute_after_an_xid_119_far_above_are_a_report_of_their_own():
    # Negative: an earlier report does not swallow a later, headless one.
    stamp = "192.168.11.119: kern: warning: [2026-04-22T21:31:51.5300{:02d}Z]: "
    chatter = [stamp.format(i) + "NVRM: kgspDumpMailbox_TU102: GSP: MAILBOX(0) = 0x00000000"
               for i in range(6)]
    rows = [stamp.format(10 + i) + line.split("]: ", 1)[1] for i, line in
            enumerate(HISTORY_ROWS.splitlines())]
    findings, _ = inspect("\n".join([XID119_LINE, *chatter, *rows]) + "\n")
    (report,) = _reports(findings)
    assert report.class_ == "unknown"


def test_other_gsp_lines_and_hex_dumps_are_not_read_as_a_report():
    # Negatives: a mailbox dump line and a module banner carry hex and capitals but are no RPC
    # history row; alone they stay driver chatter (healthy, no report finding).
    text = (
        "[ 5.000001] NVRM: kgspDumpMailbox_TU102: GSP: MAILBOX(0) = 0x00000000\n"
        "[ 5.000002] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 "
        "06:54:38 UTC 2025\n"
    )
    findings, verdict = inspect(text)
    assert verdict != "unhealthy"
    assert not [f for f in of(findings, "driver_message") if f.class_ == "unknown"]
