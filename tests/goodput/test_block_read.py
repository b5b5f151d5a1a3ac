"""Reading a training log by blocks (`read_blocks`, `LogReader.feed_block`, `BlockScan`) gives
what reading it line by line gives: the same lines, the same records, the same document."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.blockscan import BlockScan
from gpuslo.goodput.logs.read import ReadStats, read_blocks, read_lines
from gpuslo.needles import vectorscan_available
from tests.goodput.feeding import by_blocks, by_lines

WORDS = ("Saving model checkpoint", "Traceback (most recent call last)", "é checkpoint", "saved")
LINES = ["step 1 loss 2.0", "step 2 loss 1.9 Saving model checkpoint", "plain \x1b[31mred",
         "étape é checkpoint", "", "x saved y", "Traceback (most recent call last):",
         "nothing here", "\x07bell", "Savin", "g model checkpoint"]


@pytest.mark.parametrize("vectorscan", [True, False])
def test_block_scan_marks_every_line_holding_a_word_or_a_control_byte(vectorscan):
    scan = BlockScan(WORDS, "\x00\x07\x1b", use_vectorscan=vectorscan)
    marked = scan.lines(LINES)
    exact = {i for i, line in enumerate(LINES)
             if any(w in line for w in WORDS) or any(c in line for c in "\x00\x07\x1b")}
    assert marked is not None and exact <= marked
    assert scan.lines(["step 3", "step 4"]) == set()
    assert scan.lines([]) == set()


def test_both_engines_mark_the_same_lines():
    if not vectorscan_available():
        pytest.skip("Vectorscan (the hyperscan package) is not installed")
    fast = BlockScan(WORDS, "\x1b")
    assert fast.engine == "vectorscan"
    assert fast.lines(LINES) == BlockScan(WORDS, "\x1b", use_vectorscan=False).lines(LINES)


def test_a_word_across_lines_is_refused():
    with pytest.raises(ValueError):
        BlockScan(("a\nb",), "")


def _log(tmp_path, lines: int):
    rows = ["Starting job 7", "Running training"]
    for n in range(1, lines):
        rows.append(f"[2024-04-06 02:{n // 60 % 60:02d}:{n % 60:02d}] iteration {n:6d}/ 90000 |"
                    f" elapsed time per iteration (ms): 5533.{n % 10} | lm loss: 2.1")
        if n % 997 == 0:
            rows.append(f"[2024-04-06 02:{n // 60 % 60:02d}:{n % 60:02d}] Saving model "
                        f"checkpoint to /ckpt/iter_{n} \x1b[0m")
    path = tmp_path / "train.log"
    path.write_text("\n".join(rows) + "\r\n" + "tail without newline")
    return path


def test_blocks_are_the_lines(tmp_path, monkeypatch):
    monkeypatch.setattr("gpuslo.goodput.logs.read.CHUNK", 4096)
    path = _log(tmp_path, 3000)
    blocks = list(read_blocks(path, ReadStats()))
    assert len(blocks) > 10 and all(blocks)
    assert [line for block in blocks for line in block] == list(read_lines(path, ReadStats()))


def test_feeding_blocks_reads_what_feeding_lines_reads(tmp_path, monkeypatch):
    monkeypatch.setattr("gpuslo.goodput.logs.read.CHUNK", 64 * 1024)
    path = _log(tmp_path, 12000)
    by_line, by_block = by_lines(path), by_blocks(path)
    one, other = by_line.finish(), by_block.finish()
    assert by_block.fast is not None and one.progress and one.observations
    assert [(p.line, p.printed, p.ts, p.step_s) for p in one.progress] == [
        (p.line, p.printed, p.ts, p.step_s) for p in other.progress]
    assert [(o.kind, o.line, o.ts) for o in one.observations] == [
        (o.kind, o.line, o.ts) for o in other.observations]
    assert (one.lines, one.matched, one.first_ts, one.last_ts) == (
        other.lines, other.matched, other.first_ts, other.last_ts)
    assert analyse_log(path, gpus=8).document["steps"]["last"] == 11999


def test_blocks_scanned_as_read_with_bytes_that_are_not_utf8(tmp_path, monkeypatch):
    # `read.Block.data`: the bytes as read, scanned and masked without encoding the lines again;
    # where they are not UTF-8 they differ from the lines encoded (the replacement character),
    # and the records, saves and events read are still those read line by line
    monkeypatch.setattr("gpuslo.goodput.logs.read.CHUNK", 64 * 1024)
    rows = [b"Starting job 7", b"Running training"]
    for n in range(1, 12000):
        bad = b"\xff\xfe" if n % 7 == 0 else b"\xe2\x96" if n % 11 == 0 else b""
        rows.append(b"[2024-04-06 02:%02d:%02d] iteration %6d/ 90000 | elapsed time per "
                    b"iteration (ms): 5533.%d | lm loss: 2.1%s" % (n // 60 % 60, n % 60, n,
                                                                    n % 10, bad))
        if n % 997 == 0:
            rows.append(b"[2024-04-06 02:00:00] \xc3Saving model checkpoint to /ckpt/iter_%d" % n)
    path = tmp_path / "train.log"
    path.write_bytes(b"\n".join(rows) + b"\n")
    blocks = list(read_blocks(path, ReadStats()))
    assert all(b.data.decode("utf-8", errors="replace").split("\n") == b for b in blocks)
    assert any(b.data != "\n".join(b).encode() for b in blocks)  # (the raw path is taken)
    one, other = by_lines(path).finish(), by_blocks(path).finish()
    assert len(one.progress) == 11999 and sum(o.kind == "save" for o in one.observations) == 12
    assert [(p.line, p.printed, p.ts) for p in one.progress] == [
        (p.line, p.printed, p.ts) for p in other.progress]
    assert [(o.kind, o.line, o.ts) for o in one.observations] == [
        (o.kind, o.line, o.ts) for o in other.observations]
