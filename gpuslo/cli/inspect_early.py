"""What `gpuslo inspect` starts before its own imports (issue 30; `gpuslo.cli` calls `prepare`
between parsing the arguments and importing `gpuslo.cli.inspect`, whose detectors, inspectors and
policy take ~0.1 s of one core): for the first FILE that is a large regular file, with `--kind`
none or kernel-log, a child process starts scanning its second part as a kernel log
(`halves.prestart`), beside those imports and the detection of the file's head. Its result is
used only if the file is then streamed as a kernel log with the same options; else it is stopped.
"""

from __future__ import annotations

import argparse

from gpuslo.exporter.evidence.kernel_log import halves
from gpuslo.exporter.inspect.kernel_log_scan import KIND, file_scan


def prepare(args: argparse.Namespace) -> None:
    """Start the early scan of the first FILE that qualifies (see the module docstring)."""
    if args.kind not in (None, KIND):
        return
    for path in args.files:
        if path != "-" and halves.prestart(path, file_scan):
            return
