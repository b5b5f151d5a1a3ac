"""A bare Unix time at the end of a record, read as the record's clock (pure).

Some loops print `time.time()` after their metrics, unlabelled: OneFlow-Benchmark's
`train: epoch 0, iter 100, loss: 6.914170, top_1: 0.001367, top_k: 0.005859, samples/s:
2161.654 1605777750.5480015` (2020-11-19 09:22:30 UTC). The shape (`TAIL`): a ten-digit
integer (1000000000..4099999999: September 2001 to 2099, inside the journal's clock range), with
up to nine decimals, last on the line, set off by white space from a value before it (a digit or
`%`, or a `|`, `,`, `;` after one). A labelled value (`tokens: 1605777750`) is a field, not
this.

`recurs(texts) -> bool`: a sample of records shows the shape as a clock: at least `MIN_RECORDS`
records end with it, with at least two values, never going back by more than
`BACK_TOLERANCE_S` in the order printed (a constant or a falling number is an id or a metric).
`stamps.learn_shapes` then adds it as a stamp layout that is looked for at the end of a record
(`StampShape.tail`, `Normaliser.stamp`, `fast.FastPath`), after the layouts at its head.
`groups(match) -> dict` the stamp's groups for `Clock.seconds`; `seconds(groups)` its Unix
seconds (None when the groups are not this shape's).
"""

from __future__ import annotations

import re

TAIL = re.compile(r"(?:(?<=[\d%])\s+|(?<=[\d%])\s*[|,;]\s*)"
                  r"(?P<unix>[1-4]\d{9})(?:\.(?P<unix_f>\d{1,9}))?\s*$")
TAIL_CHARS = 48  # characters at the end of a record searched for it
LABEL = "Unix seconds at the end of the record"
MIN_RECORDS = 2
BACK_TOLERANCE_S = 60.0  # as `clock`: ranks interleave their lines


# A Unix time that opens the record, bare (`1762164000.500 step=1 loss=1.0`) or as the first
# field of a JSON line or a `key=value` record under a time's name (`{"ts": 1762164000.5, "step":
# 1, ...}`: what `time.time()` gives a JSON logger), newcomer3 #6. Read as a clock only where it
# recurs as one (`recurs(texts, HEAD)`).
HEAD = re.compile(r"^\{?\s*(?:[\"']?(?:ts|time|timestamp|created|_time|t)[\"']?\s*[:=]\s*)?"
                  r"(?P<unix>[1-4]\d{9})(?:\.(?P<unix_f>\d{1,9}))?(?![\d.])")
HEAD_LABEL = "Unix seconds opening the record"


def search(text: str) -> re.Match[str] | None:
    """The shape at the end of `text`, None when it is not there."""
    if not text.rstrip()[-1:].isdigit():
        return None
    return TAIL.search(text, max(0, len(text) - TAIL_CHARS))


def recurs(texts: list[str], where: re.Pattern[str] | None = None) -> bool:
    """True when the records `texts` end with a Unix time that behaves as a clock (see the
    module docstring); `where` HEAD: when they open with one."""
    values = []
    for text in texts:
        found = search(text) if where is None else where.match(text)
        if found is not None:
            values.append(float(found.group("unix") + "." + (found.group("unix_f") or "0")))
    if len(values) < MIN_RECORDS or len(set(values)) < 2:
        return False
    return all(b >= a - BACK_TOLERANCE_S for a, b in zip(values, values[1:], strict=False))


def seconds(groups: dict[str, str | None]) -> float | None:
    """Unix seconds of this shape's groups (`unix`, `unix_f`), None for other groups."""
    whole = groups.get("unix")
    if not whole:
        return None
    return float(whole + "." + (groups.get("unix_f") or "0"))
