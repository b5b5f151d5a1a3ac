"""The console script keeps freed memory for `gpuslo report` only (`gpuslo.cli.allocator`,
`gpuslo.cli.KEEP_FREED`), and glibc accepts the thresholds it sets. Each runs in a child
interpreter, so this test process keeps glibc's defaults; no timing is asserted
(bench/report_files.py times it)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from gpuslo.cli import main

# the console script's process (`entry_point`), reporting whether the allocator was set
_CHILD = """
import json, sys
from unittest import mock
from gpuslo.cli import allocator, main
calls = []
real = allocator.keep_freed_memory
with mock.patch.object(allocator, "keep_freed_memory", lambda: calls.append(real()) or True):
    try:
        code = main(sys.argv[1:], freeze_imports=True)
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code, "set": calls}), file=sys.stderr)
"""


def _child(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True,
                          text=True, check=False)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_only_the_batch_report_keeps_freed_memory(tmp_path):
    assert main(["simulate", "--nodes", "1", "--days", "1", "--seed", "1",
                 "--out", str(tmp_path / "sim")]) == 0
    report = _child("report", "--data", str(tmp_path / "sim"), "--format", "json",
                    "--out", str(tmp_path / "out"))
    assert report["code"] == 0 and len(report["set"]) == 1
    assert (tmp_path / "out" / "report.json").exists()
    assert _child("inspect", "--help") == {"code": 0, "set": []}
    assert _child("check", "--help") == {"code": 0, "set": []}


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_accepts_both_thresholds():
    done = subprocess.run(
        [sys.executable, "-c",
         "from gpuslo.cli.allocator import keep_freed_memory; print(keep_freed_memory())"],
        capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
