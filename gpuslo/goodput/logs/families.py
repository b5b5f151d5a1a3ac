"""Which progress families count the training's steps (pure): `choose(families, evaluation)`.

A family is the progress templates that name one counter the same way (`learn.family_of`). The
one with the most records is the training's (then the one that gives times, then the first),
after any family that is not, in this order, printed only in evaluation blocks (`evalblock`),
a warm-up's counter another loop follows (`warm_up`), nested in one gap of another family's
records (an inner loop run once), a bar run anew in a few gaps of a line family that goes on
across them (an evaluation each epoch, `run_in_gaps`), or a bar standing finished at one value.
Others join it: a bar like it whose records fall outside its span, a bar and a line family of
the same N or sharing steps outside its span, a line glued after its bar counting the bar's
steps plus one offset (`glued.lockstep`), a line printing each step the bar draws next (`twin`).
Split out of `learn.py`, which reads the templates and compiles what is chosen.
"""

from __future__ import annotations

from bisect import bisect_left

from gpuslo.goodput.logs.bars import inside_one_gap
from gpuslo.goodput.logs.glued import lockstep
from gpuslo.goodput.logs.roles import Reading, words
from gpuslo.goodput.logs.twin import twin

RECURRING = 3  # records of one template that make it recurring (an unread shape worth saying)
WARM_WORDS = {"warmup", "warm"}  # a counter so named counts a warm-up's steps (`warm_up`)


def _standing(readings: list[Reading]) -> bool:
    """True when a family drew its bar finished, `n/N` at its N, and at that one value only, over
    `RECURRING` records or more: a loop finished again and again (Sana's ten `100%|██████████|
    19/19` sampling bars after `Running validation...`, fresh16 S02) shows no steps advancing,
    so a family whose counter moves (its `Global Step: 2956` … `2996` lines, fewer of them) is
    the training. Ranks printing one step (`Step: 77, Rank: 3`, no N) are no finished loop."""
    done: set[float] = set()
    for x in readings:
        if x.step is None or x.total is None:
            return False
        done |= set(x.template.fields[x.step].known()) | set(x.template.fields[x.total].known())
    return sum(x.template.count for x in readings) >= RECURRING and len(done) == 1


def choose(families: dict[str, list[Reading]], evaluation: set[str]) -> list[str]:
    """The families read as training progress (see the module docstring); a family printed
    only in `evaluation` blocks (`evalblock`) ranks last."""
    def span(name: str) -> tuple[int, int]:
        lines = [n for r in families[name] for n in r.template.lines]
        return min(lines), max(lines)

    def warmed(name: str) -> bool:  # a warm-up another loop follows (`warm_up`)
        return warm_up(families[name]) and any(
            span(other)[0] > span(name)[1] and not warm_up(theirs)
            for other, theirs in families.items() if other != name)

    def score(name: str) -> tuple[bool, bool, bool, bool, bool, int, int, int]:
        readings = families[name]
        timed = any(r.role in ("step_s", "window_s", "elapsed", "rate_ips", "rate_spi",
                               "smoothed_s", "line_s") for x in readings for r in x.roles.values())
        stamped = any(t is not None for x in readings for t in x.template.stamps)
        return (name not in evaluation, not warmed(name),
                not nested_in_one_gap(name, families),
                not run_in_gaps(name, families),
                not _standing(readings),
                sum(x.template.count for x in readings), int(timed or stamped), -span(name)[0])

    if not families:
        return []
    main = max(families, key=score)
    chosen = [main]
    first, last = span(main)
    for name in sorted(families, key=lambda n: span(n)[0]):
        if name == main:
            continue
        lines = [n for r in families[name] for n in r.template.lines]
        if lockstep(families[name], families[main]):
            for reading in families[name]:
                reading.numbers_bar = True
                reading.why = "glued after the bar, n + one offset: the job-wide count of its steps"
            chosen.append(name)
            continue
        if twin(families[name], families[main]):
            for reading in families[name]:
                reading.why = "prints each step the bar draws next, with its own step time"
            chosen.append(name)
            continue
        if any(first < n < last for n in lines):
            continue
        both_bars = families[name][0].bar and families[main][0].bar
        if both_bars or _same_total(families[name], families[main]) or _same_steps(
                families[name], families[main]):
            chosen.append(name)
    return chosen


def warm_up(readings: list[Reading]) -> bool:
    """True when every template of a family names its counter a warm-up's (`warmup_step`,
    `warm-up iter`): steps run to prime the program, not the training's. parameter-golf's
    train_gpt.py logs `warmup_step:{k}/{warmup_steps}` while compiling, then restores the initial
    weights and optimizer states and starts its loop at `step:0/20000` (openai/parameter-golf#839,
    newcomer7 F6): a family that starts after it, however fewer its records, is the training's
    (`choose`); alone, or followed by none, it is read."""
    keys = [words(r.template.fields[r.step].key) for r in readings if r.step is not None]
    return bool(keys) and len(keys) == len(readings) and all(
        WARM_WORDS & {w.lower() for w in key} for key in keys)


