"""Latency attainment of serving replicas from the engines' own cumulative histograms.

`attainment(bounds, counts, total, objective)` → share of observations at or below `objective`
(0–1), or None (unknown) when no observation was made or `objective` is not a bucket bound: the
bucket-boundary rule of `gpuslo.serving_spec` — exact at a bound, never interpolated.

`page_attainment(text, family, objective, by)` reads a Prometheus text page (the real pages in
tests/data/serving) and gives, per label set `by` (e.g. `("model_name",)`), (good, total,
ratio): good = the `<family>_bucket{le=objective}` value, total = `<family>_count` (else the
`+Inf` bucket). A TTFT family gives the share of *requests* whose first token met the objective;
an inter-token family (`vllm:inter_token_latency_seconds`, one observation per output token after
the first) gives the share of *output tokens* within the inter-token objective. DistServe's
goodput (requests meeting both at once) needs per-request data; histograms cannot give it
(`goodput_from_requests` computes it where request-level logs exist).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from prometheus_client.parser import text_string_to_metric_families

from gpuslo.errors import ParseError


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def attainment(bounds: Sequence[float], counts: Sequence[float], total: float,
               objective: float) -> float | None:
    """Share of `total` observations at or below `objective` (cumulative `counts` per `bounds`);
    None when total is 0 or `objective` is not one of `bounds`."""
    if total <= 0:
        return None
    for bound, count in zip(bounds, counts, strict=True):
        if _same(bound, objective):
            return min(max(count / total, 0.0), 1.0)
    return None


def page_attainment(text: str, family: str, objective: float, by: Sequence[str] = (),
                    source: str = "<page>") -> dict[tuple, tuple[float, float, float | None]]:
    """Per `by` label values: (good, total, ratio or None) for `family` on a text page.
    Raises ParseError (source) when the page is not Prometheus text."""
    buckets: dict[tuple, dict[float, float]] = {}
    counts: dict[tuple, float] = {}
    try:
        samples = [s for fam in text_string_to_metric_families(text) for s in fam.samples]
    except ValueError as error:
        raise ParseError(source, f"not a Prometheus text page: {error}") from None
    for sample in samples:
        key = tuple(sample.labels.get(label, "") for label in by)
        if sample.name == f"{family}_bucket" and "le" in sample.labels:
            le = float(sample.labels["le"])
            group = buckets.setdefault(key, {})
            group[le] = group.get(le, 0.0) + sample.value
        elif sample.name == f"{family}_count":
            counts[key] = counts.get(key, 0.0) + sample.value
    out = {}
    for key, group in sorted(buckets.items()):
        total = counts.get(key, group.get(math.inf, 0.0))
        bounds = sorted(group)
        ratio = attainment(bounds, [group[b] for b in bounds], total, objective)
        good = next((group[b] for b in bounds if _same(b, objective)), math.nan)
        out[key] = (good, total, ratio)
    return out


def goodput_from_requests(requests: Iterable[tuple[float, float | None]], ttft_seconds: float,
                          itl_seconds: float) -> float | None:
    """DistServe goodput as a share: requests whose TTFT ≤ `ttft_seconds` and whose largest
    inter-token gap ≤ `itl_seconds` (both at once), from per-request (ttft, max_itl) seconds
    (max_itl None for a one-token answer). None when there is no request."""
    rows = list(requests)
    if not rows:
        return None
    good = sum(1 for ttft, itl in rows if ttft <= ttft_seconds and (itl is None
                                                                    or itl <= itl_seconds))
    return good / len(rows)
