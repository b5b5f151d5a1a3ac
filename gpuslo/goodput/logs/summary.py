"""Model-summary tables: the layer listing a framework prints before training (pure).

A model summary is a table of layers with their parameter counts, under a header that names a
parameter column, closed by the totals: Lightning's `ModelSummary` (`  | Name | Type | Params`,
rows `0 | model | DiffusionWrapper | 859 M`, then `768  Trainable params`, `1.1 B  Total params`,
`4,264.947 Total estimated model params size (MB)`), Keras's `model.summary()` (`Layer (type)
Output Shape  Param #`, rows `conv2d (Conv2D)  (None, 26, 26, 32)  320`, then `Total params:
…`, `Trainable params: …`, `Non-trainable params: …`), torchinfo's (`Layer (type:depth-idx)
Output Shape  Param #`, … `Params size (MB): …`, `Estimated Total Size (MB): …`). Its rows hold
an index printed first and counts that are no steps, so they are never progress. The header
has three or more columns (parted by `|` or two spaces), one the parameter count.

`in_tables(texts) -> set[int]`: the positions of `texts` (records, in order) that belong to such a
table: from the header to the last line of its totals (the totals are the lines naming
params, sizes in MB or mult-adds, and the rules between them); a header with no totals within
`MAX_ROWS` lines closes at the first line that is empty or no row of it (`_row`: a `|` table's
rows hold as many `|` as its header, another's two or more columns; a rule is a row), so a lone
header (a stamped `| Name | Type | Params` whose rows were cut) is one line, not the whole log.
"""

from __future__ import annotations

import re

MAX_ROWS = 2000  # lines of one table (a large model lists thousands of layers)
_PARAM_COLUMN = re.compile(r"(?i)^(?:# ?)?(?:params?|parameters)(?: #)?$")
_NAME_COLUMN = re.compile(r"(?i)^(?:name|layer|type|module)\b")
_COLUMNS = re.compile(r"\s{2,}|\|")
_TOTAL = re.compile(r"(?i)\b(?:trainable params|total params|params size|mult-adds|"
                    r"estimated total size|input size|pass size|model params size)\b")
_RULE = re.compile(r"^[\s=_\-─━│┃|+]*$")


def _header(text: str) -> bool:
    """A table header: three or more columns (parted by `|` or two spaces), one of them the
    parameter count, one a layer's name or type; no digits."""
    if any(ch.isdigit() for ch in text) or len(text) > 300:
        return False
    columns = [c.strip() for c in _COLUMNS.split(text) if c.strip()]
    return len(columns) >= 3 and any(_PARAM_COLUMN.match(c) for c in columns) and any(
        _NAME_COLUMN.match(c) for c in columns)


def in_tables(texts: list[str]) -> set[int]:
    """Positions of the lines of model-summary tables (see the module docstring)."""
    inside: set[int] = set()
    i = 0
    while i < len(texts):
        if not _header(texts[i]):
            i += 1
            continue
        end = _end(texts, i)
        inside.update(range(i, end + 1))
        i = end + 1
    return inside


def _end(texts: list[str], start: int) -> int:
    """The last line of the table whose header is at `start`."""
    limit = min(len(texts), start + MAX_ROWS)
    totals = next((k for k in range(start + 1, limit) if _TOTAL.search(texts[k])), None)
    if totals is None:
        pipes = texts[start].count("|")
        return next((k - 1 for k in range(start + 1, limit) if not _row(texts[k], pipes)),
                    limit - 1)
    end = totals
    for k in range(totals + 1, limit):
        if _TOTAL.search(texts[k]) or (_RULE.match(texts[k]) and texts[k].strip()):
            end = k
        else:
            break
    return end


def _row(text: str, pipes: int) -> bool:
    """A line of a table with no totals (see the module docstring): a rule, or for a header with
    `pipes` `|` (two or more) a line with as many, else one of two or more columns."""
    if not text.strip():
        return False
    if _RULE.match(text):
        return True
    if pipes >= 2:
        return text.count("|") == pipes
    return len([c for c in _COLUMNS.split(text.strip()) if c.strip()]) >= 2
