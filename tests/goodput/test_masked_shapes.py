"""The fast path's digit-masked shapes (`fast.FastPath.block`, `matchers.Found`): a line whose
digits are masked to the shape of a line matched before is read from that line's spans, and
reads exactly what its own regex match reads."""

from __future__ import annotations

from gpuslo.goodput.logs.matchers import Found, Prog, spans_of
from gpuslo.goodput.logs.reader import LogReader
from tests.goodput.feeding import by_blocks, by_lines

FIELDS = [s for s in Prog.__slots__ if s not in ("matcher", "found")]


def _bar_log(tmp_path, redraws: int):
    """A tqdm bar redrawn with `\\r` (widths of the step, rate and percentage vary, so the
    masked shapes do), a save line now and then, as Lightning prints them."""
    parts = ["GPU available: True (cuda), used: True\n"]
    for n in range(1, redraws):
        pct, rate = n * 100 // redraws, 70 + (n * 37 % 900) / 10
        parts.append(f"Epoch 0:  {pct:2d}%|{'█' * (pct // 10):10s}| {n}/{redraws} "
                     f"[{n // 70 // 60:02d}:{n // 70 % 60:02d}<00:{n % 60:02d}, "
                     f"{rate:.2f}it/s, v_num={n % 7}]\r")
        if n % 2999 == 0:
            parts.append(f"\nEpoch 0, global step {n}: 'val_loss' reached 0.5 (best 0.5), "
                         f"saving model to 'ckpt/epoch=0-step={n}.ckpt' as top 1\n")
    path = tmp_path / "bar.log"
    path.write_text("".join(parts) + "\n", encoding="utf-8")
    return path


def _records(reader: LogReader) -> list[list]:
    parsed = reader.finish()
    return [[getattr(p, name) for name in FIELDS] for p in parsed.progress]


def test_bars_read_by_masked_shapes_are_what_their_own_regex_reads(tmp_path):
    path = _bar_log(tmp_path, 20000)
    by_line, by_block = by_lines(path), by_blocks(path)
    assert by_block.fast is not None and by_block.fast.maskable
    assert 0 < len(by_block.fast.shapes) < 2000  # ~20,000 redraws read from few shapes
    one, other = _records(by_line), _records(by_block)
    assert len(one) > 15000 and one == other
    assert {r[FIELDS.index("rate_s")] is not None for r in other} == {True}


def test_found_answers_as_the_match_of_a_line_of_the_same_shape(tmp_path):
    reader = by_blocks(_bar_log(tmp_path, 8000))
    regex = reader.fast.matchers[0][2]
    first = regex.match("Epoch 0:  12%|█         | 1234/8000 [00:17<00:34, 71.50it/s, v_num=3]")
    line = "Epoch 0:  98%|█         | 9876/8000 [19:28<99:05, 10.09it/s, v_num=8]"
    own = regex.match(line)
    found = Found(line, spans_of(first))
    assert first is not None and own is not None
    for name in regex.groupindex:
        assert found.group(name) == own.group(name)
        assert found.end(name) == own.end(name)
    assert found.end() == own.end()


def test_a_template_with_a_digit_of_its_own_is_not_masked(tmp_path):
    rows = [f"[2024-04-06 02:{n // 60 % 60:02d}:{n % 60:02d}] bf16 iter {n}/90000 loss 2.{n % 9}"
            for n in range(1, 7000)]
    path = tmp_path / "bf16.log"
    path.write_text("\n".join(rows) + "\n")
    reader = by_blocks(path)
    assert reader.fast is not None and not reader.fast.maskable  # "bf16" vs "bf17": masked alike
    assert not reader.fast.shapes
    assert reader.finish().progress[-1].printed == 6999


def test_a_long_line_s_shape_is_not_remembered(tmp_path):
    pad = "abcdefghij" * 500  # a line longer than MAX_MASKED_BYTES: read by its own regex
    rows = [f"[2024-04-06 02:{n // 60 % 60:02d}:{n % 60:02d}] iteration {n:6d}/ 90000 | "
            f"elapsed time per iteration (ms): 5533.{n % 10} | lm loss: 2.1 | {pad}"
            for n in range(1, 1500)]
    path = tmp_path / "long.log"
    path.write_text("\n".join(rows) + "\n")
    by_line, by_block = by_lines(path), by_blocks(path)
    fast = by_block.fast
    assert fast is not None and fast.maskable and by_block.pipe.idle() and not fast.shapes
    one, other = _records(by_line), _records(by_block)
    assert len(one) > 1400 and one == other
