"""A tool's output behind the prefix a runner, a container log or a log shipper writes before each
line (pure): a CI task log (`[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)]
Failed to initialize NVML: ...`, Taskcluster's `[task <stamp>]` and the job's own tags; fresh21
case 2311), `kubectl logs --prefix` (`[pod/<name>/<container>] `), the CRI log format kubelet
writes under /var/log/pods (`<RFC 3339 stamp> stdout F `), a CI runner's stamp (GitHub Actions'
`2025-07-01T05:06:30.0040000Z `) and a compose service column (`trainer-1  | `).

A prefix is one or more of these fields before the tool's text, each followed by a space or a
tab (`LINE_PREFIX`):
- a bracketed tag, `[...]` without nested brackets (a task, stamp, step, pod or stream tag);
- an ISO 8601 / RFC 3339 stamp (`2025-07-01T05:06:30.004Z`, `+00:00`, fractions of any length);
- a CRI stream and tag (`stdout F`, `stderr P`);
- a compose-style service column, a name then `|`.

A prefixed block is a maximal run of lines whose every non-blank line carries a prefix. It is read
with each line's prefix taken off (line numbers kept) only when the block as it stands is evidence
no reader recognises, in whole or in part (`split.split_evidence`), and without the prefixes some
reader does (`detect`). So a system log (every line a `split.LOG_LINE`: a kernel log whose
`[  526.773174]` stamps look like a tag, a journal), or stamped lines that already read, stay as
they are, and prose behind a prefix is still prose: the
readers decide what the unprefixed words are (an NVML message quoted inside a sentence is no
NVML error, `evidence.nvidia_smi.proc.parse_nvml_errors`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from gpuslo.exporter.inspect.split import LOG_LINE, split_evidence

_FIELD = (
    r"\[[^\[\]\n]{1,160}\]"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
    r"|(?:stdout|stderr) [FP]"
    r"|[\w.-]{1,64}[ \t]{0,32}\|"
)
LINE_PREFIX = re.compile(rf"^(?:(?:{_FIELD})[ \t]+){{1,8}}")
_ANY_PREFIX = re.compile(LINE_PREFIX.pattern, re.MULTILINE)  # a cheap look before the lines
MAX_BLOCK_LINES = 20_000  # a longer run (a stamped log) is left as it is: not tried

Detect = Callable[[str], Sequence[str]]


def prefixed_blocks(lines: Sequence[str]) -> list[tuple[int, int]]:
    """[(first, last)] indexes (`last` inclusive) of every maximal run of lines whose non-blank
    lines all carry a `LINE_PREFIX`; blank lines at a run's ends are not part of it."""
    blocks: list[tuple[int, int]] = []
    first = last = None
    for index, line in enumerate([*lines, "\0"]):  # a sentinel line closes the last run
        if not line.strip():
            continue
        if line != "\0" and LINE_PREFIX.match(line[:4096]):
            first = index if first is None else first
            last = index
            continue
        if first is not None and last is not None:
            blocks.append((first, last))
        first = last = None
    return blocks


def _recognised(text: str, detect: Detect) -> bool:
    """True when some reader accepts `text`, whole or one of its parts."""
    return bool(detect(text)) or any(part.kinds for part in split_evidence(text, detect))


def _unprefixed_line(line: str) -> str:
    match = LINE_PREFIX.match(line[:4096])
    return line[match.end():] if match else line


def unprefixed(text: str, detect: Detect) -> str:
    """`text` with every prefixed block that reads as evidence only without its prefixes taken
    off in place (the module rules); `text` itself when there is none."""
    if not _ANY_PREFIX.search(text):
        return text
    lines = text.split("\n")
    changed = False
    for first, last in prefixed_blocks(lines):
        block = lines[first : last + 1]
        if last - first >= MAX_BLOCK_LINES or all(
            LOG_LINE.match(line[:4096]) for line in block if line.strip()
        ):
            continue  # a system log's own prefixes: its readers take them off
        bare = [_unprefixed_line(line) for line in block]
        if detect("\n".join(block)) or not _recognised("\n".join(bare), detect):
            continue
        if not any(part.kinds for part in split_evidence("\n".join(block), detect)):
            lines[first : last + 1] = bare
            changed = True
    return "\n".join(lines) if changed else text
