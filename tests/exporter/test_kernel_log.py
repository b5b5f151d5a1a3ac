"""The kernel-log parser and `inspect` over the real corpus: every kernel-log case of
expected.yaml, every block of kernel_log_lines.txt, the H200 node's logs, and the prefixes real
tools print (uptime, ctime, ISO, syslog/journal, localised months, alert wrappers, kmsg)."""

from __future__ import annotations

import contextlib
import re

import pytest
import yaml
from conftest import CORPUS, FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.kernel_log.read import (
    looks_like_kernel_log,
    parse_kernel_log,
    scan_kernel_log_file,
)
from gpuslo.exporter.evidence.pci import normalise_pci
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

ENTRIES = [
    e for e in yaml.safe_load((CORPUS / "expected.yaml").read_text()) if e["kind"] == "kernel-log"
]
GPU_KINDS = ("xid", "sxid", "fallen_off_bus")


def pci_key(value):
    match = re.match(
        r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$", str(value)
    )
    return (int(match.group(1) or "0", 16), int(match.group(2), 16), int(match.group(3), 16))


def matches(want: dict, got: dict) -> bool:
    """The corpus matching rule of shared/tools/check_corpus.py."""
    for key, value in want.items():
        if got.get(key) is None:
            return False
        if key == "pci":
            if pci_key(value) != pci_key(got[key]):
                return False
        elif key == "state":
            if str(value).lower() != str(got[key]).lower():
                return False
        elif str(value) != str(got[key]):
            return False
    return True


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["case"][:3] for e in ENTRIES])
def test_corpus_case(entry):
    text = (CORPUS / "cases" / entry["case"]).read_text()
    findings = inspect_text(text, entry["case"], InspectOptions())
    dicts = [f.to_dict() for f in findings]
    assert {d["kind"] for d in dicts} == {"kernel-log"}
    wanted = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
    assert verdict_from_findings(findings) in wanted
    for want in entry.get("find") or []:
        assert any(matches(want, d) for d in dicts), (want, dicts)
    for refuse in entry.get("not") or []:
        assert not any(matches(refuse, d) for d in dicts), (refuse, dicts)


def corpus_blocks() -> list[tuple[str, list[str]]]:
    """kernel_log_lines.txt split at its `# source:` comments: (source line, event lines)."""
    blocks: list[tuple[str, list[str]]] = []
    for line in (CORPUS / "kernel_log_lines.txt").read_text().splitlines():
        if line.startswith("# source:"):
            blocks.append((line, []))
        elif blocks and line.strip() and not line.startswith("#"):
            blocks[-1][1].append(line)
    return blocks


BLOCKS = corpus_blocks()
MARKER = re.compile(r"NVRM: Xid|SXid \(|fallen off the bus")


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_corpus_line_is_recognised(block):
    _, lines = block
    events = [e for e in parse_kernel_log("\n".join(lines)) if e.kind in GPU_KINDS]
    assert events
    covered = {n for e in events for n in range(e.line, e.line + e.lines)}
    for number, line in enumerate(lines, start=1):
        if MARKER.search(line):
            assert number in covered, line
    for event in events:
        assert event.code is not None or event.kind == "fallen_off_bus"


def test_corpus_blocks_count_multi_line_events_once():
    counts = [
        len([e for e in parse_kernel_log("\n".join(b)) if e.kind in GPU_KINDS]) for _, b in BLOCKS
    ]
    # Xid 79 + its "GPU has fallen off the bus" line = 1, then three SXids on three switches;
    # the 3-line fallen-off-the-bus block = 1; the Xid 13 triplet + Xid 109 = 2; the 3-line
    # MMU fault = 1; the SXid Data/Non-fatal/Severity triplet = 1.
    assert counts[0] == 4
    assert counts[1] == 1
    assert counts[4] == 2
    assert counts[6] == 1
    assert counts[16] == 1
    assert sum(counts) == 29  # counted by hand from the file


