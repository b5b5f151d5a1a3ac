"""The sparse reads of the Prometheus source (`gpuslo.slo.sources.prometheus`), each a query
split under the sample budget by `gpuslo.slo.sources.query_api`: coverage edges, non-healthy
verdicts with their problem reasons (and the check-error fallback), kube-state-metrics cordons,
missing GPUs, Slurm node states, the job counters' increases and the recorded SLIs.

Every per-step read uses a window of one step just under the step (`_ms`), so a sample at t
stands for [t, t + step) on closed (Prometheus 2) and half-open (VictoriaMetrics, Prometheus 3)
ranges alike, whatever the server's lookback delta.
"""

from __future__ import annotations

import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.provisioned import UNSEEN_PREFIX
from gpuslo.slo.sources.query_api import QueryApi, tidy
from gpuslo.slo.sources.slurm import node_state_frames

START_HOLD = "1d"  # how far before the window a job counter's value is looked for
_REASON_RANK = {reason: rank for rank, reason in enumerate(names.REASONS)}
INCREASE = "gpuslo:job_gpu_seconds:increase1m"  # gpuslo.alerts.sli.JOB_SECONDS_INCREASE


def window_ms(seconds: float) -> str:
    """A PromQL duration just under `seconds`, so a window of one step holds one sample on both
    closed (Prometheus 2) and half-open (VictoriaMetrics, Prometheus 3) ranges."""
    return f"{int(round(seconds * 1000)) - 1}ms"


def samples_to_intervals(samples: pd.DataFrame, keys: list[str], step_s: int) -> pd.DataFrame:
    """Merge samples (each standing for [t, t + step)) into intervals per `keys`: columns keys +
    start, end. Consecutive means exactly one step apart. Pure."""
    if samples.empty:
        return pd.DataFrame(columns=[*keys, "start", "end"])
    s = samples.sort_values([*keys, "time"], kind="stable").reset_index(drop=True)
    step = pd.Timedelta(seconds=step_s)
    same = (s[keys] == s[keys].shift()).all(axis=1)
    new = ~same | (s["time"] - s["time"].shift() != step)
    run = new.cumsum()
    out = s.groupby(run).agg(
        **{k: (k, "first") for k in keys}, start=("time", "first"), end=("time", "last")
    )
    out["end"] = out["end"] + step
    return out.reset_index(drop=True)


def _label(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name].fillna("").astype(str)
    return pd.Series("", index=frame.index, dtype=object)


# --- coverage, verdicts, reasons, schedulability ------------------------------------------------


class Reader:
    """What every per-GPU query shares: the API, the instances, the step and the window."""

    def __init__(self, api: QueryApi, gpus: pd.DataFrame, node_of: dict[str, str], start, end,
                 step_s: int) -> None:
        self.api, self.start, self.end, self.step = api, start, end, step_s
        self.instances = sorted(gpus["instance"].unique())
        self.per_instance = int(gpus.groupby("instance").size().max()) if len(gpus) else 1
        self.node_of = node_of

    def range(self, query, terms: int, desc: str, instances=None, per_instance=None,
              label: str = "instance") -> pd.DataFrame:
        return self.api.sharded_range(query, self.instances if instances is None else instances,
                                      per_instance or self.per_instance, terms, self.start,
                                      self.end, self.step, desc, label)


