"""What each command imports at start-up (issue 30): `gpuslo inspect --help`, `gpuslo inspect FILE`
and `gpuslo check --help` load neither the report's nor the dashboards' libraries, `inspect --help`
loads no inspector and `check --help` no check, runner or Slurm client; `gpuslo report --data`
loads its reader only (no HTTP client, simulator or training-log reader), and the charts' module
only for HTML (never matplotlib: the charts are plain SVG). Read from `sys.modules` in a fresh
interpreter after the command ran; no timing is asserted (bench/cli_startup.py and
bench/report_files.py time them).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from gpuslo.cli import main
from gpuslo.exporter.inspect.kind_names import INSPECT_KINDS
from gpuslo.exporter.inspect.kinds import KINDS
from gpuslo.slo.report.inputs import LAZY_LOADERS, RENDERERS

DATA = Path(__file__).resolve().parent / "data"
# Libraries only the report, the simulator, the dashboards, the Recorder or the kubelet source use
# (tests/test_layout.py's HEAVY holds where each may be imported).
HEAVY = ("pandas", "numpy", "matplotlib", "grafanalib", "opentelemetry", "grpc", "requests")
_CHILD = """
import json, sys
from gpuslo.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def imported(*argv: str) -> tuple[int, set[str]]:
    """(exit code, names in sys.modules) after `gpuslo ARGV` in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=False
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_inspect_help_imports_the_parser_only():
    code, modules = imported("inspect", "--help")
    assert code == 0
    assert not heavy(modules)
    ours = sorted(m for m in modules if m.startswith("gpuslo"))
    assert ours == [
        "gpuslo", "gpuslo.cli", "gpuslo.cli.inspect_args", "gpuslo.cli.terminal",
        "gpuslo.errors", "gpuslo.exporter", "gpuslo.exporter.inspect",
        "gpuslo.exporter.inspect.kind_names", "gpuslo.metric_names", "gpuslo.names",
    ]
    assert "yaml" not in modules and "importlib.metadata" not in modules


def test_inspect_of_a_kernel_log_imports_no_heavy_library():
    log = DATA / "corpus/dev/cases/118_xid120-gsp-task-exception-riscv-register-dump.txt"
    code, modules = imported("inspect", str(log))
    assert code == 1  # the Xid is read: the work was done, not skipped
    assert "gpuslo.exporter.inspect.kinds" in modules
    assert not heavy(modules)
    # Detection imports the detectors (parsers) only; no other kind's inspector or policy loads.
    others = ("dcgm", "nvidia_smi", "nvidia_smi_findings", "fabric", "pcie", "schedulers",
              "daemon_logs", "health_event", "exporter_log")
    assert not {f"gpuslo.exporter.inspect.{name}" for name in others} & modules
    assert not {"gpuslo.exporter.policy.dcgm", "gpuslo.exporter.policy.gpu"} & modules
    # The Xid policy is read from its parsed copy (`gpuslo.packaged`): no YAML library.
    assert "yaml" not in modules


def test_an_inspector_is_imported_when_its_kind_is_read():
    log = DATA / "corpus/dev/cases/118_xid120-gsp-task-exception-riscv-register-dump.txt"
    code, modules = imported("inspect", "--kind", "nvidia-smi-q", str(log))
    assert code == 1  # not -q text: unknown
    assert "gpuslo.exporter.inspect.nvidia_smi" in modules


def test_a_usage_error_imports_no_inspector():
    code, modules = imported("inspect", "--kind", "no-such-kind", "x")
    assert code == 2
    assert "gpuslo.exporter.inspect.kinds" not in modules and not heavy(modules)


def test_check_help_imports_the_parser_only():
    """`gpuslo check --help` reads its arguments from `cli.check_args`: the static check names,
    the source flags and the Slurm options' limits, never the runner, a check, a policy, the
    YAML reader or the Slurm client."""
    code, modules = imported("check", "--help")
    assert code == 0
    assert not heavy(modules) and "gpuslo.goodput.calculator" not in modules
    ours = sorted(m for m in modules if m.startswith("gpuslo"))
    assert ours == [
        "gpuslo", "gpuslo.cli", "gpuslo.cli.check_args", "gpuslo.cli.source_args",
        "gpuslo.cli.terminal", "gpuslo.errors", "gpuslo.exporter", "gpuslo.exporter.checks",
        "gpuslo.exporter.checks.check_names", "gpuslo.exporter.slurm",
        "gpuslo.exporter.slurm.limits", "gpuslo.exporter.state", "gpuslo.files",
        "gpuslo.metric_names", "gpuslo.names",
    ]
    assert "yaml" not in modules and "importlib.metadata" not in modules


def test_a_check_usage_error_imports_no_check():
    code, modules = imported("check", "--check", "no-such-check")
    assert code == 2
    assert not {"gpuslo.cli.check", "gpuslo.exporter.runner", "gpuslo.exporter.checks.registry",
                "gpuslo.cli.slurm_check", "gpuslo.exporter.evidence.slurm"} & modules


def test_the_static_check_names_are_the_registry_and_the_gate():
    """`check_args` offers the registry's checks (`check_names.CHECKS`, which the registry
    imports) and the gate's check, named once in `names.GATE_CHECK`."""
    from gpuslo.cli import check_args
    from gpuslo.exporter.checks import registry
    from gpuslo.exporter.policy import return_to_service

    assert registry.CHECKS is check_args.CHECKS
    assert check_args.GATE == return_to_service.CHECK == "validation"


