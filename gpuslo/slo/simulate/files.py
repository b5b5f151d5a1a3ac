"""Files of `gpuslo simulate`: the frames as CSV.gz, journals, and reading back (the readers
live in `gpuslo.slo.simulate.reading`, which the report imports without the simulator;
`read_simulation` is importable from here too). Every file is written through `gpuslo.files`
(atomic: temp file, fsync, rename).

Written into the output directory:

- `inventory.csv.gz`, `verdicts.csv.gz`, `schedulability.csv.gz`, `allocations.csv.gz`,
  `job_events.csv.gz`, `degradations.csv.gz` — the frames of `gpuslo.slo.frames` (same
  columns; timestamps as ISO 8601 UTC text; gzip with a zero mtime so the bytes depend only on
  the seed). Always CSV.gz, so no Parquet engine is needed; `read_simulation(dir)` loads them
  back through `frames.make_frame` (typed fast path: `gpuslo.slo.simulate.csv_read`).
- `<frame>.columns.npz` beside each CSV.gz — the same frame in columns (NumPy arrays, distinct
  values and codes: `gpuslo.slo.simulate.columns`), stamped with the CSV.gz's SHA-256;
  `read_simulation` takes it instead of parsing the CSV text only while that CSV.gz is the one
  it was made from (a 10,000-GPU week: ~0.25 s against ~1 s of CPU; writing the copies, each
  made from the CSV.gz read back, adds ~1.8 s to that week's 4.4 s `write_simulation`).
- `replicas.csv.gz`, `replica_states.csv.gz`, `replica_idle.csv.gz`, `replica_latency.csv.gz`
  — serving replicas (only with `--serving-nodes`; `gpuslo.slo.simulate.serving`); their GPUs
  are also in `allocations.csv.gz` (job = the replica), as `gpuslo_gpu_allocation` lists them.
- `simulation.json` — the parameters and the covered span (start, end).
- `journals/<node>/<job>.jsonl` — job journals (`gpuslo.goodput.journal`, schema v1), the lines
  `gpuslo.goodput.Recorder` writes for the same events with its clock at each event's time.
- `metrics.om` (when asked) — OpenMetrics text for `promtool tsdb create-blocks-from
  openmetrics` (see `gpuslo.slo.simulate.openmetrics`), streamed to disk in bounded memory.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpuslo.files import write_atomic, write_stream_atomic
from gpuslo.goodput import journal
from gpuslo.slo.simulate import columns
from gpuslo.slo.simulate.csv_read import frame_of_csv_gz
from gpuslo.slo.simulate.fleet import Simulation
from gpuslo.slo.simulate.openmetrics import write_openmetrics
from gpuslo.slo.simulate.reading import (  # noqa: F401 - read_simulation re-exported
    FRAME_NAMES,
    MANIFEST,
    SERVING_FRAMES,
    read_simulation,
)


def frame_csv_gz(frame: pd.DataFrame) -> bytes:
    """A frame as gzip'd CSV (level 1: these files are rewritten often, read rarely) with ISO
    8601 UTC times to the second and a zero gzip mtime, so the bytes depend only on the data."""
    out = frame.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype):
            stamps = out[col].dt.tz_convert(None).to_numpy().astype("datetime64[s]")
            text = np.char.add(np.datetime_as_string(stamps, unit="s"), "Z")
            out[col] = np.where(out[col].isna().to_numpy(), "", text)
    raw = out.to_csv(index=False, lineterminator="\n").encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=1) as handle:
        handle.write(raw)
    return buffer.getvalue()


def write_simulation(sim: Simulation, out: Path, metrics_step: int | None) -> list[Path]:
    """Write `sim` into `out` (metrics.om too when `metrics_step`, seconds, is given); returns
    the paths written. Raises OSError, ValueError for a job id unfit for a file name."""
    written = []
    for name in FRAME_NAMES + tuple(n for n in SERVING_FRAMES if n in sim.frames):
        written.append(out / f"{name}.csv.gz")
        packed = frame_csv_gz(sim.frames[name])
        write_atomic(written[-1], packed)
        frame = frame_of_csv_gz(name, packed, str(written[-1]))  # the CSV's frame, read back
        if frame is not None:
            written.append(out / f"{name}{columns.SUFFIX}")
            write_atomic(written[-1], columns.encode(name, frame, packed))
    for (job, node), events in sim.journals.items():
        written.append(journal.journal_path(out / "journals" / node, job))
        write_atomic(written[-1], journal_text(events).encode())
    if metrics_step is not None:
        written.append(out / "metrics.om")
        write_stream_atomic(written[-1], lambda handle: write_openmetrics(
            sim, metrics_step, lambda text: handle.write(text.encode())))
    manifest = {
        "generator": "gpuslo simulate", "nodes": sim.fleet.nodes,
        "gpus_per_node": sim.fleet.gpus_per_node, "days": sim.fleet.days, "seed": sim.seed,
        "interruptions_per_1000_gpu_days": round(sim.fleet.interruptions_per_1000_gpu_days, 6),
        "start": sim.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": sim.end.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if sim.fleet.serving_nodes:
        manifest["serving_nodes"] = sim.fleet.serving_nodes
    written.append(out / MANIFEST)
    write_atomic(written[-1], (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return written


def journal_text(events: list[dict]) -> str:
    """The journal of one job on one node: the lines `gpuslo.goodput.Recorder` writes when its
    clock reads each event's `t` (float Unix seconds) as the event happens. The Recorder writes a
    `steps` line per coalescing window; the simulator's steps are seconds to hours apart with
    other events between them, so every window holds one step (`count` 1) — except a job with a
    straggler, which logs its windows with their `count`, `step_time_s` and `compute_s`."""
    lines = []
    for event in events:
        t = float(event["t"])
        if event["event"] == "steps" and event.get("count"):
            step, count = event["step"], event["count"]
            first_t = t - (count - 1) * float(event.get("step_time_s") or 0.0)
            event = journal.event("steps", t, step=step, first_step=step - count + 1,
                                  first_t=first_t, count=count,
                                  step_time_s=event.get("step_time_s"),
                                  compute_s=event.get("compute_s"))
        elif event["event"] == "steps":
            step = event["step"]
            event = journal.event("steps", t, step=step, first_step=step, first_t=t, count=1)
        lines.append(journal.encode_line({**event, "t": t}))
    return "".join(lines)