LINE = (
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)
PREFIXES = {
    "uptime": ("[ 1843.308145] ", 1843.308145, "uptime"),
    "ctime": ("[Mon Aug  5 03:54:13 2024] ", 1722830053.0, "wall"),
    "iso-decorated": (
        "kern  :err   : 2024-08-05T03:54:13,123456+02:00 ",
        1722822853.123456,
        "wall",
    ),
    "syslog-host": ("Aug  5 03:54:13 node-01 kernel: ", 965447653.0, "wall"),
    "journal-no-host": ("Aug 05 03:54:13 kernel: ", 965447653.0, "wall"),
    "german-month": ("Okt 10 15:36:05 node-01 kernel: ", 971192165.0, "wall"),
    "french-month": ("févr. 14 05:03:41 node-01 kernel: ", 950504621.0, "wall"),
    "korean-month": ("8월 10 15:36:05 node-01 kernel: ", 965921765.0, "wall"),
    "alert-wrapper": ("2024-08-10T15:36:06Z ALERT node-01: kernel: [  123.4] ", 123.4, "uptime"),
    "kmsg": ("3,1234,5678901,-;", 5.678901, "uptime"),
    "journal-monotonic": ("[   38.174242] node-01 kernel: ", 38.174242, "uptime"),
    "none": ("", None, ""),
}


@pytest.mark.parametrize("name", sorted(PREFIXES))
def test_prefixes(name):
    prefix, stamp, clock = PREFIXES[name]
    (event,) = parse_kernel_log(prefix + LINE)
    assert (event.kind, event.code, event.pci) == ("xid", 79, "00000000:3B:00.0")
    assert event.clock_kind == clock
    assert event.timestamp == (pytest.approx(stamp) if stamp is not None else None)
    assert looks_like_kernel_log(prefix + LINE)


def test_identical_lines_are_separate_events_and_addresses_normalise():
    text = "\n".join(
        [
            LINE,
            LINE,
            "NVRM: Xid (PCI:00008ED0:00:00.0): 48, An uncorrectable DBE",
            "NVRM: Xid (0000:03:00): 14, Channel 00000001",
            "NVRM: Xid (PCI:...): 13, x",
        ]
    )
    events = parse_kernel_log(text)
    assert [e.code for e in events] == [79, 79, 48, 14, 13]
    assert [e.pci for e in events] == ["00000000:3B:00.0"] * 2 + [
        "00008ED0:00:00.0",
        "00000000:03:00.0",
        None,
    ]
    assert normalise_pci("b3:00.1") == "00000000:B3:00.1"
    assert normalise_pci("...") is None


def test_old_single_line_fallen_off_the_bus_and_nonfatal_sxid_spelling():
    events = parse_kernel_log(
        "\n".join(
            [
                "[ 5.0] NVRM: GPU at 0000:02:00.0 has fallen off the bus.",
                "[ 6.0] NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:1b06) "
                "installed in this system has "
                "fallen off the bus and is not responding to commands.",
                "[ 7.0] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20009, Nonfatal, "
                "Link 04 RX Short Error",
            ]
        )
    )
    assert [(e.kind, e.pci) for e in events] == [
        ("fallen_off_bus", "00000000:02:00.0"),
        ("fallen_off_bus", "00000000:03:00.0"),
        ("sxid", "00000000:06:00.0"),
    ]
    assert events[2].token == "Non-fatal"


def test_xid45_links_to_the_previous_xid_on_the_same_gpu_and_uuid_map_applies():
    text = "\n".join(
        [
            "[10.0] NVRM: Xid (PCI:0000:91:00): 31, pid=1, name=python, Ch 00000008",
            "[10.1] NVRM: Xid (PCI:0000:92:00): 13, pid=1, name=python, "
            "Graphics Exception: ESR 0x1",
            "[10.2] NVRM: Xid (PCI:0000:91:00): 45, pid=1, name=python, Ch 00000008",
            "[10.3] NVRM: GPU at PCI:0000:91:00: GPU-aaaaaaaa-1111-4222-8333-000000000005",
        ]
    )
    events = parse_kernel_log(text)
    assert events[2].caused_by == 31
    assert events[0].uuid == events[2].uuid == "GPU-aaaaaaaa-1111-4222-8333-000000000005"
    assert events[1].uuid is None


