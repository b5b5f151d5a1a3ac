"""Reading a `gpuslo simulate` directory back (`read_simulation`), apart from the simulator
that writes it (`gpuslo.slo.simulate.files`), so that `gpuslo report --data` imports the readers
only: not the fleet, the journals' writer or the OpenMetrics writer.

Each frame comes from its `.columns.npz` copy when that copy was made from the CSV.gz beside it
(`gpuslo.slo.simulate.columns`), else from the CSV.gz text by the typed fast reader
(`gpuslo.slo.simulate.csv_read`), else by `frames.make_frame` over the text (the general path,
whose errors name the row).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from gpuslo.errors import InputError, ParseError
from gpuslo.slo import frames as fr
from gpuslo.slo.simulate import columns
from gpuslo.slo.simulate.csv_read import read_frame_fast

FRAME_NAMES = (
    "inventory", "verdicts", "schedulability", "allocations", "job_events", "degradations"
)
OPTIONAL_FRAMES = ("degradations",)  # written since the crawl; older directories lack it
# Written only with --serving-nodes (gpuslo.slo.simulate.serving); absent means no replica.
SERVING_FRAMES = ("replicas", "replica_states", "replica_idle", "replica_latency")
MANIFEST = "simulation.json"


def read_simulation(
    directory: str | Path,
) -> tuple[dict[str, pd.DataFrame], pd.Timestamp, pd.Timestamp]:
    """Load a `gpuslo simulate` directory: (frames by name, start, end of the simulated span).

    Raises InputError when the directory or a file is missing or unreadable, ParseError (naming
    the file, row and column) when a frame is malformed."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError(str(root), "not a directory" if root.exists() else "no such directory")
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        start, end = pd.Timestamp(manifest["start"]), pd.Timestamp(manifest["end"])
    except FileNotFoundError:
        raise InputError(str(root), f"not a gpuslo simulate directory (no {MANIFEST})") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ParseError(str(root / MANIFEST), f"unreadable manifest: {error}") from None
    frames = {}
    for name in FRAME_NAMES + SERVING_FRAMES:
        path = root / f"{name}.csv.gz"
        try:
            frames[name] = _read_columns(name, path)
            if frames[name] is not None:
                continue
            frames[name] = read_frame_fast(name, path)
            if frames[name] is not None:
                continue
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, compression="gzip")
        except FileNotFoundError:
            if name in OPTIONAL_FRAMES + SERVING_FRAMES:
                frames[name] = fr.empty(name)
                continue
            raise InputError(str(path), "missing") from None
        except (OSError, ValueError, EOFError) as error:
            raise ParseError(str(path), f"not a readable CSV.gz: {error}") from None
        frames[name] = fr.make_frame(name, raw.replace("", None) if name != "job_events"
                                     else _events_raw(raw), str(path))
    return frames, start, end


def _read_columns(name: str, path: Path) -> pd.DataFrame | None:
    """Frame `name` from its `.columns.npz` beside the CSV.gz at `path`
    (`gpuslo.slo.simulate.columns`), or None when there is none or it was not made from that
    CSV.gz's bytes. Raises FileNotFoundError when the CSV.gz is missing."""
    packed = path.read_bytes()
    try:
        copy = path.with_name(f"{name}{columns.SUFFIX}").read_bytes()
    except OSError:
        return None
    return columns.decode(name, copy, packed, str(path))


def _events_raw(raw: pd.DataFrame) -> pd.DataFrame:
    """Empty numbers as None; `make_frame` converts them and names a bad cell's row."""
    out = raw.copy()
    for col in ("step", "gpus", "count", "step_time_s", "compute_s"):
        if col in out:
            out[col] = out[col].replace("", None)
    return out
