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

The header row `| Diagnostic | Result |` is skipped; a row keyed `Diagnostic` with a status
(`| Diagnostic | Fail - All |`, DCGM 3.x's Hardware `Diagnostic` test, NVIDIA/go-dcgm#52) is a
test's result like any other.

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
    cut: bool = False  # the last line, stopped before its closing bar


def _is_header(row: _Row) -> bool:
    """The table's header row, `| Diagnostic | Result |`: skipped. `Diagnostic` is also the name
    of a test (DCGM 3.x's Hardware `Diagnostic` plugin: `| Diagnostic | Fail - All |`, go-dcgm#52),
    whose row is a result like any other."""
    return row.key.lower() == "diagnostic" and row.value.strip().lower() == "result"


def _is_status(value: str) -> bool:
    return bool(_STATUS_3X.match(value.strip()) or _STATUS_4X.match(value.strip()))


def _chunk(cell: str) -> str:
    """A cell's text as dcgmi wrote it: one space after the bar and two before the closing one
    frame a fixed-width chunk (its own spaces kept, so wrapped chunks join exactly)."""
    return cell[1:-2] if cell.endswith("  ") else cell[1:].rstrip()


def _last_line(lines: list[str]) -> int:
    return max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)


def _rows(text: str, source: str) -> list[_Row]:
    """Table rows with continuation rows (empty key, not a result) joined into the row above
    without a separator (cells are hard-wrapped mid-word), and the section of each row. A row
    cut off before its closing bar raises ParseError naming its line, unless it is the last
    line of the text: an excerpt cut there, kept as a row of its own marked `cut` (its text may
    stop mid-word); `table_cut` reports the cut."""
    rows: list[_Row] = []
    section = ""
    lines = text.splitlines()
    last = _last_line(lines)
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
        cut = number == last and not line.rstrip().endswith("|")
        if not key and rows and not _is_status(value):
            rows[-1].value += value
        else:
            rows.append(_Row(key, value, number, section, cut))
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


def _cut_results(row: _Row, test: tuple[str, str] | None) -> list[DiagResult]:
    """The results a row cut mid-way still shows: a Fail or Warn is read as far as it goes, a
    Pass is not (`Pass` may be the start of `Pass - GPU: 1` above `Fail - GPU: 0`), and a
    status cut mid-word (`Fai`) is no result and no error."""
    found = _results_of(row, (row.section, row.key) if row.key else test or (row.section, ""))
    return [result for result in found if result.status.lower() != "pass"]


def parse_diag_text(text: str, source: str = "<dcgmi diag>") -> list[DiagResult]:
    """Every (test, GPU) result of a dcgmi diag table (a last row cut mid-way: `_cut_results`).
    Raises ParseError naming the line of a test row whose result is not a diag status."""
    results: list[DiagResult] = []
    test: tuple[str, str] | None = None
    for row in _rows(text, source):
        key = row.key
        if row.section.lower() == "metadata" or _is_header(row):
            continue
        if row.cut and key.lower().split(":")[0] not in (*NOTE_ROWS, ERROR_ROW):
            results += _cut_results(row, test)
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


def _document(text: str) -> dict | None:
    """The JSON document of a `-j` output, None for text (or a document that does not parse,
    which `parse_diag` reports)."""
    try:
        return load_json_document(text, "<dcgmi diag>")
    except ParseError:
        return None


_BORDER = re.compile(r"^\+[-=]+\+[-=]+\+$")  # a rule with no section name in it


def run_gpus(text: str) -> int | None:
    """How many GPUs the diag ran on: the IDs in the Metadata row `GPU Device IDs Detected`
    (`26b9, 26b9, 26b9, 26b9`: one PCI device ID per GPU of the run's group, DCGM 3.x and 4.x,
    dcgmi/Diag.cpp `HelperDisplayVersionAndDevIds`; in JSON the 3.x `GPU Device IDs` list or
    the 4.x `entity_groups` GPU entities), None when the output does not show it. The run's
    GPUs, not the node's: `dcgmi diag -i 0` lists one. A list longer than its cell (ten GPUs
    or more) is wrapped over lines mid-ID, read joined (`_rows`)."""
    document = _document(text)
    if isinstance(document, dict):
        root = next((document[key] for key in JSON_ROOTS if key in document), None)
        ids = root.get("GPU Device IDs") if isinstance(root, dict) else None  # 3.x
        for group in document.get("entity_groups") or []:  # 4.x
            if isinstance(group, dict) and group.get("entity_group") == "GPU":
                ids = group.get("entities")
        return len(ids) if isinstance(ids, list) and ids else None
    try:
        rows = _rows(text, "<dcgmi diag>")  # the cell hard-wrapped over lines, joined
    except ParseError:
        return None  # a row cut inside the table: `parse_diag` reports it
    for row in rows:
        if row.key.lower() == "gpu device ids detected":
            ids = [part for part in row.value.split(",") if part.strip()]
            return len(ids) or None
    return None


def _tests_gpus(rows: list[_Row]) -> list[tuple[_Row, set[str]]]:
    """Each test row with the GPUs its 4.x `GPUn: status` lines name (empty for a 3.x row)."""
    tests: list[tuple[_Row, set[str]]] = []
    for row in rows:
        key = row.key.lower()
        if row.section.lower() == "metadata" or _is_header(row):
            continue
        if not row.key and tests and (match := _STATUS_4X.match(row.value)):
            tests[-1][1].add(match.group(1))
        elif row.key and key.split(":")[0] not in (*NOTE_ROWS, ERROR_ROW):
            tests.append((row, set()))
    return tests


def table_cut(text: str) -> tuple[int, str] | None:
    """(line, what) when a dcgmi diag text table shows it was cut off, else None (pure).

    dcgmi prints the whole table and closes it with a rule (`+----+----+`, DCGM's DIAG_FOOTER);
    a capture stopped part-way cannot vouch for what it does not show. Two shapes tell:

    - the last line is a row stopped before its closing bar (a paste or a stored copy cut
      mid-row, NVIDIA/DCGM#253 as stored: `| memory | Pass` and nothing after);
    - in DCGM 4.x's layout, where every test lists one `GPUn: status` line per GPU of the run
      (Skip included), a table without its closing rule whose last test lists fewer GPUs than
      the run has (`run_gpus`, else the most any test lists): the cut fell inside that test.

    A table that stops at a row boundary in the 3.x layout (one status per test) cannot be
    told from an excerpt that stops there by choice (tests/data/corpus/fresh9 case 1106, a
    Deployment block committed without its closing rule): judged on what it shows. JSON is
    never cut here (a cut document does not parse)."""
    if _document(text) is not None:
        return None
    lines = text.splitlines()
    last = _last_line(lines)
    final = lines[last - 1].strip() if last else ""
    if final.startswith("|") and not final.endswith("|") and final.count("|") >= 2:
        return last, f"the table stops inside a row ({final[:60]!r}), before its closing bar"
    table = [line.strip() for line in lines if line.strip()[:1] in ("|", "+")]
    if not table or (_BORDER.match(table[-1]) and not _SECTION.match(table[-1])):
        return None
    try:
        tests = _tests_gpus(_rows(text, "<dcgmi diag>"))
    except ParseError:
        return None  # a row cut inside the table: `parse_diag` reports it
    if not tests or not any(gpus for _, gpus in tests):
        return None
    expected = run_gpus(text) or max(len(gpus) for _, gpus in tests)
    row, gpus = tests[-1]
    if len(gpus) >= expected:
        return None
    return row.line, (f"the table has no closing rule and its last test ({row.key}) lists "
                      f"{len(gpus)} of the run's {expected} GPUs")


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
