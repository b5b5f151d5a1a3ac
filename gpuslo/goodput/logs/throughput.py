"""A throughput in items per second as the step's rate, where the run's own printed settings say
how many items one step takes (pure).

`declared(texts) -> dict[str, float]`: from the sample's lines, the items one optimizer step
takes, by kind: `samples` from a plain `batch_size` (argparse's `Namespace(batch_size=32, …)`
that MXNet's image-classification `fit.py` logs first, a script's `Effective batch size : 32`),
`tokens` from a tokens-per-step setting (a hand-written LLM loop's `Tokens / optimizer step :
32,768`). A kind declared with two different values, or `samples` where the settings also name
gradient accumulation or more than one device (the batch may be a micro-batch or one device's
share), is not known: a step time never rests on a guessed batch.

`throughput_rate(reading, per_step)`: on a progress template with no time of its own (no
duration, elapsed time or rate of steps), a field printed as items per second of a declared kind
(`Speed: 142.33 samples/sec`, MXNet's Speedometer over the last `frequent` batches; `37.3k
tok/s`) becomes `rate_ips` with the items per step as its scale: steps per second is the value
over the scale (`matchers.Matcher.fill`). Another throughput (`words/s`, `tps`) or a kind not
declared stays a metric.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.reading import Reading, Role

_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)(?![\d.])"
_DECLARED = (
    ("samples", re.compile(r"(?i)(?<![\w.])(?:effective )?batch[_ ]size\s*[:=]\s*" + _NUMBER)),
    ("tokens", re.compile(r"(?i)\btokens?\s*(?:/|per)\s*(?:optimi[sz](?:er|ation)\s+)?step\s*"
                          r"[:=]\s*" + _NUMBER)),
)
_SPLIT = re.compile(r"(?i)(?<![\w.])(?:grad(?:ient)?_?accum\w*|accum\w*_steps|world_size|"
                    r"num_gpus|n_?gpus|nproc_per_node)\s*[:=]\s*(\d+)")
_KINDS = (("samples", re.compile(r"(?i)^(?:samples?|imgs?|images?|examples?)/s(?:ec)?\b")),
          ("tokens", re.compile(r"(?i)^(?:tokens?|toks?)/s(?:ec)?\b")))
_TIMED = ("step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_ips", "rate_spi")


def declared(texts: list[str]) -> dict[str, float]:
    """Items per step by kind from the settings the lines print (see the module docstring)."""
    seen: dict[str, set[float]] = {}
    split = False
    for text in texts:
        for kind, pattern in _DECLARED:
            for found in pattern.finditer(text):
                seen.setdefault(kind, set()).add(float(found.group(1).replace(",", "")))
        split = split or any(int(m.group(1)) > 1 for m in _SPLIT.finditer(text))
    out = {kind: next(iter(values)) for kind, values in seen.items()
           if len(values) == 1 and next(iter(values)) > 0}
    if split:
        out.pop("samples", None)
    return out


def throughput_rate(reading: Reading, per_step: dict[str, float]) -> None:
    """Read a declared kind's items per second as the steps' rate (see the module docstring)."""
    if not per_step or reading.step is None or reading.bar or any(
            r.role in _TIMED for r in reading.roles.values()):
        return
    for i, role in list(reading.roles.items()):
        f = reading.template.fields[i]
        if role.role != "metric" or f.kind != "num":
            continue
        after = f.after.strip().split(" ")[0].split("\t")[0].rstrip(",)]|")
        for kind, pattern in _KINDS:
            if kind in per_step and pattern.match(f.unit or after):
                reading.roles[i] = Role("rate_ips", per_step[kind], f"{kind} per second over "
                                        f"{per_step[kind]:g} {kind} a step (printed settings)")
                return
