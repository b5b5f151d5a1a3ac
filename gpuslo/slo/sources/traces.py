"""Fault-interval traces as SLO frames: the StepFun InfiniteHBD trace and the OLCF Titan GPU life
trace (../shared/datasets). `load_trace(path, fmt, nodes=None, gpus_per_node=None) -> Frames`.

Neither trace has jobs, checks or drains, so `Frames.cannot_fill` says which report sections
stay empty and why. Everything a trace does not say is healthy only where the trace vouches for
it: inside its span, on a provisioned GPU, outside every fault.

**StepFun** (fault_trace.json, SIGCOMM 2025 InfiniteHBD; README: 400 servers × 8 GPUs, `event_time`
in days relative to the first event, starting 2024-03-30). Faults are node-level (uuid ""),
`fault_start`/`fault_end` paired per node and fault type in order; a start never ended stays open
to the end of the span, which is the end of the day of the last event. The inventory is
`nodes` × `gpus_per_node` (default 400 × 8): the trace's nodes first (sorted by id), then
`stepfun-idle-NNN` for servers that never faulted.
Mapping (Level / Class / Desc → reason; layer from names.REASON_LAYER), `STEPFUN_REASONS`:
exact Desc first, then Class, then Level's default.

**Titan** (gc_full.csv, Ostrouchov et al., SC'20: one row per K20X GPU stint in a slot, `insert`
to `remove`, `event` DBE / OTB / empty, `out` = taken out of service). Titan has one GPU per node,
so a slot (`location`) is the GPU: node = location, uuid = `titan-<location>`. A stint is
healthy; after a stint ending in DBE the slot is `ecc_uncorrectable`, after OTB
`fallen_off_bus`, after a removal without event `maintenance` (platform), until the next stint
in that slot (or the end of the trace). The slot is provisioned from its first insert.

Both traces observe the fleet only within their span: the inventory's `provisioned_end` is the
span's end, so a report window reaching past the trace counts no provisioned time there (not
`no_data` lost time), and the engine's `data_quality.covered` says which part the data covered.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pandas as pd

from gpuslo.config_file import data_name, decode_data, open_data_file, unreadable_data
from gpuslo.errors import InputError, ParseError
from gpuslo.slo.frames import Frames, make_frame

STEPFUN_EPOCH = pd.Timestamp("2024-03-30", tz="UTC")
STEPFUN_NODES, STEPFUN_GPUS_PER_NODE = 400, 8
# (Level, Class, Desc) → reason; a None Desc/Class matches any. First match wins.
STEPFUN_REASONS: tuple[tuple[str | None, str | None, str | None, str], ...] = (
    (None, "GPU", "GPU DBE(Double Bit ECC) > Threshold", "ecc_uncorrectable"),
    (None, "GPU", "GPU SBE(Single Bit ECC) > Threshold", "probe_failed"),
    (None, "GPU", "GPU Lost", "fallen_off_bus"),
    (None, "GPU", "GPU device not found", "gpu_missing"),
    (None, "GPU", "GPU device unknow error", "gpu_inaccessible"),
    (None, "GPU", "nvidia-smi Timeout", "gpu_inaccessible"),
    (None, "GPU", "GPU xid Error", "xid_fatal"),
    (None, "GPU", "GPU P2P Bandwidth Low", "nvlink_errors"),
    (None, "GPU", "GPU PCI link width low", "pcie_degraded"),
    (None, "GPU", "GPU Temperature High", "thermal_slowdown"),
    (None, "NIC", "NIC Lost", "network_devices_missing"),
    (None, "NIC", "NIC Link Speed low", "network_port_degraded"),
    (None, "NIC", "NIC PCI link Width low", "pcie_degraded"),
    (None, "NIC", None, "network_port_down"),
    (None, "Parameter Plane Cable", None, "network_port_down"),
    (None, "Change", "Remote Optical Module Failure", "network_port_down"),
    (None, "Change", None, "maintenance"),
    (None, "Test", None, "validation"),
    (None, "Training Task Troubleshooting", None, "drained"),
    (None, "Software Tool", None, "cordoned"),
    (None, "Firmware", None, "driver_mismatch"),
    # CPU, fan, motherboard, power, RAID, riser, stress-test failures, crashes, file systems,
    # kernel panics and faults whose cause the trace does not record: a failed node probe.
    (None, None, None, "probe_failed"),
)
TRACE_CANNOT_FILL = {
    "goodput": "the trace has no jobs, so no goodput, ETTR or badput",
    "interruptions": "the trace has no jobs, so interruptions are counted per fault, not per job",
    "blast_radius": "the trace has no jobs to lose work",
    "check_liveness": "the trace records faults, not health-check heartbeats",
}


def stepfun_reason(level: str, klass: str, desc: str) -> str:
    """Our reason for one StepFun fault type (see STEPFUN_REASONS)."""
    for lvl, cls, dsc, reason in STEPFUN_REASONS:
        if (
            (lvl is None or lvl == level)
            and (cls is None or cls == klass)
            and (dsc is None or dsc == desc)
        ):
            return reason
    raise AssertionError("STEPFUN_REASONS ends with a catch-all")


def parse_stepfun(
    records: list, source: str, nodes: int | None = None, gpus_per_node: int | None = None
) -> Frames:
    """Frames from decoded fault_trace.json records. Raises ParseError naming the record and
    field, InputError when the trace names more nodes than `nodes`."""
    rows = [_stepfun_record(i, rec, source) for i, rec in enumerate(records)]
    if not rows:
        raise InputError(source, "the trace holds no events")
    ev = pd.DataFrame(rows, columns=["node", "time", "kind", "reason"])
    ev["n"] = ev.groupby(["node", "reason", "kind"]).cumcount()
    # The span ends at the end of the day of the last event (exclusive), so a last event at a
    # whole-day time (a fault that starts at 00:00) still has its day inside the span.
    span_end = ev["time"].max().floor("D") + pd.Timedelta(days=1)
    starts, ends = ev[ev["kind"] == "fault_start"], ev[ev["kind"] == "fault_end"]
    faults = starts.merge(
        ends[["node", "reason", "n", "time"]],
        on=["node", "reason", "n"],
        how="left",
        suffixes=("", "_end"),
    )
    faults["end"] = faults["time_end"].fillna(span_end)
    inventory = _stepfun_inventory(sorted(ev["node"].unique()), nodes, gpus_per_node, source)
    inventory["provisioned_end"] = span_end  # the trace observes nothing after its span
    unhealthy = pd.DataFrame(
        {
            "node": faults["node"],
            "uuid": "",
            "start": faults["time"],
            "end": faults["end"],
            "verdict": "unhealthy",
            "reason": faults["reason"],
        }
    )
    return _trace_frames(inventory, unhealthy, STEPFUN_EPOCH, span_end, source)


def _stepfun_record(index: int, rec: object, source: str) -> tuple:
    """(node, time, kind, reason) of record `index`. Raises ParseError naming the record (its
    index in the list, `[3]`) and the field that is missing or bad."""
    where = f"record [{index}]"
    if not isinstance(rec, dict):
        raise ParseError(source, f"{where}: not an object but {type(rec).__name__}")
    for name in ("node_id", "event_time", "event_type", "fault_type"):
        if name not in rec:
            raise ParseError(source, f"{where}: missing", field=name)
    kind, fault = rec["event_type"], rec["fault_type"]
    if kind not in ("fault_start", "fault_end"):
        raise ParseError(source, f"{where}: {kind!r} is neither fault_start nor fault_end",
                         field="event_type")
    try:
        days = float(rec["event_time"])
    except (TypeError, ValueError):
        days = math.nan
    if isinstance(rec["event_time"], bool) or not math.isfinite(days):
        raise ParseError(source, f"{where}: {rec['event_time']!r} is not a number of days",
                         field="event_time")
    if not isinstance(fault, dict):
        raise ParseError(source, f"{where}: {fault!r} is not an object with Level, Class and "
                         "Desc", field="fault_type")
    reason = stepfun_reason(
        str(fault.get("Level", "")), str(fault.get("Class", "")), str(fault.get("Desc", ""))
    )
    return str(rec["node_id"]), STEPFUN_EPOCH + pd.to_timedelta(days, unit="D"), kind, reason


def _stepfun_inventory(
    seen: list[str], nodes: int | None, gpus_per_node: int | None, source: str
) -> pd.DataFrame:
    nodes = STEPFUN_NODES if nodes is None else nodes
    gpus = STEPFUN_GPUS_PER_NODE if gpus_per_node is None else gpus_per_node
    if nodes < 1 or gpus < 1:
        flag, value = ("--nodes", nodes) if nodes < 1 else ("--gpus-per-node", gpus)
        raise InputError(source, f"{flag} must be 1 or more, got {value}")
    if len(seen) > nodes:
        raise InputError(source, f"the trace names {len(seen)} nodes but --nodes is {nodes}")
    names_ = seen + [f"stepfun-idle-{i:03d}" for i in range(nodes - len(seen))]
    return pd.DataFrame(
        [
            {
                "node": n,
                "uuid": f"{n}-gpu{g}",
                "gpu": str(g),
                "model": "",
                "family": "",
                "provisioned_start": STEPFUN_EPOCH,
            }
            for n in names_
            for g in range(gpus)
        ]
    )


def parse_titan(table: pd.DataFrame, source: str) -> Frames:
    """Frames from gc_full.csv rows (columns SN, location, insert, remove, event, out).
    Raises ParseError naming the row and column."""
    for column in ("SN", "location", "insert", "remove", "event"):
        if column not in table.columns:
            raise ParseError(source, f"missing column {column!r}", line=1, field=column)
    t = _titan_stints(table, source)
    t = t.sort_values(["location", "insert"], kind="stable").reset_index(drop=True)
    span_end = t["remove"].max()
    next_insert = t.groupby("location")["insert"].shift(-1)
    gap_end = next_insert.fillna(span_end)
    event = t["event"].fillna("").astype(str).str.strip()
    reason = event.map({"DBE": "ecc_uncorrectable", "OTB": "fallen_off_bus"}).fillna("maintenance")
    gaps = pd.DataFrame(
        {"node": t["location"], "start": t["remove"], "end": gap_end, "reason": reason}
    )
    gaps = gaps[gaps["end"] > gaps["start"]]
    healthy = pd.DataFrame({"node": t["location"], "start": t["insert"], "end": t["remove"]})
    first = t.groupby("location")["insert"].min()
    inventory = pd.DataFrame(
        {
            "node": first.index,
            "uuid": "titan-" + first.index,
            "gpu": "0",
            "model": "Tesla K20X",
            "family": "kepler",
            "provisioned_start": first.to_numpy(),
            "provisioned_end": span_end,
        }
    )  # the trace observes nothing after its span
    verdicts = pd.concat([
        healthy.assign(verdict="healthy", reason=""),
        gaps.assign(verdict="unhealthy"),
    ], ignore_index=True).assign(uuid="")
    frames = Frames(inventory=make_frame("inventory", inventory, source),
                    verdicts=make_frame("verdicts", verdicts, source), source=source,
                    cannot_fill=dict(TRACE_CANNOT_FILL))
    return frames


def _titan_stints(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """Stints with parsed times. Rows without `insert` are extra events recorded at a stint's
    removal (the trace lists e.g. DBE and then OTB for one removal): they give their event to the
    stint of the same serial, location and removal time when it has none."""
    extra = table["insert"].isna()
    t = table[~extra].reset_index(drop=True)
    t = t.assign(insert=_times(t, "insert", source), remove=_times(t, "remove", source))
    events = table[extra].assign(remove=_times(table[extra], "remove", source))
    events = events.drop_duplicates(["SN", "location", "remove"])[
        ["SN", "location", "remove", "event"]
    ]
    t = t.merge(events, on=["SN", "location", "remove"], how="left", suffixes=("", "_extra"))
    return t.assign(event=t["event"].fillna(t["event_extra"]))


def _times(table: pd.DataFrame, column: str, source: str) -> pd.Series:
    parsed = pd.to_datetime(table[column], errors="coerce", utc=True)
    bad = parsed.isna()
    if bad.any():
        at = int(bad.to_numpy().argmax())
        line = int(table["_line"].iloc[at]) if "_line" in table else None
        raise ParseError(
            source, f"not a timestamp: {table[column].iloc[at]!r}", line=line, field=column
        )
    return parsed


def _trace_frames(
    inventory: pd.DataFrame,
    unhealthy: pd.DataFrame,
    start: pd.Timestamp,
    end: pd.Timestamp,
    source: str,
) -> Frames:
    nodes = inventory["node"].drop_duplicates()
    healthy = pd.DataFrame(
        {"node": nodes, "uuid": "", "start": start, "end": end, "verdict": "healthy", "reason": ""}
    )
    verdicts = pd.concat([healthy, unhealthy], ignore_index=True)
    return Frames(
        inventory=make_frame("inventory", inventory, source),
        verdicts=make_frame("verdicts", verdicts, source),
        cannot_fill=dict(TRACE_CANNOT_FILL),
        source=source,
    )


def load_trace(
    path: str | Path, fmt: str, nodes: int | None = None, gpus_per_node: int | None = None
) -> Frames:
    """Read a trace file (`-`: standard input; `fmt`: "stepfun" or "titan"). Raises InputError
    (unreadable file, unknown format, Titan with --nodes/--gpus-per-node: its inventory is the
    slots it lists), ParseError (bad content, naming its line: and column for JSON)."""
    source = data_name(path)
    if fmt not in ("stepfun", "titan"):
        raise InputError(source, f"unknown trace format {fmt!r} (known: stepfun, titan)")
    if fmt == "titan" and (nodes is not None or gpus_per_node is not None):
        raise InputError(source,
                         "the Titan trace lists its own slots; drop --nodes/--gpus-per-node")
    try:
        with open_data_file(path) as handle:  # no FIFO made with mkfifo, no device
            data = handle.read()
    except OSError as error:
        raise unreadable_data(path, error) from None
    if fmt == "stepfun":
        records = parse_json(decode_data(data).removeprefix("\ufeff"), source)
        if not isinstance(records, list):
            raise ParseError(source, "expected a JSON list of fault events", line=1)
        return parse_stepfun(records, source, nodes, gpus_per_node)
    return parse_titan(read_csv(data, source), source)


def parse_json(text: str, source: str) -> object:
    """`text` as JSON. Raises ParseError `FILE:LINE: not JSON at column C: why`, ending in
    `(cut off? the text ends mid-document)` when the error is at its end: a copy or download
    that stopped early."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if not text.strip():
            raise ParseError(source, "not JSON: empty file") from None
        cut = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
        tail = " (cut off? the text ends mid-document)" if cut else ""
        raise ParseError(source, f"not JSON at column {error.colno}: {error.msg}{tail}",
                         line=error.lineno) from None
    except RecursionError:
        raise ParseError(source, "not JSON: nested too deeply") from None


