"""The one SLO spec that drives the rules, the dashboards and the report.

A YAML file with built-in defaults; every field is optional (the values below are the
defaults, except where a comment says `no default`; `gpuslo rules --help` prints this list):

    objectives:
      usable_gpu: 0.98        # ratio of provisioned GPU-time that is healthy and schedulable
      check_liveness: 0.999   # ratio of check-time with a fresh heartbeat
      job_goodput: 0.90       # productive over allocated GPU-time
    period_days: 28           # SLO period (error budget window), 7..366 days
    week: 2026-W48            # reporting week (ISO); no default (the data's span)
    job_stall_factor: 10      # a job is stalled after this many step times without progress
    price_per_gpu_hour: 2.5   # currency units, for the report's cost; no default (no cost)
    exporter_job: gpuslo      # Prometheus scrape job of the exporters (`up{job=...}`, absent())
    fleet_blind_threshold: 0.05  # GpusloFleetBlind pages above this share of provisioned GPUs
                                 # with no verdict (exporter down or gone, GPUs unreadable)
    retired_nodes: [gpu-17]   # no default ([]): nodes taken out of the fleet on purpose: the
                              # rules stop holding their GPUs in the provisioned denominator
                              # once nothing reports them (a node that left kube-state-metrics
                              # retires by itself); every other silent node stays in it as
                              # observability loss
    retired_clusters: [old-dc]  # no default ([]): clusters taken out on purpose: the global
                              # rules stop holding their GPUs once their Prometheus stops
                              # sending (every other silent cluster stays in the fleet's
                              # denominator, blind)
    slowdown_threshold: 1.03  # a logged interval is slow above this × the job's reference step time
    slowdown_min_intervals: 2 # consecutive slow intervals that make a slowdown (1 = every spike)
    slowdown_reference_intervals: 3  # warm-up intervals whose median seeds the reference
    crawl_alert_ratio: 0.03   # GpusloJobCrawling: share of a job's GPU-time lost to slowdown (30m)
    straggler_score: 0.9      # GpusloStragglerNode: node performance score below this (15m)
    serving:                  # inference replicas' latency objectives (gpuslo.serving_spec);
                              # no default (absent: no serving rules)
      ttft_seconds: 0.5       # time-to-first-token objective (seconds)
      ttft_target: 0.95       # share of requests whose first token came within it
      itl_seconds: 0.1        # inter-token latency objective (seconds)
      itl_target: 0.95        # share of output tokens (after the first) within it

The slowdown fields set the rule of `gpuslo.goodput.slowdown` (`SloSpec.slowdown_rule()`) for
the SLO engine; the exporter's counters use its defaults, so change them in both or neither.

Burn-rate factors follow the SRE Workbook ("Alerting on SLOs", multiwindow multi-burn-rate):
factor = share of the period's budget spent in the long window × period / long window, which gives
14.4, 6, 3 and 1 for 30 days with the shares in `names.BURN_RATE_WINDOWS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuslo import names
from gpuslo.config_file import load_yaml
from gpuslo.errors import ConfigError
from gpuslo.goodput.slowdown import (
    DEFAULT_MIN_INTERVALS,
    DEFAULT_REFERENCE_INTERVALS,
    DEFAULT_THRESHOLD,
    SlowdownRule,
)
from gpuslo.serving_spec import ServingObjectives, serving_from_mapping, text_number_hint

# SLO -> the metric part of its recording rules (`gpuslo:<metric>:ratio_rate1h`), shared by the
# rules, the dashboards and the report so the three name the same series.
SLI_METRIC = {
    names.SLO_USABLE_GPU: "gpu_usable",
    names.SLO_CHECK_LIVENESS: "check_liveness",
    names.SLO_JOB_GOODPUT: "job_goodput",
}
RECORD_LEVEL = "gpuslo"
DEFAULT_OBJECTIVES = {
    names.SLO_USABLE_GPU: 0.98,
    names.SLO_CHECK_LIVENESS: 0.999,
    names.SLO_JOB_GOODPUT: 0.90,
}
# The longest burn-rate window (names.BURN_RATE_WINDOWS) is 3 days; a period must hold it with
# room to spare, so the shortest period is one week.
MIN_PERIOD_DAYS = 7
_DURATION_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration_seconds(text: str) -> int:
    """Seconds in a Prometheus duration such as `5m`, `6h`, `3d`, `28d`. Raises ValueError."""
    match = re.fullmatch(r"(\d+)([smhdw])", text)
    if not match:
        raise ValueError(f"not a duration: {text!r}")
    return int(match.group(1)) * _DURATION_UNITS_S[match.group(2)]


def format_number(value: float) -> str:
    """Fixed float formatting for generated files: at most 9 significant digits after rounding to
    9 decimals, so `1 - 0.02 * 13.44` prints `0.7312`, never `0.7312000000000001`."""
    return format(round(float(value), 9), ".9g")


def sli_record(slo: str, window: str) -> str:
    """Recording-rule name of `slo`'s good ratio over `window` (`gpuslo:gpu_usable:ratio_rate1h`),
    in Prometheus' `level:metric:operations` convention."""
    return f"{RECORD_LEVEL}:{SLI_METRIC[slo]}:ratio_rate{window}"


