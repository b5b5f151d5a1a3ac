"""Files of `gpuslo simulate`: the frames as CSV.gz, journals, and reading back. Every file is
written through `gpuslo.files` (atomic; all or nothing for several)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpuslo.errors import InputError, ParseError
from gpuslo.files import write_atomic
from gpuslo.slo import frames as fr

FRAME_NAMES = ("inventory", "verdicts", "schedulability", "allocations", "job_events")
MANIFEST = "simulation.json"


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


def write_simulation(sim, out: Path, metrics_step: int | None) -> list[Path]:
    """Write a `Simulation` into `out`; returns the paths written. Raises OSError."""
    written = []
    for name in FRAME_NAMES:
        written.append(out / f"{name}.csv.gz")
        write_atomic(written[-1], frame_csv_gz(sim.frames[name]))
    for (job, node), events in sim.journals.items():
        written.append(replay_journal(out / "journals" / node, job, node, events))
    if metrics_step is not None:
        from gpuslo.slo.simulate_metrics import openmetrics_text

        written.append(out / "metrics.om")
        write_atomic(written[-1], openmetrics_text(sim, metrics_step).encode())
    manifest = {
        "generator": "gpuslo simulate", "nodes": sim.fleet.nodes,
        "gpus_per_node": sim.fleet.gpus_per_node, "days": sim.fleet.days, "seed": sim.seed,
        "interruptions_per_1000_gpu_days": round(sim.fleet.interruptions_per_1000_gpu_days, 6),
        "start": sim.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": sim.end.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    written.append(out / MANIFEST)
    write_atomic(written[-1], (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return written


def replay_journal(journal_dir: Path, job: str, node: str, events: list[dict]) -> Path:
    """Write one job's journal on one node by driving `gpuslo.goodput.Recorder` with an injected
    clock through `events` (Recorder events with absolute `t`). A new Recorder (a new process)
    takes over at every restart, as after a real crash. Returns the journal path.

    A phase cut short by an interruption (phase_start with no phase_end) has no public Recorder
    call that leaves it open, so that one line is written through the Recorder's own writer."""
    from gpuslo.goodput import Recorder, journal_path

    path = journal_path(journal_dir, job)
    path.unlink(missing_ok=True)
    now = [0.0]
    recorder = Recorder(journal_dir, job, node=node, clock=lambda: now[0])
    open_phase = None
    for event, following in zip(events, [*events[1:], None], strict=True):
        now[0] = float(event["t"])
        if event["event"] == "restart":  # a new process after the crash
            recorder.close()
            recorder = Recorder(journal_dir, job, node=node, clock=lambda: now[0])
        closes = following is not None and following["event"] == "phase_end"
        open_phase = _replay(recorder, event, open_phase, closes)
    recorder.close()
    return path


def _replay(recorder, event: dict, open_phase, closes: bool):
    """Apply one event to `recorder` (`closes`: the next event ends this phase); returns the
    phase context still open (or None)."""
    kind = event["event"]
    if kind == "job_start":
        recorder.job_start(event["gpus"])
    elif kind == "restart":
        recorder.restart(event["from_step"])
    elif kind == "phase_start" and closes:
        open_phase = recorder.phase(event["category"])
        open_phase.__enter__()
    elif kind == "phase_start":
        recorder._write("phase_start", category=event["category"])
    elif kind == "phase_end" and open_phase is not None:
        open_phase.__exit__(None, None, None)
        open_phase = None
    elif kind == "steps":
        recorder.step(event["step"])
    elif kind == "checkpoint":
        recorder.checkpoint(event["step"])
    elif kind == "job_end":
        recorder.job_end(event["status"], event.get("layer"))
    return open_phase


def read_simulation(directory: str | Path) -> tuple[dict[str, pd.DataFrame], pd.Timestamp, pd.Timestamp]:
    """Load a `gpuslo simulate` directory: (frames by name, start, end of the simulated span).

    Raises InputError when the directory or a file is missing or unreadable, ParseError (naming
    the file, row and column) when a frame is malformed."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError(str(root), "no such directory")
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        start, end = pd.Timestamp(manifest["start"]), pd.Timestamp(manifest["end"])
    except FileNotFoundError:
        raise InputError(str(root), f"not a gpuslo simulate directory (no {MANIFEST})") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ParseError(str(root / MANIFEST), f"unreadable manifest: {error}") from None
    frames = {}
    for name in FRAME_NAMES:
        path = root / f"{name}.csv.gz"
        try:
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, compression="gzip")
        except FileNotFoundError:
            raise InputError(str(path), "missing") from None
        except (OSError, ValueError, EOFError) as error:
            raise ParseError(str(path), f"not a readable CSV.gz: {error}") from None
        frames[name] = fr.make_frame(name, raw.replace("", None) if name != "job_events"
                                     else _events_raw(raw), str(path))
    return frames, start, end


def _events_raw(raw: pd.DataFrame) -> pd.DataFrame:
    out = raw.copy()
    for col in ("step", "gpus"):
        out[col] = pd.to_numeric(out[col].replace("", None))
    return out
