"""A run header printed again: a relaunch (pure), read from the items of a log in order.

`headers_again(items) -> items`: a `train_start` line (`Starting training...`, `***** Running
training *****`) is printed once a run, before its loop. The same line (digits masked) printed
again after progress or a stop line since its last print is a second run header: the process
was launched again. It becomes a `restart` mark (the walk then counts one restart, and, with no
stop line before it, one interruption of unknown cause; the lines of one relaunch count once).
The class comes from a research trainer's `training.log` (fresh12 O10: `__main__ - INFO -
Starting training...` at 14:52:20, a RuntimeError traceback, the same line at 14:53:23, `Step 50
| Loss: …`, and again at 14:55:25 with no line between: three launches). A train_start printed
again with nothing in between (two loggers echoing one start) is no relaunch; nor is one of
another wording. Epoch markers printed again are `items._Grouper._header_again`'s.

`Opening` (used by the reader on records nothing else read) does the same for the log's opening
line, the first record, when no wording names it a run header: a script's first words (`Loading
CSM model: sesame/csm-1b`, a `====== <name> 3.0 自动训练（修复版）启动 ======` banner) are what it
prints when it starts, so the same line printed again - one template, digits masked, at most one
token in four edited (a banner retitled between launches: `修复版` → `最终修复版`; not a word
replaced: `# Log on UI`, then `# Log on Console`) - is the
program started again. From a LoRA script's log (fresh13 P07: the opening line six times over
55 minutes, after a finished run, after `Starting epoch 1/13`, right after another launch 49 s
before, after a traceback) and a self-play trainer's (P04: banner, config, then the banner again
105 s later). Not a relaunch: a reprint with the same stamp or none and nothing between (two
handlers echoing one line); an opening that is a warning or deprecation notice (a library prints
those again whenever the code path runs: `np.object` warnings each epoch); a table's column
header (three or more gaps of two spaces: YOLOv7's `Epoch   gpu_mem   box   obj …` above each
epoch's row, an excerpt's first line); a line some reader
already took as progress or an event (never offered); a reprint the steps go on across (the
record after it counts past the one before it: an excerpt that opens mid-run with a line the job
prints each step, `System/Peak GPU Memory (MB)=6,784` above OLMo's `[step=1/739328]`); a
reprint with other numbers (an opening that reports a measure - vLLM's `It took 1.460260 seconds
to fall asleep.` each step - is a status line: a launch prints its constants, a model name or a
version, the same each time).
"""

from __future__ import annotations

import re
from os.path import commonprefix
from typing import Any

from gpuslo.goodput.logs.items import Interruption, Mark
from gpuslo.goodput.logs.progress import Record

_DIGITS = re.compile(r"\d+")
_WARNING = re.compile(r"(?i)warn|deprecat")
_COLUMN_GAP = re.compile(r"\S {2,}(?=\S)")  # words set in columns: a table's header
_COLUMNS = 3
_MIN_TOKENS = 2  # a one-word opening (`Done`, `[`) says nothing of who printed it
_CHANGED_AT_MOST = 0.25  # share of tokens a relaunch's banner may change


def _tokens(text: str) -> list[str]:
    return _DIGITS.sub("#", text).split()


def _edited(x: str, y: str) -> bool:
    """`y` is `x` edited, not replaced: what they share at both ends is at least half the
    longer (`自动训练（修复版）启动` → `自动训练（最终修复版）启动`; not `UI` → `Console`)."""
    head = len(commonprefix([x, y]))
    tail = len(commonprefix([x[head:][::-1], y[head:][::-1]]))
    return 2 * (head + tail) >= max(len(x), len(y))


def _alike(a: list[str], b: list[str]) -> bool:
    """One template: as many tokens, at most a quarter of them changed (Drain's similarity),
    each changed one edited (`_edited`)."""
    if len(a) != len(b):
        return False
    changed = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return len(changed) <= _CHANGED_AT_MOST * len(a) and all(_edited(x, y) for x, y in changed)


class Opening:
    """The log's opening line and its reprints (module docstring). `see(text, ts, seq)` is
    called with each record nothing read (`seq` its position, `ts` its stamp or None); it
    returns True when the record is the opening printed again by a new launch."""

    def __init__(self) -> None:
        self.shape: list[str] | None = None
        self.numbers: list[str] = []  # the opening's numbers: a launch's constants
        self.last: tuple[int, float | None] = (0, None)  # seq and stamp of the last print
        self.closed = False  # the first record was read as something else: no opening

    def first(self, text: str, read: bool) -> None:
        """The log's first record; `read` when progress or an event rule took it."""
        tokens = _tokens(text)
        if read or len(tokens) < _MIN_TOKENS or _WARNING.search(text) or len(
                _COLUMN_GAP.findall(text.strip())) >= _COLUMNS:
            self.closed = True
        else:
            self.shape, self.numbers = tokens, _DIGITS.findall(text)

    def see(self, text: str, ts: float | None, seq: int) -> bool:
        if self.closed or self.shape is None or not _alike(self.shape, _tokens(text)) or (
                _DIGITS.findall(text) != self.numbers):
            return False
        seq0, ts0 = self.last
        self.last = (seq, ts)
        echo = seq == seq0 + 1 and (ts is None or ts0 is None or abs(ts - ts0) < 1.0)
        return not echo


def _continued(items: list[Any], k: int) -> bool:
    """The steps go on across item `k`: the progress record after it counts past the one
    before it, by step or by epoch (a per-epoch bar: YOLOv7's column header above each epoch's
    row); a process started again counts from its start, or restores, or never steps."""
    before = next((x for x in reversed(items[:k]) if isinstance(x, Record)), None)
    after = next((x for x in items[k + 1:] if isinstance(x, Record)), None)
    if before is None or after is None or any(seq > items[k].obs.seq for seq in before.again):
        return False  # the step before printed again after it (a duplicate dropped): from start
    return (after.epoch or 0, after.glob) > (before.epoch or 0, before.glob)


def _opening_again(item: Any) -> bool:
    return isinstance(item, Mark) and item.obs.data.get("opening") == "again"


def headers_again(items: list[Any]) -> list[Any]:
    """`items` with each repeated run header (module docstring) made a `restart` mark, and each
    reprint of the opening line (`Opening`) left out where the steps go on across it: a line
    a running job prints again (an excerpt that starts mid-run opens with one), no launch."""
    items = [x for k, x in enumerate(items) if not (_opening_again(x) and _continued(items, k))]
    last: dict[str, int] = {}  # header shape -> index of its last print
    out = list(items)
    for k, item in enumerate(items):
        if not (isinstance(item, Mark) and item.kind == "train_start"):
            continue
        shape = _DIGITS.sub("#", item.obs.text.strip())
        before = last.get(shape)
        last[shape] = k
        if before is not None and any(isinstance(x, (Record, Interruption))
                                      for x in items[before + 1:k]):
            out[k] = Mark("restart", item.obs, item.t0, item.t1)
    return out
