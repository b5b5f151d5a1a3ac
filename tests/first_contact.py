"""First contact: real inputs nobody tuned for, run through gpuslo as a new user would.

Two corpora of real public excerpts, each split by source into a `dev` half (built on) and a
`holdout` half (run once, at the end, its score recorded before any holdout case was looked at):
- training logs: tests/data/training_logs/{dev,holdout}/expected_{a,b}.yaml + cases/ (issue 23);
- GPU-node evidence: tests/data/corpus/{dev,holdout}/expected.yaml + cases/ (issue 24).

The rules are the shared checkers' own (../shared/tools/check_training_logs.py and
check_corpus.py), not a copy. The training-log check adds one rule the shared checker lacks: where
the hand-computed facts say `goodput_knowable: false` (the lines show no commit evidence), gpuslo
must not give a goodput number; where they say `true`, it must give one. `partial` is not judged.

usage: python -m tests.first_contact training_logs|corpus dev|holdout
-> one line per failing case, then "N/M read right"; exit 0.
"""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cli_server import CliServer

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
LOGS = REPO / "tests" / "data" / "training_logs"
CORPUS = REPO / "tests" / "data" / "corpus"


def shared_training_log_rules():
    """`problems(facts, output) -> [str]` from the shared checker, without running its main()."""
    path = SHARED / "tools" / "check_training_logs.py"
    source = path.read_text().rsplit("\nmain()", 1)[0]
    namespace: dict = {"__file__": str(path), "__name__": "check_training_logs"}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - our own shared tool
    return namespace["problems"]


def knowable_problems(facts: dict, output: dict) -> list[str]:
    said = str(facts.get("goodput_knowable", "")).strip().lower()
    block = output.get("goodput")  # with --gpus: {status, goodput (the ratio or null), reason, ...}
    goodput = block.get("goodput") if isinstance(block, dict) else block
    if said.startswith("false") and goodput is not None:
        return [f"goodput {goodput!r} given where the lines show no commit evidence"]
    if said.startswith("true") and goodput is None:
        return ["goodput unknown although the lines show commit evidence"]
    return []


def training_log_cases(half: str) -> list[tuple[dict, Path]]:
    cases = []
    for expected in sorted((LOGS / half).glob("expected_*.yaml")):
        for entry in yaml.safe_load(expected.read_text()) or []:
            cases.append((entry, (LOGS / half) / entry["file"]))
    return cases


def read_training_log(server: CliServer, log: Path) -> dict:
    done = server.run(["goodput", str(log), "--format", "json", "--gpus", "1"], timeout_s=180)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"_error": f"no JSON (exit {done.returncode}): {done.stderr.strip()[-200:]}"}


def training_log_failures(half: str) -> dict[str, str]:
    """{case id: why} for every case of the half gpuslo reads wrong."""
    problems = shared_training_log_rules()
    failures = {}
    with CliServer() as server:
        for entry, log in training_log_cases(half):
            output = read_training_log(server, log)
            facts = entry.get("facts") or {}
            bad = [output["_error"]] if "_error" in output else (
                problems(facts, output) + knowable_problems(facts, output))
            if bad:
                failures[str(entry["case"])] = "; ".join(bad)
    return failures


def corpus_failures(half: str) -> tuple[dict[str, str], int]:
    """({case: why} for failing evidence cases, number of cases) by the shared check_corpus.py's own
    main(), its `gpuslo inspect` processes forked from a CLI server (tests/cli_server.py)."""
    path = SHARED / "tools" / "check_corpus.py"
    source = path.read_text().rsplit("\nmain()", 1)[0]
    namespace: dict = {"__file__": str(path), "__name__": "check_corpus"}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - our own shared tool
    printed, argv = io.StringIO(), sys.argv
    with CliServer() as server:
        namespace["subprocess"] = _ForkedSubprocess(server)
        sys.argv = ["check_corpus.py", "gpuslo", str(CORPUS / half / "expected.yaml"),
                    str(CORPUS / half / "cases")]
        try:
            with contextlib.redirect_stdout(printed):
                namespace["main"]()
        except SystemExit:
            pass
        finally:
            sys.argv = argv
    failures = {}
    for line in printed.getvalue().splitlines():
        if line.startswith("FAIL "):
            case, _, why = line[5:].partition(":")
            failures[case.strip()] = why.strip()
    total = len(yaml.safe_load((CORPUS / half / "expected.yaml").read_text()) or [])
    return failures, total


class _ForkedSubprocess:
    """What check_corpus.py calls as `subprocess.run([gpuslo, *argv], capture_output=True,
    text=True, timeout=N)`, answered by the CLI server."""

    def __init__(self, server: CliServer) -> None:
        self._server = server

    def run(self, cmd: list[str], timeout: float = 180, **_) -> subprocess.CompletedProcess:
        return self._server.run(cmd[1:], timeout_s=timeout)


def main(argv: list[str]) -> int:
    kind, half = argv
    if kind == "training_logs":
        failures, total = training_log_failures(half), len(training_log_cases(half))
    else:
        failures, total = corpus_failures(half)
    for case, why in sorted(failures.items()):
        print(f"FAIL {case}: {why}")
    print(f"{total - len(failures)}/{total} read right")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