def nested_in_one_gap(name: str, families: dict[str, list[Reading]]) -> bool:
    """True when every record of family `name` lies in one gap of another family's records
    (`bars.inside_one_gap`): an inner loop run once inside the training's progress (HDRUNet's
    mmsr-style `[epoch: 19, iter: 120,000, …]`, then mmcv's `[>>>…] 1/117, 0.6 task/s,
    elapsed: 2s` over 117 test images, then `iter: 120,100`), whatever its count."""
    own = sorted(n for r in families[name] for n in r.template.lines)
    return any(inside_one_gap(own, sorted(n for r in readings for n in r.template.lines))
               for other, readings in families.items() if other != name)


def run_in_gaps(name: str, families: dict[str, list[Reading]]) -> bool:
    """True when family `name` is a bar run anew in a few gaps of another family's records,
    an inner loop between the other's steps (an evaluation each epoch) whatever its count: its
    records lie in two or more gaps of the other's, its counter falls back at least once a gap
    (it starts again), and the other family goes on across those gaps, its (epoch, step) never
    falling back, with more than twice as many records as the gaps hold runs. LISA's
    train_ds.py validates after each epoch with a tqdm bar `…| 263/277 [01:10<00:03,
    3.73it/s]` that two ranks redraw a thousand times on two lines, between its
    `Epoch: [0][32/32]\tTime 36.901 (36.901)\t…` and `Epoch: [1][ 1/32]\t…` records (fresh22
    Z07). A bar per epoch between epoch lines (one a gap) is the training, and so is a bar
    whose counter never falls (drawn now and then across the other's records)."""
    readings = families[name]
    if not readings[0].bar:
        return False
    own = sorted(n for r in readings for n in r.template.lines)
    falls = sum(b < a for r in readings for a, b in zip(
        r.template.fields[r.step].known(), r.template.fields[r.step].known()[1:], strict=False)
        if r.step is not None)
    for other, theirs in families.items():
        if other == name or theirs[0].bar:
            continue
        places = _places(theirs)
        lines = [line for line, _ in places]
        gaps = {bisect_left(lines, n) for n in own}
        if places and len(gaps) >= 2 and 0 not in gaps and len(lines) not in gaps and (
                falls >= len(gaps) - 1 and 2 * len(gaps) < len(lines)) and all(
                a[1] <= b[1] for a, b in zip(places, places[1:], strict=False)):
            return True
    return False


def _places(readings: list[Reading]) -> list[tuple[int, tuple[float, float]]]:
    """(line, (epoch, step)) of each record of a line family, in line order; [] where a
    template's values were not all kept (`templates.MAX_READ_PER_SHAPE`)."""
    out = []
    for r in readings:
        tpl = r.template
        steps = tpl.fields[r.step].numbers if r.step is not None else []
        epochs = tpl.fields[r.epoch].numbers if r.epoch is not None else [0.0] * tpl.count
        if len(steps) != tpl.count or len(epochs) != tpl.count or None in steps + epochs:
            return []
        out += [(line, (e, n)) for line, e, n in zip(tpl.lines, epochs, steps, strict=True)]
    return sorted(out)


def _totals(readings: list[Reading]) -> set[float]:
    return {n for r in readings if r.total is not None
            for n in r.template.fields[r.total].known()}


def _same_total(one: list[Reading], other: list[Reading]) -> bool:
    """Two families that print the same N, one a line and one a bar, count one loop (zipnerf's
    `1/25000:loss=…` record, then its tqdm bar `49/25000 [00:47<6:30:51, 1.06it/s]`)."""
    totals = _totals(one)
    return one[0].bar != other[0].bar and bool(totals) and totals == _totals(other)


def _steps(readings: list[Reading]) -> set[float]:
    return {n for r in readings if r.step is not None
            for n in r.template.fields[r.step].known()}


def _same_steps(one: list[Reading], other: list[Reading]) -> bool:
    """A bar outside a line family's span that draws a step the lines print counts the same
    loop (InstructLab's `Epoch 0:  99%|…| 77/78 [03:57<00:02,  2.89s/it]` after every rank's
    `Epoch: 0, Step: 77, Rank: 4, loss = …`, and `76/78` before them): a bar and lines that
    share a step, where the bar also draws steps the lines do not print. A bar only at the
    lines' steps adds none: it times them (`bartime`)."""
    if one[0].bar == other[0].bar:
        return False
    bar, lines = (_steps(one), _steps(other)) if one[0].bar else (_steps(other), _steps(one))
    return bool(bar & lines) and not bar <= lines
