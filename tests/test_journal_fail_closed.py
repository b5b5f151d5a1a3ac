"""Issue 12, journals: every malformed line is a ParseError naming file and line, later lines
still count, numbers are bounded at parse time, and nothing a file holds raises."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.goodput import compute_goodput
from gpuslo.goodput.journal import MAX_LINE_BYTES, JournalReader, encode_line, event, parse_journal

START = encode_line(event("job_start", 1000.0, job="j", node="n", gpus=8))
STEPS = encode_line(event("steps", 1600.0, step=10, first_step=1, first_t=1060.0, count=10))
CHECKPOINT = encode_line(event("checkpoint", 1600.0, step=10))
HOSTILE = [
    '{"v": 1, "t": 1100, "event": {}}',  # was TypeError: unhashable dict
    '{"v": 1, "t": 1100, "event": []}',
    '{"v": 1, "t": 1e308, "event": "checkpoint", "step": 1}',  # was +Inf in the sums
    '{"v": 1, "t": 1100, "event": "restart", "from_step": 0, "gpus": 1' + "0" * 400 + "}",
    '{"v": 1, "t": 1100, "event": "job_end", "status": {"a": 1}}',
    '{"v": 1, "t": 1100, "event": "job_end", "status": "failed", "layer": ["node"]}',
    '{"v": 1, "t": 1100, "event": "phase_start", "category": 7}',
    '{"v": 1, "t": 1100, "event": "steps", "step": 5, "first_t": NaN}',
    '{"v": true, "t": 1100, "event": "checkpoint", "step": 1}',
    '{"v": 1, "t": -5, "event": "checkpoint", "step": 1}',
    "[" * 100_000,  # nesting deeper than the JSON decoder's recursion limit
    '"just a string"',
]


def test_every_hostile_line_is_a_problem_naming_file_and_line_and_later_lines_count() -> None:
    text = START + "\n".join(HOSTILE) + "\n" + STEPS + CHECKPOINT
    events, problems = parse_journal(text, "j.jsonl")
    assert [e["event"] for e in events] == ["job_start", "steps", "checkpoint"]
    assert problems and all(isinstance(p, ParseError) and p.source == "j.jsonl" for p in problems)
    assert all(2 <= p.line <= 1 + len(HOSTILE) for p in problems)
    goodput = compute_goodput(events)
    assert goodput.gpu_seconds["productive"] == 600 * 8
    assert all(math.isfinite(v) for v in goodput.gpu_seconds.values())


def test_gpus_beyond_any_node_is_refused_at_parse_time() -> None:
    line = encode_line(event("job_start", 1000.0, job="j", node="n", gpus=10**400))
    events, problems = parse_journal(line, "j.jsonl")
    assert events == [] and "gpus" in str(problems[0])


def test_invalid_utf8_and_long_lines_are_skipped_not_fatal() -> None:
    data = START.encode() + b'{"v":1,"t":1100,"event":"checkpoint","step":\xff}\n'
    data += b'{"pad": "' + b"x" * MAX_LINE_BYTES + b'"}\n' + STEPS.encode() + CHECKPOINT.encode()
    events, problems = parse_journal(data, "j.jsonl")
    assert [e["event"] for e in events] == ["job_start", "steps", "checkpoint"]
    assert [(p.line, p.detail.split(";")[0]) for p in problems] == [
        (2, "line is not valid UTF-8"),
        (3, f"line longer than {MAX_LINE_BYTES} bytes"),
    ]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_fields = st.sampled_from(["v", "t", "event", "job", "gpus", "node", "step", "first_step",
                           "first_t", "count", "from_step", "layer", "status", "category"])
_events = st.dictionaries(_fields, _json | st.sampled_from(["job_start", "steps", "restart",
                          "job_end", "checkpoint", "phase_start", "node", 1]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(_events | _json, max_size=6), st.binary(max_size=40))
def test_fuzz_no_line_raises_and_sums_stay_finite(values: list, junk: bytes) -> None:
    reader = JournalReader("fuzz.jsonl")
    lines = [START.rstrip("\n").encode()] + [json.dumps(v).encode() for v in values] + [junk]
    events = [e for e in map(reader.feed_line, lines) if e is not None]
    goodput = compute_goodput(events)
    assert all(math.isfinite(v) for v in goodput.gpu_seconds.values())
    assert all(isinstance(p, ParseError) for p in reader.problems)


def test_report_journals_skips_hostile_journals_and_fifos(tmp_path) -> None:
    """`report --journals`: a FIFO named *.jsonl is not opened (it would block forever), bad
    lines and bytes are reported in the data-quality section, the rest counts."""
    import os
    import subprocess
    import sys

    from gpuslo.slo.sources.journals import load_journals

    node = tmp_path / "j" / "node-1"
    node.mkdir(parents=True)
    (node / "job-a.jsonl").write_bytes(
        START.encode() + b'{"v": 1, "t": 1100, "event": {}}\n\xff\xfe\n' + STEPS.encode()
        + CHECKPOINT.encode())
    os.mkfifo(node / "stuck.jsonl")
    frames = load_journals(tmp_path / "j")
    assert len(frames.job_events) == 3
    assert "stuck.jsonl: not a regular file" in frames.cannot_fill["journal_problems"]
    assert "job-a.jsonl:2" in frames.cannot_fill["journal_problems"]
    done = subprocess.run([sys.executable, "-m", "gpuslo", "report", "--journals",
                           str(tmp_path / "j"), "--out", str(tmp_path / "out"), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_folder_whose_only_line_is_malformed_names_the_bad_line(tmp_path, capsys) -> None:
    """Issue 25 (a newcomer's run): `report --journals` on a folder whose one journal holds one
    malformed line said "no timestamps"; it names the file and line that was skipped."""
    from gpuslo.cli import main

    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "job1.jsonl").write_text('{"v": 1, "t": "x", "event": "job_start"}\n')
    code = main(["report", "--journals", str(tmp_path / "j"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"no valid journal event; {tmp_path / 'j' / 'job1.jsonl'}:1: field 't'" in err
