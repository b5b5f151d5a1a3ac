"""Events by wording family (pure): the profile rules run on a record behind one prefilter.

`Wording(profiles, framework)`: `match(text) -> list[(rule, groups, framework)]`, every event
rule that matches a record: the common families (checkpoint save and restore, failures, hangs,
starts and ends) and the rules of every framework (refinements). A rule with a `contains`
substring runs only on records holding it; the others run only on records that hold a word
that starts like one of `TRIGGER_STARTS` (case-insensitive), so a plain message costs a
few set lookups.
Of the interruption rules that match one record, only the highest priority is kept (an ECC
error beats the Python exception it raised). A record read as progress is given only to the rules
with a `contains` substring, and, when it says a save finished (`SAVED`: mlx-lm's `Iter 50: Saved
adapter weights to …/0000050_adapters.safetensors.`, a step line that is the save's own record),
to the rules of a finished save (`save`, phase `end`): the step it prints is the step saved; when
it says a save begun right after its opening counter (`SAVING`: audiolm-pytorch's `25000: saving
model to results`), to the rules of a begun save (phase `start`), at that step. A save message
glued after a progress record's fields as its own `|`/`||` segment (ssd.pytorch's `iter 0 ||
Loss: 27.0166 || Saving state, iter: 0`: `print('Saving state, iter:', iteration)` right after
the loss, with no newline between) is given to the save rules alone (`glued_save`). A record
that gives a save's duration (`Time on save model 510.14`, GraphStorm, fresh23 AA18) begins no
save, though its words (`save model`) are a begin's: its begin rules are dropped.
"""

from __future__ import annotations

import re

import gpuslo.goodput.logs.tokens as tokens
from gpuslo.errors import UsageError
from gpuslo.goodput.logs.matchers import Prog
from gpuslo.goodput.logs.pipe import Rec
from gpuslo.goodput.logs.profiles import Profiles, Rule

_WORD = re.compile(r"[a-z_]{2,}")
# Words (by their start) that the rules without a `contains` substring need: a record with none
# of them is not given to those rules. Checked on the record's lower-cased words, a set lookup
# per word: a big case-insensitive alternation costs over a millisecond on a long line.
TRIGGER_STARTS = (
    "sav", "checkpoint", "ckpt", "restor", "resum", "load", "reload", "weight", "snapshot",
    "continu", "watchdog", "timeout", "timed", "nccl", "heartbeat", "deadlock", "barrier",
    "rendezvous", "socket", "store", "broadcast", "all_reduce", "allreduce", "all_gather",
    "allgather", "diststoreerror", "error", "exception", "traceback", "xid", "fallen", "ecc",
    "nvlink", "cancelled", "preempt", "kill", "sig", "signal", "segmentation", "fault",
    "dumped", "fatal", "exit", "died", "dead", "lost", "unreachable", "unhealthy", "crash",
    "disconnect", "oom", "memory", "resource_exhausted", "cuda", "cublas", "cudnn", "illegal",
    "assert", "completion", "ibv", "retry", "infiniband", "pulse", "initializ", "world",
    "running", "start", "training", "complet", "finish", "done", "max_steps", "max_epochs",
    "train_runtime", "after", "attempts", "gpuslo", "exiting", "devices", "capable", "went",
    "valid", "tokens", "train", "detect", "wrote", "written", "writing", "stor", "dump",
    "persist", "terminated", "bus", "core", "worker", "node", "actor", "replica", "executor",
    "slice", "host", "tpu", "ray", "gpu", "raise", "abort", "skip", "interrupt",
    "pt", "safetensors", "pdparams", "caffemodel",  # a checkpoint file's path alone on its line
    "best",  # a best model's file under its label (`BEST MODEL : …/best_model_1000037.pkl`)
)
# the words of a finished save, looked for on a progress record (and by `fast`, after a match)
SAVED = re.compile(r"(?i)\b(?:saved|wrote|written)\b")
# a save begun, said right after the counter that opens a record read as progress: the step
# line is the save's own record (audiolm-pytorch's `25000: saving model to results` opens like
# its `25001: soundstream …` step lines, whose matcher is cut after the counter; the save is at
# that step). A sentence that mentions saving later in a step line is not one.
SAVING = re.compile(r"(?i)^[\s\[(]*(?:(?:step|iter(?:ation)?|update)s?\s*[:=]?\s*)?\d+[\])]?"
                    r"\s*[:|-]?\s*saving\b")
# substrings of those words (`says_saved`): a text holding none of them says no save finished
SAVED_HINTS = ("aved", "AVED", "rote", "ROTE", "ritten", "RITTEN")
# a `|`/`||` segment of a progress record that opens with a save's word (`glued_save`)
_GLUED_SAVE = re.compile(r"\|\|?\s*(?=(?i:sav(?:ing|ed?)|writing|snapshot\w*|checkpoint\w*)\b)")
_STARTS = {n: {w for w in TRIGGER_STARTS if len(w) == n} for n in range(2, 13)}
_SHORTEST = min(len(w) for w in TRIGGER_STARTS)


def triggered(text: str) -> bool:
    """True when a word of `text` starts with one of TRIGGER_STARTS (case-insensitive)."""
    for word in set(_WORD.findall(text.lower())):
        for n in range(_SHORTEST, min(len(word), 12) + 1):
            if word[:n] in _STARTS[n]:
                return True
    return False


