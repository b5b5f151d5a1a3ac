"""One test per class of evidence the ninth fresh first-contact batch (tests/data/corpus/fresh9,
scored 19/22 on 2026-12-06 at f008934, tests/data/first_contact/corpus_fresh9_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a variant that is not the case's text,
and a negative that must not be read the same way."""

from __future__ import annotations

from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

# --- a dcgm-exporter page fetched with curl, the command above and curl's trailer below (1108) ---

VGPU_PAGE = corpus_case("fresh9", 1108)
# The case's series without what curl added around them.
SERIES = "\n".join(
    line for line in VGPU_PAGE.splitlines() if line.startswith(("#", "DCGM_"))
) + "\n"


def test_a_curl_fetched_page_reads_as_the_page_it_fetched():
    findings, verdict = inspect(VGPU_PAGE, "dcgm-metrics")
    assert not of(findings, "nothing_recognised")
    assert [f.count for f in of(findings, "gpus_seen") if f.gpu is None] == [1]
    assert verdict == "healthy" and not fatal(findings)
    assert inspect(VGPU_PAGE)[1] == "healthy"  # the kind detected, not only given


def test_a_bare_wget_or_a_prompted_curl_with_its_trailer_is_the_same_class():
    for fetched in (
        f"wget -qO- http://n:9400/metrics\n{SERIES}",
        f"$ curl -v localhost:9400/metrics\n{SERIES}"
        "* Connection #0 to host localhost left intact\n",
    ):
        findings, verdict = inspect(fetched, "dcgm-metrics")
        assert verdict == "healthy" and not of(findings, "nothing_recognised"), fetched


def test_a_fetch_curl_reports_as_cut_or_failed_is_never_read_as_a_page():
    cut = SERIES.rsplit("\n", 3)[0] + "\ncurl: (18) transfer closed with outstanding read data "
    cut += "remaining\n"
    findings, verdict = inspect(f"curl -L http://n:9400/metrics\n{cut}", "dcgm-metrics")
    assert verdict == "unknown" and of(findings, "nothing_recognised")
    other_note = SERIES + "* transfer closed with 1022 bytes remaining to read\n"
    assert inspect(other_note, "dcgm-metrics")[1] == "unknown"
    command_inside = SERIES + "curl -L http://n:9400/metrics\n"  # only the first line is a command
    assert inspect(command_inside, "dcgm-metrics")[1] == "unknown"


# --- dcgm-exporter's log in logrus's terminal form (`FATA[0000] ...`) (1117) ---

UNSUPPORTED_GPU = corpus_case("fresh9", 1117)
TTY_START = (
    "INFO[0000] Starting dcgm-exporter                       \n"
    "INFO[0000] DCGM successfully initialized!               \n"
)


def test_a_terminal_form_fatal_line_is_the_exporter_exiting():
    for kind in ("dcgm-exporter-log", None):
        findings, verdict = inspect(UNSUPPORTED_GPU, kind)
        (dead,) = of(findings, "source_unavailable")
        assert dead.class_ == "unknown" and dead.layer == "observability"
        assert verdict == "unknown" and not fatal(findings), kind


def test_coloured_and_timestamped_fatal_and_panic_lines_are_the_same_class():
    for line in (
        "\x1b[31mFATA\x1b[0m[0002] Failed to watch metrics: Error watching fields: Host engine is "
        "not valid any longer",
        "PANI[2024-04-08T10:37:52Z] runtime error: invalid memory address",
    ):
        findings, _ = inspect(TTY_START + line + "\n", "dcgm-exporter-log")
        assert of(findings, "source_unavailable"), line


def test_a_terminal_form_start_is_clean_only_without_error_lines():
    findings, verdict = inspect(TTY_START, "dcgm-exporter-log")
    assert [f.class_ for f in findings] == ["ok"] and verdict == "healthy"
    failed = TTY_START + "ERRO[0001] Failed to collect metrics; err: Error getting field values\n"
    findings, _ = inspect(failed, "dcgm-exporter-log")
    assert not of(findings, "log_read") and not of(findings, "source_unavailable")


def test_fatal_letters_inside_a_message_or_in_lower_case_are_no_exit():
    for line in ("INFO[0000] collecting FATA[0000] counters", "fata[0000] not logrus"):
        findings, _ = inspect(TTY_START + line + "\n", "dcgm-exporter-log")
        assert not of(findings, "source_unavailable"), line


# --- NVRM assertion lines whose status is NV_ERR_GPU_IS_LOST, no Xid, no PCI id (1118) ---

GPU_LOST = corpus_case("fresh9", 1118)
PREFIX = "Sep 16 06:34:24 node-7 kernel: "


def test_an_assertion_with_the_gpu_lost_status_is_a_gpu_off_the_bus():
    findings, verdict = inspect(GPU_LOST, "kernel-log")
    lost = [f for f in fatal(findings) if f.signal == "fallen_off_bus"]
    assert lost and all(f.action == "reboot_node" for f in lost)
    assert verdict == "unhealthy" and not [f for f in findings if f.class_ == "application"]


def test_the_status_named_either_way_in_another_check_macro_is_the_same_class():
    # Constructed in the driver's format (NV_CHECK_OK / NV_ASSERT_OK print the status's text, or
    # its name), not copied from a capture.
    for message in (
        "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus (0x0000000F) returned "
        "from pRmApi->Control(pRmApi, hClient, hObject, cmd, pParams, size) @ rs_client.c:833",
        "NVRM: nvAssertOkFailedNoLog: Assertion failed: NV_ERR_GPU_IS_LOST returned from "
        "kgspWaitForRmInitDone @ kernel_gsp.c:4109",
    ):
        findings, verdict = inspect(PREFIX + message + "\n", "kernel-log")
        assert [f.signal for f in fatal(findings)] == ["fallen_off_bus"], message
        assert verdict == "unhealthy"


def test_assertions_with_another_status_or_none_are_not_fatal():
    other = (
        PREFIX + "NVRM: nvAssertOkFailedNoLog: Assertion failed: Call not supported "
        "[NV_ERR_NOT_SUPPORTED] (0x00000056) returned from pRmApi->Control @ mem_mgr.c:102\n"
    )
    findings, verdict = inspect(other, "kernel-log")
    assert not fatal(findings) and verdict == "unknown"
    benign = corpus_case("fresh9", 1119)  # nvAssertFailedNoLog: Assertion failed: 0 @ osapi.c
    assert not fatal(inspect(benign, "kernel-log")[0])
