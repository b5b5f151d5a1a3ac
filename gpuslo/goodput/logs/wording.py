"""Events by wording family (pure): the profile rules run on a record behind one prefilter.

`Wording(profiles, framework)`: `match(text) -> list[(rule, groups, framework)]`, every event
rule that matches a record: the common families (checkpoint save and restore, failures, hangs,
starts and ends) and the rules of every framework (refinements). A rule with a `contains`
substring runs only on records holding it; the others run only on records that hold one of
`TRIGGER`'s words (case-insensitive), so a progress line or a plain message costs one `search`.
Of the interruption rules that match one record, only the highest priority is kept (an ECC
error beats the Python exception it raised).
"""

from __future__ import annotations

import re

from gpuslo.errors import UsageError
from gpuslo.goodput.logs.profiles import Profiles, Rule

TRIGGER = re.compile(
    r"(?i)sav|checkpoint|ckpt|restor|resum|load|weights|snapshot|continuing training|watchdog"
    r"|time[ds]? ?out|nccl|heartbeat|deadlock|store|error|exception|traceback|xid|fallen off"
    r"|ecc|nvlink|cancelled|preempt|kill|sig[a-z]{2,4}\b|signal|fault|dumped|fatal|exit|died"
    r"|lost|unreachable|unhealthy|crash|disconnect|oom|out of memory|resource_exhausted|cuda"
    r"|cublas|cudnn|illegal|assert|completion with|ibv_|retry counter|infiniband|pulse"
    r"|initializ|world size|running training|start|training (?:complet|finish|done)"
    r"|done training|finished training|max_steps|max_epochs|train_runtime|after training"
    r"|attempts left|gpuslo:|exiting|devices ?unavailable|cuda-capable|went away|valid"
    r"|tokens per iteration|train loss|\bdetect")


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

    def match(self, text: str) -> list[tuple[Rule, dict[str, str], str | None]]:
        """Every event rule matching `text` (one interruption at most)."""
        triggered = TRIGGER.search(text) is not None
        out: list[tuple[Rule, dict[str, str], str | None]] = []
        best: tuple[Rule, dict[str, str], str | None] | None = None
        for rule, fw in self.rules:
            if not rule.contains and not triggered:
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
        return out

    def step_rule(self, text: str) -> tuple[Rule, dict[str, str], str | None] | None:
        """The first hand-written step rule (an overlay's) matching `text`, else None."""
        for rule, fw in self.steps:
            groups = rule.match(text)
            if groups is not None:
                return rule, groups, fw
        return None
