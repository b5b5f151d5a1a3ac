"""What the command line shows: usage errors in one line ending in `see gpuslo COMMAND --help`,
numeric flags bounded with one-line errors (no traceback for 1e308, inf, nan or 1e12), `gpuslo
check` text that cuts neither messages nor UUIDs, and progress bars that stay off when stderr is
not a terminal (and draw on one)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pytest

from gpuslo.cli import main
from gpuslo.cli.check import render_text
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import CheckResult
from tests.conftest import REPO

GPUSLO = (sys.executable, "-c", "from gpuslo.cli import entry_point; entry_point()")


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse exits from inside parse_args
        code = stop.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["report", "--bogus"], "report"),
        (["check", "--format", "xml"], "check"),
        (["simulate", "--nodes", "many", "--out", "x"], "simulate"),
        (["bogus"], None),
    ],
)
def test_a_usage_error_is_one_line_with_a_help_pointer(argv, command, capsys):
    code, err = _run(argv, capsys)
    prog = f"gpuslo {command}" if command else "gpuslo"
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"{prog}: error: ") and err.strip().endswith(f"see {prog} --help")
    assert "usage:" not in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["report", "--data", "x", "--price-per-gpu-hour", value], "--price-per-gpu-hour")
        for value in ("1e308", "inf", "nan", "-1")
    ]
    + [(["check", "--check", "pcie", "--check-timeout", "1e12"], "--check-timeout")]
    # --gpus past the journal's bound was a ValueError traceback, exit 1 (a newcomer, round 8)
    + [([command, *where, "--gpus", value], "--gpus")
       for command, where in (("goodput", ["x.log"]), ("report", ["--training-log", "x.log"]))
       for value in ("2000000", "0", "eight")],
)
def test_numeric_flags_are_bounded_with_one_line_errors(argv, flag, capsys):
    code, err = _run(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert flag in err and "expected" in err and "Traceback" not in err


def test_version_is_printed_on_stdout_and_exits_0(capsys):
    """Issue (a newcomer's `gpuslo --version | cut ...` got nothing): argparse's own `version`
    action prints on stdout since Python 3.4; ours printed on stderr."""
    import gpuslo

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    captured = capsys.readouterr()
    assert stop.value.code in (0, None)
    assert captured.out == f"gpuslo {gpuslo.__version__}\n" and captured.err == ""


def test_check_text_cuts_no_message_and_no_uuid():
    uuid = "GPU-55555555-0000-1111-2222-333333333333"
    message = (
        "uncorrectable ECC errors: volatile 3, aggregate 7; a remapped row waits for a GPU reset "
        "and the recovery action asks for a drain and reset before the GPU takes work again"
    )
    results = [
        CheckResult("gpu_memory", uuid, "fail", "ecc_uncorrectable", message=message, gpu="0"),
        CheckResult("dcgm", "node", "unknown", "dependency_missing", message="no dcgm-exporter"),
    ]
    snapshot = NodeSnapshot(node="n1", results=results)
    text = render_text(snapshot)
    assert message in text and uuid in text
    header, first, second = text.splitlines()[:3]
    assert header.index("MESSAGE") == first.index(message) == second.index("no dcgm-exporter")


def _on_a_terminal(argv: list[str], cwd) -> str:
    """stderr of `gpuslo argv` run with stderr on a pseudo-terminal (120 columns)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [*GPUSLO, *argv],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    os.close(follower)
    out = b""
    while select.select([leader], [], [], 120)[0]:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    assert process.wait(timeout=120) == 0
    return out.decode(errors="replace")


def test_progress_draws_on_a_terminal_and_stays_off_in_a_pipe(tmp_path):
    argv = ["simulate", "--nodes", "2", "--days", "1", "--out", str(tmp_path / "sim")]
    piped = subprocess.run(
        [*GPUSLO, *argv], capture_output=True, text=True, timeout=120
    )
    assert piped.returncode == 0 and piped.stderr == ""
    drawn = _on_a_terminal([*argv[:-1], str(tmp_path / "sim2")], tmp_path)
    assert "gpuslo simulate: simulating the fleet: 0/2" in drawn
    assert "gpuslo simulate: writing files: 1/2" in drawn


DIRECTORY_FLAGS = {
    "demo": ["demo", "--no-prometheus", "--out", "{}"],
    "check": ["check", "--check", "xid", "--state-dir", "{}"],
    "exporter": ["exporter", "--once", "--state-dir", "{}"],
    "report": ["report", "--training-log", str(REPO / "tests" / "goodput" / "data"
                                               / "torchtitan_crash_restart.log"),
               "--gpus", "8", "--out", "{}"],
    "rules": ["rules", "--out", "{}"],
    "dashboards": ["dashboards", "--out", "{}"],
}


@pytest.mark.parametrize("command", sorted(DIRECTORY_FLAGS))
@pytest.mark.parametrize("below", [False, True])
def test_a_file_where_a_directory_goes_is_a_usage_error(command, below, tmp_path, capsys):
    """Issue 25 (a newcomer's run): `demo --out FILE` was a traceback, `check --state-dir FILE`
    a FileExistsError per check, `report --out FILE` "File exists" after the whole run."""
    afile = tmp_path / "afile"
    afile.write_text("keep me\n")
    target = afile / "sub" if below else afile
    argv = [a.format(target) for a in DIRECTORY_FLAGS[command]]
    code = main(argv)
    err = capsys.readouterr().err
    flag = argv[-2]
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"gpuslo {command}: error: {flag} {target}: not a directory"), err
    assert afile.read_text() == "keep me\n"