def read_csv(data: bytes, source: str) -> pd.DataFrame:
    """The Titan CSV's table, with `_line` the file line of each row (the header is line 1).
    Raises ParseError naming the line: of the first byte that is not UTF-8, of a row with the
    wrong number of fields."""
    try:
        table = pd.read_csv(io.BytesIO(data), dtype={"SN": str, "location": str, "event": str},
                            skip_blank_lines=False)
    except UnicodeDecodeError:  # pandas' offset is within its buffer: find the file's byte
        raise _not_utf8(data, source) from None
    except pd.errors.EmptyDataError:  # a ValueError, not a ParserError
        raise ParseError(source, "not CSV: empty (no header line)", line=1) from None
    except pd.errors.ParserError as error:
        found = re.search(r"\bline (\d+)", str(error))
        said = re.sub(r"^Error tokenizing data\. C error: ", "", str(error).strip())
        raise ParseError(source, f"not CSV: {said}",
                         line=int(found.group(1)) if found else None) from None
    table = table.dropna(how="all")  # blank lines: kept above so the line numbers hold
    return table.assign(_line=table.index + 2)


def _not_utf8(data: bytes, source: str) -> ParseError:
    """The ParseError for CSV bytes that are not UTF-8, naming the line of the first bad byte
    (decoded again here, on the failure path only)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return ParseError(source, f"not CSV: not UTF-8 text (byte {error.start})",
                          line=data.count(b"\n", 0, error.start) + 1)
    return ParseError(source, "not CSV: not UTF-8 text")
