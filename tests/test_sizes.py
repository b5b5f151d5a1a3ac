"""Sizes that stay readable (README "Architecture", ../shared/STYLE.md): no module over 500 lines
and no function over 80, in the package, its tests, the benchmarks and tools/. Read with `ast`
(nothing is imported). Generated protobuf stubs are not ours to size; an exemption that is no
longer needed fails too, so it cannot outlive its reason."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("gpuslo", "tests", "bench", "tools")
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 80
GENERATED = "api_pb2"  # gpuslo/exporter/evidence/kubelet/api_pb2*.py, grpcio-tools' output
# rewritten by the training-log issue (issue 22 leaves it to that work); remove it then
EXEMPT: set[str] = set()  # assemble.py was exempt until issue 23 rewrote it


def _sources() -> dict[str, str]:
    """Repository-relative path -> text of every Python file measured."""
    out = {}
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            if not path.name.startswith(GENERATED) and "node_modules" not in path.parts:
                out[path.relative_to(REPO).as_posix()] = path.read_text(encoding="utf-8")
    return out


def oversized(name: str, text: str) -> list[str]:
    """What in one module breaks the limits: the module's own length, then each function
    (methods and nested functions included) by its lines from `def` to its last line."""
    found = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{name}: {lines} lines (limit {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            size = node.end_lineno - node.lineno + 1
            if size > MAX_FUNCTION_LINES:
                found.append(f"{name}:{node.lineno} {node.name}: {size} lines "
                             f"(limit {MAX_FUNCTION_LINES})")
    return found


SOURCES = _sources()


def test_no_module_or_function_over_the_limits():
    assert len(SOURCES) > 200
    found = [line for name, text in SOURCES.items() if name not in EXEMPT
             for line in oversized(name, text)]
    assert not found, "split where the code divides:\n" + "\n".join(found)


def test_every_exemption_is_still_needed():
    stale = [name for name in EXEMPT if name not in SOURCES or not oversized(name, SOURCES[name])]
    assert not stale, f"no longer oversized, remove from EXEMPT: {stale}"


def test_the_measure_sees_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert oversized("m.py", f"def f():\n{body}\n") == ["m.py:1 f: 81 lines (limit 80)"]
    assert oversized("m.py", "x = 1\n" * 501) == ["m.py: 501 lines (limit 500)"]
