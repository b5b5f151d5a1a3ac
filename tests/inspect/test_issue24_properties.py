"""Issue 24's fail-closed property, over mutated real lines: no NVRM error line, no
fabric-manager error and no host-engine failure is ever read healthy by `inspect`, whatever prefix
the log puts before it (uptime, ctime, ISO, syslog with a localised month, journal, kmsg, none),
whatever spacing, PCI address, GPU number, code or trailing text it carries, and whatever benign
lines surround it. The real lines are from tests/fixtures/evidence/issue24 (SOURCES.md) and the
shared corpus."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

# NVRM lines that say a GPU is in trouble, verbatim (the GPU address is a placeholder the
# strategy fills): dev cases 114, 116, 118, 120, 122, 143; shared cases 001, 044, 047.
NVRM_ERRORS = (
    "NVRM: GPU {pci}: RmInitAdapter failed! (0x62:0x40:2168)",
    "NVRM: GPU {pci}: rm_init_adapter failed, device minor number 7",
    "NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP",
    "NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM",
    "NVRM s_executeBooterUcode_TU102: Booter failed with non-zero error code: 0xa",
    "NVRM kgspExecuteBooterUnloadIfNeeded_TU102: failed to execute Booter Unload: 0xffff",
    "NVRM nvAssertFailedNoLog: Assertion failed: rmStatus == NV_OK @ osinit.c:1982",
    "NVRM: Xid (PCI:{pci}): 120, GSP task exception: store access page fault (cause:0xf)",
    "NVRM: The NVIDIA probe routine failed for 1 device(s).",
    "NVRM: None of the NVIDIA graphics adapters were initialized!",
    "NVRM: NVIDIA init module failed!",
    "NVRM: Xid (PCI:{pci}): 119, pid=1, name=nvidia-smi, Timeout waiting for RPC from GSP!",
    "NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
)
# Fabric-manager errors, verbatim: dev cases 104 and 103, gpud's fabric-manager component, and
# FM's topology abort.
FM_ERRORS = (
    "detected NVSwitch fatal error {code} on fid 0 on NVSwitch pci bus id {pci} physical id 3 "
    "port 33",
    "detected number of NVSwitches don't match with any supported system topology, aborting "
    "fabric manager",
    "failed to find the GPU handle 5410063385821516767 in the multicast team request setup "
    "6130285411925746235 error {code}",
    "request to {word} NVSwitch port {code} on {pci} failed",
)
# Host-engine failures (DCGM's health-watch line of dev case 108 with FAILURE, and the host
# engine failing to start, NVIDIA/DCGM#34), in the log file, the journal or bare on stderr.
HE_FAILURES = (
    "[[Health]] Detected a FAILURE in health system {system}: 'GPU {gpu} {word} failure.",
    "Failed to start DCGM Server: -7",
)
SYSTEMS = ("Thermal", "Power", "NVLink", "Memory", "PCIe", "InfoROM", "Driver", "PMU", "MCU")
MONTHS = ("Jan", "Feb", "Mär", "avr", "11月", "dic", "Окт", "May")
BENIGN = (
    "[    0.084531] pid_max: default: 32768 minimum: 301",
    "[   32.420366] Disabling lock debugging due to kernel taint",
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 237",
)

pcis = st.builds(
    lambda domain, bus, dev: f"{domain}:{bus:02x}:{dev:02x}.0",
    st.sampled_from(["0000", "00000000", "0019"]),
    st.integers(0, 255),
    st.integers(0, 31),
)
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)
tails = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .:=()-", max_size=30)


@st.composite
def kernel_prefix(draw) -> str:
    month = draw(st.sampled_from(MONTHS))
    day, hour = draw(st.integers(1, 28)), draw(st.integers(0, 23))
    return draw(
        st.sampled_from(
            (
                f"[{draw(st.floats(0, 1e6, allow_nan=False)):12.6f}] ",
                f"[Mon {month} {day:2d} {hour:02d}:11:22 2024] ",
                f"2024-07-02T{hour:02d}:46:08,681559+00:00 node-01 kernel: ",
                f"{month} {day:2d} {hour:02d}:16:37 node-01 kernel: ",
                f"3,{day},{hour * 1000},-;",
                "kernel: ",
                "",
            )
        )
    )


@st.composite
def nvrm_line(draw) -> str:
    line = draw(st.sampled_from(NVRM_ERRORS)).format(pci=draw(pcis))
    return draw(kernel_prefix()) + line + draw(st.sampled_from(("", " ", "  ")))


@st.composite
def fm_line(draw) -> str:
    body = draw(st.sampled_from(FM_ERRORS)).format(
        code=draw(st.integers(10000, 29999)), pci=draw(pcis), word=draw(words)
    )
    month = draw(st.sampled_from(MONTHS))
    day, tid = draw(st.integers(1, 28)), draw(st.integers(1, 99999))
    stamp = f"[{month} {day:02d} 2025 13:59:45] [ERROR] [tid {tid}] "
    journal = f"{month} 15 14:15:47 node-01 nv-fabricmanager[4177]: "
    return draw(st.sampled_from(("", journal))) + stamp + body + draw(tails)


@st.composite
def he_line(draw) -> str:
    body = draw(st.sampled_from(HE_FAILURES)).format(
        system=draw(st.sampled_from(SYSTEMS)), gpu=draw(st.integers(0, 15)), word=draw(words)
    )
    stamp = draw(st.sampled_from(("", "2025-01-23 22:23:53.671 ")))
    prefix = draw(st.sampled_from((
        f"{stamp}ERROR [1514002:1514004] ",  # the log file
        f"Oct 02 11:04:51 node-01 nv-hostengine[3121]: {stamp}ERROR [3121:3122] ",  # journal
        "Oct 02 11:04:51 node-01 nv-hostengine[3121]: ",  # the journal of its stderr
        "",  # its stderr (NVIDIA/DCGM#34)
    )))
    return f"{prefix}{body}"


def verdict_of(lines: list[str]) -> str:
    findings = inspect_text("\n".join(lines) + "\n", "mutated", InspectOptions())
    return verdict_from_findings(findings)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(nvrm_line(), st.lists(st.sampled_from(BENIGN), max_size=3), st.booleans())
def test_no_nvrm_error_line_is_read_healthy(line, benign, first):
    lines = [line, *benign] if first else [*benign, line]
    assert verdict_of(lines) != "healthy", lines


@SETTINGS
@given(fm_line(), st.booleans())
def test_no_fabric_manager_error_is_read_healthy(line, with_info):
    info = "[Feb 25 2025 13:59:45] [INFO] [tid 1808] multicast group 0 is freed."
    lines = [info, line] if with_info else [line]
    assert verdict_of(lines) != "healthy", lines


@SETTINGS
@given(he_line(), st.booleans())
def test_no_host_engine_failure_is_read_healthy(line, with_debug):
    debug = "2025-01-23 22:23:53.671 DEBUG [46345:46359] Thread handle 283117120 running"
    lines = [debug, line] if with_debug else [line]
    assert verdict_of(lines) != "healthy", lines
