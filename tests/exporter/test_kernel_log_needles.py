"""The two engines of the kernel-log prefilter (`gpuslo.needles`) read the same lines:
Vectorscan's one pass (the `hyperscan` package, where installed) and the pure `find` passes give,
on every corpus case and on lines built to trip them, the same events, line numbers, candidate
counts and fallback lines. Corpora read: shared/corpus/cases and tests/data/corpus/dev/cases."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan
from gpuslo.exporter.policy.unrecognised import ERROR_LITERALS, ERROR_WORDS
from gpuslo.needles import Needles, vectorscan_available

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent.parent / "shared" / "corpus" / "cases"
DEV = HERE.parent / "data" / "corpus" / "dev" / "cases"
CASES = sorted(p for folder in (SHARED, DEV) if folder.is_dir() for p in folder.glob("*.txt"))
needs_vectorscan = pytest.mark.skipif(not vectorscan_available(), reason="hyperscan not installed")


def scanned(data: bytes, vectorscan: bool, block: int = 4096) -> KernelLogScan:
    """`data` fed in blocks of about `block` bytes cut at line ends, as the file reader feeds."""
    scan = KernelLogScan(extra=ERROR_WORDS, extra_literals=ERROR_LITERALS, vectorscan=vectorscan)
    start = 0
    while start < len(data):
        cut = data.rfind(b"\n", start, start + block) + 1
        if cut <= start:  # no line end in the block: the whole line
            cut = data.find(b"\n", start) + 1 or len(data)
        scan.feed(bytearray(data[start:cut]))  # a bytearray, like the reader's buffer
        start = cut
    return scan


def reading(scan: KernelLogScan) -> tuple:
    return scan.finish(), scan.records, scan.matched, scan.extra_lines


def test_the_corpora_are_there():
    assert len(CASES) > 50


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.name[:40]}")
def test_both_engines_read_every_corpus_case_alike(path):
    data = path.read_bytes()
    pure = scanned(data, vectorscan=False)
    text = KernelLogScan(extra=ERROR_WORDS)
    text.feed(data.decode("utf-8", errors="replace"))
    assert reading(pure) == reading(text)
    assert reading(scanned(data, vectorscan=True)) == reading(pure)


TRICKY = (
    b"[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
    b"[ 1.1] default fault handler; timer ok; prefault; _error error_ Errors\n"
    b"[ 1.2] pci 0000:3b:00.0: TIME OUT waiting; NVRMNVRM SXidSXid mlx5mlx5\n"
    b"\n\r\n"
    b"[ 1.3] mlx5_core 0000:0c:00.0: mlx5_0: Link Down; uncorrectable ECC error\n"
    b"[ 1.4] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 45 hang"
)


@pytest.mark.parametrize("block", [1, 7, 64, 4096])
def test_both_engines_agree_on_tricky_lines_in_any_blocks(block):
    pure = scanned(TRICKY, vectorscan=False, block=block)
    assert [number for number, _ in pure.extra_lines] == [1, 2, 3, 6, 7]
    assert pure.matched == 4 and pure.records == 7
    assert reading(scanned(TRICKY, vectorscan=True, block=block)) == reading(pure)


@needs_vectorscan
def test_error_words_compile_for_vectorscan_and_the_scan_pickles():
    scan = KernelLogScan(extra=ERROR_WORDS, extra_literals=ERROR_LITERALS)
    assert scan.needles.engine == "vectorscan"
    scan.feed(TRICKY[:200])
    again = pickle.loads(pickle.dumps(scan))  # the resumed file check pickles its scan
    assert again.needles.engine == "vectorscan"
    again.feed(TRICKY[200:])


def test_a_pattern_vectorscan_cannot_compile_falls_back_to_find():
    import re

    lookbehind = re.compile(rb"(?<=x)error")
    needles = Needles((b"NVRM",), lookbehind)
    assert needles.engine == "python"
    assert needles.search(b"NVRM xerror error\n", 18) == ([0], [6])
