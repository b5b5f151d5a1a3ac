"""Step time printed in unusual forms the fresh7 first-contact batch showed missing, each read on
the case's real lines and on a negative beside it: a cumulative training time named by the
words after it on a line of its own (J09), or seen rising in proportion to the counter (J06); a
per-epoch bar whose elapsed restarts each epoch while its job-wide counter goes on (J05).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- LightGBM's CLI: `N seconds elapsed, finished K iteration` is the time so far (J09) --------
def _lightgbm(rows: list[tuple[int, str]], elapsed: str = "seconds elapsed") -> list[str]:
    out = []
    for n, seconds in rows:
        out += [f"[LightGBM] [Info] Iteration:{n}, training's auc: 1.000000",
                f"[LightGBM] [Info] Iteration:{n}, training's log loss: 0.004594",
                f"[LightGBM] [Info] {seconds} {elapsed}, finished {n} iteration",
                "[LightGBM] [Info] cannot find more split with gain = -inf , current #leaves=16"]
    return out + ["[LightGBM] [Info] Finish train"]


LIGHTGBM = [(998, "2.432232"), (999, "2.434642"), (1000, "2.436162")]


def test_seconds_elapsed_is_a_clock_however_little_it_rises() -> None:
    # real lines (lightgbm-org/LightGBM#39): 2.410 and 1.520 ms an iteration, median 1.965 ms
    doc = read(_lightgbm(LIGHTGBM))
    assert doc["steps"]["first"] == 998 and doc["steps"]["last"] == 1000
    assert abs(doc["step_time_s"]["median"] - 0.001965) < 1e-6


def test_seconds_taken_that_barely_change_are_each_lines_own_duration() -> None:
    # negative: the same lines with a per-iteration time (`seconds taken`), no clock word
    doc = read(_lightgbm(LIGHTGBM, elapsed="seconds taken"))
    assert doc["step_time_s"]["median"] is None


# -- ParlAI: `[ time:2.0s … ]` is the training time so far, over `num_updates` (J06) ------------
def _parlai(rows: list[tuple[str, int]]) -> list[str]:
    out = ["[ training... ]"]
    for k, (t, n) in enumerate(rows):
        if k == len(rows) - 1:  # the validation between the last two records, as printed
            out += ["[ running eval: valid ]", "[ eval completed in 0.59s ]",
                    "valid:{'exs': 1000, 'accuracy': 0.452, 'f1': 0.452, 'lr': 1, "
                    "'num_updates': 282, 'loss': 28.08}", "[ new best accuracy: 0.452 ]"]
        out.append(f"[ time:{t}s total_exs:3616 epochs:0.4 time_left:24.0s ] {{'exs': 3616, "
                   f"'lr': 1, 'num_updates': {n}, 'gnorm': 1.328, 'clip': 1.0, 'loss': 122.7}}")
    return out


def test_a_time_rising_in_proportion_to_the_updates_is_the_training_clock() -> None:
    # real values (facebookresearch/ParlAI PR#1895): 2 s for 117 updates = 0.0171 s; the
    # window across the validation is not a step's
    doc = read(_parlai([("2.0", 113), ("4.0", 230), ("6.0", 304)]))
    assert doc["steps"]["first"] == 113 and doc["steps"]["last"] == 304
    assert abs(doc["step_time_s"]["median"] - 2.0 / 117) < 1e-6


def test_a_time_growing_far_faster_than_the_updates_is_each_records_own() -> None:
    # negative: 1 s, 3 s, 9 s over the same updates (9x while the count grows 2.7x): no clock
    doc = read(_parlai([("1.0", 113), ("3.0", 230), ("9.0", 304)]))
    assert doc["step_time_s"]["median"] >= 1.0


# -- Tianshou: each epoch's bar restarts its elapsed; the step is gradient_step (J05) ----------
def _tianshou(elapsed: list[int]) -> list[str]:
    out = [r"(tianshou) F:\tianshou-1.1.0\examples\discrete>python discrete_dqn.py"]
    for k, seconds in enumerate(elapsed, start=1):
        out += [f"Epoch #{k}: 10001it [00:{seconds:02d}, 1744.76it/s, env_step={k}0000, "
                f"gradient_step={k}000, len=191, n/ep=0, n/st=10, rew=191.00]",
                f"Epoch #{k}: test_reward: 153.210000 ± 33.466489, best_reward: 153.210000 ± "
                f"33.466489 in #1"]
    return out


def test_each_epochs_bar_restarts_its_elapsed_time() -> None:
    # real lines (thu-ml/tianshou#1266): 5 s, 4 s, 5 s ... for each 1000 gradient steps
    doc = read(_tianshou([5, 4, 5, 5, 5, 5]))
    assert doc["steps"]["first"] == 1000 and doc["steps"]["last"] == 6000
    assert abs(doc["step_time_s"]["median"] - 0.005) < 1e-9


def test_one_bar_whose_elapsed_goes_on_across_epochs_is_read_since_it_began() -> None:
    # negative: the elapsed keeps rising with the counter (one bar across the epochs)
    doc = read(_tianshou([5, 10, 15, 20, 25, 30]))
    assert abs(doc["step_time_s"]["median"] - 0.005) < 1e-9
