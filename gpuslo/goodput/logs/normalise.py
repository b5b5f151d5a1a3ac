"""Physical log lines → records: capture artefacts removed, launcher prefixes read, stamps found.

Pure. `Normaliser(profiles)` does, per physical line:

1. `clean`: ANSI colour codes removed, other control bytes dropped (a line that is mostly control
   bytes is binary noise: None).
2. `split`: messages glued to a progress bar drawn without a newline are cut apart: before each
   profile `splits` pattern, and after a bar's closing `it/s]`/`s/it]` when text follows.
3. `strip`: launcher and reporter prefixes removed, repeatedly: the profile `prefixes` (torch
   `[rank3]:`, `[default0]:`, a log viewer's `[1745] `), srun `--label` (`0: `), mpirun
   (`[1,0]<stdout>:`), Ray (`(RayTrainWorker pid=123, ip=10.0.0.1) `), pdsh/DeepSpeed hostnames
   (`node-01: `) and a viewer's line number before a stamp (`671 2021-07-21 ...`); not srun's
   label where the head shows the `N: ` labels counting, never repeating (`learn_labels`). The rank,
   process or host a prefix names is returned, so the reader counts a line printed by many
   ranks once. First, the lead a paste put before (nearly) every line - indentation, a quote's
   `>`, a list's `- ` - learnt from the head (`learn_indent`), so that it changes no line's
   meaning.
4. `stamp`: the record's own stamp, by the learnt layouts (`stamps.learn_shapes`), removed with
   the separators that follow it (a Unix time that ends the record, with those before it); the
   match groups go to the `Clock`.

Joining terminal-wrapped records (a record cut at the terminal width, or after a dangling
`key:`) is the reader's: it needs the lines around.
"""

from __future__ import annotations

import re

import gpuslo.goodput.logs.unixtime as unixtime
from gpuslo.goodput.logs.profiles import MAX_RECORD, Profiles
from gpuslo.goodput.logs.stamps import HEAD, StampShape

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,40}[A-Za-z]|\x1b\][^\x07]{0,200}\x07")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BAR_END = re.compile(r"(?:it/s|s/it)(?:, [^\]\n]{0,400})?\](?=\S)")
# a message glued to the last value of a Keras Progbar state (`… - class_loss: 2.3435Killed`):
# Progbar ends a state with `\r`, not a newline, so what the shell or the job prints next lands on
# the bar's line (fresh16 S12); the cut is right after the last `name: value` of the bar
_KERAS_GLUED = re.compile(r"^\s*\d+/\d+ \[[=>.]*\] - .*: [-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
                          r"(?=[A-Z][a-z])")
_LAUNCHERS = (
    # srun --label; not darknet's iteration line (`4: 285.326599, 289.835968 avg, …`)
    re.compile(r"^(?P<rank>\d{1,5}): (?!\d{1,9}\.\d{1,9}, )"),
    # mpirun --tag-output / horovodrun `[1,0]<stdout>:` ([job,rank]); SageMaker's MPI launcher
    # `[1,mpirank:0,algo-1]<stdout>:` (fresh16 S14)
    re.compile(r"^\[\d{1,5},(?:mpirank:)?(?P<rank>\d{1,5})(?:,[\w.-]{1,63})?\]<std(?:out|err)>: ?"),
    re.compile(r"^\((?P<rank>[\w.]{1,80} pid=\d{1,10}(?:, ip=[\d.:a-f]{3,45})?)\) ?"),  # Ray
    re.compile(r"^(?P<rank>(?=[\w.-]{0,62}\d)(?=[\w.-]{0,62}[-.])[A-Za-z][\w.-]{1,62}): "),  # host
)
_LABEL = _LAUNCHERS[0]
COUNTED_LABELS_MIN = 3
# what a paste puts before every line: indentation, a quote's `>` or a list's `-`/`*`/`+`
_PASTE_LEAD = re.compile(r"^(?:[ \t]+|>[ \t]?|[-*+][ \t]+)+")
PASTE_SHARE = 0.9  # of the head's lines that must open with the same lead
PASTE_MIN_LINES = 3
_LINE_NUMBER = re.compile(r"^\d{1,9}[ \t]+(?=\[?\d{2,4}[-/])")
GLUED_MIN = 60  # characters: a line shorter holds no two stamped records
_AFTER_STAMP = re.compile(r"^[\]\s:,|>-]{0,6}")


