"""The layout is the data flow (DESIGN §1, README "Architecture"), and this test keeps it so.

Read from the source with `ast` (nothing is imported), in the manner of pip-tools'
tests/test_circular_imports.py:
1. tiers: foundation -> wings (exporter, slo, dashboards, alerts, integrations) -> composition
   (cli, demo, deploy); a module imports only from its own tier or a lower one; wings never import
   one another;
2. inside the exporter, every module in a named stage: evidence (and the shared state/snapshot
   records, liveness) -> policy -> {checks | inspect | jobs} -> the node side assembled
   (runner, collector, web, slurm, node_config, npd, gate) -> server; checks, inspect and jobs never
   import one another; a module of an earlier stage never imports a later one;
3. no import of our own modules inside a function, a class or an `if` (a cycle dodged that way
   is still a cycle), and no `importlib.import_module` of our own modules, except the CLI's
   table of subcommands, the checks registry (a check whose module cannot be imported must still
   report `unknown`), `inspect.registry`'s detectors and inspectors (each imported when it first
   runs: detection needs no inspector; tests/test_startup.py resolves every inspector),
   `gpuslo.goodput`'s PEP 562 `__getattr__` (the Recorder, and with it OpenTelemetry, is loaded
   only when asked for) and the report's `inputs` (`LAZY_LOADERS`, `RENDERERS`: a source's
   reader and the HTML renderer are imported when used, so a report from files loads no HTTP
   client and a JSON report no matplotlib; tests/test_startup.py imports each);
4. no import cycle;
5. no folder where three or more sibling modules share a name prefix that stands in for a
   package (checks/ is named after the checks);
6. heavy third-party libraries (`HEAVY`: pandas, numpy, matplotlib, grafanalib, OpenTelemetry,
   grpc, requests) are imported only at the edges that use them, so a command that does not need
   them never loads them (issue 30; tests/test_startup.py holds the import sets of `inspect`
   and `check`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "gpuslo"
WINGS = ("exporter", "slo", "dashboards", "alerts", "integrations")
COMPOSITION = ("cli", "demo", "deploy", "__main__")
# exporter stage by first path part below gpuslo/exporter/ (modules directly in it: by name);
# a module named nowhere here fails test_every_exporter_module_has_a_stage
EXPORTER_STAGES = {
    "evidence": 0, "state": 0, "snapshot": 0, "liveness": 0,
    "policy": 1,
    "checks": 2, "inspect": 2, "jobs": 2,
    "runner": 3, "collector": 3, "web": 3, "slurm": 3, "node_config": 3, "npd": 3, "gate": 3,
    "validators": 3, "xid_fast": 3, "answers": 3,
    "server": 4,
}
APART = ("checks", "inspect", "jobs")  # siblings of stage 2: none imports another
IMPORTLIB_ALLOWED = {
    "gpuslo.cli", "gpuslo.exporter.checks.registry", "gpuslo.exporter.inspect.registry",
    "gpuslo.goodput", "gpuslo.slo.report.inputs",
}
# gpuslo.goodput: the PEP 562 __getattr__; the kernel-log scan and its reader: the recognisers
# (kernel_log.events, .parse, same package) load when a scan is first fed, not before `gpuslo
# inspect` forks the child that scans a large log's second part (tests/test_startup.py)
LOCAL_IMPORT_ALLOWED = {
    "gpuslo.goodput",
    "gpuslo.exporter.evidence.kernel_log.scan",
    "gpuslo.exporter.evidence.kernel_log.read",
}
PREFIX_ALLOWED = {ROOT / "exporter" / "checks"}
# library -> the modules (a name, or a package ending in ".") that may import it, at any level
HEAVY: dict[str, tuple[str, ...]] = {
    "pandas": ("gpuslo.slo.", "gpuslo.goodput.batch", "gpuslo.goodput.calculator",
               "gpuslo.goodput.slowdown_batch", "gpuslo.cli.simulate"),
    "numpy": ("gpuslo.slo.", "gpuslo.goodput.batch", "gpuslo.goodput.calculator",
              "gpuslo.goodput.slowdown_batch"),
    "matplotlib": (),  # the report's charts are plain SVG (`gpuslo.slo.report.svg`)
    "grafanalib": ("gpuslo.dashboards.",),
    "opentelemetry": ("gpuslo.goodput.recorder",),
    "grpc": ("gpuslo.exporter.evidence.kubelet.",),
    "requests": ("gpuslo.demo.prometheus", "gpuslo.exporter.evidence.dcgm.http",
                 "gpuslo.slo.sources."),
}


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every .py under gpuslo/ (data/ excluded)."""
    out = {}
    for path in ROOT.rglob("*.py"):
        if "data" in path.relative_to(ROOT).parts:
            continue
        parts = ("gpuslo", *path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = modules()


def _resolve(name: str) -> str | None:
    """The module `name` refers to: itself, or the package holding the attribute it names."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, node: ast.AST) -> list[str]:
    """Our modules an Import/ImportFrom node of `module` refers to."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    found = {_resolve(name) for name in names if name.startswith("gpuslo")}
    return sorted(found - {None, module})


def _top_level_imports(tree: ast.Module) -> list[ast.AST]:
    """Import nodes at module level, including those in `try` blocks (guarded optional
    imports), but not in functions, classes or `if` blocks."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.Try):
            out += [n for n in node.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return out


def _third_party(call: ast.Call) -> bool:
    """True when an `import_module` call names a constant module outside gpuslo (`pynvml`)."""
    first = call.args[0] if call.args else None
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and not first.value.startswith(("gpuslo", "."))
    )


def _graph() -> tuple[dict[str, set[str]], list[str], list[str]]:
    """(module -> modules it imports at top level, local imports of ours, importlib uses)."""
    graph: dict[str, set[str]] = defaultdict(set)
    local, dynamic = [], []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        top = {id(node) for node in _top_level_imports(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                targets = _imported(module, node)
                if id(node) in top:
                    graph[module].update(targets)
                elif targets and module not in LOCAL_IMPORT_ALLOWED:
                    local.append(f"{module}:{node.lineno} imports {', '.join(targets)}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and module not in IMPORTLIB_ALLOWED
                and not _third_party(node)
            ):
                dynamic.append(f"{module}:{node.lineno}")
    return graph, local, dynamic


GRAPH, LOCAL_IMPORTS, DYNAMIC_IMPORTS = _graph()


def tier(module: str) -> int:
    """0 foundation, 1 a wing, 2 composition."""
    part = module.split(".")[1] if "." in module else ""
    if part in COMPOSITION:
        return 2
    return 1 if part in WINGS else 0


def wing(module: str) -> str | None:
    part = module.split(".")[1] if "." in module else ""
    return part if part in WINGS else None


def exporter_stage(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["gpuslo", "exporter"] or len(parts) < 3:
        return None
    return EXPORTER_STAGES.get(parts[2])


def test_every_module_parses_and_the_graph_is_not_empty():
    assert len(MODULES) > 50 and sum(len(targets) for targets in GRAPH.values()) > 100


def test_tiers_point_down_and_wings_do_not_import_each_other():
    wrong = []
    for module, targets in GRAPH.items():
        for target in targets:
            if tier(target) > tier(module):
                wrong.append(f"{module} (tier {tier(module)}) imports {target} ({tier(target)})")
            elif wing(module) and wing(target) and wing(module) != wing(target):
                wrong.append(f"wing {module} imports wing {target}")
    assert not wrong, "\n".join(wrong)


def test_every_exporter_module_has_a_stage():
    """No unordered bucket: a new module or folder under gpuslo/exporter/ is given a stage."""
    exporter = [m for m in MODULES if m.startswith("gpuslo.exporter.")]
    assert len(exporter) > 50
    assert not [m for m in exporter if exporter_stage(m) is None]


def test_exporter_stages_point_down_and_the_siblings_stay_apart():
    wrong = []
    for module, targets in GRAPH.items():
        stage = exporter_stage(module)
        for target in targets:
            other = exporter_stage(target)
            if stage is None or other is None:
                continue
            if other > stage:
                wrong.append(f"{module} (stage {stage}) imports {target} (stage {other})")
            kinds = {module.split(".")[2], target.split(".")[2]}
            if len(kinds) == 2 and kinds <= set(APART):
                wrong.append(f"{module} imports {target}: {', '.join(APART)} stay apart")
    assert not wrong, "\n".join(wrong)


def test_no_local_or_string_keyed_imports_of_our_modules():
    assert not LOCAL_IMPORTS, "imports inside functions/classes/if:\n" + "\n".join(LOCAL_IMPORTS)
    assert not DYNAMIC_IMPORTS, "importlib.import_module outside the allowed places:\n" + "\n".join(
        DYNAMIC_IMPORTS
    )


def test_no_import_cycles():
    cycles, done = [], set()

    def visit(module: str, path: list[str], on_path: set[str]) -> None:
        for target in sorted(GRAPH.get(module, ())):
            if target in on_path:
                cycles.append(" -> ".join(path[path.index(target) :] + [target]))
            elif target not in done:
                on_path.add(target)
                visit(target, path + [target], on_path)
                on_path.discard(target)
        done.add(module)

    for module in sorted(MODULES):
        if module not in done:
            visit(module, [module], {module})
    # a package's __init__ importing its own submodules is not a cycle through other code
    real = [c for c in cycles if len({m for m in c.split(" -> ")}) > 1]
    assert not real, "\n".join(real)


def test_no_prefix_standing_in_for_a_package():
    crowded = []
    for folder in {path.parent for path in MODULES.values()}:
        if folder in PREFIX_ALLOWED:
            continue
        stems = [p.stem for p in folder.glob("*.py") if "_" in p.stem.strip("_")]
        prefixes = defaultdict(list)
        for stem in stems:
            prefixes[stem.split("_")[0]].append(stem)
        crowded += [f"{folder}: {sorted(v)}" for v in prefixes.values() if len(v) >= 3]
    assert not crowded, "\n".join(crowded)


def heavy_imports(module: str, tree: ast.AST) -> list[str]:
    """`module:line imports LIB` for every import of a `HEAVY` library `module` may not import."""
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            libs = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            libs = [node.module.split(".")[0]]
        else:
            continue
        for lib in libs:
            allowed = HEAVY.get(lib)
            if allowed is not None and not any(
                module == edge or (edge.endswith(".") and module.startswith(edge))
                for edge in allowed
            ):
                wrong.append(f"{module}:{node.lineno} imports {lib}")
    return wrong


def test_heavy_libraries_only_at_their_edges():
    wrong = []
    for module, path in MODULES.items():
        wrong += heavy_imports(module, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_a_planted_violation(tmp_path):
    """The rules above can fail: a wing importing a wing is caught by the same functions."""
    assert wing("gpuslo.slo.engine") == "slo" and tier("gpuslo.cli.check") == 2
    assert exporter_stage("gpuslo.exporter.evidence.pci") < exporter_stage(
        "gpuslo.exporter.policy.xid"
    )
    jobs, checks = "gpuslo.exporter.jobs.hpc", "gpuslo.exporter.checks.xid"
    assert exporter_stage(jobs) == exporter_stage(checks) and jobs.split(".")[2] in APART
    assert exporter_stage("gpuslo.exporter.newcomer") is None
    tree = ast.parse("def f():\n    from gpuslo.exporter import runner\n")
    assert not _top_level_imports(tree)
    planted = ast.parse("def f():\n    import pandas as pd\n")
    assert heavy_imports("gpuslo.exporter.runner", planted) == [
        "gpuslo.exporter.runner:2 imports pandas"
    ]
    assert not heavy_imports("gpuslo.slo.engine", planted)


def test_the_wheel_ships_no_development_script():
    """gpuslo/data/ is package data: the only code there is the NVML replay the demo and the
    checks import at run time; generators of checkout files live in tools/."""
    code = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "data").rglob("*.py"))
    assert code == ["data/nvml_replay/pynvml.py"]
