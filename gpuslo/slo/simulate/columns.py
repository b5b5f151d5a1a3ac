"""A columnar copy of a `gpuslo simulate` frame beside its CSV.gz, so the report reads a
10,000-GPU week without parsing 70 MB of CSV text (issue 30, bench/report_files.py).

`<name>.columns.npz` (a zip of `.npy` arrays, read with `allow_pickle=False`) holds, for every
column of `gpuslo.slo.frames.FRAMES[name]`, its distinct values (`<column>.values`: text as a
NumPy unicode array, times as int64 nanoseconds since the epoch UTC, counts int64, seconds
float64) and each row's index into them (`<column>.codes`, the smallest signed integer type that
fits; -1 = empty: NaT or <NA>), with `csv_gz_sha256`, the SHA-256 of the CSV.gz bytes it was
made from. `encode` is given the frame as read back from those bytes
(`gpuslo.slo.simulate.csv_read.frame_of_csv_gz`), so decoding gives the CSV's frame value for
value.

The CSV.gz stays the record: `decode` returns None (the caller parses the CSV.gz) when the copy
is missing, unreadable, or made from other bytes than the CSV.gz beside it now (a file edited or
replaced after `gpuslo simulate` wrote it), and the decoded frame is checked by
`gpuslo.slo.frames.validate` as the CSV's is. Bytes are deterministic: fixed zip times, no
pickles, arrays in column order.
"""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pandas as pd

from gpuslo.slo import frames as fr
from gpuslo.slo.simulate.csv_read import validated

SUFFIX = ".columns.npz"
_DIGEST = "csv_gz_sha256"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the zip format's first date: bytes independent of the clock


def encode(name: str, frame: pd.DataFrame, csv_gz: bytes) -> bytes:
    """The `.columns.npz` bytes of frame `name` (typed as `frames.FRAMES[name]`), made from the
    CSV.gz bytes `csv_gz`."""
    arrays = {_DIGEST: np.frombuffer(hashlib.sha256(csv_gz).digest(), dtype=np.uint8)}
    for col, kind in fr.FRAMES[name].items():
        codes, uniques = pd.factorize(frame[col], use_na_sentinel=True)
        width = next(t for t in (np.int8, np.int16, np.int32, np.int64)
                     if len(uniques) < np.iinfo(t).max)
        arrays[f"{col}.codes"] = codes.astype(width)
        arrays[f"{col}.values"] = _plain(uniques, kind)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for key, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, member.getvalue(), compresslevel=1)
    return buffer.getvalue()


def _plain(uniques, kind: str) -> np.ndarray:
    if kind == fr.TEXT:
        return np.asarray(uniques, dtype=str) if len(uniques) else np.array([], dtype="U1")
    if kind == fr.TIME:
        return pd.DatetimeIndex(uniques).tz_convert("UTC").as_unit("ns").asi8
    return np.asarray(uniques, dtype=np.int64 if kind == fr.COUNT else np.float64)


def decode(name: str, packed: bytes, csv_gz: bytes, source: str) -> pd.DataFrame | None:
    """Frame `name` from `.columns.npz` bytes `packed`, typed and validated, or None when they
    are unreadable or were not made from `csv_gz` (the CSV.gz bytes beside them now). Raises
    ParseError naming `source` from `frames.validate`."""
    try:
        with np.load(io.BytesIO(packed), allow_pickle=False) as npz:
            if npz[_DIGEST].tobytes() != hashlib.sha256(csv_gz).digest():
                return None
            out = {col: _column(npz[f"{col}.codes"], npz[f"{col}.values"], kind)
                   for col, kind in fr.FRAMES[name].items()}
        frame = pd.DataFrame(out, copy=False)
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile):
        return None
    return validated(name, frame, source)


def _column(codes: np.ndarray, values: np.ndarray, kind: str):
    """One column from its codes and distinct values: text categorical (`validated` makes it
    `string`), the rest in their frame dtype. Raises ValueError/IndexError for a code out of
    range or values of the wrong type."""
    if codes.ndim != 1 or codes.dtype.kind != "i" or (len(codes) and codes.min() < -1):
        raise ValueError("codes")
    if kind == fr.TEXT:
        if values.dtype.kind != "U":
            raise ValueError("text values")
        return pd.Categorical.from_codes(codes, categories=pd.Index(values, dtype=object))
    if kind == fr.TIME:
        if values.dtype != np.int64:
            raise ValueError("time values")
        uniques = pd.DatetimeIndex(values.view("datetime64[ns]")).tz_localize("UTC").array
    else:
        uniques = pd.array(values, dtype="Int64" if kind == fr.COUNT else "Float64")
    return uniques.take(codes.astype(np.intp), allow_fill=True)
