"""Node evidence the newcomer of tests/data/newcomer7/FINDINGS.md read through `gpuslo inspect`
(F11, F13, F19): the real lines of the threads named there, and negatives."""

from __future__ import annotations

from gpuslo.exporter.checks.dcgm_diag import judge_gpu
from gpuslo.exporter.evidence.dcgm.diag import parse_diag
from tests.inspect.corpus_classes import fatal, inspect, of

# NVIDIA/open-gpu-kernel-modules#1230 "GSP timeout" (595.71.05, 2026-07-05), verbatim
GSP_1230 = """\
[   14.650646] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  (root@epyc)  Fri Jul  3 11:27:00 AM UTC 2026
[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200
[   24.302484] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200
[   84.300451] NVRM: GPU6 _threadNodeCheckTimeout: _threadNodeCheckTimeout: currentTime: f420db7018cc0 >= f420db7018cc0
[   84.300463] NVRM: GPU6 _threadNodeCheckTimeout: _threadNodeCheckTimeout: Timeout was set to: 4000 msecs!
[   84.300476] NVRM: GPU6 kbusSendSysmembarSingle_GH100: - timeout error waiting for startToken = 0x3 cnt=24105122
[   84.300480] NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. kbusSendSysmembarSingle failed.
[   84.300482] NVRM: GPU6 _kgspCheckIfMemsysError: Unexpected error when checking for memory subsystem error: 0x72
[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout **********************************
[   84.300490] NVRM: GPU6 _kgspLogRpcTimeout: Note: Please also check logs above.
"""  # noqa: E501
# The banner and the Xid 119 record as open-gpu-kernel-modules kernel_gsp.c _kgspLogXid119
# prints them (the record's wording as in NVIDIA's Xid catalogue and #446)
XID119_WITH_BANNER = """\
[ 1000.100000] NVRM: _kgspLogXid119: ********************************* GSP Timeout **********************************
[ 1000.100001] NVRM: _kgspLogXid119: Note: Please also check logs above.
[ 1000.100003] NVRM: Xid (PCI:0000:01:00): 119, pid=1234, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x0 0x0).
"""  # noqa: E501


def test_gsp_heartbeat_timeout_and_banner_are_fatal_reset_gpu():
    """newcomer7 F11: NVIDIA's Xid catalogue files a GSP RPC timeout / GSP error as Xid 119 /
    120, RESET_GPU; gpuslo's xid_policy.yaml says fatal, reset_gpu for both. The heartbeat
    timeout, the memory-subsystem error and the GSP Timeout banner are that condition."""
    findings, verdict = inspect(GSP_1230)
    assert verdict == "unhealthy"
    (gsp,) = fatal(findings)
    assert (gsp.signal, gsp.action, gsp.reason) == ("driver_message", "reset_gpu", "xid_fatal")
    assert gsp.to_dict()["message_id"] == "gsp_timeout"
    assert "Heartbeat timed out" in gsp.message


def test_each_gsp_line_alone_is_fatal():
    for line in GSP_1230.splitlines():
        if any(w in line for w in ("Heartbeat timed out", "Memory Subsystem Error", "GSP Time")):
            findings, verdict = inspect(GSP_1230.splitlines()[0] + "\n" + line + "\n")
            assert verdict == "unhealthy", line
            assert fatal(findings)[0].action == "reset_gpu"


def test_the_banner_before_its_xid_119_adds_nothing():
    """The banner is the Xid 119 record's own header: one fatal event, the Xid's."""
    findings, verdict = inspect(XID119_WITH_BANNER)
    assert verdict == "unhealthy"
    assert [(f.xid, f.action) for f in fatal(findings)] == [(119, "reset_gpu")]
    assert not of(findings, "unrecognised_driver_message")


def test_unrelated_heartbeat_or_timeout_words_are_not_gsp_faults():
    """Negatives: a heartbeat that did not time out, and a kernel line outside NVRM."""
    text = (
        "[   10.000000] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05\n"
        "[   24.302465] NVRM: GPU0 kgspHeartbeatInit: heartbeat interval 1000 ms\n"
        "[   25.000000] watchdog: heartbeat timed out on cpu 3, GSP Timeout ***\n"
    )
    findings, _ = inspect(text)
    assert not fatal(findings)


# NVIDIA/go-dcgm#52 (BetaZYN, 2023-12-26), the Hardware section of `dcgmi diag -r 2`, verbatim
DIAG_52 = """\
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass - GPU: 1                                  |
|                           | Fail - GPU: 0                                  |
| Warning                   | GPU 0 Error using CUDA API cuCtxCreate Check   |
|                           | DCGM and system logs for errors. Reset GPU. R  |
|                           | estart DCGM. Rerun diagnostics. Unable to cre  |
|                           | ate CUDA context: 'CUDA-capable device(s) is/  |
|                           | are busy or unavailable'.                      |
| Info                      | GPU 1 Allocated 15568304202 bytes (98.3%)      |
| Diagnostic                | Fail - All                                     |
| Warning                   | GPU 0 API call cuMemGetInfo failed: 'context   |
|                           | is destroyed' Check DCGM and system logs for   |
|                           | errors. Reset GPU. Restart DCGM. Rerun diagno  |
|                           | stics.                                         |
+---------------------------+------------------------------------------------+
"""