def test_the_static_kind_list_is_the_registry():
    """`--kind` choices (kind_names.INSPECT_KINDS) are exactly the inspectors, in detection
    order."""
    assert tuple(KINDS) == INSPECT_KINDS


def test_every_lazy_inspector_resolves():
    """The inspectors `KINDS` imports when they first read (`registry._Lazy`) exist: a module
    or a name misspelt there would fail only on that kind's evidence."""
    for kind, (_, inspector) in KINDS.items():
        module = getattr(inspector, "module", None)
        if module is not None:
            assert callable(getattr(importlib.import_module(module), inspector.name)), kind


def test_every_lazy_report_module_resolves():
    """The readers and renderers the report imports when used (`inputs.LAZY_LOADERS`,
    `RENDERERS`) exist and sit in the report's own wing (tests/test_layout.py cannot see an
    import by name)."""
    for key, (module, function) in {**LAZY_LOADERS, **RENDERERS}.items():
        assert module.startswith("gpuslo.slo."), key
        assert callable(getattr(importlib.import_module(module), function)), key


def test_a_report_from_files_imports_its_reader_only(tmp_path):
    assert main(["simulate", "--nodes", "1", "--days", "1", "--seed", "1",
                 "--out", str(tmp_path / "sim")]) == 0
    code, modules = imported("report", "--data", str(tmp_path / "sim"), "--format", "md,json",
                             "--out", str(tmp_path / "report"))
    assert code == 0 and (tmp_path / "report" / "report.json").exists()
    assert "gpuslo.slo.simulate.reading" in modules  # the work was done
    assert not {"requests", "matplotlib", "tqdm", "yaml"} & modules  # no --slo: no YAML read
    assert not {"gpuslo.slo.simulate.fleet", "gpuslo.slo.sources.training_logs",
                "gpuslo.slo.sources.query_api", "gpuslo.slo.report.plots"} & modules
    code, modules = imported("report", "--data", str(tmp_path / "sim"), "--format", "html",
                             "--out", str(tmp_path / "report"))
    assert code == 0 and "gpuslo.slo.report.plots" in modules  # the charts were drawn
    assert "matplotlib" not in modules  # as plain SVG (`report.svg`)


def test_inspect_with_a_kind_imports_no_other_kinds_parser():
    """With `--kind kernel-log` nothing is detected, so no detector loads (`registry._Lazy`):
    neither `inspect.detectors` nor the parsers of nvidia-smi, DCGM, the fabric tools, lspci or
    Slurm; without `--kind` detection loads them (the test above's file, read right either way)."""
    log = DATA / "corpus/dev/cases/118_xid120-gsp-task-exception-riscv-register-dump.txt"
    code, modules = imported("inspect", "--kind", "kernel-log", str(log))
    assert code == 1
    parsers = {"gpuslo.exporter.inspect.detectors", "gpuslo.exporter.evidence.lspci",
               "gpuslo.exporter.evidence.nvidia_smi.csv_output", "gpuslo.exporter.evidence.slurm",
               "gpuslo.exporter.evidence.dcgm.dcgmi", "gpuslo.exporter.evidence.fabric.tools"}
    assert not parsers & modules
    code, detected = imported("inspect", str(log))
    assert code == 1 and parsers <= detected


def test_what_inspect_forks_with_loads_no_recogniser():
    """Before `gpuslo inspect` forks the child that scans a large log's second part, it imports
    the scan and makes one (`kernel_log_scan.file_scan`, `halves.prestart`); neither loads the
    recognisers (their regular expressions) nor `dataclasses`: that start-up is on both
    processes' paths. The scan's recognisers load when it is first fed."""
    code = (
        "import sys, json\n"
        "from gpuslo.exporter.inspect.kernel_log_scan import file_scan\n"
        "scan, _, _ = file_scan()\n"
        "before = sorted(sys.modules)\n"
        "scan.feed('[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\\n')\n"
        "print(json.dumps([before, len(scan.finish())]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    before, events = json.loads(done.stdout)
    assert events == 1  # fed, the recognisers load and read the Xid
    assert not {"dataclasses", "calendar", "gpuslo.exporter.evidence.kernel_log.events",
                "gpuslo.exporter.evidence.kernel_log.parse",
                "gpuslo.exporter.evidence.kernel_log.splats"} & set(before)
