"""What bench/attack.py's scenarios share: the checkout and its tests on `sys.path` (the
hostile peers and bad-file tables live in tests/), a `gpuslo` command run in this process with
its output and exit code, and the one-line-error target every scenario checks."""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gpuslo.cli import main  # noqa: E402


def run_cli(argv: list[str]) -> tuple[int | None, str, str]:
    """(exit code, stdout, stderr) of `gpuslo ARGV` in this process; a code of None and the
    traceback as stderr when it raised."""
    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # has .buffer
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException:  # noqa: BLE001 - what the attack counts
            code, err = None, io.StringIO(traceback.format_exc())
    out.flush()
    return code, raw.getvalue().decode("utf-8", errors="replace"), err.getvalue()


def one_line_error(code: int | None, err: str) -> bool:
    return code == 2 and err.count("\n") == 1 and "Traceback" not in err
