"""The prefilter hides nothing from the readers (issue 30): on every corpus case, the events of the
scan (anchors found by `find` over blocks, only candidate lines parsed) are the events of every
line fed to the recognisers, and the file scan in small blocks gives them too. Corpora read:
shared/corpus/cases and tests/data/corpus/dev/cases (never a holdout directory).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.exporter.evidence.kernel_log.anchors import ANCHORS, grep_pattern
from gpuslo.exporter.evidence.kernel_log.events import EventBuilder
from gpuslo.exporter.evidence.kernel_log.read import scan_kernel_log_file, scan_kernel_log_text
from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent.parent / "shared" / "corpus" / "cases"  # beside the checkout
DEV = HERE.parent / "data" / "corpus" / "dev" / "cases"
CASES = sorted(p for folder in (SHARED, DEV) if folder.is_dir() for p in folder.glob("*.txt"))


def every_line(text: str) -> list:
    """The reference: every line fed to the recognisers, no prefilter."""
    builder = EventBuilder()
    for number, line in enumerate(text.split("\n"), 1):
        builder.feed(number, line.rstrip("\r"))
    return builder.finish()


def test_the_corpora_are_there():
    assert len(CASES) > 50 and any(p.parent == DEV for p in CASES)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.name[:40]}")
def test_prefiltered_events_are_every_lines_events(path, tmp_path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    expected = every_line(text)
    assert scan_kernel_log_text(text).finish() == expected
    # the file path, in blocks small enough that events straddle block boundaries
    copy = tmp_path / "log"
    copy.write_bytes(text.encode())
    assert scan_kernel_log_file(str(copy), chunk_bytes=257).finish() == expected


def test_matched_counts_the_lines_holding_an_anchor():
    text = "a NVRM: x\nplain\nb SXid (PCI:0) mlx5\nNVRM NVRM\n"
    scan = KernelLogScan()
    scan.feed(text)
    assert (scan.records, scan.matched) == (4, 3)
    assert ANCHORS == ("NVRM", "Xid", "mlx5", " [nvidia", "rm+0x")
    assert grep_pattern() == "NVRM|Xid|mlx5| \\[nvidia|rm\\+0x"


def test_grep_pattern_escapes_only_what_grep_and_re_treat_as_special():
    """` [nvidia` and ` [#` keep their space and `#` bare (GNU grep warns of `\\ `, `\\#`)."""
    assert grep_pattern((" [nvidia", " [#", "a.b|c")) == " \\[nvidia| \\[#|a\\.b\\|c"


def test_extra_anchors_reach_more_lines_and_none_is_refused():
    """A fallback extends the set: its lines are then candidates (counted in `matched`)."""
    text = "[ 1.0] efa 0000:10:1c.0: device error\n[ 2.0] NVRM: ok\n"
    plain, extended = KernelLogScan(), KernelLogScan(anchors=(*ANCHORS, "efa"))
    plain.feed(text.encode())
    extended.feed(text.encode())
    assert (plain.matched, extended.matched) == (1, 2)
    with pytest.raises(ValueError):
        KernelLogScan(anchors=())
