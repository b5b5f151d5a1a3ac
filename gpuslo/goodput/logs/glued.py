"""A trainer's own step line glued after an in-epoch bar: the job-wide number of the bar's steps
(pure).

Seed-VC's trainer draws a tqdm bar over the batches of an epoch and prints its own line every
10 steps, which a log captures glued after the bar's `]`: ` 24%|█▋ | 29/123 [12:45<48:57,
31.25s/it]epoch 7, step 890, loss: 0.56…`, then `39/123 [18:55<…]epoch 7, step 900, …`. The
bar's `n` is the batch within the epoch and its elapsed the epoch's time; the line's `step` is
the job-wide count of the same steps: on every physical line holding both, the line's counter
is the bar's `n` plus one offset (861 = 890 - 29 = 900 - 39). Such a line family is no other
loop's counter although its records fall inside the bar's span:

- `lockstep(lines, bar) -> bool` (`learn`): the two families share at least `MIN_PAIRS`
  physical lines, the line's counter is above the bar's `n` by the same offset on each;
- `number_bars(records)` (`progress`): every record of such a bar takes the job-wide step `n`
  plus the offset its glued line shows in the same drawing of the bar (an epoch's, `n` never
  going back), else the previous drawing's offset plus that bar's `N`; its `printed` n is kept
  (where the bar began: the job-wide step minus n);
- `cut_start(name, families)` (`learn`): the family a template whose first word was cut off
  (the excerpt's first line, `poch 7, step 880, …`, cut by the reporter) belongs to: the one
  whose template ends with the same text after a longer first word; None when none does.
"""

from __future__ import annotations

from typing import Any

MIN_PAIRS = 2


def counter_values(readings: list[Any]) -> dict[int, float]:
    """Physical line → the counter's value, over the sampled records of `readings` (also
    `twin`)."""
    out: dict[int, float] = {}
    for reading in readings:
        if reading.step is None:
            continue
        numbers = reading.template.fields[reading.step].numbers
        for line, value in zip(reading.template.lines, numbers, strict=False):
            if value is not None:
                out.setdefault(line, value)
    return out


def lockstep(lines: list[Any], bar: list[Any]) -> bool:
    """Whether the line family `lines` numbers the steps of the bar family `bar` (see the
    module docstring); both lists of `roles.Reading`."""
    if not bar or not lines or lines[0].bar or not bar[0].bar:
        return False
    mine, drawn = counter_values(lines), counter_values(bar)
    offsets = {mine[n] - drawn[n] for n in mine.keys() & drawn.keys()}
    shared = len(mine.keys() & drawn.keys())
    return shared >= MIN_PAIRS and len(offsets) == 1 and min(offsets) > 0


def cut_start(name: str, families: dict[str, list[Any]]) -> str | None:
    """The family that the one-template family `name` belongs to when its template is another
    family's with the first word cut short (see the module docstring), else None."""
    readings = families[name]
    if len(readings) != 1 or readings[0].bar:
        return None
    text = readings[0].template.text
    head = text.split(" ", 1)[0]
    if not head.isalpha():
        return None
    for other, others in families.items():
        for reading in others if other != name else []:
            full = reading.template.text
            cut = full[: len(full) - len(text)]
            if full.endswith(text) and cut.isalpha() and not reading.bar:
                return other
    return None


def number_bars(records: list[Any]) -> None:
    """Give each bar record of a bar some lockstep line is glued to (`progress.Record`s in log
    order) the job-wide step: its `n` plus the offset seen in its own bar (one epoch's drawing:
    `n` never going back), else the previous bar's offset plus that bar's `N`."""
    bars: list[list[int]] = []  # indexes of the bar records, one list per drawing
    for i, rec in enumerate(records):
        if not rec.prog.bar:
            continue
        last = records[bars[-1][-1]] if bars else None
        if last is None or rec.printed < last.printed or rec.prog.family != last.prog.family:
            bars.append([])
        bars[-1].append(i)
    offsets: list[int | None] = []
    for drawing in bars:
        seen = [records[i + 1].printed - records[i].printed for i in drawing
                if i + 1 < len(records) and _glued(records[i], records[i + 1])]
        offsets.append(seen[0] if seen else None)
    if not any(o is not None for o in offsets):
        return
    for k, drawing in enumerate(bars):
        offset = offsets[k]
        if offset is None and k and offsets[k - 1] is not None:
            total = records[bars[k - 1][-1]].prog.total
            offset = offsets[k] = offsets[k - 1] + total if total else None
        for i in drawing if offset is not None else []:
            records[i].glob = records[i].printed + offset


def _glued(bar: Any, line: Any) -> bool:
    matcher = line.prog.matcher
    return not line.prog.bar and line.prog.line == bar.prog.line and (
        matcher is not None and matcher.reading.numbers_bar)
