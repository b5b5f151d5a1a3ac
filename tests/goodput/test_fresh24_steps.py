"""Step, step-time and save classes the fresh24 first-contact batch showed misread (10/20 at
first contact, tests/data/first_contact/training_logs_fresh24_2026-12-08.txt), each on the case's
real lines (tests/data/training_logs/fresh24/cases, sources in SOURCES_ab.md) with a negative
beside it: a near miss that must not be read that way.

- a key=value record `saved=<file>.pt step=N` is a finished save at N; `saved_replay=<file>.npz`
  is the replay buffer, no save (AB09, YalmanchiliTejas/MicroDuck-RL slurm.out);
- a rate of steps a second printed on a save line times the untimed steps before it (AB09);
- `Steps this episode N` that rises on every record is the cumulative step, not the episode's
  length, and `Time Delta` is the time since the last record (AB16, isaacbilsel/PyBoy-RL
  logs/train_log.txt, the PyTorch Mario-RL tutorial's MetricLogger);
- `Loading model at <file>.chkpt` is a restore (AB16, the tutorial's agent.load).
"""

from __future__ import annotations

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh24", name)


# -- PyBoy-RL with the Mario-RL tutorial's MetricLogger (fresh24 AB16) ---------------------------
def _episode(n: int, steps: int, delta: float) -> str:
    return (f"Episode {n} - Steps this episode {steps} - Epsilon 1 - Learning Rate 0.0002 - "
            f"Cummulative Reward -54545.0 - Max Length 3 - Mean Loss 1.38 - Mean Q Value "
            f"-293.411 - Time Delta {delta} - Time 2025-05-07T05:0{n}:47")


def test_steps_this_episode_that_always_rise_are_the_cumulative_step() -> None:
    doc = read(case("AB16"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1806, 63531)
    # `Time Delta` over the steps between records: 0.0144-0.0202 s a step, median 0.0162 s
    assert abs(doc["step_time_s"]["median"] - 0.0162) < 0.0162 * 0.05
    assert abs(doc["span_s"] - 1011) < 2  # 05:02:47 to 05:19:38 by the `Time` fields


def test_steps_this_episode_that_fall_are_the_episodes_length() -> None:
    # negative: real per-episode lengths go up and down; the episode stays the counter
    lengths = [1806, 3704, 3697, 2222, 602, 747]
    doc = read([_episode(n, s, 17.0) for n, s in enumerate(lengths)])
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 5)


def test_a_time_delta_is_the_time_since_the_last_record() -> None:
    doc = read([_episode(n, 1000 * (n + 1), 10.0) for n in range(6)])
    assert abs(doc["step_time_s"]["median"] - 0.01) < 1e-9  # 10 s over 1000 steps
    # negative: a plain `Time` duration on the same lines stays one step's time
    doc = read([_episode(n, 1000 * (n + 1), 10.0).replace("Time Delta", "Time")
                for n in range(6)])
    assert doc["step_time_s"]["median"] != 0.01


def test_loading_a_model_at_a_checkpoint_file_is_a_restore() -> None:
    doc = read(case("AB16"))
    assert len(doc["restarts"]) == 1
    assert doc["restarts"][0]["resumed_from_step"] is None  # `_03`: the third save, no step
    assert doc["goodput"]["goodput"] is None  # the step it restores is not printed


def test_loading_a_model_at_a_step_or_a_pretrained_file_is_no_restore() -> None:
    # negative: no checkpoint file after `at`, or published weights to fine-tune
    body = [_episode(n, 1000 * (n + 1), 10.0) for n in range(6)]
    for line in ("Loading model at step 5 with exploration rate 1",
                 "Loading model at checkpoints/pretrained/mario_net_03.chkpt with exploration "
                 "rate 1",
                 "Loading model at checkpoints/Kirby/replay.npz"):
        assert read([line, *body])["restarts"] == [], line
    line = ("Loading model at checkpoints/Kirby_Dream_Land/2025-05-06T18-11-18-boss/"
            "mario_net_03.chkpt with exploration rate 1")
    assert len(read([line, *body])["restarts"]) == 1