def read_coverage(reader: Reader) -> pd.DataFrame:
    """Presence intervals (instance, uuid, start, end) of every GPU's gpuslo_gpu_usable."""
    w, step = window_ms(reader.step), f"{reader.step}s"
    now = lambda m: f"count_over_time(gpuslo_gpu_usable{{{m}}}[{w}])"  # noqa: E731
    before = lambda m: f"count_over_time(gpuslo_gpu_usable{{{m}}}[{w}] offset {step})"  # noqa: E731
    at_start = reader.api.sharded_instant(now, reader.instances, reader.per_instance, 2,
                                          reader.start, "coverage at start")
    begins = reader.range(lambda m: f"{now(m)} unless {before(m)}", 2, "coverage begins")
    ends = reader.range(lambda m: f"{before(m)} unless {now(m)}", 2, "coverage ends")
    at_start = at_start.assign(time=reader.start)
    edges = pd.concat([
        pd.DataFrame({"instance": _label(f, "instance"), "uuid": _label(f, "uuid"),
                      "time": f["time"], "edge": edge})
        for f, edge in ((at_start, 1), (begins, 1), (ends, -1))
    ], ignore_index=True)
    edges = edges.sort_values(["instance", "uuid", "time", "edge"], kind="stable")
    edges = edges.drop_duplicates(["instance", "uuid", "time", "edge"]).reset_index(drop=True)
    opens = edges[edges["edge"] == 1].reset_index(drop=True)
    closes = edges[edges["edge"] == -1]
    opens["n"] = opens.groupby(["instance", "uuid"]).cumcount()
    closes = closes.assign(n=closes.groupby(["instance", "uuid"]).cumcount())
    spans = opens.merge(closes[["instance", "uuid", "n", "time"]], how="left",
                        on=["instance", "uuid", "n"], suffixes=("", "_end"))
    return pd.DataFrame({"instance": spans["instance"], "uuid": spans["uuid"],
                         "start": spans["time"], "end": spans["time_end"].fillna(reader.end)})


def read_non_healthy(reader: Reader) -> tuple[pd.DataFrame, dict[str, str]]:
    """Non-healthy verdict intervals (instance, uuid, verdict, reason, layer, action, start,
    end) and what the data quality should say about their reasons."""
    w = window_ms(reader.step)
    verdicts = reader.range(
        lambda m: f'last_over_time(gpuslo_gpu_verdict{{verdict!="healthy",{m}}}[{w}]) == 1',
        2, "non-healthy verdicts")
    columns = ["instance", "uuid", "verdict", "reason", "layer", "action", "start", "end"]
    if verdicts.empty:
        return pd.DataFrame(columns=columns), {}
    problems = reader.range(lambda m: f"last_over_time(gpuslo_gpu_problem{{{m}}}[{w}]) == 1",
                            2, "problems")
    v = pd.DataFrame({k: _label(verdicts, k) for k in ("instance", "uuid", "verdict")})
    v["time"] = verdicts["time"]
    p = pd.DataFrame({k: _label(problems, k) for k in ("instance", "uuid", "reason", "layer",
                                                        "action")})
    p["time"] = problems["time"] if len(problems) else pd.Series(dtype="datetime64[ns, UTC]")
    p = p[p["reason"].isin(names.REASONS)].assign(rank=lambda f: f["reason"].map(_REASON_RANK))
    p = p.sort_values("rank", kind="stable").drop_duplicates(["instance", "uuid", "time"])
    joined = v.merge(p.drop(columns="rank"), on=["instance", "uuid", "time"], how="left")
    joined[["reason", "layer", "action"]] = joined[["reason", "layer", "action"]].fillna("")
    joined, quality = _fallback_reasons(reader, joined)
    return samples_to_intervals(joined, columns[:-2], reader.step), quality


