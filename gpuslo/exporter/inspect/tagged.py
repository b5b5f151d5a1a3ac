"""Output that a parallel launcher tagged line by line (pure): `mpirun --tag-output`
(`[1,0]<stdout>:provider: efa`, Open MPI: job, rank and stream) and `srun --label` (`0: ...`, the
task number). Each rank ran the tool on its own node, so each rank's lines are one piece of
evidence, judged on their own (an expectation such as `--expect-efa-devices` is per node).

`untag` returns the text of every rank with the tags taken off and the other ranks' lines
blanked (line numbers kept), or None when the text is not tagged. The launcher's own chatter
(ssh's "Permanently added ... to the list of known hosts") is not evidence and is dropped; any
other untagged line means the text is not launcher output, and it is left as it is.
"""

from __future__ import annotations

import re

RANK_TAG = re.compile(r"^\[(\d{1,9}),(\d{1,9})\]<(?:stdout|stderr)>: ?")
TASK_LABEL = re.compile(r"^\s{0,8}(\d{1,6}): ")
LAUNCHER_NOISE = re.compile(
    r"^Warning: Permanently added .{1,400} to the list of known hosts\.?\s*$"
)


def _tagger(lines: list[str]) -> re.Pattern | None:
    """The tag every non-blank line (launcher chatter aside) carries, None when there is none."""
    content = [line for line in lines if line.strip() and not LAUNCHER_NOISE.match(line)]
    for tag in (RANK_TAG, TASK_LABEL):
        if content and all(tag.match(line) for line in content):
            return tag
    return None


def untag(text: str) -> dict[str, str] | None:
    """{`rank N`: that rank's text} in rank order, None when `text` is not launcher-tagged
    (see the module docstring)."""
    lines = text.split("\n")
    tag = _tagger(lines)
    if tag is None:
        return None
    out: dict[str, list[str]] = {}
    for number, line in enumerate(lines):
        match = tag.match(line) if line.strip() else None
        if match is None:
            continue
        rank = match.group(match.lastindex or 1)
        out.setdefault(rank, [""] * len(lines))[number] = line[match.end():]
    return {f"rank {rank}": "\n".join(out[rank]) for rank in sorted(out, key=int)}
