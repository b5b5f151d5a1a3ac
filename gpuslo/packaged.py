"""The packaged policy files (`gpuslo/data/*.yaml`), read without the YAML library when their
parsed copy is current (issue 30: importing PyYAML and parsing the Xid policy and the
driver-message catalogue with it took ~15-20 ms of every `gpuslo inspect`, its largest import).

Each file in `COPIED` has a parsed copy, `gpuslo/data/parsed/<name>.txt`: one header line naming
the YAML file, its CRC-32 and its length in bytes, then its data as a Python literal (mappings in
the file's order; Xid codes stay int keys, which JSON would make strings), read back with
`ast.literal_eval`. A copy is used only when its header is the YAML file's own; otherwise (the
YAML was edited and the copy not rewritten, or a copy is missing) the YAML is parsed as before,
so a stale copy can cost time but never change an answer. tests/exporter/test_packaged_copies.py
holds every copy current and equal to its YAML, type for type; rewrite them with
`python -m gpuslo.packaged`.
"""

from __future__ import annotations

import ast
import zlib
from pathlib import Path
from typing import Any

from gpuslo.config_file import parse_yaml

# gpuslo/data/: package data, a directory beside the modules (a path, not importlib.resources,
# whose import, zipfile and tempfile with it, took ~10 ms of every `gpuslo inspect`: issue 30).
DATA = Path(__file__).resolve().parent / "data"
PARSED = DATA / "parsed"
# The YAML files the policies read through `packaged_yaml` (each module's `PACKAGED`).
COPIED = (
    "xid_policy.yaml",
    "driver_messages.yaml",
    "dcgm_errors.yaml",
    "dcgm_hostengine.yaml",
    "fabric_manager.yaml",
)


def header(name: str, raw: bytes) -> str:
    """The first line of `name`'s parsed copy, for the YAML file's bytes `raw`."""
    return f"# gpuslo/data/{name}: crc32 {zlib.crc32(raw):08x}, {len(raw)} bytes"


def packaged_yaml(name: str) -> Any:
    """The data of `gpuslo/data/<name>`: its parsed copy when current (module docstring), else
    the YAML parsed, with libyaml's loader when present (a fifth of the time of the pure Python
    one; the packaged files are known good, so its terser errors do not matter). A new object
    each call (callers may change it)."""
    path = DATA / name
    copy = _current_copy(name, path.read_bytes())
    if copy is not None:
        return copy
    return parse_packaged(path.read_text(encoding="utf-8"), name)


def _current_copy(name: str, raw: bytes) -> Any:
    """The parsed copy of `name` when its header matches `raw`, else None."""
    try:
        text = (PARSED / f"{name}.txt").read_text(encoding="utf-8")
    except OSError:
        return None
    first, _, body = text.partition("\n")
    if first != header(name, raw):
        return None
    try:
        return ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):  # a damaged copy: the YAML
        return None


def parse_packaged(text: str, name: str) -> Any:
    """A packaged YAML file's text parsed (PyYAML imported here, and only here on the packaged
    path)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return parse_yaml(text, f"gpuslo/data/{name}")
    return yaml.load(text, Loader=loader)  # noqa: S506 - CSafeLoader is the safe loader


def copy_text(name: str) -> str:
    """The parsed copy `name` should have: its header, then its data as a Python literal."""
    import pprint

    raw = (DATA / name).read_bytes()
    data = parse_packaged(raw.decode("utf-8"), name)
    literal = pprint.pformat(data, width=100, sort_dicts=False)
    return f"{header(name, raw)}\n{literal}\n"


def write_copies() -> list[Path]:
    """Rewrite every parsed copy from its YAML file; returns the paths written."""
    PARSED.mkdir(exist_ok=True)
    written = []
    for name in COPIED:
        target = PARSED / f"{name}.txt"
        target.write_text(copy_text(name), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for written in write_copies():
        print(written)
