"""SLO frames from a Prometheus-compatible HTTP API (Prometheus, Thanos Query, Mimir: the same
`/api/v1/query` and `/api/v1/query_range`), fetching only what is sparse.

`load_prometheus(url, start, end, step_s=60, session=None, progress=None) -> Frames` asks for:

- inventory — what should exist, never only what answered (DESIGN.md §6): the GPUs seen,
  `last_over_time(gpuslo_gpu_info[<window>])` at `end` (labels gpu, uuid, model, family; the
  node is `gpuslo_node_info`'s `node` label for the same `instance`, else the instance), and
  per node the provisioned count, the largest over the window of the recorded
  `gpuslo:node_gpus_provisioned:max` (the rules' inventory, which holds nodes that went silent
  before the window), kube-state-metrics' `kube_node_status_capacity{resource="nvidia_com_gpu"}`,
  the exporter's `gpuslo_gpu_expected` and the GPUs seen. GPUs provisioned but never seen get
  one placeholder row each (uuid `unseen:<node>:<n>`); they have no verdicts, so their time is
  `no_data` (observability) — or `unhealthy`/`gpu_missing` (node) while the node's
  gpu_inventory check says `fail`. A vanished node's time is observability loss, not absent;
- coverage, as the moments a series appears and disappears (never the dense samples):
  `gpuslo_gpu_usable unless gpuslo_gpu_usable offset <step>` and the reverse, plus the series
  present at `start`. A GPU is provisioned from the first time its node answered in the window
  (`gpuslo_node_info`, or its own `gpuslo_gpu_info`), from `start` for a node only the rules
  or kube-state-metrics know; time it reports nothing is `no_data`;
- Slurm node states, `gpuslo_slurm_node_state{state!="up"} == 1`, as schedulability (other
  people's drains, maintenance) and node-wide verdicts (gpuslo's own drains), through
  `gpuslo.slo.sources.slurm.node_state_frames`;
- non-healthy time only: `gpuslo_gpu_verdict{verdict!="healthy"} == 1` and, for reasons,
  `gpuslo_gpu_problem == 1`. Each returned sample at t stands for [t, t + step); consecutive
  samples of one series merge into an interval. Healthy time is the covered rest.

A live Prometheus marks a vanished target's series stale at once; backfilled blocks carry no
staleness markers, so there a gap shows only after the lookback delta (`--query.lookback-delta`,
5 m by default) — run such a Prometheus with a lookback just above the scrape interval.

Ranges are fetched in chunks of at most `CHUNK_STEPS` steps (the API caps points per series at
11,000) with a tqdm progress bar (`progress=True`; default: only on a terminal). Errors: HTTP
failures, timeouts and API errors raise InputError naming the URL and the query. Job goodput is
not read here (`cannot_fill`): the journals carry it.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import requests
from tqdm import tqdm

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.sources.provisioned import UNSEEN_PREFIX, provisioned_counts, with_unseen
from gpuslo.slo.sources.slurm import node_state_frames

CHUNK_STEPS = 10_000
TIMEOUT_S = 60.0
_REASON_RANK = {reason: rank for rank, reason in enumerate(names.REASONS)}


class PromClient:
    """Minimal Prometheus HTTP API client over `requests` (timeout per call; API errors raised)."""

    def __init__(
        self, url: str, session: requests.Session | None = None, timeout_s: float = TIMEOUT_S
    ) -> None:
        self.url = url.rstrip("/")
        self.session = session or requests.Session()
        self.timeout_s = timeout_s

    def _get(self, path: str, params: dict) -> list[dict]:
        try:
            response = self.session.get(f"{self.url}{path}", params=params, timeout=self.timeout_s)
            body = response.json()
        except requests.RequestException as error:
            raise InputError(self.url, f"query {params['query']!r} failed: {error}") from None
        except ValueError:
            raise InputError(
                self.url, f"query {params['query']!r}: HTTP {response.status_code}, not JSON"
            ) from None
        if body.get("status") != "success":
            raise InputError(
                self.url,
                f"query {params['query']!r}: {body.get('errorType', 'error')}: "
                f"{body.get('error', body)}",
            )
        return body["data"]["result"]

    def instant(self, query: str, at: pd.Timestamp) -> list[dict]:
        """`/api/v1/query` at `at`: [{"metric": {...}, "value": [t, "v"]}, ...]."""
        return self._get("/api/v1/query", {"query": query, "time": at.value / 1e9})

    def range(
        self,
        query: str,
        start: pd.Timestamp,
        end: pd.Timestamp,
        step_s: int,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        """`/api/v1/query_range` in chunks; a tidy frame: one row per sample with the series'
        labels as string columns and `time` (datetime64[ns, UTC]), `value` (float64)."""
        edges = list(pd.date_range(start, end, freq=pd.Timedelta(seconds=step_s * CHUNK_STEPS))) + [
            end
        ]
        chunks = [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]
        show = sys.stderr.isatty() if progress is None else progress
        rows = []
        for a, b in tqdm(
            chunks,
            desc=query[:40],
            unit="chunk",
            disable=not show or len(chunks) < 2,
            file=sys.stderr,
        ):
            last = b - pd.Timedelta(seconds=step_s)  # `end` itself belongs to the next chunk
            if last < a:
                continue
            params = {
                "query": query,
                "start": a.value / 1e9,
                "end": last.value / 1e9,
                "step": step_s,
            }
            for series in self._get("/api/v1/query_range", params):
                times = np.array([float(t) for t, _ in series["values"]])
                values = np.array([float(v) for _, v in series["values"]])
                rows.append(pd.DataFrame({**series["metric"], "time": times, "value": values}))
        if not rows:
            return pd.DataFrame(
                {
                    "time": pd.Series([], dtype="datetime64[ns, UTC]"),
                    "value": pd.Series([], dtype="float64"),
                }
            )
        frame = pd.concat(rows, ignore_index=True)
        frame["time"] = pd.to_datetime(
            np.rint(frame["time"] * 1000).astype("int64"), unit="ms", utc=True
        )
        return frame


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
    return (
        frame[name].fillna("").astype(str)
        if name in frame.columns
        else pd.Series("", index=frame.index)
    )


INVENTORY_FAILS = (
    'max by (instance) (gpuslo_check_status{check="gpu_inventory",status="fail"}) == 1'
)


def _inventory(client: PromClient, start, end, window: str) -> tuple[pd.DataFrame, dict[str, str]]:
    node_of = {s["metric"].get("instance", ""): s["metric"].get("node", "")
               for s in client.instant(f"last_over_time(gpuslo_node_info[{window}])", end)}
    rows = [
        {
            "instance": m.get("instance", ""),
            "uuid": m.get("uuid", ""),
            "gpu": m.get("gpu", ""),
            "model": m.get("model", ""),
            "family": m.get("family", ""),
        }
        for m in (
            s["metric"] for s in client.instant(f"last_over_time(gpuslo_gpu_info[{window}])", end)
        )
    ]
    inv = pd.DataFrame(rows, columns=["instance", "uuid", "gpu", "model", "family"])
    inv["node"] = inv["instance"].map(lambda i: node_of.get(i) or i)
    return inv, node_of


def _missing(
    client: PromClient, inv: pd.DataFrame, node_of: dict, start, end, step_s, progress
) -> pd.DataFrame:
    """Verdict rows `unhealthy`/`gpu_missing` for the placeholder GPUs of nodes whose
    gpu_inventory check says `fail` (sparse: only those samples are fetched)."""
    unseen = inv[inv["uuid"].str.startswith(f"{UNSEEN_PREFIX}:")]
    if unseen.empty:
        return pd.DataFrame()
    fails = client.range(INVENTORY_FAILS, start, end, step_s, progress)
    if fails.empty:
        return pd.DataFrame()
    fails = fails.assign(node=_label(fails, "instance").map(lambda i: node_of.get(i) or i))
    spans = samples_to_intervals(fails[["node", "time"]], ["node"], step_s)
    rows = spans.merge(unseen[["node", "uuid"]], on="node", how="inner")
    return rows.assign(
        verdict=names.VERDICT_UNHEALTHY, reason="gpu_missing", layer=names.LAYER_NODE,
        action=names.ACTION_REBOOT_NODE,
    )


def _coverage(client: PromClient, metric: str, start, end, step_s: int, progress) -> pd.DataFrame:
    """Presence intervals (instance, uuid, start, end) of `metric`, from sparse edges."""
    step = f"{step_s}s"
    present = [dict(s["metric"]) for s in client.instant(metric, start)]
    begins = client.range(f"{metric} unless {metric} offset {step}", start, end, step_s, progress)
    stops = client.range(f"({metric} offset {step}) unless {metric}", start, end, step_s, progress)
    edges = (
        pd.concat(
            [
                pd.DataFrame(
                    {
                        "instance": [p.get("instance", "") for p in present],
                        "uuid": [p.get("uuid", "") for p in present],
                        "time": start,
                        "edge": 1,
                    }
                ),
                pd.DataFrame(
                    {
                        "instance": _label(begins, "instance"),
                        "uuid": _label(begins, "uuid"),
                        "time": begins["time"],
                        "edge": 1,
                    }
                ),
                pd.DataFrame(
                    {
                        "instance": _label(stops, "instance"),
                        "uuid": _label(stops, "uuid"),
                        "time": stops["time"],
                        "edge": -1,
                    }
                ),
            ],
            ignore_index=True,
        )
        .sort_values(["instance", "uuid", "time", "edge"], kind="stable")
        .reset_index(drop=True)
    )
    edges = edges.drop_duplicates(["instance", "uuid", "time", "edge"])  # present at start twice
    opens, closes = edges[edges["edge"] == 1].reset_index(drop=True), edges[edges["edge"] == -1]
    opens["n"] = opens.groupby(["instance", "uuid"]).cumcount()
    closes = closes.assign(n=closes.groupby(["instance", "uuid"]).cumcount())
    spans = opens.merge(
        closes[["instance", "uuid", "n", "time"]],
        on=["instance", "uuid", "n"],
        how="left",
        suffixes=("", "_end"),
    )
    return pd.DataFrame(
        {
            "instance": spans["instance"],
            "uuid": spans["uuid"],
            "start": spans["time"],
            "end": spans["time_end"].fillna(end),
        }
    )


def _non_healthy(client: PromClient, start, end, step_s: int, progress) -> pd.DataFrame:
    verdicts = client.range(
        'gpuslo_gpu_verdict{verdict!="healthy"} == 1', start, end, step_s, progress
    )
    if verdicts.empty:
        return pd.DataFrame(
            columns=["instance", "uuid", "verdict", "reason", "layer", "action", "start", "end"]
        )
    problems = client.range("gpuslo_gpu_problem == 1", start, end, step_s, progress)
    v = pd.DataFrame({k: _label(verdicts, k) for k in ("instance", "uuid", "verdict")}).assign(
        time=verdicts["time"]
    )
    p = pd.DataFrame(
        {k: _label(problems, k) for k in ("instance", "uuid", "reason", "layer", "action")}
    )
    p = p.assign(time=problems["time"] if len(problems) else pd.Series(dtype="datetime64[ns, UTC]"))
    p = p[p["reason"].isin(names.REASONS)].assign(rank=lambda f: f["reason"].map(_REASON_RANK))
    p = p.sort_values("rank", kind="stable").drop_duplicates(["instance", "uuid", "time"])
    joined = v.merge(p.drop(columns="rank"), on=["instance", "uuid", "time"], how="left").fillna("")
    return samples_to_intervals(
        joined, ["instance", "uuid", "verdict", "reason", "layer", "action"], step_s
    )


def _slurm(client: PromClient, start, end, step_s: int, progress, node_of: dict[str, str]):
    """Slurm node states (gpuslo_slurm_node_state, not up) as (verdicts, schedulability)."""
    raw = client.range('gpuslo_slurm_node_state{state!="up"} == 1', start, end, step_s, progress)
    labels = ("instance", "state", "reason_layer", "reason")
    samples = pd.DataFrame({k: _label(raw, k) for k in labels})
    samples["node"] = samples["instance"].map(lambda i: node_of.get(i, i))
    samples = samples.assign(time=raw["time"])
    keys = ["node", "state", "reason_layer", "reason"]
    return node_state_frames(samples_to_intervals(samples, keys, step_s))


def _first_seen(
    client: PromClient, inv: pd.DataFrame, node_of: dict, start, end, step_s, progress
) -> pd.Series:
    """Per inventory row, when it is provisioned from: the first moment its node answered in the
    window (gpuslo_node_info) or the GPU itself was listed, whichever is earlier; `start` for a
    node that never answered (known from the rules or kube-state-metrics only)."""
    info = _coverage(client, "gpuslo_gpu_info", start, end, step_s, progress)
    nodes = _coverage(client, "gpuslo_node_info", start, end, step_s, progress)
    node_first = nodes.assign(node=nodes["instance"].map(lambda i: node_of.get(i) or i))
    node_first = node_first.groupby("node")["start"].min().to_dict()
    gpu_first = info.groupby("uuid")["start"].min().to_dict()
    first = pd.DataFrame({
        "gpu": pd.to_datetime(inv["uuid"].map(gpu_first), utc=True),
        "node": pd.to_datetime(inv["node"].map(node_first), utc=True),
    }).min(axis=1)
    return first.fillna(start)


def load_prometheus(
    url: str,
    start: pd.Timestamp,
    end: pd.Timestamp,
    step_s: int = 60,
    session: requests.Session | None = None,
    progress: bool | None = None,
) -> Frames:
    """Frames for [start, end) from the API at `url` (see the module docstring). Raises
    InputError."""
    client = PromClient(url, session)
    window = f"{int((end - start).total_seconds())}s"
    seen, node_of = _inventory(client, start, end, window)
    inv = with_unseen(seen, provisioned_counts(client, end, window, node_of))
    if inv.empty:
        raise InputError(
            url,
            f"nothing provisioned between {start} and {end}: no gpuslo_gpu_info, "
            "gpuslo_gpu_expected, kube_node_status_capacity or gpuslo:node_gpus_provisioned:max",
        )
    inv["provisioned_start"] = _first_seen(client, inv, node_of, start, end, step_s, progress)
    # Provisioned to the end of the window asked for: the API answered for all of it, so a
    # fleet that was blind throughout is a window of no_data, not "no data in the window".
    inv["provisioned_end"] = end
    # instance -> node for every exporter that answered (gpuslo_node_info, else the instance)
    node_name = {i: n or i for i, n in node_of.items()}
    node_name |= {i: n for i, n in zip(inv["instance"], inv["node"], strict=True) if i}
    usable = _coverage(client, "gpuslo_gpu_usable", start, end, step_s, progress)
    bad = _non_healthy(client, start, end, step_s, progress)
    verdicts = pd.concat(
        [usable.assign(verdict=names.VERDICT_HEALTHY, reason="", layer="", action=""), bad],
        ignore_index=True,
    )
    verdicts["node"] = verdicts["instance"].map(lambda i: node_name.get(i, i))
    missing = _missing(client, inv, node_of, start, end, step_s, progress)
    slurm_verdicts, schedulability = _slurm(client, start, end, step_s, progress, node_name)
    verdicts = pd.concat(
        [verdicts.drop(columns="instance"), missing, slurm_verdicts], ignore_index=True
    )
    return Frames(
        inventory=make_frame("inventory", inv.drop(columns="instance"), url),
        verdicts=make_frame("verdicts", verdicts, url),
        schedulability=schedulability,
        cannot_fill={
            "goodput": "the Prometheus source reads GPU verdicts; job goodput comes from --journals"
        },
        source=url,
    )
