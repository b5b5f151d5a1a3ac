"""The `gpuslo` command line: the one place that turns errors into messages and exit codes.

Each subcommand lives in its own module with `configure(parser)` and `run(args) -> int`; only the
module of the subcommand being run is imported, so `gpuslo inspect` does not pay for pandas, and
a command may keep its arguments in a module of their own (`ARGUMENTS`), imported alone for
`--help`; tests/test_startup.py holds the import sets.
Library code raises `gpuslo.errors.GpusloError` subclasses; this module prints them as one line
on stderr and exits with the error's `exit_code` (2); a usage error is one line too, ending in
`see gpuslo COMMAND --help` (`gpuslo.cli.terminal`). Exit 0/1 are the command's own answer.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence

import gpuslo
from gpuslo.cli.terminal import Parser, reader_may_leave
from gpuslo.errors import GpusloError

# name: (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "exporter": ("gpuslo.cli.exporter", "serve /metrics on a GPU node (checks every 30 s)"),
    "check": ("gpuslo.cli.check", "run the node checks once (text, JSON or NPD plugin)"),
    "inspect": ("gpuslo.cli.inspect", "triage captured evidence and print findings and a verdict"),
    "report": ("gpuslo.cli.report", "goodput / usable-GPU-hours report (a week or any window)"),
    "goodput": ("gpuslo.cli.goodput", "goodput facts from the training logs jobs already print"),
    "serving-log": ("gpuslo.cli.serving_log",
                    "a serving replica's timeline from its engine log (vLLM, SGLang, TGI, Triton)"),
    "rules": ("gpuslo.cli.rules", "write Prometheus recording and alert rules and their tests"),
    "dashboards": ("gpuslo.cli.dashboards", "write Grafana dashboards"),
    "simulate": ("gpuslo.cli.simulate", "write a synthetic fleet (demo and benchmarks)"),
    "demo": ("gpuslo.cli.demo", "the quick start: everything above on bundled data"),
}
# command: the module holding its `configure` when that is not the command's module, so that
# `--help` and a usage error import the parser only (`gpuslo inspect`'s module imports every
# inspector and the Xid policy's YAML; its arguments need the kind names, `inspect.kind_names`)
ARGUMENTS: dict[str, str] = {
    "inspect": "gpuslo.cli.inspect_args",
    "check": "gpuslo.cli.check_args",  # not the runner, the checks or Slurm
}
# command: a module whose `prepare(args)` runs before the command's module is imported (`gpuslo
# inspect` of a large kernel log: a child process starts its scan, `gpuslo.cli.inspect_early`)
EARLY: dict[str, str] = {"inspect": "gpuslo.cli.inspect_early"}
# batch commands whose console-script process keeps the memory it frees for reuse
# (`gpuslo.cli.allocator`: a 10,000-GPU report faults half the pages)
KEEP_FREED = frozenset({"report"})


class _Version(argparse.Action):
    """`--version`, looked up only when asked for (`gpuslo.__version__` reads the installed
    package's metadata, a tenth of a second every command would otherwise pay). Printed on
    stdout, exit 0, as argparse's own `version` action does since Python 3.4 (bpo-18920), so
    `gpuslo --version | ...` captures it."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"gpuslo {gpuslo.__version__}", file=sys.stdout, flush=True)
        parser.exit()


def _selected(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def build_parser(selected: str | None) -> argparse.ArgumentParser:
    """The top-level parser; only `selected`'s module is imported to add its arguments. Usage
    errors are one line (`terminal.Parser`); an argument the command does not know is reported
    by this parser, so its hint names the command's help."""
    parser = Parser(
        prog="gpuslo",
        description=(
            "Fail-closed GPU node checks, a Prometheus exporter and a GPU-hours SLO engine."
        ),
    )
    parser.name = f"gpuslo {selected}" if selected else "gpuslo"
    parser.hint = f"{parser.name} --help"
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            importlib.import_module(ARGUMENTS.get(name, module)).configure(command_parser)
    return parser


def _prepare(args: argparse.Namespace) -> None:
    """`prepare(args)` of the command's `EARLY` module: work that starts before the command's
    own imports."""
    if args.command in EARLY:
        importlib.import_module(EARLY[args.command]).prepare(args)


def main(argv: Sequence[str] | None = None, freeze_imports: bool = False) -> int:
    """Run the CLI; returns the exit code. `freeze_imports` (the console script's process, not
    a caller's): the collector is off while the command's modules are imported (their ~10^5
    objects, pandas' and matplotlib's, live as long as the process: collecting while they are
    made finds nothing to free; `gpuslo report`'s imports ~0.06 s less CPU), then `gc.freeze()`
    moves them out of its reach, so each full collection stops walking them (`gpuslo report` at
    10,000 GPUs: ~0.3 s less CPU, bench/report_files.py), and it is on again for the command.
    It also keeps freed memory in the process for the `KEEP_FREED` commands and asks numpy for
    no huge-page advice there, both set before their imports (`gpuslo.cli.allocator`).
    Standard output's reader may close it early (`gpuslo inspect F | head -1`): the command runs
    on and returns its own code (`terminal.reader_may_leave`), never 0 for a closed pipe."""
    with reader_may_leave():
        return _main(list(sys.argv[1:] if argv is None else argv), freeze_imports)


def _main(argv: list[str], freeze_imports: bool) -> int:
    """`main` inside the standard-output guard."""
    if freeze_imports:
        if _selected(argv) in KEEP_FREED:
            allocator = importlib.import_module("gpuslo.cli.allocator")
            allocator.keep_freed_memory()
            allocator.no_huge_page_advice()  # before the command's imports bring in numpy
        gc.disable()
    try:
        selected = _selected(argv)
        parser = build_parser(selected)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        _prepare(args)
        module = importlib.import_module(COMMANDS[args.command][0])
    finally:
        if freeze_imports:
            gc.freeze()
            gc.enable()
    try:
        return int(module.run(args))
    except GpusloError as error:
        # one line, whatever a library put in the message (pandas ends some with a newline)
        said = " ".join(part.strip() for part in str(error).splitlines() if part.strip())
        print(f"gpuslo {args.command}: error: {said}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as error:  # not standard output's (that one is guarded): a pipe the
        # command itself wrote to broke, so its answer is not known
        print(f"gpuslo {args.command}: error: a pipe closed before the command finished "
              f"({error.strerror or error})", file=sys.stderr)
        return 2


def entry_point() -> None:
    """Console-script entry point."""
    sys.exit(main(freeze_imports=True))


if __name__ == "__main__":
    entry_point()
