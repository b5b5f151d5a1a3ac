"""One test per class of evidence the sixth fresh first-contact batch (tests/data/corpus/fresh6,
scored 23/30 on 2026-12-06 at ce35eb4, tests/data/first_contact/corpus_fresh6_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a hand-varied variant that is not the
case's text, and a negative that must not be read the same way."""

from __future__ import annotations

from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.inspect.split import COMMAND_PROMPT
from gpuslo.exporter.policy.classify import classify_events
from gpuslo.exporter.policy.xid import load_policy
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of


def case(number: int) -> str:
    return corpus_case("fresh6", number)


def xids(findings, code: int) -> list:
    return [f for f in findings if f.xid == code]


def oks(findings) -> list:
    return [f for f in findings if f.class_ == "ok"]


# --- (a) Xid 32 (PBDMA: corrupted push buffer stream) repeated on one GPU ---

XID32 = "[{t}] NVRM: Xid (PCI:0000:{bus}:00): 32, Channel ID 00000000 intr 00004000\n"


def test_a_repeated_xid_32_on_one_gpu_is_fatal():
    findings, verdict = inspect(case(702))
    assert verdict == "unhealthy"
    assert any(f.class_ == "fatal" for f in xids(findings, 32))
    assert not any(f.class_ in ("application", "ok", "noise") for f in xids(findings, 32))
    text = XID32.format(t="100.000000", bus="3b") + XID32.format(t="900.500000", bus="3b")
    findings, verdict = inspect(text)
    assert verdict == "unhealthy" and fatal(xids(findings, 32))


def test_a_single_xid_32_or_one_per_gpu_or_an_hour_apart_stays_warn():
    for text in (
        XID32.format(t="100.000000", bus="3b"),
        XID32.format(t="100.000000", bus="3b") + XID32.format(t="101.000000", bus="5e"),
        XID32.format(t="100.000000", bus="3b") + XID32.format(t="4000.000000", bus="3b"),
    ):
        findings, verdict = inspect(text)
        assert verdict == "healthy" and not fatal(findings), text
        assert {f.class_ for f in xids(findings, 32)} == {"warn"}


def test_the_live_checks_escalate_xid_32_too():
    text = XID32.format(t="10.000000", bus="3b") + XID32.format(t="11.000000", bus="3b")
    classified = classify_events(parse_kernel_log(text), load_policy(), None)
    assert [c.class_ for c in classified] == ["warn", "fatal"]


# --- (b) the driver found no adapter / the module failed to load: never ok ---


def test_no_nvidia_graphics_adapter_found_is_fatal_and_nothing_reads_ok():
    findings, verdict = inspect(case(703))
    assert verdict == "unhealthy" and not oks(findings) and not of(findings, "gpus_seen")
    (failed,) = of(findings, "driver_message")
    assert failed.class_ == "fatal" and failed.reason == "gpu_init_failed" and failed.line == 1
    text = "Mar  3 10:00:00 node-01 kernel: NVRM: No NVIDIA graphics adapters found\n"
    findings, verdict = inspect(text)
    assert verdict == "unhealthy" and fatal(findings) and not oks(findings)


