"""The serving part of the SLO spec: latency objectives of inference replicas (issue 29).

    serving:
      ttft_seconds: 0.5   # time-to-first-token objective (seconds)
      ttft_target: 0.95   # share of requests whose first token came within it
      itl_seconds: 0.1    # inter-token latency objective (seconds)
      itl_target: 0.95    # share of output tokens (after the first) that came within it

Absent from a spec, no serving rules are generated (the default rule files stay as they are).

Bucket-boundary rule: the engines publish latency as cumulative histograms, so "share within T"
is exact only where T is a bucket bound (`le`). gpuslo never interpolates: the rules read the
bucket whose `le` equals the objective (matching both spellings, `1` and `1.0`), and the alert
`GpusloServingObjectiveNotABucket` fires for a replica whose histogram has no such bucket, so a
wrong objective is loud rather than silently 0 or 1. Default bounds: vLLM's TTFT histogram has
0.001 … 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0 (the pages in tests/data/serving);
SGLang's has 8, 10, 20, 40, … (sglang PR 7317's page); Triton's first-response histogram is in
milliseconds (the rules multiply by 1000) and is off unless `--metrics-config
histogram_latencies=true`.
"""

from __future__ import annotations

from dataclasses import dataclass

FIELDS = ("ttft_seconds", "ttft_target", "itl_seconds", "itl_target")


@dataclass(frozen=True)
class ServingObjectives:
    """Latency objectives (seconds, > 0) and targets (ratios 0–1, exclusive)."""

    ttft_seconds: float = 0.5
    ttft_target: float = 0.95
    itl_seconds: float = 0.1
    itl_target: float = 0.95


def text_number_hint(value: object) -> str:
    """" (text, not a number: ...)" when `value` is a string that reads as a number, else ""
    (pure). PyYAML follows YAML 1.1, whose floats need a dot: `1e-3` is the string '1e-3' (write
    1.0e-3), and a quoted "0.5" is text (newcomer 7 F10: a range message for 0.001 read as
    out of range)."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    return (" (text, not a number: YAML 1.1 reads an exponent without a dot, 1e-3, and a "
            "quoted number as text; write 1.0e-3 or 0.001, unquoted)")


def serving_from_mapping(raw: object, source: str, problems: list[str]) -> ServingObjectives | None:
    """The `serving` section (None when absent); appends one message per bad field to
    `problems`, each naming `source` and `serving.<field>`."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(f"{source}: field 'serving' must be a mapping")
        return None
    for key in sorted(set(raw) - set(FIELDS)):
        problems.append(f"{source}: unknown field 'serving.{key}' (known: {', '.join(FIELDS)})")
    values = {}
    for key in FIELDS:
        value = raw.get(key, getattr(ServingObjectives, key))
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if key.endswith("_seconds") and not (number and 0 < value <= 3600):
            problems.append(f"{source}: field 'serving.{key}' must be seconds in (0, 3600], "
                            f"got {value!r}{text_number_hint(value)}")
        elif key.endswith("_target") and not (number and 0 < value < 1):
            problems.append(f"{source}: field 'serving.{key}' must be a ratio between 0 and 1 "
                            f"(exclusive), got {value!r}{text_number_hint(value)}")
        else:
            values[key] = float(value)
    return ServingObjectives(**values) if len(values) == len(FIELDS) else None

