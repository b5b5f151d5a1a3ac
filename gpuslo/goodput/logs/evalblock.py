"""A progress family printed only inside evaluation blocks (pure): another loop's counter.

An evaluation loop may print its own counter in words a training loop uses (`step N`), under a
header line that names the evaluation and nothing else: Knover's train.py prints `Evaluation:`
and then one tab-indented `step 100:lm_loss: 4.6425, ppl: …` line per 100 evaluation batches
(to `step 4200`, past the 1000 training steps before it, whose `[train][1] progress: 1/1 step:
1000, time: 3.667, speed: 27.272 steps/s` lines are fewer). `in_evaluation(lines, records)`:
True when every run of the family's records in the sample is opened by such a header (the
nearest record above the run that has a letter: a rule of `=` between is passed over), so the
family is not chosen as the training steps while another is there (`learn._choose`). A header
that carries a number (`Evaluating 5000 samples`) or more words is not one: a step line
(`Eval at step 1000: loss …`) names its own evaluation and is judged by its own head.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.reading import Reading
from gpuslo.goodput.logs.templates import SampleRecord

# a record that only names an evaluation: `Evaluation:`, `***** Running Evaluation *****`,
# `Validating...`, `[Test]`
EVAL_HEADER = re.compile(
    r"(?i)^[\W_]*(?:running |start(?:ing)? |begin(?:ning)? |do(?:ing)? )?(?:evaluation|evaluating"
    r"|eval|validation|validating|valid|val|test|testing)(?:\s+(?:phase|stage|loop|mode|set))?"
    r"[\W_]*$")
_LETTER = re.compile(r"[^\W\d_]")


def in_evaluation(readings: list[Reading], records: list[SampleRecord]) -> bool:
    """True when every run of the records of `readings` (one family) in `records` (the sample,
    in order) is opened by an evaluation header (see the module docstring)."""
    lines = {n for r in readings for n in r.template.lines}
    runs = opened = 0
    header: bool | None = None  # whether the last record with a letter is a header
    inside = False
    for rec in records:
        if rec.line in lines:
            if not inside:
                runs += 1
                opened += bool(header)
            inside = True
            continue
        if _LETTER.search(rec.text):
            inside = False
            header = EVAL_HEADER.match(rec.text.strip()) is not None
    return runs > 0 and opened == runs