def _memory_gpu0(text):
    findings, verdict = inspect(text)
    (gpu0,) = [f for f in of(findings, "diagnostic_result")
               if f.gpu == "0" and f.to_dict().get("test") == "GPU Memory"]
    return gpu0, verdict


def test_busy_context_then_its_destroyed_context_is_a_test_that_did_not_run():
    """newcomer7 F19: the Fail's texts are CUDA refusing a context (busy or unavailable) and a
    later call on that context (`context is destroyed`): the test did not run, unknown, no
    reset (DCGM: a Fail may be a test that could not complete; DCGM_FR_CUDA_API is MONITOR)."""
    gpu0, verdict = _memory_gpu0(DIAG_52)
    assert (gpu0.class_, gpu0.reason, gpu0.action) == ("unknown", "tool_error", "none")
    assert verdict == "unknown"


def _diagnostic(text):
    """The finding of the `| Diagnostic | Fail - All |` row (the test named Diagnostic)."""
    findings, verdict = inspect(text)
    (row,) = [f for f in of(findings, "diagnostic_result")
              if f.to_dict().get("test") == "Diagnostic"]
    return row, verdict


def test_diagnostic_is_a_test_row_and_its_warning_is_its_own():
    """go-dcgm#52: `| Diagnostic | Fail - All |` is the Hardware `Diagnostic` test's result (the
    table's header is `| Diagnostic | Result |`), and the Warning below it belongs to it, not to
    GPU Memory's GPU 0 above."""
    results = parse_diag(DIAG_52)
    assert [(r.test, r.gpu, r.status) for r in results] == [
        ("GPU Memory", "1", "Pass"), ("GPU Memory", "0", "Fail"), ("Diagnostic", None, "Fail")]
    assert "busy or unavailable" in results[1].messages[0] and len(results[1].messages) == 1
    (context_gone,) = results[2].messages
    assert context_gone.startswith("GPU 0 API call cuMemGetInfo failed: 'context is destroyed'")


def test_the_header_row_is_still_no_result():
    """Negative: `| Diagnostic | Result |` under the table's top rule is the header, skipped."""
    header = ("+---------------------------+------------------------------------------------+\n"
              "| Diagnostic                | Result                                         |\n"
              "+===========================+================================================+\n")
    assert [(r.test, r.status) for r in parse_diag(header + DIAG_52)] == [
        ("GPU Memory", "Pass"), ("GPU Memory", "Fail"), ("Diagnostic", "Fail")]


def test_diagnostic_fail_all_on_a_refused_context_did_not_run():
    """F19's ruling for the Diagnostic row: its only text is `context is destroyed` (CUDA 709)
    on GPU 0, whose context cuCtxCreate was refused (busy or unavailable) in the same run: a
    call on a context never created, unknown tool_error, no reset."""
    row, verdict = _diagnostic(DIAG_52)
    assert (row.class_, row.reason, row.action, row.gpu) == ("unknown", "tool_error", "none", "0")
    assert "context is destroyed (CUDA 709)" in row.message
    assert verdict == "unknown"


def test_a_destroyed_context_alone_or_with_a_fatal_word_stays_fatal():
    """Negatives: without the busy text (or with the refusal on another GPU) the destroyed
    context is not explained; a fatal-class word beside it keeps the Fail fatal."""
    alone = DIAG_52.replace("busy or unavailable", "an illegal memory access was encountered")
    gpu0, verdict = _memory_gpu0(alone)
    assert gpu0.class_ == "fatal" and verdict == "unhealthy"
    row, _ = _diagnostic(alone)
    assert (row.class_, row.action) == ("fatal", "reset_gpu")
    other_gpu = DIAG_52.replace("| GPU 0 Error using", "| GPU 1 Error using")
    row, _ = _diagnostic(other_gpu)
    assert row.class_ == "fatal"
    worded = DIAG_52.replace("is destroyed'", "is destroyed' uncorrectable ECC error")
    row, verdict = _diagnostic(worded)
    assert row.class_ == "fatal" and verdict == "unhealthy"


def test_the_live_validator_reads_the_diagnostic_row_as_inspect_does():
    """`dcgm_diag` judges each GPU by the same results: GPU 0 (and GPU 1, which the Fail - All
    holds too) did not run, unknown; without the refusal GPU 0 fails."""
    results = parse_diag(DIAG_52)
    for index in ("0", "1"):
        result = judge_gpu(index, f"GPU-{index}", results, "dcgmi diag")
        assert (result.status, result.reason) == ("unknown", "tool_error"), index
    alone = parse_diag(DIAG_52.replace("busy or unavailable", "an illegal memory access"))
    assert judge_gpu("0", "GPU-0", alone, "dcgmi diag").status == "fail"


# NVIDIA/gpu-operator#2511 (2026-06-02): the Fabric block of `nvidia-smi -q` on a GPU whose
# fabric registration has not finished
FABRIC_2511 = """\
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : In Progress
        Status                            : N/A
        CliqueId                          : N/A
        ClusterUUID                       : N/A
"""


def test_fabric_in_progress_says_status_n_a_as_shown():
    """newcomer7 F13: the verdict (fatal, drain_and_reset) was right; the message said `?`."""
    findings, verdict = inspect(FABRIC_2511)
    (fabric,) = of(findings, "fabric_unhealthy")
    assert verdict == "unhealthy" and fabric.action == "drain_and_reset"
    assert fabric.message.endswith("state In Progress, status N/A")
