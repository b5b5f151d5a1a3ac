"""Where `gpuslo inspect FILE`'s own process spends its CPU, step by step (issue 30): the CPU
seconds (`time.process_time`) between the steps `gpuslo.cli.main` takes for one file, so a
change to the start-up can be told from noise on a loaded machine (bench/kernel_log_scan.py
gives the totals). The steps: parsing the arguments, `prepare` (for a large file, the imports
and the fork of the child that scans its second part, `cli.inspect_early`), importing
`gpuslo.cli.inspect`, the options and the Xid policy, whether the file streams as a kernel log
(the detectors on its head), the scan or the read and the findings, the JSON. Prints one line:
each step in ms, the total (the interpreter's start included) and the gpuslo modules loaded.

usage: python bench/inspect_phases.py inspect FILE [inspect options]
"""

from __future__ import annotations

import importlib
import json
import sys
import time

_clock = time.process_time
_marks = [("start", _clock())]

from gpuslo.cli import _prepare, build_parser  # noqa: E402 - the clock starts before it


def main(argv: list[str]) -> int:
    args = build_parser("inspect").parse_args(argv)
    _marks.append(("parse", _clock()))
    _prepare(args)
    _marks.append(("prepare (fork)", _clock()))
    cli = importlib.import_module("gpuslo.cli.inspect")
    _marks.append(("import cli.inspect", _clock()))
    options = cli.options_from_args(args)
    _marks.append(("options (policy)", _clock()))
    from gpuslo.exporter.inspect import kernel_log, kinds

    path = args.files[0]
    streams = kinds.streams_as_kernel_log(path, args.kind)
    _marks.append(("detect the head", _clock()))
    if streams:
        findings = kernel_log.inspect_kernel_log_file(path, options)
    else:
        findings = kinds.inspect_path(path, options, args.kind)
    _marks.append(("scan and findings", _clock()))
    json.dumps([finding.to_dict() for finding in findings])
    _marks.append(("json", _clock()))
    steps = [f"{name} {1000 * (end - start):.0f}"
             for (_, start), (name, end) in zip(_marks, _marks[1:], strict=False)]
    ours = sum(1 for module in sys.modules if module.startswith("gpuslo"))
    print(" | ".join(steps), f"| total {1000 * _marks[-1][1]:.0f} ms, {ours} gpuslo modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] if sys.argv[1:2] == ["inspect"] else ["inspect", *sys.argv[1:]]))
