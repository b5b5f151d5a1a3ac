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


def saves(doc: dict) -> list[tuple[object, object]]:
    return [(s.get("step"), s.get("seconds")) for s in doc.get("checkpoint_saves") or []]


# -- MicroDuck-RL's flybrain trainer (fresh24 AB09) ----------------------------------------------
_RUN = "/scratch/scholar/tyalaman/microduck-rl/mario-flybrain-malecns-dopamine-6150-v2/run"
_AB09_EPISODES = [
    "episode=1275 step=18989 reward=241.0 epsilon=0.050 loss=0.9886 dopamine_rpe=-1.000 "
    "kc_mbon=0.3913",
    "episode=1276 step=18993 reward=241.0 epsilon=0.050 loss=0.6243 dopamine_rpe=-1.000 "
    "kc_mbon=0.3913",
    "episode=1277 step=18997 reward=241.0 epsilon=0.050 loss=0.4066 dopamine_rpe=-1.000 "
    "kc_mbon=0.3912",
]
_AB09_SAVE = f"saved={_RUN}/flybrain-online.pt step=19000 env_steps_per_s=6.4"
_AB09_REPLAY = f"saved_replay={_RUN}/flybrain-replay.npz step=20000 transitions=20000"


def test_a_saved_key_naming_a_checkpoint_file_is_a_save_at_its_step() -> None:
    doc = read(case("AB09"))
    # the agent every 1000 environment steps; the replay buffer's write is part of the last one
    assert saves(doc) == [(19000, None), (20000, None)]
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (18511, 19969)
    assert doc["goodput"]["goodput"] == 1.0  # `Pretraining completed.` right after the save


def test_a_sentences_saved_colon_is_one_save_not_two() -> None:
    # negative: `saved:` in prose is the general end rule's line, read once
    assert saves(read([*_AB09_EPISODES, "Checkpoint saved: checkpoints/model_step19000.pt"])) == [
        (19000, None)]


def test_a_replay_buffer_or_a_non_file_value_is_no_save() -> None:
    # negative: another key, another suffix, or a value that is no path
    for line in (_AB09_REPLAY, f"saved_images={_RUN}/frame.png step=19000",
                 "saved=3 step=19000 env_steps_per_s=6.4"):
        assert saves(read([*_AB09_EPISODES, line])) == [], line


def test_a_save_lines_rate_of_steps_times_the_untimed_steps_before_it() -> None:
    doc = read(case("AB09"))
    # 6.4 and 6.5 environment steps a second: 0.156 and 0.154 s a step (the facts' 0.155)
    assert abs(doc["step_time_s"]["median"] - 0.155) < 0.155 * 0.05
    assert doc["step_time_s"]["max"] == 1 / 6.4
    doc = read([*_AB09_EPISODES, _AB09_SAVE])
    assert doc["step_time_s"]["median"] == 1 / 6.4


def test_a_throughput_or_a_rate_before_the_steps_times_nothing() -> None:
    # negative: items a second are throughput; a save before the steps does not measure them
    doc = read([*_AB09_EPISODES, f"saved={_RUN}/flybrain-online.pt step=19000 samples_per_s=6.4"])
    assert doc["step_time_s"]["median"] is None
    doc = read([f"saved={_RUN}/flybrain-online.pt step=18000 env_steps_per_s=6.4",
                *_AB09_EPISODES])
    assert doc["step_time_s"]["median"] is None


def test_a_stamped_log_keeps_its_own_clock_beside_a_save_rate() -> None:
    # negative: records timed by their stamps are not re-timed by the save line's rate
    lines = [f"2025-01-01 00:00:{2 * k:02d} {text}" for k, text in enumerate(_AB09_EPISODES)]
    doc = read([*lines, f"2025-01-01 00:00:07 {_AB09_SAVE}"])
    assert abs(doc["step_time_s"]["median"] - 0.5) < 1e-6  # 2 s over 4 steps


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
