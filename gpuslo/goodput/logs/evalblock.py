"""A progress family printed only inside evaluation blocks (pure): another loop's counter.

An evaluation loop may print its own counter in words a training loop uses (`step N`), under a
header line that names the evaluation and nothing else: Knover's train.py prints `Evaluation:` and
then one tab-indented `step 100:lm_loss: 4.6425, ppl: …` line per 100 evaluation batches (to `step
4200`, past the 1000 training steps before it, whose `[train][1] progress: 1/1 step: 1000, time:
3.667, speed: 27.272 steps/s` lines are fewer). `evaluation_families`: the families whose every run
of records in the sample is opened by such a header (the nearest record above the run that has a
letter: a rule of `=` between is passed over), so such a family is not chosen as the training steps
while another is there (`families.choose`). A header that carries a number (`Evaluating 5000
samples`) or more words is not one: a step line (`Eval at step 1000: loss …`) names its own
evaluation and is judged by its own head.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpuslo.goodput.logs.reading import Reading
from gpuslo.goodput.logs.templates import SampleRecord

# a record that only names an evaluation: `Evaluation:`, `***** Running Evaluation *****`,
# `Validating...`, `[Test]`
EVAL_HEADER = re.compile(
    r"(?i)^[\W_]*(?:running |start(?:ing)? |begin(?:ning)? |do(?:ing)? )?(?:evaluation|evaluating"
    r"|eval|validation|validating|valid|val|test|testing)(?:\s+(?:phase|stage|loop|mode|set))?"
    r"[\W_]*$")
_LETTER = re.compile(r"[^\W\d_]")


def evaluation_families(families: Mapping[str, list[Reading]], records: list[SampleRecord]
                        ) -> set[str]:
    """The names of `families` (name: its readings) whose every run of records in `records` (the
    sample, in order) is opened by an evaluation header (see the module docstring). Each record
    is read for a letter and a header once, for all families."""
    if not families:
        return set()
    marks = [(rec.line, _mark(rec.text)) for rec in records]
    return {name for name, readings in families.items() if _opened(readings, marks)}


def _mark(text: str) -> bool | None:
    """None for a record with no letter (passed over), else whether it is an evaluation header."""
    if not _LETTER.search(text):
        return None
    return EVAL_HEADER.match(text.strip()) is not None


def _opened(readings: list[Reading], marks: list[tuple[int, bool | None]]) -> bool:
    lines = {n for r in readings for n in r.template.lines}
    runs = opened = 0
    header: bool | None = None  # whether the last record with a letter is a header
    inside = False
    for line, mark in marks:
        if line in lines:
            if not inside:
                runs += 1
                opened += bool(header)
            inside = True
            continue
        if mark is not None:
            inside = False
            header = mark
    return runs > 0 and opened == runs
