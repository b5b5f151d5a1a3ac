"""An epoch the log shows begun after its last progress line: its tail is training (pure).

`epoch_went_on(parsed, records) -> (stamp, epoch) | None`: a log whose progress lines are
epoch summaries (fairseq's `train | {"epoch": 70, …, "train_num_updates": "2162"}`) prints no
line for the steps of an epoch under way; its markers say it runs (`begin training epoch 71`
at 23:31:24, `end of epoch 71` at 23:33:02, facebookresearch/fairseq#2493, newcomer6 #13). A
stamped epoch marker after the last progress record, naming an epoch above that record's, is
that: the time from it to the log's last stamp is the training of an epoch whose steps the
log does not number, progress not yet committed, not `other` (time the log shows as neither
steps nor a named phase: a hang). A marker of the last record's own epoch or an earlier one
(an epoch's closing summary, a validation header) says nothing went on: None.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.parsedlog import ParsedLog


def epoch_went_on(parsed: ParsedLog, records: list[Any]) -> tuple[float, int] | None:
    """(stamp, epoch) of the first marker of a later epoch after the last record, or None."""
    if not records or records[-1].epoch is None or records[-1].prog.ts is None:
        return None
    last = records[-1]
    for o in parsed.observations:
        epoch = o.data.get("epoch", "") if o.kind == "epoch" else ""
        if o.seq > last.prog.seq and o.ts is not None and o.ts >= last.prog.ts and (
                epoch.isdigit() and int(epoch) > last.epoch):
            return o.ts, int(epoch)
    return None
