"""The progress records the reader keeps, and the bound on them (pure).

A kept record is a `matchers.Prog`, or a row: the list the fast path keeps for a plain
progress line (`fast.FastPath._plain`) instead of a `Prog` and its `matchers.Found`, most of
whose fields it has not read yet (a list costs about a fifth of the two objects):

    [line, seq, ts, rank, printed, family, matcher, text, spans, since]

the `Prog` constructor's arguments, the line's text and the group spans of its template's match
(`Found`), and the first record it stands for (`since`, as `Prog.since`). `prog(row)` makes the
`Prog` that the fast path made before rows (the same fields, `since` included); `settle(records)`
does it for a list, for the reader's consumers (its output, a timing line given to the last
record, records learnt late).

`thin(records)` keeps memory bounded on any log size: when the records reach the reader's
bound, every other record of a stretch of consecutive records (same run, same progress family,
step not going back, nothing printed between them) is merged into the next one (its window and
line times added), so the records left describe the same steps and times, more coarsely; a
merged record can be merged again, so each thinning halves the records. Rows and `Prog`s thin
alike: a row merged into with no time to add stays a row (its `since` set), one whose
template adds times becomes the `Prog` it stands for.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.matchers import Found, Prog

SINCE = 9  # a row's `since` (module docstring); seq 1, rank 3, printed 4, family 5, matcher 6


def prog(row: Any) -> Prog:
    """The `Prog` a row stands for (a `Prog` as it is)."""
    if type(row) is not list:
        return row
    line, seq, ts, rank, printed, family, matcher, text, spans, since = row
    made = Prog(line, seq, ts, rank, printed, family, matcher.bar, matcher, Found(text, spans))
    made.since = since
    return made


def settle(records: list[Any]) -> list[Prog]:
    """`records` with every row made its `Prog` (the same list when it holds none)."""
    if not any(type(r) is list for r in records):
        return records
    return [prog(r) for r in records]


def _key(p: Prog) -> list[Any]:
    """A `Prog`'s fields at a row's places, for `thin`."""
    return [p.line, p.seq, p.ts, p.rank, p.printed, p.family, p.matcher, None, None, p.since]


def _additive(p: Any, known: dict[int, bool]) -> bool:
    """Whether a merged record's times add to the next one's (a window or a line's part of a
    step); a record still unread whose template has neither need not be read to be merged.
    `known`: the answer per template (by id) in this pass, as a template's fields are fixed."""
    matcher = p[6] if type(p) is list else (p.matcher if p.found is not None else None)
    if matcher is None:
        return True
    additive = known.get(id(matcher))
    if additive is None:
        additive = known[id(matcher)] = any(
            role in ("window_s", "line_s") for _, role, _, _ in matcher.fields)
    return additive


def _merge(a: Any, b: Any, since: int, known: dict[int, bool]) -> Any:
    """`b` standing for `a` too (`thin`): `a`'s own times added to `b`'s where `a`'s template
    has such times (other fields are `b`'s own), the first record `since`."""
    if _additive(a, known):
        a, b = prog(a).complete(), prog(b).complete()
        if a.window_s is not None and b.window_s is not None:
            b.window_s += a.window_s
        if a.line_s is not None and b.line_s is not None:
            b.line_s += a.line_s
    if type(b) is list:
        b[SINCE] = since
    else:
        b.since = since
    return b


def thin(progress: list[Any]) -> list[Any]:
    """Half the records, merged pairwise where nothing separates them (module docstring):
    a record `a` between the last record kept and the next, `b`, is merged into `b` when each
    of the three follows the one before directly (nothing printed between them, nor between
    `a` and the first record merged into `b`: `since`), all three of one progress family (one
    counter: Megatron's iteration line is two templates, with and without a field) and rank,
    the step not going back (a bar redraws a step); a run's first record is never merged (the
    counter rises into it)."""
    out: list[Any] = []
    known: dict[int, bool] = {}
    last: list[Any] | None = None  # the last record kept, as a row (`_key`)
    count, i = len(progress), 0
    while i < count:
        a = progress[i]
        i += 1
        ka = a if type(a) is list else _key(a)
        if i < count and last is not None:
            b = progress[i]
            kb = b if type(b) is list else _key(b)
            if (ka[9] == last[1] + 1 and kb[9] == ka[1] + 1 and last[5] == ka[5] == kb[5]
                    and last[4] <= ka[4] <= kb[4] and last[3] == ka[3] == kb[3]):
                if a is ka and b is kb and known.get(id(ka[6])) is False:
                    b[9] = ka[9]  # two rows, no time to add (`_merge`'s common case)
                else:
                    b = _merge(a, b, ka[9], known)
                    kb = b if type(b) is list else _key(b)  # (as `complete` left it)
                out.append(b)
                last = kb
                i += 1
                continue
        out.append(a)
        last = ka
    return out
