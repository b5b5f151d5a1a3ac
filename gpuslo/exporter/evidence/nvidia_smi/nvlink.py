"""`nvidia-smi nvlink -s` (link status) and `nvidia-smi nvlink -e` (error counters).

Both start each GPU with `GPU N: <name> (UUID: GPU-...)` (the UUID may be redacted to `...`).
Status lines are `Link N: <speed> GB/s` for an up link and `Link N: <inactive>` for a link that is
down. Error counters come one per line, `Link N: Replay Errors: 0` (Volta to Hopper drivers), or
as an indented block under `Link N:` (Blackwell-era drivers: `Malformed Packet Errors: 0`,
`Link Recovery Failed Events: 0`, `Effective BER: ...`). Only counters of errors are kept (their
name says error, replay, recovery, discard, overrun or malformed); rates such as BER are not
counts and are skipped.

A fragment of `-s` with no `GPU N:` header (a person pasted only the link lines: fresh14 case
1619, `Link 0: 25.781 GB/s` / `Link 1: <inactive>`) is one GPU whose identity the excerpt does not
show: read when every non-blank line is a `Link N:` status line (a speed or a down state, at
least two of them), as one GPU with no index, model or UUID (`headerless_links`). A lone
`Link N:` line, or link lines among other text with no header, is not read this way.
"""

from __future__ import annotations

import re

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.values import GpuReading, SmiReading, clean, to_number

# The GPU header: `GPU 0: NVIDIA H200 (UUID: GPU-...)`. The name and UUID are cut in code: a lazy
# name before an optional UUID group took 78 s on one 4,000-character line.
_GPU_HEAD = re.compile(r"^GPU\s++(\d+):(.*)$")
_UUID_TAIL = re.compile(r"\(UUID:\s*+([^()]*)\)$")


class _Header(tuple):
    """(index, model, uuid) of a GPU header line, read like the match it replaces."""

    def group(self, number: int) -> str | None:
        return self[number - 1]


def match_gpu_header(line: str) -> _Header | None:
    """`GPU <n>: <model> [(UUID: <uuid>)]` → (index, model, uuid or None), else None (pure,
    linear time)."""
    head = _GPU_HEAD.match(line)
    if head is None:
        return None
    rest = head.group(2).strip()
    tail = _UUID_TAIL.search(rest, max(0, rest.rfind("(UUID:")))
    if tail is None:
        return _Header((head.group(1), rest, None))
    return _Header((head.group(1), rest[: tail.start()].strip(), tail.group(1)))
# Values as whitespace-separated words matched possessively: the same groups as `(.*?)\s*$`
# in linear time (that lazy group retried the trailing run of spaces at every step).
_LINK = re.compile(r"^Link\s++(\d+)\s*+:\s*+(\S*+(?:\s++\S++)*+)\s*$")
_COUNTER = re.compile(
    r"^([A-Za-z](?:[^:\s]|\s++(?=[^:\s]))*+)\s*+:\s*+(\S++(?:\s++\S++)*+)\s*$"
)
_UP = re.compile(r"^\d+(?:\.\d+)?\s*[GM]B/s$", re.IGNORECASE)
_DOWN = frozenset({"<inactive>", "inactive", "down", "disabled", "<down>", "not active"})
_ERROR_COUNTER = re.compile(r"error|replay|recovery|discard|overrun|malformed", re.IGNORECASE)
_ALL_INACTIVE = re.compile(r"all links are inactive", re.IGNORECASE)
MAX_LINE_CHARS = 4096


def _new_gpu(match: _Header, number: int) -> dict:
    uuid = clean(match.group(3))
    model = clean(match.group(2))
    return {
        "index": match.group(1),
        "model": model,
        "uuid": uuid,
        "line": number,
        "states": {},
        "counters": {},
        "all_inactive": False,
    }


def _counter(gpu: dict, link: int, name: str, value: str, source: str, number: int) -> None:
    if not _ERROR_COUNTER.search(name) or "ber" in name.lower().split():
        return
    number_value = to_number(value, source, number, name)
    if number_value is not None:
        gpu["counters"].setdefault(link, {})[name] = int(number_value)


