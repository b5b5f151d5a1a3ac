"""`dcgmi nvlink` outputs, parsed (evidence, no judging): `--link-status` (`-s`) and `--errors`
(`-e -g N`, text or `-j` JSON), and the boxed tree every `dcgmi` report prints.

Formats, from DCGM's `dcgmi/Nvlink.cpp` and `dcgmi/DcgmiOutput.cpp` and real outputs
(shared/corpus case 052; facebookresearch/gcm's dcgmi checks quote both):

    +----------------------+                 +-----------------------------+-----------------+
    |  NvLink Link Status  |                 | NVLINK Error Counts                           |
    +----------------------+                 | GPU 0                                         |
    GPUs:                                    +=============================+=================+
        gpuId 0:                             | Link 0                      |                 |
            U U D X _ _                      | -> CRC FLIT Error           | 0               |
    NvSwitches:                              | -> Replay Error             | 0               |
        No NvSwitches found.

    Key: Up=U, Down=D, Disabled=X, Not Supported=_

The `-j` form of a tree is `{"body": {"Link 0": {"children": {"CRC FLIT Error": {"value":
"0"}}}}, "header": ["NVLINK Error Counts", "GPU 0"]}`; a node may also hold `overflow` lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gpuslo.errors import ParseError

# Link state letters (dcgmi Nvlink.cpp nvLinkStateToCharacter).
LINK_STATES = {"U": "up", "D": "down", "X": "disabled", "_": "not_supported"}
_ENTITY = re.compile(r"^\s*(gpuId|physicalId) (\d+):\s*$")
_LETTERS = re.compile(r"^\s*([UDX_](?: [UDX_])*)\s*$")
_TREE_ROW = re.compile(r"^\|(.*)\|(.*)\|\s*$")
_ERRORS_GPU = re.compile(r"^\|\s*GPU (\d+)\s*\|\s*$")
_UNREADABLE = re.compile(r"Unable to retrieve nvlink (.+?) count for link (\d+) for gpuId (\d+)")


@dataclass(frozen=True)
class LinkStatus:
    """`dcgmi nvlink -s`: link state per link number (`up`, `down`, `disabled`,
    `not_supported`) for each GPU (by DCGM gpuId) and NVSwitch (by physicalId); `line` maps
    each entity to the 1-based line of its header."""

    gpus: dict[str, dict[int, str]] = field(default_factory=dict)
    switches: dict[str, dict[int, str]] = field(default_factory=dict)
    line: dict[tuple[str, str], int] = field(default_factory=dict)


def parse_link_status(text: str, source: str = "<dcgmi nvlink -s>") -> LinkStatus:
    """Link states of every entity the grid shows. Raises ParseError naming the line when an
    entity header is not followed by its row of state letters."""
    status = LinkStatus()
    pending: tuple[str, str, int] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if match := _ENTITY.match(line):
            if pending:
                raise ParseError(source, f"{pending[0]} {pending[1]} has no link states", number)
            pending = (match.group(1), match.group(2), number)
        elif pending:
            letters = _LETTERS.match(line)
            if not letters:
                raise ParseError(source, "expected a row of link states (U D X _)", number)
            kind, entity, first = pending
            target = status.gpus if kind == "gpuId" else status.switches
            states = letters.group(1).split()
            target[entity] = {link: LINK_STATES[s] for link, s in enumerate(states)}
            status.line[(kind, entity)] = first
            pending = None
    if pending:
        raise ParseError(source, f"{pending[0]} {pending[1]} has no link states (truncated)")
    if status.gpus and not re.search(r"^NvSwitches:", text, re.M):
        lines = text.count("\n") + 1
        why = "truncated: the NvSwitches section dcgmi always prints is missing"
        raise ParseError(source, why, lines)
    return status


@dataclass(frozen=True)
class TreeNode:
    """One row of a dcgmi boxed tree: its value, overflow lines and children (in order)."""

    value: str = ""
    overflow: list[str] = field(default_factory=list)
    children: dict[str, TreeNode] = field(default_factory=dict)
    line: int = 0


def parse_tree(text: str, source: str = "<dcgmi>") -> tuple[list[str], dict[str, TreeNode]]:
    """(header lines, top-level nodes) of a dcgmi boxed tree (`DcgmiOutputTree`): a row's level
    is given by the column of its `-> ` prefix (3 spaces per level), a row with an empty label
    is an overflow line of the row above. Lines that are not tree rows are skipped; a row cut
    off before its closing bar raises ParseError naming its line."""
    header: list[str] = []
    top: dict[str, TreeNode] = {}
    stack: list[TreeNode] = []
    body = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("+") and "=" in stripped:
            body = True
            continue
        if stripped.startswith("|") and not stripped.endswith("|"):
            raise ParseError(source, "table row cut off before its closing bar", number)
        row = _TREE_ROW.match(stripped)
        if not row:
            if not body and stripped.startswith("|") and stripped.endswith("|"):
                header.append(stripped.strip("|").strip())
            continue
        left, right = row.group(1)[1:], row.group(2).strip()
        if not body:
            header.append(f"{left.strip()} {right}".strip())
            continue
        label = left.strip()
        if not label:
            if stack:
                stack[-1].overflow.append(right)
            continue
        level = left.index("->") // 3 + 1 if "->" in left else 0
        node = TreeNode(value=right, line=number)
        name = label.removeprefix("->").strip()
        del stack[level:]
        parent = stack[-1].children if stack and level else top
        parent[name] = node
        stack.append(node)
    return header, top


def tree_from_json(data: dict) -> tuple[list[str], dict[str, TreeNode]]:
    """The same tree from a dcgmi `-j` document (`{"body": ..., "header": [...]}`)."""

    def node(value: dict) -> TreeNode:
        children = value.get("children") or {}
        return TreeNode(
            value=str(value.get("value", "")),
            overflow=[str(line) for line in value.get("overflow") or []],
            children={str(k): node(v) for k, v in children.items() if isinstance(v, dict)},
        )

    body = data.get("body") or {}
    header = [str(h) for h in data.get("header") or []]
    return header, {str(k): node(v) for k, v in body.items() if isinstance(v, dict)}


def load_json_document(text: str, source: str) -> dict | None:
    """The first JSON object in `text` (dcgmi prints a banner line before some), None when the
    text holds no `{`. Raises ParseError naming the line where a broken document starts."""
    start = re.search(r"^[ \t]*+\{", text, re.M)  # not `^\s*`: across lines, quadratic
    if not start:
        return None
    try:
        document, _ = json.JSONDecoder().raw_decode(text[start.start() :].lstrip())
    except ValueError as error:
        line = text[: start.start()].count("\n") + 1
        raise ParseError(source, f"JSON document unreadable ({error})", line) from None
    if not isinstance(document, dict):
        raise ParseError(source, "JSON document is not an object")
    return document


@dataclass(frozen=True)
class LinkErrors:
    """`dcgmi nvlink -e -g N`: error counters per link ({link: {counter: count}}) for one GPU,
    and the counters dcgmi said it could not read ((link, counter) pairs)."""

    gpu: str | None
    counts: dict[int, dict[str, int]]
    unreadable: tuple[tuple[int, str], ...] = ()
    line: int | None = None


def parse_link_errors(text: str, source: str = "<dcgmi nvlink -e>") -> LinkErrors:
    """Counters of a `dcgmi nvlink -e` report (text tree or JSON). Raises ParseError naming the
    line of a counter that is not a whole number, of a row that is not `Link N`, or the header
    when it names no GPU."""
    document = load_json_document(text, source)
    header, tree = tree_from_json(document) if document else parse_tree(text, source)
    gpu = next((h.split()[1] for h in header if re.fullmatch(r"GPU \d+", h)), None)
    if gpu is None:
        raise ParseError(source, "no `GPU N` in the report's header", 1, "header")
    counts: dict[int, dict[str, int]] = {}
    for name, node in tree.items():
        link = re.fullmatch(r"Link (\d+)", name)
        if not link:
            raise ParseError(source, f"{name[:30]!r} is not `Link N`", node.line or None, name)
        counters = counts.setdefault(int(link.group(1)), {})
        for counter, child in node.children.items():
            value = child.value.strip()
            if not value.isdigit():
                detail = f"{name} {counter}: not a count: {value[:30]!r}"
                raise ParseError(source, detail, child.line or None)
            counters[counter] = int(value)
    unreadable = tuple(
        (int(m.group(2)), m.group(1))
        for m in _UNREADABLE.finditer(text)
        if gpu is None or m.group(3) == gpu
    )
    return LinkErrors(gpu=gpu, counts=counts, unreadable=unreadable, line=1)


def looks_like_link_status(text: str) -> bool:
    """`dcgmi nvlink -s` output: its title, or `gpuId N:` headers over rows of state letters."""
    head = text[:65536]
    return "NvLink Link Status" in head or bool(
        re.search(r"^[ \t]*gpuId \d+:[ \t\r]*\n[ \t]*[UDX_](?: [UDX_])*[ \t]*$", head, re.M)
    )


def looks_like_link_errors(text: str) -> bool:
    """`dcgmi nvlink -e` output (text or JSON): the `NVLINK Error Counts` header."""
    return "NVLINK Error Counts" in text[:65536]
