"""Reading one frame of a `gpuslo simulate` directory fast: `read_frame_fast(name, path)`.

The CSV.gz files hold a million job events at 10,000 GPUs; the general path (every column read
as text, then `pd.to_numeric`/`pd.to_datetime` over every cell, `gpuslo.slo.frames.make_frame`)
spent 2.5 s there against the engine's 1.6 s (bench/report_files.py). Here the C parser reads
numbers as float64 itself and every time or text column as a categorical (each distinct value
made a Python string once: a week of events holds ~44,000 distinct times and a few hundred jobs
and nodes among a million rows); times are converted once per distinct value (the same
`pd.to_datetime(..., format="mixed")` as `make_frame`), so the values are those of the general
path. The frame is checked by `gpuslo.slo.frames.validate` while its text is still categorical
(a comparison per category, not per row), then the text columns become `string`.

Anything unexpected (a column missing or extra, a cell the C parser or the time parser refuses)
returns None: the caller takes the general path, whose errors name the file, row and column.
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

import pandas as pd

from gpuslo.slo import frames as fr

_NUMERIC = (fr.COUNT, fr.SECONDS)


def read_frame_fast(name: str, path: Path) -> pd.DataFrame | None:
    """Frame `name` from the CSV.gz at `path`, typed and validated, or None when the fast path
    cannot vouch for it (see the module docstring). Raises FileNotFoundError when `path` is
    missing, ParseError from `frames.validate` (a value outside its closed set, an empty
    required field, an interval ending before its start)."""
    with open(path, "rb") as handle:  # FileNotFoundError: the caller's to report
        packed = handle.read()
    return frame_of_csv_gz(name, packed, str(path))


def frame_of_csv_gz(name: str, packed: bytes, source: str) -> pd.DataFrame | None:
    """`read_frame_fast` of the file's bytes `packed`; `source` names it in a ParseError."""
    columns = fr.FRAMES[name]
    dtypes = {col: ("float64" if kind in _NUMERIC else "category") for col, kind in columns.items()}
    numeric = {col: [""] for col, kind in columns.items() if kind in _NUMERIC}
    try:  # one-shot inflate: gzip's streaming reader costs 2x on 100 MB of text
        text = io.BytesIO(gzip.decompress(packed))
        raw = pd.read_csv(text, dtype=dtypes, keep_default_na=False, na_values=numeric,
                          engine="c")
    except (OSError, ValueError, EOFError, TypeError, zlib.error):
        return None
    if list(raw.columns) != list(columns):
        return None
    out = {}
    for col, kind in columns.items():
        series = _typed(raw[col], kind)
        if series is None:
            return None
        out[col] = series
    return validated(name, pd.DataFrame(out, copy=False), source)


def validated(name: str, frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """`frame` (text columns categorical) checked by `frames.validate` on its categories (a
    closed set is checked per distinct value, not per row), its text columns then made `string`.
    Raises ParseError naming `source`, the row and the column."""
    fr.validate(name, frame, source)
    for col, kind in fr.FRAMES[name].items():
        if kind == fr.TEXT:
            frame[col] = frame[col].astype("string")
    return frame


def _typed(values: pd.Series, kind: str) -> pd.Series | None:
    """One column in its frame dtype (text stays categorical for `validate`; the caller makes it
    `string`), or None when a value would not convert."""
    if kind == fr.COUNT:
        if (values.abs() >= 2**53).any():  # float64 would round it; the general path does not
            return None
        try:
            return values.astype("Int64")
        except (TypeError, ValueError):
            return None
    if kind == fr.SECONDS:
        return values.astype("Float64")
    if kind == fr.TEXT:
        return values
    cells = pd.Series(values.cat.categories.to_numpy(dtype=object)).replace("", None)
    try:
        stamps = pd.to_datetime(cells, utc=True, format="mixed").astype("datetime64[ns, UTC]")
    except (ValueError, TypeError, OverflowError):
        return None
    taken = stamps.array.take(values.cat.codes.to_numpy(), allow_fill=True)
    return pd.Series(taken, index=values.index)