def _fallback_reasons(reader: Reader, joined: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Unknown samples without a gpuslo_gpu_problem: the reason of a check error counter that
    grew on the instance within the step, else `stale_data`."""
    bare = (joined["verdict"] == names.VERDICT_UNKNOWN) & (joined["reason"] == "")
    if not bare.any():
        return joined, {}
    instances = sorted(joined.loc[bare, "instance"].unique())
    w, step = window_ms(reader.step), f"{reader.step}s"
    errors = "gpuslo_check_errors_total{%s}"
    grew = reader.range(
        lambda m: (f"max by (instance, reason) ((last_over_time({errors % m}[{w}])"
                   f" - last_over_time({errors % m}[1h] offset {step})) > 0"
                   f" or (last_over_time({errors % m}[{w}])"
                   f" unless last_over_time({errors % m}[1h] offset {step})))"),
        3, "check errors", instances=instances, per_instance=reader.per_instance * 2)
    found = pd.DataFrame({"instance": _label(grew, "instance"), "time": grew["time"],
                          "fallback": _label(grew, "reason")})
    found = found[found["fallback"].isin(names.REASONS)].drop_duplicates(["instance", "time"])
    merged = joined.merge(found, on=["instance", "time"], how="left")
    from_errors = bare & merged["fallback"].notna()
    merged.loc[bare, "reason"] = merged.loc[bare, "fallback"].fillna("stale_data")
    merged.loc[bare, "layer"] = names.LAYER_OBSERVABILITY
    hours = reader.step / 3600
    note = (f"{bare.sum() * hours:.2f} GPU-hours of unknown verdicts had no gpuslo_gpu_problem "
            f"series: {from_errors.sum() * hours:.2f} took their reason from the check error "
            f"counters, the rest is stale_data (no check error grew)")
    return merged.drop(columns="fallback"), {"problem_reasons": note}


def read_schedulability(reader: Reader, nodes: list[str]) -> tuple[pd.DataFrame, dict]:
    """`cordoned` intervals (node, start, end, state, reason) of the GPU nodes from
    kube-state-metrics, and a data-quality note when it has none for them."""
    have = set(reader.api.label_values("node", "kube_node_spec_unschedulable", reader.start,
                                       reader.end))
    mine = sorted(set(nodes) & have)
    if not mine:
        return pd.DataFrame(columns=["node", "start", "end", "state", "reason"]), {
            "schedulability": "no kube_node_spec_unschedulable series for the GPU nodes in the "
                              "window (kube-state-metrics not scraped?): every healthy GPU "
                              "counts as schedulable"}
    w = window_ms(reader.step)
    flags = reader.range(lambda m: f"last_over_time(kube_node_spec_unschedulable{{{m}}}[{w}]) == 1",
                         1, "schedulability", instances=mine, per_instance=1, label="node")
    frame = pd.DataFrame({"node": _label(flags, "node"), "time": flags["time"]})
    spans = samples_to_intervals(frame.drop_duplicates(), ["node"], reader.step)
    spans = spans.assign(state="cordoned", reason="kube_node_spec_unschedulable")
    missing = len(set(nodes) - have)
    note = ({"schedulability": f"{missing} GPU node(s) have no kube_node_spec_unschedulable "
                               "series: counted as schedulable"} if missing else {})
    return spans, note


def read_missing(reader: Reader, inventory: pd.DataFrame) -> pd.DataFrame:
    """Verdict rows `unhealthy`/`gpu_missing` for the placeholder GPUs of nodes whose
    gpu_inventory check says `fail` (sparse: only those samples are fetched)."""
    unseen = inventory[inventory["uuid"].str.startswith(f"{UNSEEN_PREFIX}:")]
    instances = sorted(i for i, n in reader.node_of.items() if n in set(unseen["node"]))
    if unseen.empty or not instances:
        return pd.DataFrame()
    w = window_ms(reader.step)
    fails = reader.range(
        lambda m: ("max by (instance) (last_over_time(gpuslo_check_status{check=\"gpu_inventory\""
                   f',status="fail",{m}}}[{w}])) == 1'),
        1, "gpu_inventory fails", instances=instances, per_instance=1)
    if fails.empty:
        return pd.DataFrame()
    fails = fails.assign(node=_label(fails, "instance").map(lambda i: reader.node_of.get(i) or i))
    spans = samples_to_intervals(fails[["node", "time"]], ["node"], reader.step)
    rows = spans.merge(unseen[["node", "uuid"]], on="node", how="inner")
    return rows.assign(verdict=names.VERDICT_UNHEALTHY, reason="gpu_missing",
                       layer=names.LAYER_NODE, action=names.ACTION_REBOOT_NODE)


def read_slurm(reader: Reader) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Slurm node states (gpuslo_slurm_node_state, not up) as (verdicts, schedulability)."""
    instances = reader.api.label_values("instance", "gpuslo_slurm_node_state", reader.start,
                                        reader.end)
    if not instances:
        return node_state_frames(pd.DataFrame())
    w = window_ms(reader.step)
    raw = reader.range(
        lambda m: f'last_over_time(gpuslo_slurm_node_state{{state!="up",{m}}}[{w}]) == 1',
        1, "slurm node states", instances=instances, per_instance=8)
    labels = ("instance", "state", "reason_layer", "reason")
    samples = pd.DataFrame({k: _label(raw, k) for k in labels})
    samples["node"] = samples["instance"].map(lambda i: reader.node_of.get(i, i))
    samples = samples.assign(time=raw["time"])
    keys = ["node", "state", "reason_layer", "reason"]
    return node_state_frames(samples_to_intervals(samples, keys, reader.step))


# --- job goodput and the recorded SLIs ---------------------------------------------------------


def read_job_seconds(reader: Reader) -> pd.DataFrame:
    """Per (job, node, category): the counter's increase in the window, GPU-seconds."""
    api, start, end = reader.api, reader.start, reader.end
    instances = api.label_values("instance", "gpuslo_job_gpu_seconds_total", start, end)
    columns = ["job", "node", "category", "gpu_seconds"]
    if not instances:
        return pd.DataFrame(columns=columns)
    per_instance = max(len(api.series(f'gpuslo_job_gpu_seconds_total{{instance="{instances[0]}"}}',
                                      start, end)), 1) * 2
    points = int((end - start).total_seconds() // reader.step) + 1
    x = "gpuslo_job_gpu_seconds_total{%s}"
    span = window_ms((end - start).total_seconds())
    last = api.sharded_instant(lambda m: f"last_over_time({x % m}[{span}])", instances,
                               per_instance, points, end - pd.Timedelta(milliseconds=1),
                               "job counters at end")
    first = api.sharded_instant(lambda m: f"last_over_time({x % m}[{START_HOLD}])", instances,
                                per_instance, points, start, "job counters at start")
    keys = ["instance", "job", "category"]
    ends = pd.DataFrame({k: _label(last, k) for k in keys}).assign(v=last["value"])
    starts = pd.DataFrame({k: _label(first, k) for k in keys}).assign(v0=first["value"])
    both = ends.merge(starts, on=keys, how="left")
    return pd.DataFrame({"job": both["job"], "node": both["instance"].map(
        lambda i: reader.node_of.get(i, i)), "category": both["category"],
        "gpu_seconds": both["v"] - both["v0"].fillna(0.0)})


def read_recorded(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp) -> dict:
    """The SLIs the recording rules hold for the window (empty when the rules did not run):
    usable_ratio from the per-evaluation GPU counts, job GPU-seconds by category from
    gpuslo:job_gpu_seconds:increase1m and their goodput ratio."""
    span, at = window_ms((end - start).total_seconds()), end - pd.Timedelta(milliseconds=1)
    out: dict = {}
    usable = api.instant(f"sum_over_time(gpuslo:gpu_usable:count[{span}])"
                         f" / sum_over_time(gpuslo:gpu_provisioned:count[{span}])", at)
    if usable:
        out["usable_ratio"] = float(usable[0]["value"][1])
    by = tidy(api.instant(f"sum by (category) (sum_over_time({INCREASE}[{span}]))", at), "value")
    if len(by):
        seconds = dict(zip(_label(by, "category"), by["value"], strict=True))
        total = sum(seconds.values())
        out["job_gpu_hours_by_category"] = {k: v / 3600 for k, v in sorted(seconds.items())}
        productive = seconds.get(names.CATEGORY_PRODUCTIVE, 0.0)
        out["goodput_ratio"] = productive / total if total else None
    return out
