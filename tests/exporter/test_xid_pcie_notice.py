"""The live `xid` check reads the kernel's PCIe bandwidth notice as `gpuslo inspect` does
(`checks.xid_fallback`, `policy.pcie_notice`): a path narrower than its device is a `warn` for
that device, never a fail, from a kernel-log file (whole and resumed, `xid_fast`) and from
/dev/kmsg; lanes held at a lower speed and the driver's unlimited form add nothing.

Real lines: tests/data/corpus/fresh24 case 2607 (pastebin, level1techs: `journalctl -b0 | grep
'0b:00.0'` of a GTX 980 "limited by 8 GT/s x4 link at 0000:00:03.2 (capable of 126.016 Gb/s with
8 GT/s x16 link)"); the driver's unlimited form from fresh5 622 (mlx5_core at probe).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck, judge_scan
from gpuslo.exporter.checks.xid_file import resume_scan, scan_file
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.verdict import node_verdict
from tests.inspect.corpus_classes import corpus_case

GREP_JOURNAL = corpus_case("fresh24", 2607)
SCOPE = "pci:00000000:0B:00.0"
# the notice as the kernel prints it to /dev/kmsg (fresh24 2607's line, its journal prefix off)
NOTICE = ("pci 0000:0b:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8 GT/s x4 link at "
          "0000:00:03.2 (capable of 126.016 Gb/s with 8 GT/s x16 link)")
# a GPU at idle: its lanes held, a lower link generation (`policy.pcie_notice`)
SLOWER = ("[    0.912345] pci 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by "
          "2.5 GT/s PCIe x16 link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe "
          "x16 link)")
UNLIMITED = ("[   10.643346] mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth "
             "(8.0 GT/s PCIe x8 link)")
BOOT = "[    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) #45-Ubuntu SMP\n"


def file_run(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "kern.log"
    log.write_text(text)
    context = CheckContext(kernel_log=log, kmsg_path=tmp_path / "no-kmsg", procfs=tmp_path,
                           state_dir=tmp_path / "state", clock=lambda: 1e9)
    output = XidCheck().run(context)
    return {r.scope: r for r in output.results}


def test_the_file_check_warns_on_the_narrow_path_inspect_warns_on(tmp_path):
    (seen,) = [f for f in inspect_kernel_log(GREP_JOURNAL, InspectOptions(), "f")
               if f.signal == "pcie_degraded"]
    results = file_run(tmp_path, GREP_JOURNAL)
    narrow = results[f"pci:{seen.pci}"]
    assert narrow.scope == SCOPE and (narrow.status, narrow.check) == ("warn", "xid")
    assert seen.message.startswith(narrow.message)  # the same reading (the result's is cut)
    assert "limited by the 8 GT/s x4 link at 0000:00:03.2" in narrow.message
    assert node_verdict(results.values()) == "healthy"  # a warn, never a fail


def test_a_notice_appended_to_a_followed_file_is_judged_at_once(tmp_path):
    """The exporter's follower (`xid_fast`) judges a resumed scan with `judge_scan`."""
    log = tmp_path / "kern.log"
    log.write_text(BOOT)
    _, resume = scan_file(log, 1e9)
    with log.open("a") as out:
        out.write(f"[    1.100000] {NOTICE}\n")
    scan, _ = resume_scan(resume, 1e9)
    output = judge_scan(scan, str(log), load_policy(None), None, 1e9)
    (narrow,) = [r for r in output.results if r.scope == SCOPE]
    assert narrow.status == "warn" and "4 of the device's 16 lanes" in narrow.message


def test_the_kmsg_read_that_reads_the_notice_warns(tmp_path):
    procfs = tmp_path / "proc"
    (procfs / "sys/kernel/random").mkdir(parents=True)
    (procfs / "sys/kernel/random/boot_id").write_text("boot-1\n")
    kmsg = tmp_path / "kmsg"
    kmsg.write_text(f"6,0,1000000,-;{NOTICE}\n")
    context = CheckContext(kmsg_path=kmsg, procfs=procfs, state_dir=tmp_path / "state",
                           clock=lambda: 1e9)
    results = {r.scope: r for r in XidCheck().run(context).results}
    assert results[SCOPE].status == "warn"
    assert node_verdict(results.values()) == "healthy"


def test_held_lanes_and_the_unlimited_form_add_no_result(tmp_path):
    """Negatives: a slower link with its lanes held is normal (inspect: `pcie_link` ok), the
    driver's unlimited form no notice at all; neither gives the device a result."""
    results = file_run(tmp_path, BOOT + SLOWER + "\n" + UNLIMITED + "\n")
    assert set(results) == {"node"}
    assert results["node"].status == "ok"
