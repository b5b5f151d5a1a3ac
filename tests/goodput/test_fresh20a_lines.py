"""Lines of the fresh20 first-contact batch (fixer A), each with a negative that must not be read
that way: a time left that no word names as one (X20)."""

from __future__ import annotations

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh20", name)


# -- CIRKD: `Iters: 19860/20000 || … || Estimated Time: 0:02:01`, 0:00:00 at N (fresh20 X20) -------
def test_a_duration_counting_down_to_n_is_time_left_not_the_window() -> None:
    # `Estimated Time` falls with the steps left and reads 0:00:00 at 20000/20000: the time
    # left; the step time is the stamps' (median 0.8106 s an iteration), not 121 s / 10
    doc = read(case("X20"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (19860, 20000)
    assert 0.80 <= doc["step_time_s"]["median"] <= 0.82


def _cirkd(took: list[int]) -> list[str]:
    out = []
    for k, secs in enumerate(took):
        n = 19860 + 10 * k
        out.append(f"2023-10-03 03:{10 + 2 * k:02d}:00,000 INFO: Iters: {n}/20000 || Lr: 0.0002 "
                   f"|| Loss: 7.1 || Cost Time: 4:{10 + 2 * k:02d}:00 || Estimated Time: "
                   f"0:00:{secs:02d}")
    return out


def test_a_shrinking_window_time_far_from_its_n_stays_a_time() -> None:
    # negative: a duration that shrinks a little each line (a warm-up's 59, 58, 57 s) while the
    # steps left barely move does not fall with them: it is no time left, and stays the window's
    # (5.8 s an iteration, not the 12 s of the records two minutes apart)
    assert 5.6 <= read(_cirkd([59, 58, 57, 58, 57, 56]))["step_time_s"]["median"] <= 6.0