def slo_record(slo: str, operation: str) -> str:
    """Recording-rule name of a per-SLO figure: `objective` or `error_budget_remaining`."""
    return f"{RECORD_LEVEL}:{SLI_METRIC[slo]}:{operation}"


@dataclass(frozen=True)
class BurnRateAlert:
    """One multiwindow burn-rate alert: fire when both windows burn faster than `factor`."""

    severity: str
    long_window: str
    short_window: str
    factor: float


@dataclass(frozen=True)
class SloSpec:
    """Objectives (ratios 0–1), the SLO period (days) and reporting options."""

    objectives: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_OBJECTIVES))
    period_days: int = 28
    week: str | None = None
    job_stall_factor: float = 10.0
    price_per_gpu_hour: float | None = None
    exporter_job: str = "gpuslo"
    fleet_blind_threshold: float = 0.05
    retired_nodes: tuple[str, ...] = ()
    retired_clusters: tuple[str, ...] = ()
    slowdown_threshold: float = DEFAULT_THRESHOLD
    slowdown_min_intervals: int = DEFAULT_MIN_INTERVALS
    slowdown_reference_intervals: int = DEFAULT_REFERENCE_INTERVALS
    crawl_alert_ratio: float = 0.03
    straggler_score: float = 0.9
    serving: ServingObjectives | None = None

    def slowdown_rule(self) -> SlowdownRule:
        """The sustained-slowdown rule these fields set (`gpuslo.goodput.slowdown`)."""
        return SlowdownRule(
            self.slowdown_threshold, self.slowdown_min_intervals, self.slowdown_reference_intervals,
            max(self.slowdown_reference_intervals, 50),
        )

    @property
    def period(self) -> str:
        """The period as a Prometheus duration (`28d`)."""
        return f"{self.period_days}d"

    @property
    def sli_windows(self) -> tuple[str, ...]:
        """The recording-rule windows: names.SLI_WINDOWS plus the period, without duplicates."""
        windows = list(names.SLI_WINDOWS)
        return tuple(windows if self.period in windows else [*windows, self.period])

    def error_budget(self, slo: str) -> float:
        """Allowed bad ratio for `slo` (1 − objective)."""
        return 1.0 - self.objectives[slo]

    def burn_rate_alerts(self) -> list[BurnRateAlert]:
        """The page and ticket alert windows with factors derived from the period."""
        period_s = self.period_days * 86400
        return [
            BurnRateAlert(severity, long, short, burn_rate_factor(share, period_s, long))
            for severity, long, short, share in names.BURN_RATE_WINDOWS
        ]


def burn_rate_factor(budget_share: float, period_s: float, long_window: str) -> float:
    """Burn rate that spends `budget_share` of the period's budget within `long_window`,
    rounded to 6 decimals so generated files stay stable (30 days, 1h, 2 % → 14.4)."""
    return round(budget_share * period_s / duration_seconds(long_window), 6)


