"""A tool's output quoted under a constant line prefix (pure): the whole output pasted as comments
of a program, quoted in an e-mail or a markdown page, or traced by a shell, every line behind the
same marker (fresh20 case 2201: `nvidia-smi -q` pasted into a MATLAB file, every line `% `).

The markers are a closed set of comment and quote syntaxes, never a word (a host name, a logger's
tag), so a kernel log whose lines all start with the same host stays as it is:
- `%` MATLAB / Octave / TeX comment; `#` shell, Python, YAML, R comment; `//` C, C++, Go, Java,
  JavaScript comment; `;` INI, Lisp, assembler comment (`;;` too);
- `>` an e-mail quote (RFC 3676, section 4.5: `>` per quote depth, `>>` or `> >`) and a markdown
  block quote (CommonMark 0.31, "Block quotes": `> ` with up to three spaces before it);
- `+` the shell's execution trace (bash(1) `set -x`: PS4, `+ `, repeated per nesting level).

A quoted block is a maximal run of lines whose every non-empty line starts with the same
indentation and marker followed by a space or the line's end (`QUOTE`); a line that is the
marker alone is a blank line of the block. It is read unquoted (the marker and one space taken
off each line, so the output's own indentation stays; line numbers kept) only when it holds at
least `MIN_LINES` marked lines (of the first `MAX_BLOCKS` blocks of a text) and the unquoted
block is evidence some reader recognises (`detect`): a script's comment block, a markdown quote
of prose, a metrics page's `# HELP` / `# TYPE` comments, whose markers mean something, stay as
they are. Lines outside a block are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Indentation, then one marker (the module rules), then a space or the line's end.
QUOTE = re.compile(r"^([ \t]{0,8}(?:%|#|//|;;?|>(?: ?>){0,7}|\+{1,8}))(?: |[ \t]*$)")
MIN_LINES = 3
MAX_BLOCKS = 64  # blocks tried per text: a script's many comment blocks cost no more than this
_ANY_MARK = re.compile(r"^[ \t]{0,8}[%#/;>+]", re.MULTILINE)  # a cheap look before the lines

Detect = Callable[[str], Sequence[str]]


def _marker(line: str) -> str | None:
    match = QUOTE.match(line)
    return match.group(1) if match else None


def quoted_blocks(lines: Sequence[str]) -> list[tuple[str, int, int]]:
    """[(marker, first, last)] of every run of lines (indexes, `last` inclusive) whose non-empty
    lines all start with `marker` (`QUOTE`), holding at least `MIN_LINES` marked lines; blank
    lines at a run's ends are not part of it."""
    blocks: list[tuple[str, int, int]] = []
    marker, first, last, count = None, 0, 0, 0
    for index, line in enumerate([*lines, "\0"]):  # a sentinel line closes the last run
        if not line.strip() and marker is not None:
            continue
        this = _marker(line) if line.strip() else None
        if this is not None and this == marker:
            last, count = index, count + 1
            continue
        if marker is not None and count >= MIN_LINES:
            blocks.append((marker, first, last))
        marker, first, last, count = this, index, index, 1
    return blocks


def _unquoted_line(line: str, marker: str) -> str:
    rest = line[len(marker):] if line.startswith(marker) else line
    return "" if not rest.strip() else rest[1:] if rest.startswith(" ") else rest


def unquoted(text: str, detect: Detect) -> str:
    """`text` with every quoted block that reads as evidence unquoted in place (the module rules);
    `text` itself when there is none."""
    marks = _ANY_MARK.finditer(text)
    if sum(1 for _ in zip(range(MIN_LINES), marks, strict=False)) < MIN_LINES:
        return text
    lines = text.split("\n")
    changed = False
    for marker, first, last in quoted_blocks(lines)[:MAX_BLOCKS]:
        block = [_unquoted_line(line, marker) for line in lines[first : last + 1]]
        if detect("\n".join(block)):
            lines[first : last + 1] = block
            changed = True
    return "\n".join(lines) if changed else text