def test_port_down_at_the_end_is_fatal_and_a_recovered_port_is_not():
    down = "Feb 14 05:03:41 node-01 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN"
    up = "Feb 14 05:03:42 node-01 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE"
    still_down = [f.to_dict() for f in inspect_text(f"{up}\n{down}\n", "x", InspectOptions())]
    assert any(f.get("signal") == "port_down" and f["class"] == "fatal" for f in still_down)
    recovered = inspect_text(f"{down}\n{up}\n", "x", InspectOptions())
    assert verdict_from_findings(recovered) == "healthy"
    assert any(f.signal == "port_down" and f.class_ == "warn" for f in recovered)


@pytest.mark.parametrize("name", ["dmesg.txt", "dmesg-T.txt", "dev-kmsg.txt"])
def test_healthy_h200_logs_are_healthy_not_unknown(name):
    findings = inspect_text((FIXTURES / "h200" / name).read_text(), name, InspectOptions())
    assert verdict_from_findings(findings) == "healthy"
    (read,) = [f for f in findings if f.signal == "kernel_log_read"]
    assert read.count > 300


def test_chunked_file_scan_equals_one_parse(tmp_path):
    text = "\n".join(line for _, lines in BLOCKS for line in lines) + "\n"
    path = tmp_path / "kern.log"
    path.write_text("noise line\n" * 50 + text + "noise\n" * 7 + text)
    whole = parse_kernel_log(path.read_text())
    scan = scan_kernel_log_file(str(path), chunk_bytes=300)
    assert scan.finish() == whole
    assert scan.records == path.read_text().count("\n")


CORPUS_LINES = [line for _, lines in BLOCKS for line in lines]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(CORPUS_LINES),
            # no NUL: a text of NULs is binary, refused by the text parser (its own test)
            st.text(max_size=60).map(lambda t: t.replace("\r", "").replace("\0", "")),
        ),
        max_size=40,
    ),
    st.integers(min_value=1, max_value=400),
)
def test_file_scan_finds_what_the_text_parser_finds(tmp_path_factory, lines, chunk_bytes):
    """The file scan (bytes blocks of any size) and the text scan agree."""
    text = "\n".join(lines)
    path = tmp_path_factory.mktemp("scan") / "kern.log"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    assert scan_kernel_log_file(str(path), chunk_bytes).finish() == parse_kernel_log(
        path.read_bytes().decode("utf-8", errors="replace")
    )


def test_text_that_is_not_a_kernel_log_is_nothing_recognised():
    findings = inspect_text("just some words\nand more\n", "x", InspectOptions(), kind="kernel-log")
    assert verdict_from_findings(findings) == "unknown"
    with pytest.raises(ParseError):
        parse_kernel_log("\0" * 100, "blob")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_text_parses_or_raises_parse_error(text):
    for candidate in (text, "NVRM: Xid (PCI:" + text, "[ 1.0] nvidia-nvswitch0: SXid (" + text):
        try:
            events = parse_kernel_log(candidate)
            findings = inspect_text(candidate, "h", InspectOptions(), kind="kernel-log")
        except ParseError:
            continue
        assert isinstance(events, list) and findings
        assert isinstance(looks_like_kernel_log(candidate), bool)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_parse_or_raise_parse_error(data):
    with contextlib.suppress(ParseError):
        assert isinstance(parse_kernel_log(data.decode("utf-8", errors="replace")), list)


@pytest.mark.parametrize("chunk_bytes", [1, 20, 61, 4096])
def test_mmu_fault_continuation_across_a_chunk_boundary(tmp_path, chunk_bytes):
    """An Xid's continuation lines in the next chunk still join it (found by hypothesis)."""
    text = (
        "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus\n"
        "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_6 faulted @ 0x7f5a_e7504000. \n"
    )
    path = tmp_path / "kern.log"
    path.write_text(text)
    assert scan_kernel_log_file(str(path), chunk_bytes).finish() == parse_kernel_log(text)
