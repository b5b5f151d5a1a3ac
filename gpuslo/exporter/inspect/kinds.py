"""`gpuslo inspect`: triage captured evidence as an on-call engineer pastes it.

Every kind `inspect` reads is registered in `registry.KINDS`: a detector (`looks_like(text) ->
bool`, pure) and an inspector (`inspect(text, options, source) -> list[Finding]`, pure), each
imported when it first runs. This module reads the files (the only I/O), detects the kinds when
`--kind` is not given (`registry.detect_kinds`), reads the text with each kind's inspector and
folds the findings of every file into one verdict (the worst). `KINDS`, `detect_kind` and
`detect_kinds` can be imported from here as well.

One file may hold several kinds (an on-call engineer pastes dmesg and `nvidia-smi -q` together):
`split.split_evidence` cuts it into parts; every kind whose detector accepts a part reads
it, and the findings of all parts are merged. A part nothing recognises is `unknown`.

Fail closed: a file that cannot be read, or whose text no parser recognises, yields an `unknown`
finding (`nothing_recognised`, layer observability), never `healthy`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from gpuslo import names
from gpuslo.compressed import gunzip_data
from gpuslo.config_file import (
    BINARY_DATA,
    EMPTY_DATA,
    decode_data,
    open_data_file,
    stdin_at_most_once,
    unreadable_data,
    without_nul_padding,
)
from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.kernel_log import halves
from gpuslo.exporter.evidence.pci import normalise_pci
from gpuslo.exporter.inspect import kernel_log
from gpuslo.exporter.inspect.expectations import unchecked
from gpuslo.exporter.inspect.fallback import log_lines, unread_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.inspect.prefixed import unprefixed
from gpuslo.exporter.inspect.quoted import unquoted
from gpuslo.exporter.inspect.registry import (
    KINDS,
    LOG_KINDS,
    OWN_CLAIMS,
    detect_kind,  # noqa: F401 - re-exported
    detect_kinds,
    remembered,
)
from gpuslo.exporter.inspect.split import split_evidence, without_pager_lines, without_prompt
from gpuslo.exporter.inspect.tagged import untag
from gpuslo.verdict import Finding, verdict_from_findings, worst_verdict

# A file larger than this whose start is a kernel log and nothing else is streamed through the
# kernel-log scan (`kernel_log.inspect_kernel_log_file`, any size) instead of being read whole.
STREAM_BYTES = 8 * 1024 * 1024
HEAD_BYTES = 64 * 1024


def unknown_finding(kind: str, message: str, reason: str = "parse_error") -> Finding:
    """An `unknown` finding for evidence that could not be read or told apart."""
    return Finding(
        kind=kind,
        class_=names.CLASS_UNKNOWN,
        signal="nothing_recognised",
        reason=reason,
        message=message,
    )


def _in_file(finding: Finding, numbers: Sequence[int] | None) -> Finding:
    """`finding` with its part-relative `line` made the file line (`numbers[line - 1]`)."""
    if numbers is None or finding.line is None or not 0 < finding.line <= len(numbers):
        return finding
    return replace(finding, line=numbers[finding.line - 1])


def _parse_error(error: ParseError, source: str, numbers: Sequence[int] | None) -> str:
    """The error's message with its line made the file line."""
    if numbers is None or not error.line or error.line > len(numbers):
        return str(error)
    return str(ParseError(source, error.detail, numbers[error.line - 1], error.field))


def _read(
    kinds: Sequence[str],
    text: str,
    source: str,
    options: InspectOptions,
    numbers: Sequence[int] | None = None,
) -> list[Finding]:
    """Findings of every kind in `kinds` reading `text`; `numbers` maps the text's lines to the
    file's (None: the whole file). The first kind must find something (else nothing recognised,
    unknown); another kind that finds nothing adds nothing. A ParseError is an unknown finding
    naming the file line."""
    findings: list[Finding] = []
    for position, kind in enumerate(kinds):
        try:
            found = KINDS[kind][1](text, options, source)
        except ParseError as error:
            found = [unknown_finding(kind, _parse_error(error, source, numbers))]
        if not found and position == 0:
            found = [unknown_finding(kind, f"{source}: nothing recognisable as {kind}")]
        findings += [_in_file(finding, numbers) for finding in found]
    if kinds and all(kind in LOG_KINDS for kind in kinds):
        own = [OWN_CLAIMS[kind] for kind in kinds if kind in OWN_CLAIMS]
        findings += [_in_file(finding, numbers) for finding in log_lines(text, kinds, own)]
    return findings


