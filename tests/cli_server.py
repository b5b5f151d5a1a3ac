"""gpuslo's CLI behind a forking server, for tests that run it on hundreds of inputs.

`gpuslo goodput LOG` as a fresh process costs ~0.7 s here, nearly all of it Python's start-up and
the imports; the first-contact halves run it on ~1,100 real cases, which was most of the suite's
growth from 25 to 49 minutes (CI of stop 44: 2,943 s). The server pays start-up and imports once;
each command then runs in a child forked from it: its own process, its own exit code, standard
output and error (files, never pipes: a child writing much to both cannot block), and the same
`gpuslo.cli.main` a console script runs. Only the already-imported modules are shared.

Protocol (one JSON object a line each way, over the server's stdin/stdout):
    -> {"argv": [...], "stdout": PATH, "stderr": PATH, "timeout_s": N}
    <- {"returncode": int}   (negative: killed by that signal, e.g. -14 past timeout_s)

usage: CliServer() as a context manager; `.run(argv, timeout_s)` -> subprocess.CompletedProcess
(text). The server process itself: `python -m tests.cli_server` (started by CliServer).
"""
from __future__ import annotations

import importlib
import io
import json
import os
import pkgutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WARM_PACKAGES = ("gpuslo.cli", "gpuslo.goodput", "gpuslo.exporter")


class CliServer:
    """A running server; `run(argv)` behaves like `subprocess.run(["gpuslo", *argv],
    capture_output=True, text=True, timeout=timeout_s)`, except that a command past its timeout
    comes back with returncode -14 (SIGALRM) instead of raising."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="gpuslo-cli-server-")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli_server"], cwd=REPO, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (
                str(REPO), os.environ.get("PYTHONPATH"))))})

    def run(self, argv: list[str], timeout_s: float = 180) -> subprocess.CompletedProcess:
        out, err = Path(self._folder.name, "stdout"), Path(self._folder.name, "stderr")
        request = {"argv": list(argv), "stdout": str(out), "stderr": str(err),
                   "timeout_s": max(1, int(timeout_s))}
        assert self._process.stdin and self._process.stdout
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply = self._process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the CLI server exited (code {self._process.poll()})")
        code = json.loads(reply)["returncode"]
        return subprocess.CompletedProcess(["gpuslo", *argv], code, out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait(timeout=30)
        self._folder.cleanup()

    def __enter__(self) -> CliServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _warm() -> None:
    """Import every module the commands under test may reach, so no child imports one, and build
    the packaged log profiles."""
    for name in WARM_PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            try:
                importlib.import_module(module.name)
            except ImportError:  # an optional edge (grpc, kubernetes) the commands here never use
                continue
    from gpuslo.goodput.logs.profiles import load_profiles
    load_profiles()  # the packaged log profiles, built once (cached) for every child


def _child(request: dict) -> None:
    """In the forked child: standard streams to the request's files, run the CLI, exit."""
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=False)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(request["timeout_s"])
    code = 1
    try:
        from gpuslo.cli import main
        code = main(request["argv"])
    except SystemExit as leaving:  # argparse's own exits (--help, a bad option)
        code = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 2)
    except BaseException:  # noqa: BLE001 - a traceback is the answer the test must see
        import traceback
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    _warm()
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve()