class Wording:
    """The event rules of a profile set (see the module docstring). Raises UsageError when
    `framework` is not a profile name."""

    def __init__(self, profiles: Profiles, framework: str | None = None) -> None:
        if framework is not None and framework not in profiles.frameworks:
            known = ", ".join(profiles.frameworks)
            raise UsageError(f"--framework: unknown framework {framework!r}; known: {known}")
        chosen = [profiles.frameworks[framework]] if framework else list(
            profiles.frameworks.values())
        self.rules: list[tuple[Rule, str | None]] = [(r, None) for r in profiles.common]
        self.rules += [(r, fw.name) for fw in chosen for r in fw.rules]
        self.steps = [(r, fw) for r, fw in self.rules if r.kind == "step"]
        self.rules = [(r, fw) for r, fw in self.rules if r.kind != "step"]

    def match(self, text: str, progress: bool = False
              ) -> list[tuple[Rule, dict[str, str], str | None]]:
        """Every event rule matching `text` (one interruption at most). A record read as
        progress is given only to the rules with a `contains` substring (a message glued to a
        bar is cut off it before: `Normaliser.split`), and to a finished save's rules when it
        says so (see the module docstring)."""
        hit = not progress and triggered(text)
        saved = progress and says_saved(text)
        begun = progress and "aving" in text.lower() and SAVING.match(text) is not None
        out: list[tuple[Rule, dict[str, str], str | None]] = []
        best: tuple[Rule, dict[str, str], str | None] | None = None
        for rule, fw in self.rules:
            if not rule.contains and not hit and not (saved and _finished_save(rule)) and not (
                    begun and _begun_save(rule)):
                continue
            groups = rule.match(text)
            if groups is None:
                continue
            if rule.kind == "interruption":
                if best is None or rule.priority > best[0].priority:
                    best = (rule, groups, fw)
            else:
                out.append((rule, groups, fw))
        if best is not None:
            out.append(best)
        if any(rule.kind == "save" and rule.phase == "duration" for rule, _, _ in out):
            out = [m for m in out if not _begun_save(m[0])]  # a save's time, not a begin
        if progress and not any(rule.kind == "save" for rule, _, _ in out):
            out += self.glued_save(text)
        return out

    def glued_save(self, text: str) -> list[tuple[Rule, dict[str, str], str | None]]:
        """The save rules matching the segment of a progress record after a `|`/`||` that opens
        with a save's word (see the module docstring); [] when there is none. Only the segment
        is read, so the progress fields before it (`iter 0 || Loss: …`) name nothing saved."""
        glued = _GLUED_SAVE.search(text) if glued_save(text) else None
        if glued is None:
            return []
        segment = text[glued.end():]
        return [(rule, groups, fw) for rule, fw in self.rules if rule.kind == "save"
                for groups in [rule.match(segment)] if groups is not None]

    def step_rule(self, text: str) -> tuple[Rule, dict[str, str], str | None] | None:
        """The first hand-written step rule (an overlay's) matching `text`, else None."""
        for rule, fw in self.steps:
            groups = rule.match(text)
            if groups is not None:
                return rule, groups, fw
        return None


def glued_save(text: str) -> bool:
    """True when a progress record (or template) holds a `|`/`||` segment that opens with a
    save's word (`Wording.glued_save`)."""
    return "|" in text and _GLUED_SAVE.search(text) is not None


def _finished_save(rule: Rule) -> bool:
    return rule.kind == "save" and rule.phase == "end"


def _begun_save(rule: Rule) -> bool:
    return rule.kind == "save" and rule.phase == "start"


def says_saved(text: str, start: int = 0) -> bool:
    """True when `text` from `start` has a word of a finished save (`SAVED`); substrings first,
    so that a line without one costs about a microsecond (the fast path asks every line)."""
    tail = text[start:] if start else text
    if not any(map(tail.__contains__, SAVED_HINTS)):
        return False
    return SAVED.search(tail) is not None


def rule_progress(rule: Rule, d: dict[str, str], rec: Rec, seq: int, ts: float | None
                  ) -> Prog | None:
    """The progress record of `rec` (the reader's `seq`-th, at `ts`) from the groups `d` of
    a hand-written step rule (an overlay's, `Wording.step_rule`): step, total and epoch,
    `step_time` in the rule's unit (ms or s), a rate (it/s, s/it or updates per second) and a
    bar's elapsed clock. None when the step is no number or past 1e15."""
    step = tokens.number(d.get("step", ""))
    if step is None or abs(step) > 1e15:
        return None
    prog = Prog(rec.line, seq, ts, rec.rank)
    prog.printed, prog.family = int(step), f"rule:{rule.where}"
    total, epoch = tokens.number(d.get("total", "")), tokens.number(d.get("epoch", ""))
    prog.total = int(total) if total is not None else None
    prog.epoch = int(epoch) if epoch is not None else None
    value = tokens.number(d.get("step_time", ""))
    if value:
        prog.step_s = value * (1e-3 if (d.get("unit") or rule.unit) == "ms" else 1.0)
    rate, ups = tokens.number(d.get("rate", "")), tokens.number(d.get("ups", ""))
    if rate:
        prog.rate_s = rate if d.get("rate_unit") == "s/it" else 1.0 / rate
    elif ups:
        prog.rate_s = 1.0 / ups
    if d.get("elapsed"):
        prog.elapsed, prog.bar = tokens.clock_seconds(d["elapsed"]), True
    return prog
