"""The Xid policy as data: packaged classes per family, tokens, recovery actions, operator
overlays, escalation of repeated warn codes and boot noise, told as short kernel-log timelines."""

from __future__ import annotations

import pytest

from gpuslo.errors import ConfigError
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.policy.classify import classify_events
from gpuslo.exporter.policy.xid import load_policy

POLICY = load_policy()
LOAD = "[   20.000000] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.195.03"


def classes(lines: list[str], family: str | None = None, policy=POLICY) -> list[tuple]:
    events = parse_kernel_log("\n".join(lines))
    return [(c.event.code, c.class_, c.action) for c in classify_events(events, policy, family)]


def xid(
    t: float, code: int, rest: str = "pid=1, name=python, Ch 00000008", pci: str = "0000:cb:00"
) -> str:
    return f"[{t:12.6f}] NVRM: Xid (PCI:{pci}): {code}, {rest}"


def test_packaged_classes_and_fail_closed_default():
    assert classes([xid(1, 13), xid(2, 31), xid(3, 43), xid(4, 94), xid(5, 48), xid(6, 45)]) == [
        (13, "application", "restart_app"),
        (31, "application", "restart_app"),
        (43, "application", "none"),
        (94, "contained", "restart_app"),
        (48, "fatal", "reset_gpu"),
        (45, "secondary", "none"),
    ]
    assert classes([xid(1, 9999)]) == [(9999, "fatal", "reset_gpu")]


def test_family_sections_override_the_default():
    assert classes([xid(1, 63)], "ampere")[0][1:] == ("warn", "reset_gpu")
    assert classes([xid(1, 63)], "volta")[0][1:] == ("warn", "none")


def test_nvlink5_token_and_xid154_recovery_action_decide():
    lines = [
        "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0)",
        "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406)",
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) "
        "to 0x4 (Drain and Reset)",
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from "
        "0x4 (Drain and Reset) to 0x0 (None)",
    ]
    assert classes(lines, "blackwell") == [
        (145, "warn", "none"),
        (149, "fatal", "reset_gpu"),
        (154, "fatal", "drain_and_reset"),
        (154, "warn", "none"),
    ]


def test_sxid_token_decides_and_no_token_is_fatal():
    lines = [
        "[73309.6] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20009, Non-fatal, "
        "Link 04 RX Short Error Rate",
        "[73310.0] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, "
        "Link 28 sourcetrack timeout",
        "nvidia-nvswitch0: SXid (PCI:0004:00:00.0): 26008, SOE Watchdog error",
    ]
    assert [c[1] for c in classes(lines)] == ["warn", "fatal", "fatal"]


def test_xid109_once_is_warn_three_times_in_an_hour_is_fatal():
    once = [
        xid(100, 109, "pid=1, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT")
    ]
    assert classes(once) == [(109, "warn", "restart_app")]
    # t = 100 s, 1900 s, 3600 s: the third is within 3600 s of the first → fatal.
    thrice = [xid(t, 109) for t in (100, 1900, 3600)]
    assert [c[1] for c in classes(thrice)] == ["warn", "warn", "fatal"]
    # t = 100 s, 3000 s, 7000 s: never three within an hour.
    spread = [xid(t, 109) for t in (100, 3000, 7000)]
    assert [c[1] for c in classes(spread)] == ["warn", "warn", "warn"]
    # Per GPU: three on three different GPUs never escalate.
    gpus = [xid(100 + i, 109, pci=f"0000:{i:02x}:00") for i in range(3)]
    assert [c[1] for c in classes(gpus)] == ["warn"] * 3


def test_boot_noise_only_inside_the_window_after_driver_load():
    fatal_sxid = (
        "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Fatal, Link 44 Minion Link DLREQ"
    )
    inside = [LOAD, f"[   38.175561] {fatal_sxid}"]
    assert classes(inside, "hopper") == [(22013, "noise", "none")]
    outside = [LOAD, f"[ 4000.000000] {fatal_sxid}"]
    assert classes(outside, "hopper") == [(22013, "fatal", "reset_gpu")]
    # No driver-load line: kernel uptime bounds the time since the load.
    assert classes([f"[   38.175561] {fatal_sxid}"], "hopper")[0][1] == "noise"
    # No timestamp at all: never suppressed (fail closed).
    assert classes([fatal_sxid], "hopper")[0][1] == "fatal"
    assert classes(inside, "blackwell")[0][1] == "fatal"


def test_overlay_merges_over_the_packaged_policy(tmp_path):
    overlay = tmp_path / "ours.yaml"
    overlay.write_text(
        "xid:\n  families:\n    hopper:\n      13: {class: fatal, action: drain_and_reset}\n"
        "escalation:\n  - {codes: [31], count: 2, window_s: 60, action: reset_gpu}\n"
    )
    policy = load_policy(str(overlay))
    assert classes([xid(1, 13)], "hopper", policy) == [(13, "fatal", "drain_and_reset")]
    assert classes([xid(1, 13)], "ampere", policy) == [(13, "application", "restart_app")]
    assert classes([xid(1, 48)], "hopper", policy) == [(48, "fatal", "reset_gpu")]
    # The overlay's escalation list replaces the packaged one (lists replace, mappings merge).
    assert [c[1] for c in classes([xid(t, 109) for t in (1, 2, 3)], None, policy)] == ["warn"] * 3


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("xid:\n  default:\n    13: {class: deadly, action: none}\n", "xid.default.13.class"),
        ("xid:\n  default:\n    13: {class: fatal, action: panic}\n", "xid.default.13.action"),
        (
            "escalation:\n  - {codes: [109], count: 1, window_s: 60, action: none}\n",
            "escalation[0].count",
        ),
        ("boot_noise:\n  window_s: -5\n", "boot_noise.window_s"),
        ("xid: [1, 2]\n", "'xid'"),
        # Typos: unknown top-level, nested and family keys are errors, never silently ignored.
        ("zzz: 1\n", "field zzz: unknown field"),
        ("xid: {families: {hoppr: {}}}\n", "field xid.families.hoppr: unknown GPU family"),
        ("xid: {defualt: {13: {class: fatal, action: none}}}\n", "xid.defualt"),
        (
            "xid:\n  default:\n    13: {class: fatal, action: none, acton: reset_gpu}\n",
            "xid.default.13.acton",
        ),
        ("boot_noise: {families: {hopper: {xids: [13]}}}\n", "boot_noise.families.hopper.xids"),
        ("boot_noise: {families: {hoppr: {xid: [13]}}}\n", "boot_noise.families.hoppr"),
        ("boot_noise: {window: 10}\n", "boot_noise.window"),
        ("sxid: {token: {}}\n", "sxid.token"),
        ("nvlink5: {code: [144]}\n", "nvlink5.code"),
        (
            "escalation:\n  - {codes: [109], count: 3, window_s: 60, action: none, windows: 2}\n",
            "escalation[0].windows",
        ),
    ],
)
def test_invalid_overlay_names_the_file_and_field(tmp_path, text, field):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_policy(str(overlay))
    assert str(overlay) in str(error.value)
    assert field in str(error.value)


def test_unreadable_or_broken_overlay_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_policy(str(tmp_path / "missing.yaml"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("xid: {default: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml:\d+: not valid YAML"):
        load_policy(str(broken))