class Normaliser:
    """Cleans, splits and strips physical lines (see the module docstring). `shapes` are the
    stamp layouts learnt for this log (set by the reader after learning)."""

    def __init__(self, profiles: Profiles) -> None:
        self.profiles = profiles
        self.shapes: list[StampShape] = []
        self.launchers = _LAUNCHERS  # without srun's label where the log's labels count steps
        self.indent = ""  # the paste's lead of every line (`learn_indent`)

    def learn_labels(self, lines: list[str]) -> None:
        """Read `N: ` at the start of a line as text, not as srun's `--label`, when in the
        head `lines` every such label is new and above the one before (audiolm-pytorch's
        SoundStreamTrainer prints `25001: soundstream total loss: …`, then 25002, …: its step).
        A task's rank labels its every line, so they repeat; counted labels never do."""
        labels = [int(m.group("rank")) for line in lines if (m := _LABEL.match(line))]
        if len(labels) >= COUNTED_LABELS_MIN and all(
                b > a for a, b in zip(labels, labels[1:], strict=False)):
            self.launchers = _LAUNCHERS[1:]

    def learn_indent(self, lines: list[str]) -> None:
        """Learn the paste's lead: the longest run of indentation, quote (`>`) and list
        (`- `, `* `) marks that opens at least `PASTE_SHARE` of the head's non-blank `lines`
        (`PASTE_MIN_LINES` at least), as a log indented by a document it was pasted in (a
        Caffe log indented 9 spaces in a markdown file: its glog stamps, `I0321 17:37:29.1…`,
        were no longer at the line's start, and `I0321` was read as a step's time). `strip`
        removes it from every line that opens with it, so a line means what it means
        unindented; indentation beyond it (metrics under a header, a wrapped message's
        continuation) stays. Nothing when no one lead is that common."""
        leads = [m.group() if (m := _PASTE_LEAD.match(line)) else ""
                 for line in lines if line.strip()]
        self.indent = ""
        if len(leads) < PASTE_MIN_LINES:
            return
        longest = max(leads, key=len)
        for size in range(len(longest), 0, -1):
            lead = longest[:size]
            if sum(x.startswith(lead) for x in leads) >= PASTE_SHARE * len(leads):
                self.indent = lead
                return

    def dedent(self, text: str) -> str:
        """`text` without the paste's lead (`learn_indent`) when it opens with it."""
        return text[len(self.indent):] if self.indent and text.startswith(self.indent) else text

    def clean(self, line: str) -> str | None:
        """`line` cut to MAX_RECORD characters, without colour codes and control bytes; None
        for binary noise. Counts nothing: the reader cleans a head line several times (stamp
        layouts, wrap width, the learning sample, the read), so the one that reads it for real
        (`pipe.RecordPipe.push`) counts the cut."""
        if len(line) > MAX_RECORD:
            line = line[:MAX_RECORD]
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if _CONTROL.search(line):
            cleaned = _CONTROL.sub("", line)
            if len(cleaned) < 0.7 * len(line):
                return None
            line = cleaned
        return line

    def split(self, line: str) -> list[str]:
        """The messages of one physical line (usually just the line)."""
        cuts = {0}
        for pattern in self.profiles.splits:
            cuts.update(m.start() for m in pattern.finditer(line, 1) if m.start() > 0)
        if "/" in line:
            cuts.update(m.end() for m in _BAR_END.finditer(line))
            if "] - " in line:  # a Keras bar's `[====] - ` (`_KERAS_GLUED`): strip only then
                cuts.update(self._keras_glued(line))
        if len(line) > GLUED_MIN and self.shapes:
            cuts.update(self.glued(line))
        if len(cuts) == 1:
            return [line]
        points = sorted(cuts) + [len(line)]
        return [line[a:b] for a, b in zip(points, points[1:], strict=False) if line[a:b].strip()]

    def _keras_glued(self, line: str) -> list[int]:
        """The offset where a message glued after a Keras bar's last value begins (`248/441
        [==>...] - ETA: 2:05 - loss: 2.3435Killed`, fresh16 S12), or none; a launcher prefix
        before the bar (`0: `, `worker-0: `) is passed over, as in `glued`."""
        body = self.strip(line)[0]
        found = _KERAS_GLUED.match(body)
        return [len(line) - len(body) + found.end()] if found else []

    def glued(self, line: str, start: int = 0) -> list[int]:
        """Offsets (past `start`) where a record glued to the one that opens `line` begins: the
        line opens with a full-date stamp of the log's layouts and the same layout recurs after
        a blank, followed by the same first word (icefall's two `2024-05-31 15:42:22,402 INFO
        [train.py:979] Epoch 1, batch 7, …` records on one line, their newlines lost in a
        paste). A stamp quoted inside a message (`saved at 2024-05-31 15:42:22`) is followed by
        other words: no cut. A launcher prefix before the stamp (`worker-0: `, `[rank0]:`) is
        passed over: the records are the same process's (`pipe` gives the rest its rank)."""
        body = self.strip(line)[0]
        at = len(line) - len(body)
        for shape in self.shapes:
            if shape.tail or not shape.anywhere:
                continue
            first = shape.regex.match(body)
            if first is None:
                continue
            opener = body[first.end():first.end() + 24].split(maxsplit=1)[:1]
            return [at + m.start() for m in shape.regex.finditer(body, max(first.end(),
                                                                         start - at))
                    if body[m.start() - 1].isspace() and opener
                    and body[m.end():m.end() + 24].split(maxsplit=1)[:1] == opener]
        return []

    def strip(self, text: str) -> tuple[str, str | None, bool]:
        """(text without prefixes, the rank/process/host they name or None, whether any)."""
        rank, had = None, False
        text = self.dedent(text)  # a paste's lead: no prefix (`had`), no rank
        for _ in range(6):
            found = None
            for pattern in self.profiles.prefixes + self.launchers:
                found = pattern.match(text)
                if found and found.end() > 0:
                    break
                found = None
            if found is None:
                number = _LINE_NUMBER.match(text)
                if number is None:
                    break
                text, had = text[number.end():], True
                continue
            rank = found.groupdict().get("rank") or rank
            text, had = text[found.end():], True
        return text, rank, had

    def stamp(self, text: str) -> tuple[str, dict[str, str | None] | None]:
        """(text without its stamp, the stamp's groups) or (text, None)."""
        if not self.shapes or not text:
            return text, None
        head = text[:HEAD]
        for shape in self.shapes:
            if shape.tail:  # a Unix time that ends the record (`unixtime`)
                at_end = unixtime.search(text)
                if at_end is not None:
                    return text[:at_end.start()].rstrip(), at_end.groupdict()
                continue
            found = shape.regex.search(head)
            if found is None:
                continue
            if not shape.anywhere and found.start() > 1 and not _level_only(head[:found.start()]):
                continue
            rest = text[found.end():]
            after = _AFTER_STAMP.match(rest)
            rest = rest[after.end():] if after else rest
            before = text[:found.start()].rstrip(" [")
            return (f"{before} {rest}" if before else rest), found.groupdict()
        return text, None


def _level_only(before: str) -> bool:
    """True when only a level word or bracket precedes a stamp (`INFO 09-15 14:42:21`)."""
    return re.fullmatch(r"\s*\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|[IWEF])\]?\s*",
                        before) is not None
