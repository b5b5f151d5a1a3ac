"""One promtool rule-test case from rows of input series and expected recorded samples (pure).

`recorded_case(rows, checks, at="10m") -> dict`: rows are `(metric, labels, values)` with
promtool's expanding notation in `values` (`0+60x20`); checks are `(record, [(labels, value),
...])`, each evaluated at `at`. The result is one entry of a promtool test file's `tests:` with a
1 m interval (promtool's `test rules` format: prometheus.io/docs/prometheus/latest/configuration/
unit_testing_rules/). Labels are written sorted so the generated files are deterministic.

`series_name(name, labels)` and `series(name, labels, values)` (one input series) are the one
spelling of a series for every generated promtool test (`tests_gen` and its users import them).
"""

from __future__ import annotations


def series_name(name: str, labels: dict[str, str]) -> str:
    """`name{a="1",b="2"}`, labels sorted; the bare `name` when there are none."""
    inner = ",".join(f'{key}="{labels[key]}"' for key in sorted(labels))
    return f"{name}{{{inner}}}" if inner else name


def series(name: str, labels: dict[str, str], values: str) -> dict:
    """One promtool input series: `{"series": series_name(...), "values": values}`."""
    return {"series": series_name(name, labels), "values": values}


def recorded_case(rows: list[tuple[str, dict[str, str], str]],
                  checks: list[tuple[str, list[tuple[dict[str, str], float]]]],
                  at: str = "10m") -> dict:
    """The promtool case (see the module docstring)."""
    inputs = [series(name, labels, values) for name, labels, values in rows]
    promql = [
        {"expr": record, "eval_time": at,
         "exp_samples": [{"labels": series_name(record, labels), "value": value}
                         for labels, value in samples]}
        for record, samples in checks
    ]
    return {"interval": "1m", "input_series": inputs, "promql_expr_test": promql}