def _link_line(gpu: dict, match: re.Match, source: str, number: int) -> int | None:
    """Record one `Link N: ...` line; returns the link whose indented counters may follow."""
    link, value = int(match.group(1)), match.group(2)
    if not value:
        return link
    if value.lower() in _DOWN:
        gpu["states"][link] = False
    elif _UP.match(value):
        gpu["states"][link] = True
    elif _COUNTER.match(value):
        name, count = _COUNTER.match(value).groups()
        _counter(gpu, link, name, count, source, number)
    elif clean(value) is not None:
        raise ParseError(
            source, f"unrecognised NVLink value {value[:40]!r}", number, f"Link {link}"
        )
    return None


def _is_status(value: str) -> bool:
    return value.lower() in _DOWN or _UP.match(value) is not None


def headerless_links(text: str) -> bool:
    """True when `text` is `nvlink -s` link lines only, no GPU header (module docstring): every
    non-blank line of the first 64 KiB is `Link N: <speed>` or `Link N: <down state>`, at least
    two of them, and the whole text is within 64 KiB."""
    if len(text) > 65536:
        return False
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or any(len(line) > MAX_LINE_CHARS for line in lines):
        return False
    matches = [_LINK.match(line) for line in lines]
    return all(m is not None and _is_status(m.group(2)) for m in matches)


def _scan(text: str, source: str) -> list[dict]:
    gpus: list[dict] = []
    if headerless_links(text):
        gpus.append(_new_gpu(_Header((None, None, None)), 1))
    block_link = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or len(line) > MAX_LINE_CHARS:
            continue
        header = match_gpu_header(line)
        if header:
            gpus.append(_new_gpu(header, number))
            block_link = None
            continue
        if not gpus:
            continue
        if _ALL_INACTIVE.search(line):
            gpus[-1]["all_inactive"] = True
            continue
        link = _LINK.match(line)
        if link:
            block_link = _link_line(gpus[-1], link, source, number)
        elif block_link is not None and _COUNTER.match(line):
            name, value = _COUNTER.match(line).groups()
            _counter(gpus[-1], block_link, name, value, source, number)
    return gpus


def parse_nvlink(text: str, source: str) -> SmiReading:
    """Parse `nvidia-smi nvlink -s` or `-e` output into one `GpuReading` per GPU, with
    `nvlink_states` (link -> up) and `nvlink_error_counts` (link -> {counter: count}) filled where
    the output has them. A GPU whose output says all its links are inactive gets an empty
    `nvlink_states`. Raises ParseError for a link value that is neither a speed, a state nor a
    counter."""
    readings = []
    for gpu in _scan(text, source):
        if not (gpu["states"] or gpu["counters"] or gpu["all_inactive"]):
            continue
        status = GpuStatus(
            index=gpu["index"],
            model=gpu["model"],
            uuid=gpu["uuid"],
            family=family_of(gpu["model"]) if gpu["model"] else None,
            nvlink_states=dict(gpu["states"]) if gpu["states"] or gpu["all_inactive"] else None,
            nvlink_error_counts=dict(gpu["counters"]) or None,
        )
        readings.append(GpuReading(status=status, line=gpu["line"]))
    return SmiReading(gpus=tuple(readings))


def looks_like_nvlink(text: str) -> tuple[bool, bool]:
    """(looks like `nvlink -s`, looks like `nvlink -e`) from the first 64 KiB."""
    if headerless_links(text):
        return True, False
    head = [line.strip() for line in text[:65536].splitlines()]
    if not any(match_gpu_header(line) for line in head if len(line) < MAX_LINE_CHARS):
        return False, False
    links = [_LINK.match(line) for line in head if line.startswith("Link ")]
    values = [m.group(2) for m in links if m]
    status = any(_is_status(v) for v in values) or any(
        _ALL_INACTIVE.search(line) for line in head
    )
    errors = any(v == "" or _COUNTER.match(v) for v in values)
    return status and not errors, errors