def _read_past_prompt(
    kinds: Sequence[str],
    text: str,
    source: str,
    options: InspectOptions,
    given: bool = False,
    numbers: Sequence[int] | None = None,
) -> list[Finding] | None:
    """`_read` of `text` by `kinds` (None when there are none); when that reads nothing and the
    text opens with a shell prompt and its command (`without_prompt`), the output below the
    prompt, read by `kinds` when `given` (`--kind`, or the kinds of a part of a file), else by
    the kinds that accept it. `numbers`: as `_read`'s."""
    found = _read(kinds, text, source, options, numbers) if kinds else None
    if found is not None and not any(f.signal == "nothing_recognised" for f in found):
        return found
    bare = without_prompt(text)
    if bare is None:
        return found
    bare_kinds = tuple(kinds) if given else detect_kinds(bare)
    return _read(bare_kinds, bare, source, options, numbers) if bare_kinds else found


def _nothing_read(text: str, source: str, where: str) -> list[Finding]:
    """Text no parser recognises: `nothing_recognised` (unknown), what the fallback makes of it
    (`inspect.fallback.unread_text`: the tool it looks like, the devices its error lines name)."""
    return [unknown_finding("unknown", f"{source}: {where}"), *unread_text(text, source)]


# A line is binary when it holds a NUL, or when more than this share of its characters are
# control characters or U+FFFD (bytes that were not UTF-8): random bytes, a core dump, a gzip.
BINARY_SHARE = 0.3
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")


