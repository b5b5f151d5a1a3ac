"""Every ERROR_WORDS match starts with one of the fallback's literals
(`policy.unrecognised.ERROR_LITERALS`), so the pure file scan that looks for them first and tries
the pattern only from them (`needles.Needles`) keeps the very lines the pattern alone keeps, in
order, with their numbers; so does Vectorscan's one pass, where `hyperscan` is installed."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan
from gpuslo.exporter.policy.unrecognised import ERROR_LITERALS, ERROR_WORDS

BYTES_WORDS = re.compile(ERROR_WORDS.pattern.encode(), ERROR_WORDS.flags & ~re.UNICODE)


@settings(max_examples=300, deadline=None)
@given(st.from_regex(BYTES_WORDS))
def test_every_match_starts_with_a_literal(text):
    match = BYTES_WORDS.search(text)
    assert match is not None
    assert any(match.group(0).lower().startswith(literal.encode()) for literal in ERROR_LITERALS)


WORDS = ["error", "Errors", "FAILED", "fail", "default", "fault", "Faulted", "timer", "time out",
         "timeout", "Timed Out", "uncorrectable", "fatal", "non-fatal", "fallen off", "LOST",
         "change", "hang", "hung", "not responding", "unrecoverable", "reset required", "panic",
         "pci 0000:3b:00.0", "GPU-1", "mlx5_0", "NVRM: Xid", "ok", "\r", "é", "_error", "error_"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=6), max_size=30), st.booleans())
def test_literals_keep_the_lines_the_pattern_keeps(lines, final_newline):
    text = "\n".join(" ".join(words) for words in lines) + ("\n" if final_newline else "")
    data = bytearray(text.encode())
    plain = KernelLogScan(extra=ERROR_WORDS, vectorscan=False)
    literals = KernelLogScan(extra=ERROR_WORDS, extra_literals=ERROR_LITERALS, vectorscan=False)
    either = KernelLogScan(extra=ERROR_WORDS, extra_literals=ERROR_LITERALS)  # Vectorscan if there
    half = data.rfind(b"\n", 0, len(data) // 2) + 1  # two chunks, cut at a line boundary
    for scan in (plain, literals, either):
        scan.feed(data, half)
        scan.feed(data[half:])
    text_scan = KernelLogScan(extra=ERROR_WORDS)
    text_scan.feed(text)
    for scan in (literals, either, text_scan):
        assert (scan.extra_lines, scan.records) == (plain.extra_lines, plain.records)
