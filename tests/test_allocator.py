"""The console script keeps freed memory and asks numpy for no huge-page advice for `gpuslo
report` only (`gpuslo.cli.allocator`, `gpuslo.cli.KEEP_FREED`), a user's NUMPY_MADVISE_HUGEPAGE
kept, and glibc accepts the thresholds it sets. Each runs in a child
interpreter, so this test process keeps glibc's defaults; no timing is asserted
(bench/report_files.py times it)."""

from __future__ import annotations

import json
import os
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
import os
huge = os.environ.get("NUMPY_MADVISE_HUGEPAGE")
print(json.dumps({"code": code, "set": calls, "huge": huge}), file=sys.stderr)
"""


def _child(*argv: str, huge: str | None = None) -> dict:
    """What the console script's process of `gpuslo ARGV` did, NUMPY_MADVISE_HUGEPAGE set to
    `huge` before it started (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if huge is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = huge
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True,
                          text=True, check=False, env=env)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_only_the_batch_report_keeps_freed_memory(tmp_path):
    assert main(["simulate", "--nodes", "1", "--days", "1", "--seed", "1",
                 "--out", str(tmp_path / "sim")]) == 0
    report = _child("report", "--data", str(tmp_path / "sim"), "--format", "json",
                    "--out", str(tmp_path / "out"))
    assert report["code"] == 0 and len(report["set"]) == 1 and report["huge"] == "0"
    assert (tmp_path / "out" / "report.json").exists()
    assert _child("inspect", "--help") == {"code": 0, "set": [], "huge": None}
    assert _child("check", "--help") == {"code": 0, "set": [], "huge": None}


def test_a_users_huge_page_setting_is_kept(tmp_path):
    assert main(["simulate", "--nodes", "1", "--days", "1", "--seed", "1",
                 "--out", str(tmp_path / "sim")]) == 0
    report = _child("report", "--data", str(tmp_path / "sim"), "--format", "json",
                    "--out", str(tmp_path / "out"), huge="1")
    assert report["code"] == 0 and report["huge"] == "1"


@pytest.mark.skipif(sys.platform != "linux", reason="numpy advises huge pages on Linux only")
def test_numpy_takes_the_advice_at_import():
    """The variable is what numpy reads when imported (its `hugepage_setup`): with it at 0, numpy
    reports the advice off (`_set_madvise_hugepage` returns the setting it replaces)."""
    code = ("from gpuslo.cli.allocator import no_huge_page_advice; no_huge_page_advice()\n"
            "import numpy\nfrom numpy._core import multiarray\n"
            "print(multiarray._set_madvise_hugepage(False))")
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    assert done.stdout.strip() == "False"
    plain = subprocess.run([sys.executable, "-c", code.split("\n", 1)[1]], capture_output=True,
                           text=True, check=True, env=env)
    assert plain.stdout.strip() == "True"  # the negative: numpy's own default advises them


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_accepts_both_thresholds():
    done = subprocess.run(
        [sys.executable, "-c",
         "from gpuslo.cli.allocator import keep_freed_memory; print(keep_freed_memory())"],
        capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