def binary_lines(text: str) -> list[int]:
    """Numbers (1-based) of the lines of `text` that are binary data, not text (pure)."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if line and ("\0" in line or len(_CONTROL.findall(line)) > BINARY_SHARE * len(line)):
            out.append(number)
    return out


def binary_finding(numbers: Sequence[int], source: str) -> Finding:
    """The `unknown` finding for binary lines beside the evidence: whatever they held was not
    read, so the evidence around them cannot be called healthy (fail closed)."""
    return unknown_finding(
        "unknown",
        f"{source}: {len(numbers)} line(s) of binary data between lines {numbers[0]} and "
        f"{numbers[-1]}: not read, so the evidence is incomplete",
    )


def inspect_text(
    text: str, source: str, options: InspectOptions, kind: str | None = None
) -> list[Finding]:
    """Findings for one piece of evidence (pure), see `read_text_evidence`; binary lines in it
    (`binary_lines`) add one `unknown` finding naming them, whatever else was read."""
    findings = read_text_evidence(text, source, options, kind)
    binary = binary_lines(text) if text.strip() else []
    if binary and not all(f.signal == "nothing_recognised" for f in findings):
        findings.append(binary_finding(binary, source))
    elif binary and _binary_head(text):  # nothing read, and no text to read: say so plainly
        return [unknown_finding(kind or "unknown", f"{source}: {BINARY_DATA}")]
    return findings


def _binary_head(text: str) -> bool:
    """True when more than a tenth of the first 64 KiB are control characters or bytes that
    were not UTF-8: the file is not text (the training-log reader's `looks_binary` rule)."""
    head = text[:65536]
    return len(_CONTROL.findall(head)) > 0.10 * len(head)


def read_text_evidence(
    text: str, source: str, options: InspectOptions, kind: str | None = None
) -> list[Finding]:
    """Findings for one piece of evidence (pure). `kind` None means detect it: every kind whose
    detector accepts the text reads it, part by part when the text holds several kinds
    (`split_evidence`).

    Evidence (or a part of it) nothing recognises gives a `nothing_recognised` unknown finding
    naming its lines; a `ParseError` from a parser becomes an unknown finding naming the line.
    """
    text = without_pager_lines(text)  # a pager's `lines 1-22/22 (END)`: the terminal's
    if not text.strip():
        return [unknown_finding(kind or "unknown", f"{source}: {EMPTY_DATA}", reason="no_data")]
    detect = remembered(detect_kinds)
    text = unquoted(text, detect)  # output pasted under `% `, `# `, `> `...: read under it
    text = unprefixed(text, detect)  # a runner's or shipper's `[task <stamp>] [step] ` prefix
    if (ranks := untag(text)) is not None:  # a launcher's per-rank output: one node each
        return [
            replace(finding, message=f"{rank}: {finding.message}")
            for rank, part in ranks.items()
            for finding in read_text_evidence(part, source, options, kind)
        ]
    if kind is not None:
        return _read_past_prompt((kind,), text, source, options, given=True) or []
    parts = split_evidence(text, detect)
    if len(parts) == 1:
        found = _read_past_prompt(detect(text), text, source, options)
        if found is None:
            return _nothing_read(text, source, "no parser recognises this evidence")
        return found
    findings: list[Finding] = []
    for part in parts:
        if part.kinds:  # a part may open with the prompt that ran it (`split.parts_of_run`)
            findings += _read_past_prompt(
                part.kinds, part.text, source, options, given=True, numbers=part.numbers
            ) or []
        else:
            where = (
                f"lines {part.numbers[0]}-{part.numbers[-1]} ({len(part.lines)} lines): no "
                "parser recognises this part of the evidence"
            )
            findings += [_in_file(f, part.numbers) for f in _nothing_read(part.text, source, where)]
    return findings


def read_evidence(path: str) -> str:
    """Read one evidence file as text (UTF-8, or UTF-16/32 after a byte-order mark;
    undecodable bytes replaced; gzip, xz and bzip2 decompressed: `gpuslo.compressed`; NUL
    padding, a log's `copytruncate` gap, removed: `without_nul_padding`), whatever its size. `-`
    reads standard input. Raises InputError when the path is missing, a directory, unreadable
    or a corrupt gzip."""
    try:
        if path == "-":  # read at once, so a gzip stream is told by its first bytes
            return without_nul_padding(decode_data(gunzip_data(sys.stdin.buffer.read(), path)))
        with open_data_file(path) as handle:  # no FIFO made with mkfifo, no device
            data = handle.read()
    except OSError as error:
        raise unreadable_data(path, error) from None
    return without_nul_padding(decode_data(data))


def streams_as_kernel_log(path: str, kind: str | None) -> bool:
    """True when `path` is read by streaming it through the kernel-log scan: a regular file over
    `STREAM_BYTES` that is given as `--kind kernel-log`, or whose first `HEAD_BYTES` are a
    kernel log and nothing else. (Such a file is not cut into parts: an output pasted into the
    middle of a log that large is read as log lines.)"""
    if path == "-" or kind not in (None, "kernel-log"):
        return False
    try:
        file = Path(path)
        if not file.is_file() or file.stat().st_size <= STREAM_BYTES:
            return False
        with file.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as error:
        raise unreadable_data(path, error) from None
    if kind == "kernel-log":
        return True
    text = head[: head.rfind(b"\n") + 1 or len(head)].decode("utf-8", errors="replace")
    detect = remembered(detect_kinds)
    return detect(text) == ("kernel-log",) and len(split_evidence(text, detect)) == 1


def inspect_path(path: str, options: InspectOptions, kind: str | None = None) -> list[Finding]:
    """Findings for one evidence file: streamed through the kernel-log scan when it is a large
    kernel log (`streams_as_kernel_log`), else read whole (`inspect_text`)."""
    if not streams_as_kernel_log(path, kind):
        halves.discard(path)  # a scan `gpuslo inspect` started for it early is not wanted
        return inspect_text(read_evidence(path), path, options, kind)
    try:
        findings = kernel_log.inspect_kernel_log_file(path, options)
    except ParseError as error:
        return [unknown_finding("kernel-log", str(error))]
    return findings


def inspect_files(paths: Sequence[str], options: InspectOptions, kind: str | None = None) -> dict:
    """Inspect every file; returns `{"verdict": ..., "findings": [dict, ...], "files": [...]}`.

    Each finding dict carries `file`. The verdict is the worst over the files. Raises
    UsageError when `-` (standard input, which can be read once) is named more than once
    (`stdin_at_most_once`).
    """
    stdin_at_most_once(paths)
    results, verdicts, all_findings, seen = [], [], [], []
    for path in paths:
        findings = inspect_path(path, options, kind)
        seen += findings
        verdict = verdict_from_findings(findings)
        verdicts.append(verdict)
        kinds = "+".join(dict.fromkeys(f.kind for f in findings))  # a mixed file names each kind
        results.append({"file": path, "kind": kinds, "verdict": verdict})
        for finding in findings:
            all_findings.append({**finding.to_dict(), "file": path})
    for finding in unchecked(seen, options):  # an expectation no file could check: unknown
        verdicts.append(names.VERDICT_UNKNOWN)
        all_findings.append({**finding.to_dict(), "file": ", ".join(paths)})
    return {
        "verdict": worst_verdict(verdicts),
        "files": results,
        "gpus": gpu_inventory(all_findings),
        "findings": all_findings,
    }


def gpu_inventory(findings: Sequence[dict]) -> list[dict]:
    """The distinct GPUs the evidence shows, merged across files and kinds by host (where a
    finding names one: a page of several hosts) and PCI address (else UUID): each `{"pci",
    "uuid", "gpu", "model", "family"}` (and "host") with what any file reported."""
    merged: dict[object, dict] = {}
    for finding in findings:
        if finding.get("signal") != "gpus_seen" or not (finding.get("pci") or finding.get("uuid")):
            continue
        pci = normalise_pci(finding.get("pci")) or finding.get("pci") or finding["uuid"]
        entry = merged.setdefault((finding.get("host") or "", pci), {})
        for field in ("host", "pci", "uuid", "gpu", "model", "family"):
            if finding.get(field) not in (None, "", "unknown") and field not in entry:
                entry[field] = finding[field]
    return sorted(
        merged.values(),
        key=lambda gpu: (gpu.get("host", ""), gpu.get("gpu", ""), gpu.get("pci", "")),
    )