def test_benign_nvrm_chatter_still_reads_healthy_and_ok():
    text = (
        "[    5.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
        "22:23:56 UTC 2024\n"
        "[    5.200000] NVRM: GPU 0000:3b:00.0: RmInitAdapter succeeded\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "healthy"
    (read,) = of(findings, "kernel_log_read")
    assert read.class_ == "ok"


# --- (c) an NVRM line saying a reset is required is fatal, never folded into an unknown ---


def test_reset_required_assertion_fails_closed():
    findings, verdict = inspect(case(708))
    assert verdict == "unhealthy" and not oks(findings)
    (reset,) = [f for f in findings if f.reason == "unrecognised_fatal_message"]
    assert reset.class_ == "fatal" and reset.line == 2
    text = (
        "[ 50.000000] NVRM: GPU1 nvAssertFailedNoLog: Assertion failed: status == NV_OK @ x.c:1\n"
        "[ 50.000001] NVRM: GPU1 some_call: GPU requires a reset (status 0x62)\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "unhealthy" and fatal(findings)


def test_unrecognised_nvrm_errors_without_a_fatal_word_stay_unknown():
    text = (
        "[ 50.000000] NVRM: GPU1 nvAssertFailedNoLog: Assertion failed: status == NV_OK @ x.c:1\n"
        "[ 50.000001] NVRM: GPU1 nvCheckFailedNoLog: Check failed: pFoo != NULL @ y.c:2\n"
    )
    findings, verdict = inspect(text)
    assert verdict == "unknown" and not fatal(findings)


# --- (d) InfiniBand ports down or disabled never count as active, in every framing ---

IBSTATUS_ACTIVE = (
    "Infiniband device 'mlx5_0' port 1 status:\n"
    "\tdefault gid:\t fe80:0000:0000:0000:58a2:e103:0022:ce5c\n"
    "\tbase lid:\t 0x12\n\tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n"
    "\tphys state:\t 5: LinkUp\n\trate:\t\t 400 Gb/sec (4X NDR)\n\tlink_layer:\t InfiniBand\n"
)


def test_ibstatus_with_tabs_all_ports_down_has_no_ports_active():
    findings, verdict = inspect(case(709))
    assert verdict == "unhealthy" and not of(findings, "ports_active")
    down = {f.device for f in of(findings, "port_down") if f.class_ == "fatal"}
    assert {"mlx5_3", "mlx5_4", "mlx5_5", "mlx5_11"} <= down
    text = IBSTATUS_ACTIVE.replace("4: ACTIVE", "1: DOWN").replace("5: LinkUp", "3: Disabled")
    findings, verdict = inspect(text)
    assert verdict == "unhealthy" and not of(findings, "ports_active")


def test_ibstat_fragment_with_a_disabled_port_has_no_ports_active():
    findings, _ = inspect(case(728))
    (down,) = of(findings, "port_down")
    assert down.device == "mlx5_8" and down.class_ != "ok" and not of(findings, "ports_active")


def test_a_healthy_ibstatus_still_reads_active():
    findings, verdict = inspect(IBSTATUS_ACTIVE)
    (active,) = of(findings, "ports_active")
    assert verdict == "healthy" and active.count == 1 and active.class_ == "ok"


# --- (e) Windows `nvidia-smi.exe --query-gpu ... --format=csv,nounits`, an unreadable cell ---


def test_windows_query_csv_with_an_unknown_error_cell_still_sees_the_gpu():
    findings, verdict = inspect(case(714))
    (seen,) = of(findings, "gpus_seen")
    assert seen.count == 1 and verdict in ("healthy", "unknown") and not fatal(findings)
    (cell,) = of(findings, "gpu_error")
    assert "power.default_limit" in cell.message and cell.class_ == "warn"
    text = (
        r"C:\Program Files\NVIDIA Corporation\NVSMI\nvidia-smi.exe --query-gpu=index,name,"
        "temperature.gpu --format=csv,noheader,nounits\n"
        "0, NVIDIA GeForce RTX 3090, [Unknown Error]\n"
    )
    findings, _ = inspect(text)
    assert of(findings, "gpus_seen")[0].count == 1 and not fatal(findings)


# --- (f) a root prompt `# ` transcript: nvidia-smi's mismatch, then /proc's version ---


def test_root_prompt_transcript_reads_the_mismatch():
    findings, verdict = inspect(case(722))
    (mismatch,) = of(findings, "driver_mismatch")
    assert mismatch.class_ == "fatal" and verdict == "unhealthy" and not of(findings, "gpus_seen")
    text = (
        "# /usr/bin/nvidia-smi -L\nFailed to initialize NVML: Driver/library version mismatch\n"
        "# cat /proc/driver/nvidia/version\n"
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    )
    assert of(inspect(text)[0], "driver_mismatch")


def test_a_comment_is_no_root_prompt():
    for line in ("# nvidia-smi", "# cat /proc/driver/nvidia/version", "# ibstat mlx5_0"):
        assert COMMAND_PROMPT.match(line), line
    for line in ("# this is a comment", "# cat notes.txt", "#nvidia-smi", "# nvidia-smi-ish"):
        assert not COMMAND_PROMPT.match(line), line