def _ratio(value: object, field_name: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) < 1:
        raise ConfigError(
            f"{source}: field {field_name!r} must be a ratio between 0 and 1 (exclusive), "
            f"got {value!r}{text_number_hint(value)}"
        )
    return float(value)


KNOWN_FIELDS = (
    "objectives",
    "period_days",
    "week",
    "job_stall_factor",
    "price_per_gpu_hour",
    "exporter_job",
    "fleet_blind_threshold",
    "retired_nodes",
    "retired_clusters",
    *(
        "slowdown_threshold",
        "slowdown_min_intervals",
        "slowdown_reference_intervals",
        "crawl_alert_ratio",
        "straggler_score",
        "serving",
    ),
)


def spec_fields_text() -> str:
    """The module docstring's example spec (every field, its default or `no default`), for
    `gpuslo rules --help`: one text, so the help and this docstring cannot differ."""
    head, _, rest = (__doc__ or "").partition("prints this list):\n\n")
    return rest.partition("\n\nThe slowdown fields")[0] if head else ""


# A Kubernetes node name (a DNS subdomain, RFC 1123) or a host name: what `node` labels hold.
NODE_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?")


def _objectives(data: dict, source: str, problems: list[str]) -> dict[str, float]:
    """The objectives over the defaults; appends a message per bad entry to `problems`."""
    objectives = dict(DEFAULT_OBJECTIVES)
    raw = data.get("objectives") or {}
    if not isinstance(raw, dict):
        problems.append(f"{source}: field 'objectives' must be a mapping")
        raw = {}
    for key, value in raw.items():
        if key not in DEFAULT_OBJECTIVES:
            problems.append(
                f"{source}: unknown objective 'objectives.{key}' "
                f"(known: {', '.join(DEFAULT_OBJECTIVES)})"
            )
            continue
        try:
            objectives[key] = _ratio(value, f"objectives.{key}", source)
        except ConfigError as error:
            problems.append(str(error))
    return objectives


def _field_problems(data: dict, source: str) -> list[str]:
    """One message per bad scalar field (period, week, stall factor, price, exporter job)."""
    problems = [f"{source}: unknown field {key!r}" for key in sorted(set(data) - set(KNOWN_FIELDS))]
    period = data.get("period_days", 28)
    if (
        isinstance(period, bool)
        or not isinstance(period, int)
        or not MIN_PERIOD_DAYS <= period <= 366
    ):
        problems.append(
            f"{source}: field 'period_days' must be a whole number of days {MIN_PERIOD_DAYS}..366 "
            f"(the longest burn-rate window is 3 days), got {period!r}"
        )
    week = data.get("week")
    if week is not None and not re.fullmatch(r"\d{4}-W(0[1-9]|[1-4]\d|5[0-3])", str(week)):
        problems.append(f"{source}: field 'week' must look like 2026-W48, got {week!r}")
    stall = data.get("job_stall_factor", 10.0)
    if isinstance(stall, bool) or not isinstance(stall, int | float) or stall <= 1:
        problems.append(
            f"{source}: field 'job_stall_factor' must be a number above 1, got {stall!r}"
        )
    price = data.get("price_per_gpu_hour")
    if price is not None and (
        isinstance(price, bool) or not isinstance(price, int | float) or price < 0
    ):
        problems.append(
            f"{source}: field 'price_per_gpu_hour' must be a number 0 or more, got {price!r}"
        )
    job = data.get("exporter_job", "gpuslo")
    if not isinstance(job, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]+", job):
        problems.append(
            f"{source}: field 'exporter_job' must be a scrape job name such as gpuslo, got {job!r}"
        )
    return problems + _fleet_problems(data, source) + _crawl_problems(data, source)


def _fleet_problems(data: dict, source: str) -> list[str]:
    """One message per bad fleet field (blind threshold, retired nodes)."""
    problems = []
    blind = data.get("fleet_blind_threshold", 0.05)
    try:
        _ratio(blind, "fleet_blind_threshold", source)
    except ConfigError as error:
        problems.append(str(error))
    retired = data.get("retired_nodes")
    retired = [] if retired is None else retired
    if not isinstance(retired, list):
        problems.append(f"{source}: field 'retired_nodes' must be a list of node names")
        retired = []
    for position, node in enumerate(retired):
        if not isinstance(node, str) or not NODE_NAME.fullmatch(node):
            problems.append(
                f"{source}: field 'retired_nodes[{position}]' must be a node name such as "
                f"gpu-17.example.com, got {node!r}"
            )
    return problems + _cluster_problems(data, source)


