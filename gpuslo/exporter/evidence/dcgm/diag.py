"""`dcgmi diag -r 1|2|3|4` results, parsed (evidence, no judging): the boxed text table and the
`-j` JSON document, in the DCGM 3.x and 4.x shapes, as one result per (test, GPU).

Text (DCGM 3.x, shared/corpus case 053; DCGM 4.x, NVIDIA/DCGM#253):

    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Deployment  --------+------------------------------------------------|
    | Denylist                  | Pass                                           |     3.x
    +-----  Hardware  ----------+------------------------------------------------+
    | GPU Memory                | Pass - GPU: 1                                  |     3.x
    |                           | Fail - GPU: 0                                  |
    | Warning                   | GPU 0 Error using CUDA API cuCtxCreate Check   |
    |                           | DCGM and system logs for errors. Reset GPU. R  |
    | memory                    | Pass                                           |     4.x
    |                           | GPU0: Pass                                     |

A cell's text is hard-wrapped at the column (mid-word: `Rese` / `t GPU`), so the rows that
continue a cell (empty left column) are joined without a separator. `Info` and `Warning` rows
belong to the test above them and name their GPU (`GPU 0 ...`). `Pass - All` / a bare `Pass`
is a result for every GPU (gpu None).

JSON: `{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results":
[{"gpu_ids"|"gpu_id", "status", "warnings", "info"}]}]}]}}` (3.x; warnings are strings or
`{"warning": ...}`) or `{"DCGM Diagnostic": {"test_categories": [... "results": [{"entity_group":
"GPU", "entity_id": 0, "status", "warnings"}] ...]}, "metadata": {...}}` (4.x).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.dcgm.links import load_json_document

_SECTION = re.compile(r"^[|+]-{3,}\s+(\w[\w ]*?)\s+-+\+-*[|+]\s*$")
_ROW = re.compile(r"^\|(.*?)\|(.*)\|\s*$")
_WORDS = r"Pass|Fail|Warn|Warning|Skip|Skipped|Not Run"
_STATUS_3X = re.compile(rf"^({_WORDS})(?: - (All|GPUs?: ?([\d, ]+)))?$", re.IGNORECASE)
_STATUS_4X = re.compile(rf"^GPU ?(\d+): ({_WORDS})\b", re.IGNORECASE)
_GPU_IN_TEXT = re.compile(r"\bGPU ?(\d+)\b")
NOTE_ROWS = ("info", "warning")
NOTE_STATUS = "Info"
# A row keyed `Error` (DCGM's deployment checks, a plugin that could not run): a result of its own
# for the GPU its text names (all GPUs when none), status `Error`, judged by policy.diagnostics.
ERROR_ROW = "error"
ERROR_STATUS = "Error"
JSON_ROOTS = ("DCGM GPU Diagnostic", "DCGM Diagnostic")


@dataclass(frozen=True)
class DiagResult:
    """One test's result for one GPU (`gpu` = DCGM gpuId as a string, None: all GPUs).

    Attributes:
        category: Deployment, Integration, Hardware, Stress, ... ("" when not shown).
        test: the test's name as printed (`GPU Memory`, `memory`, `PCIe`).
        status: as printed (`Pass`, `Fail`, `Warn`, `Skip`, `Not Run`, ...); `Info` for an
            Info/Warning note whose test the excerpt does not show.
        messages: the warning/info texts that name this GPU (or the test, for gpu None).
        line: 1-based line of the result (None for JSON).
    """

    category: str
    test: str
    gpu: str | None
    status: str
    messages: tuple[str, ...] = ()
    line: int | None = None


@dataclass
class _Row:
    key: str
    value: str
    line: int
    section: str


def _is_status(value: str) -> bool:
    return bool(_STATUS_3X.match(value.strip()) or _STATUS_4X.match(value.strip()))


def _chunk(cell: str) -> str:
    """A cell's text as dcgmi wrote it: one space after the bar and two before the closing one
    frame a fixed-width chunk (its own spaces kept, so wrapped chunks join exactly)."""
    return cell[1:-2] if cell.endswith("  ") else cell[1:].rstrip()


def _rows(text: str, source: str) -> list[_Row]:
    """Table rows with continuation rows (empty key, not a result) joined into the row above
    without a separator (cells are hard-wrapped mid-word), and the section of each row. A row
    cut off before its closing bar raises ParseError naming its line, unless it is the last
    line of the text (an excerpt cut there: read as far as it goes)."""
    rows: list[_Row] = []
    section = ""
    lines = text.splitlines()
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if heading := _SECTION.match(stripped):
            section = heading.group(1).strip()
            continue
        if stripped.startswith("|") and not stripped.endswith("|"):
            if number != last or stripped.count("|") < 2:
                raise ParseError(source, "table row cut off before its closing bar", number)
            stripped += "|"
        match = _ROW.match(stripped)
        if not match:
            continue
        key, value = match.group(1).strip(), _chunk(match.group(2))
        if not key and rows and not _is_status(value):
            rows[-1].value += value
        else:
            rows.append(_Row(key, value, number, section))
    for row in rows:
        row.value = row.value.strip()
    return rows


def _results_of(row: _Row, test: tuple[str, str]) -> list[DiagResult]:
    """The results one status cell gives (`Pass - GPU: 0, 1`, `Fail`, `GPU0: Pass`)."""
    category, name = test
    if match := _STATUS_4X.match(row.value):
        return [DiagResult(category, name, match.group(1), match.group(2), line=row.line)]
    match = _STATUS_3X.match(row.value)
    if match is None:
        return []
    gpus = [g.strip() for g in (match.group(3) or "").split(",") if g.strip()] or [None]
    return [DiagResult(category, name, gpu, match.group(1), line=row.line) for gpu in gpus]


def _attach(results: list[DiagResult], row: _Row, test: tuple[str, str] | None) -> None:
    """Add an Info/Warning text to the results of `test` for the GPU it names (all of the
    test's results when it names none); a note with no such result becomes its own `Info`
    result, so it is never dropped."""
    named = _GPU_IN_TEXT.search(row.key) or _GPU_IN_TEXT.search(row.value)  # `Warning: GPU1`
    gpu = named.group(1) if named else None
    hit = False
    for index, result in enumerate(results):
        same_gpu = gpu is None or result.gpu in (None, gpu)  # `Fail - All` holds every GPU's
        if test and (result.category, result.test) == test and same_gpu:
            results[index] = replace(result, messages=(*result.messages, row.value))
            hit = True
    if not hit:
        category, name = test or (row.section, "")
        results.append(DiagResult(category, name, gpu, NOTE_STATUS, (row.value,), row.line))


def _error_result(row: _Row, test: tuple[str, str] | None) -> DiagResult:
    """An `Error` row as a result of its own: the GPU its text names (all GPUs when none), in
    the test above it, else in its section (the deployment checks print no test row)."""
    named = _GPU_IN_TEXT.search(row.value)
    category, name = test if test and test[0] == row.section else (row.section, "")
    gpu = named.group(1) if named else None
    return DiagResult(category, name, gpu, ERROR_STATUS, (row.value,), row.line)


def _per_gpu_only(results: list[DiagResult]) -> list[DiagResult]:
    """A 4.x test prints its summary (gpu None) and then one line per GPU: keep the GPUs'."""
    with_gpus = {(r.category, r.test) for r in results if r.gpu is not None
                 and r.status not in (NOTE_STATUS, ERROR_STATUS)}
    return [
        r
        for r in results
        if r.gpu is not None or (r.category, r.test) not in with_gpus or r.status == NOTE_STATUS
    ]


def parse_diag_text(text: str, source: str = "<dcgmi diag>") -> list[DiagResult]:
    """Every (test, GPU) result of a dcgmi diag table. Raises ParseError naming the line of a
    test row whose result is not a diag status."""
    results: list[DiagResult] = []
    test: tuple[str, str] | None = None
    for row in _rows(text, source):
        key = row.key
        if row.section.lower() == "metadata" or key.lower() == "diagnostic":
            continue
        if not key:
            results += _results_of(row, test) if test else []
            continue
        if key.lower().split(":")[0] in NOTE_ROWS:
            _attach(results, row, test)
            continue
        if key.lower() == ERROR_ROW:
            results.append(_error_result(row, test))
            continue
        test = (row.section, key)
        found = _results_of(row, test)
        if not found:
            raise ParseError(source, f"{key}: not a diag result: {row.value[:40]!r}", row.line)
        results += found
    return _per_gpu_only(results)


def _texts(items) -> tuple[str, ...]:
    out = []
    for item in items or []:
        text = item.get("warning") or item.get("info") if isinstance(item, dict) else item
        if text:
            out.append(str(text))
    return tuple(out)


def _json_gpus(result: dict) -> list[str | None]:
    if result.get("entity_group", "GPU") != "GPU":
        return []
    ids = result.get("entity_id", result.get("gpu_id", result.get("gpu_ids")))
    if ids is None or ids == "":
        return [None]
    return [part.strip() for part in str(ids).split(",") if part.strip()]


def parse_diag_json(document: dict, source: str = "<dcgmi diag -j>") -> list[DiagResult]:
    """Every (test, GPU) result of a `dcgmi diag -j` document (3.x or 4.x shape). Raises
    ParseError naming the field when the document has neither root or a test lacks its status."""
    root = next((document[key] for key in JSON_ROOTS if key in document), None)
    if not isinstance(root, dict) or not isinstance(root.get("test_categories"), list):
        raise ParseError(source, "not a dcgmi diag document", field="test_categories")
    results = []
    for category in root["test_categories"]:
        for test in (category or {}).get("tests") or []:
            name = str(test.get("name", ""))
            for result in test.get("results") or []:
                if not isinstance(result, dict) or "status" not in result:
                    raise ParseError(source, f"{name}: a result without status", field=name)
                messages = _texts(result.get("warnings")) + _texts(result.get("info"))
                group = str(category.get("category", ""))
                status = str(result["status"])
                for gpu in _json_gpus(result):
                    results.append(DiagResult(group, name, gpu, status, messages))
    return results


def parse_diag(text: str, source: str = "<dcgmi diag>") -> list[DiagResult]:
    """`parse_diag_json` for a JSON document, else `parse_diag_text`."""
    document = load_json_document(text, source)
    if document is not None and any(key in document for key in JSON_ROOTS):
        return parse_diag_json(document, source)
    return parse_diag_text(text, source)


def looks_like_diag(text: str) -> bool:
    """A dcgmi diag table (its section rules, or result cells such as `Fail - GPU: 0`) or JSON
    document."""
    head = text[:200_000]
    if any(f'"{root}"' in head for root in JSON_ROOTS):
        return True
    sections = sum(bool(_SECTION.match(line.strip())) for line in head.splitlines()[:400])
    if sections or "Successfully ran diagnostic" in head:
        return True
    rows = [_ROW.match(line.strip()) for line in head.splitlines()[:400]]
    return any(row and _is_status(row.group(2)) and "GPU" in row.group(2) for row in rows)
