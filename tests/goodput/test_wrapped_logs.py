"""Metamorphic: a training log wrapped by its launcher or collector reads as the raw log does.

For a deterministic sample of the scored halves' real logs (every half with a first-contact record
in tests/data/first_contact/, and dev), each wrapper of `tests.log_wrappers` is applied and gpuslo
reads both through the reader first contact uses (`gpuslo goodput LOG --format json --gpus 1`, in
this process). The facts the shared checker judges (steps, median step time, saves, restarts, hang,
failure, slowdowns, goodput known or not) must be the same, whether or not the raw answer is right.

A collector's stamp (kubectl, docker, journald, `ts`, CRI) is a clock: it dates the lines that have
no stamp of their own, so timing facts the raw log could not give may appear (`compared`); a
fact the raw log gave must stay (the trainer's own clock, durations and rates win).

`SAMPLE` cases per wrapper, chosen by a hash of the wrapper's and the case's names (the same
every run); `python -m tests.goodput.test_wrapped_logs [N]` runs N per wrapper (0: all) and
prints each difference.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path

import pytest

from gpuslo.cli import main
from tests.first_contact import LOGS, REPO, training_log_cases
from tests.log_wrappers import COLLECTOR_CLOCKS, WRAPPERS

SAMPLE = 8
POOL = 48  # cases the samples are drawn from (each read raw once)


def scored_halves() -> list[str]:
    record = REPO / "tests" / "data" / "first_contact"
    return sorted(h.name for h in LOGS.iterdir() if h.is_dir() and (
        h.name == "dev" or any(record.glob(f"training_logs_{h.name}_*.txt"))))


def all_logs() -> list[Path]:
    return sorted({log for half in scored_halves() for _, log in training_log_cases(half)
                   if log.is_file()})


def _rank(*names: str) -> str:
    return hashlib.sha1("|".join(names).encode()).hexdigest()


def sample(wrapper: str, per: int, logs: list[Path]) -> list[Path]:
    """`per` logs for `wrapper` (0: all), by hash: the same every run."""
    chosen = sorted(logs, key=lambda p: _rank(wrapper, p.name))
    return chosen if per == 0 else chosen[:per]


def read(path: Path) -> dict:
    out = io.StringIO()
    with (contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()),
          contextlib.suppress(SystemExit)):
        main(["goodput", str(path), "--format", "json", "--gpus", "1"])
    try:
        return json.loads(out.getvalue())
    except json.JSONDecodeError:
        return {}


def judged(doc: dict) -> dict:
    """The facts the shared checker judges, from one gpuslo answer."""
    steps = doc.get("steps") or {}
    block = doc.get("goodput")
    goodput = block.get("goodput") if isinstance(block, dict) else block
    median = (doc.get("step_time_s") or {}).get("median")
    return {
        "steps": (steps.get("first"), steps.get("last")),
        "saves": sorted(str(s.get("step")) for s in doc.get("checkpoint_saves") or []),
        "restarts": len(doc.get("restarts") or []),
        "failure": bool(doc.get("interruptions")),
        "goodput_known": goodput is not None,
        "parsed": bool(doc),
        "step_time": None if median is None else float(f"{median:.3g}"),
        "save_s": sorted(round(s["seconds"], 1) for s in doc.get("checkpoint_saves") or []
                         if s.get("seconds") is not None),
        "hang": bool(doc.get("hangs")),
        "slowdowns": sorted((s.get("from_step"), round(s.get("ratio") or 0, 2))
                            for s in doc.get("slowdowns") or []),
    }


TIMING = ("step_time", "save_s", "hang", "slowdowns")


def compared(raw: dict, wrapper: str) -> set[str]:
    """The facts a wrapper must leave as they are: all, but under a collector's clock a timing
    fact the raw log could not give (None, none) may appear (a line without a stamp of its own
    is dated by the collector), and where the raw log has no clock of its own (`span_from`
    not `timestamps`) hangs, slowdowns and save times may too (the collector's are then the
    only times); a step time the raw log gave (from durations or rates) must stay."""
    facts = set(judged(raw))
    if wrapper not in COLLECTOR_CLOCKS:
        return facts
    facts -= {key for key in TIMING if not judged(raw)[key]}
    if raw.get("span_from") != "timestamps":
        facts -= {"save_s", "hang", "slowdowns"}
    return facts


def differences(per: int) -> list[str]:
    logs = all_logs()
    pool = sorted(logs, key=lambda p: _rank("pool", p.name))[:POOL] if per else logs
    raw: dict[Path, dict] = {}
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wrap in WRAPPERS.items():
            for log in sample(name, per, pool):
                if log not in raw:
                    raw[log] = read(log)
                wrapped = Path(tmp) / f"{name}_{log.name}"
                text = log.read_bytes().decode("utf-8", errors="surrogateescape")
                wrapped.write_bytes(wrap(text).encode("utf-8", errors="surrogateescape"))
                want, got = judged(raw[log]), judged(read(wrapped))
                diff = {k: (want[k], got[k]) for k in compared(raw[log], name)
                        if want[k] != got[k]}
                if diff:
                    out.append(f"{name} {log.parent.parent.name}/{log.name}: {diff}")
    return out


@pytest.mark.timeout(300)
def test_wrapped_logs_read_as_the_raw_ones():
    assert differences(SAMPLE) == []


if __name__ == "__main__":
    found = differences(int(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE)
    print("\n".join(found) or "no differences")
    print(len(found), "differences")
