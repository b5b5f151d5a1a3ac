"""Words that say a counter's line is no training step, and the label `--explain` gives it (pure).

A template is not progress when the words before its step counter (or the verb right after a
bracketed counter) name an evaluation, checkpoint, data or set-up, profiling or summary, or
run-control line (`NOT_PROGRESS_HEAD`; `roles._decide` reads them, `learn` and `aside` use the
same words); `not_progress_label` names the family (`NOT_PROGRESS_FAMILIES`) for `--explain`.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.templates import readable

NOT_PROGRESS_HEAD = re.compile(
    r"(?i)\b(?:val|valid|validation|validating|eval|evaluation|evaluating|test|testing|predict"
    r"|prediction|predicting|map\d*|download|downloading|generating|tokeniz\w*|loading|load|shards?"
    r"|extract\w*|convert\w*|process\w*|filter|sanity|fetching|resolving|building|compil\w*"
    r"|inference|sampling|sample|scann\w*|writing|uploading|indexing|caching|sav\w*|checkpoint\w*"
    r"|restor\w*|resum\w*|dump\w*|profil\w*|kill\w*|skip\w*|record\w*|summary|start\w*"
    r"|from|load\w*|predict\w*|infeed|outfeed|\w*loader(?=\s(?:\d|\x01))"
    r"|improve\w*|patience|early[ _]?stopping|earlystopping)\b")
# (an early-stopping patience counter is run control, no step: SpeedTransformer's `-> No
# improvement (3/7)` after each validation goes back to 1 at the next best epoch, fresh22 Z02;
# pytorchtools' `EarlyStopping counter: 3 out of 7`)
# (`\w*loader` before its index: Lightning's evaluation bars, `Validation DataLoader 0: : 2342it`,
# the training bar being `Epoch 0:`; its head overwritten, `index created!aLoader 0`: fresh19 W12)
# The families of NOT_PROGRESS_HEAD's words, for the label of a counter not read as steps
# (`--explain`): the first family whose pattern matches the word found says what the line is.
NOT_PROGRESS_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("an evaluation line", r"val|valid\w*|eval\w*|test\w*|predict\w*|map\d*|inference"
                               r"|sampl\w*|sanity|\w*loader"),
        ("a checkpoint line", r"sav\w*|checkpoint\w*|restor\w*|resum\w*"),
        ("a data or set-up line", r"download\w*|generating|tokeniz\w*|load\w*|shards?|extract\w*"
                                  r"|convert\w*|process\w*|filter|fetching|resolving|building"
                                  r"|compil\w*|scann\w*|writing|uploading|indexing|caching"
                                  r"|infeed|outfeed"),
        ("a profiling or summary line", r"profil\w*|dump\w*|record\w*|summary"),
        ("a run-control line", r"kill\w*|skip\w*|start\w*|from|improve\w*|patience"
                               r"|early[ _]?stopping|earlystopping"),
    ))


def not_progress_label(word: str, head: str) -> str:
    """Why a counter whose line says `word` (a NOT_PROGRESS_HEAD word) is not training progress:
    the word's family (NOT_PROGRESS_FAMILIES) and the word, with the head of the template as
    `readable` prints it (`a checkpoint line ('saving' in 'saving checkpoint at iteration')`)."""
    family = next((name for name, pattern in NOT_PROGRESS_FAMILIES if pattern.fullmatch(word)),
                  "not a training step")
    shown = " ".join(readable(head).split())[:48]
    return f"{family} ({word!r} in {shown!r})" if shown else f"{family} ({word!r})"