def _cluster_problems(data: dict, source: str) -> list[str]:
    """One message per bad `retired_clusters` entry (names as `node` names: the external
    label value of a cluster's Prometheus)."""
    retired = data.get("retired_clusters")
    if retired is None:
        return []
    if not isinstance(retired, list):
        return [f"{source}: field 'retired_clusters' must be a list of cluster names"]
    return [
        f"{source}: field 'retired_clusters[{position}]' must be a cluster name such as "
        f"eu-west-1, got {name!r}"
        for position, name in enumerate(retired)
        if not isinstance(name, str) or not NODE_NAME.fullmatch(name)
    ]


def _crawl_problems(data: dict, source: str) -> list[str]:
    """One message per bad slowdown or straggler field."""
    problems = []
    threshold = data.get("slowdown_threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or threshold <= 1:
        problems.append(
            f"{source}: field 'slowdown_threshold' must be a number above 1 (a step-time ratio), "
            f"got {threshold!r}"
        )
    for key, default in (("slowdown_min_intervals", DEFAULT_MIN_INTERVALS),
                         ("slowdown_reference_intervals", DEFAULT_REFERENCE_INTERVALS)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 50:
            problems.append(
                f"{source}: field {key!r} must be a whole number of logged intervals 1..50, "
                f"got {value!r}"
            )
    for key, default in (("crawl_alert_ratio", 0.03), ("straggler_score", 0.9)):
        try:
            _ratio(data.get(key, default), key, source)
        except ConfigError as error:
            problems.append(str(error))
    return problems


def spec_from_mapping(data: dict, source: str = "<spec>") -> SloSpec:
    """Validate a parsed spec. Every field is checked and every problem is reported in one
    ConfigError message, each naming `source` and the field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the spec must be a mapping, got {type(data).__name__}")
    problems = _field_problems(data, source)
    objectives = _objectives(data, source, problems)
    serving = serving_from_mapping(data.get("serving"), source, problems)
    if problems:
        raise ConfigError("; ".join(problems))
    week, price = data.get("week"), data.get("price_per_gpu_hour")
    return SloSpec(
        objectives=objectives,
        period_days=data.get("period_days", 28),
        week=str(week) if week is not None else None,
        job_stall_factor=float(data.get("job_stall_factor", 10.0)),
        price_per_gpu_hour=float(price) if price is not None else None,
        exporter_job=data.get("exporter_job", "gpuslo"),
        fleet_blind_threshold=float(data.get("fleet_blind_threshold", 0.05)),
        retired_nodes=tuple(sorted(set(data.get("retired_nodes") or []))),
        retired_clusters=tuple(sorted(set(data.get("retired_clusters") or []))),
        slowdown_threshold=float(data.get("slowdown_threshold", DEFAULT_THRESHOLD)),
        slowdown_min_intervals=data.get("slowdown_min_intervals", DEFAULT_MIN_INTERVALS),
        slowdown_reference_intervals=data.get(
            "slowdown_reference_intervals", DEFAULT_REFERENCE_INTERVALS
        ),
        crawl_alert_ratio=float(data.get("crawl_alert_ratio", 0.03)),
        straggler_score=float(data.get("straggler_score", 0.9)),
        serving=serving,
    )


def load_spec(path: str | Path | None) -> SloSpec:
    """Load and validate a spec file (`gpuslo.config_file`: a regular file under the size cap,
    nesting checked before parsing); None gives the defaults. Raises ConfigError (also for an
    empty file: a spec file named on purpose must say something)."""
    if path is None:
        return SloSpec()
    data = load_yaml(path, "SLO spec")  # never None: an empty file is an error there
    return spec_from_mapping(data, str(path))
