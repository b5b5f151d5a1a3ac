"""Events read on the fresh16 first-contact batch's real lines, each with a negative that must not
be read that way: glog's failure signal handler after Caffe's last snapshot (S15), the terminal
session that ran the job dropping (S10), a loop that names the first iteration it runs after a
load (LSTR, S08), and Keras 3 bars printed once per `fit` call, one clip each, under a banner
ruled with `=` signs (TrackNetV4, S03).
"""

from __future__ import annotations

from gpuslo.goodput.logs.reader import parse_lines
from tests.goodput.batch_lines import PROFILES, read
from tests.goodput.batch_lines import case as batch_case


def case(name: str) -> list[str]:
    return batch_case("fresh16", name)


def causes(doc: dict) -> list[tuple[int | None, str]]:
    return [(i["after_step"], i["cause"]) for i in doc["interruptions"]]


# -- glog's failure signal handler (ENet on Caffe, TimoSaemann/ENet#8, fresh16 S15) ---------------
def test_a_glog_signal_banner_after_the_last_snapshot_is_a_failure_with_goodput_kept() -> None:
    doc = read(case("S15"))
    assert causes(doc) == [(75000, "signal")]
    assert [c["step"] for c in doc["checkpoint_saves"]] == [75000]
    assert doc["goodput"]["goodput"] == 1.0  # the crash at exit loses no step


def test_the_glog_banner_lines_alone_each_read_as_a_signal() -> None:
    head = [f"I0627 03:28:{k:02d}.000000 10388 sgd_solver.cpp:106] Iteration {20 * k}, lr = 5e-06"
            for k in range(1, 5)]
    for banner in ("*** SIGSEGV (@0x0) received by PID 10388 (TID 0x7fba406eda40) from PID 0; "
                   "stack trace: ***",
                   '*** Aborted at 1498501694 (unix time) try "date -d @1498501694" if you are '
                   "using GNU date ***"):
        assert causes(read([*head, banner])) == [(80, "signal")]


def test_a_signal_handler_installed_or_named_is_no_failure() -> None:
    # negative: the words of a signal without the handler's banner
    lines = ["I0627 03:28:01.000000 10388 caffe.cpp:200] Installed failure signal handler for "
             "SIGSEGV (@0x0)"]
    lines += [f"I0627 03:28:{k:02d}.000000 10388 sgd_solver.cpp:106] Iteration {20 * k}, lr = 5e-06"
              for k in range(2, 6)]
    assert read(lines)["interruptions"] == []


# -- the terminal session dropped (bobo0810/PyTorch-YOLOv3-master#5, fresh16 S10) -----------------
def test_a_remote_session_closed_under_the_job_is_a_failure_after_its_last_step() -> None:
    assert causes(read(case("S10"))) == [(10156, "session_lost")]


def test_openssh_words_for_a_dropped_session_are_read_too() -> None:
    steps = [f"Epoch 3 step {k} loss 0.5" for k in range(1, 5)]
    for end in ("Connection to 10.0.0.5 closed by remote host.",
                "client_loop: send disconnect: Broken pipe",
                "packet_write_wait: Connection to 10.0.0.5 port 22: Broken pipe"):
        assert causes(read([*steps, end])) == [(4, "session_lost")]


def test_an_ordinary_logout_or_a_quoted_connection_message_is_no_failure() -> None:
    # negative: `Connection to HOST closed.` is an ordinary logout; the words inside a message
    steps = [f"Epoch 3 step {k} loss 0.5" for k in range(1, 5)]
    for end in ("Connection to 10.0.0.5 closed.",
                "WARNING: data server connection closed by remote host, retrying"):
        assert read([*steps, end])["interruptions"] == []


# -- a loop that names its first iteration after a load (liuruijin17/LSTR#45, fresh16 S08) --------
def test_training_that_starts_from_iteration_n_restored_the_step_before_it() -> None:
    doc = read(case("S08"))
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [500000]
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (30, 37)


def test_a_fresh_loop_or_another_schedule_starting_is_no_restore() -> None:
    # negative: iteration 0 or 1 is a fresh loop's first; a learning-rate schedule's start is
    # no loop's
    steps = [f"iter {k}, loss 0.5" for k in range(1, 5)]
    for start in ("Starting training from iteration 0", "training starts from iteration 1",
                  "lr decay starts from step 5000"):
        assert read([start, *steps])["restarts"] == []


# -- Keras 3 bars, one `fit` per clip (TrackNetV4/TrackNetV4#3, fresh16 S03) -----------------------
def test_finished_bars_of_varying_totals_are_one_loop_each_not_restarts() -> None:
    doc = read(case("S03"))
    assert doc["restarts"] == []
    assert len(doc["checkpoint_saves"]) == 1
    assert abs(doc["step_time_s"]["median"] - 0.053) < 1e-6
    assert doc["steps"]["last"] - doc["steps"]["first"] == 1179  # the epoch-2 bars' batches


def test_a_banner_ruled_with_equals_signs_is_an_epoch_marker_not_a_dangling_key() -> None:
    bar = "15/15 ━━━━━━━━━━━━━━━━━━━━ 1s 53ms/step - accuracy: 0.1634 - loss: 1.4387e-04"
    parsed = parse_lines(["======== Epoch 2 ========", bar], PROFILES)
    assert [(o.kind, o.data.get("epoch")) for o in parsed.observations] == [("epoch", "2")]
    assert [(p.line, p.printed) for p in parsed.progress] == [(2, 15)]


def test_a_key_whose_value_opens_the_next_line_is_still_joined() -> None:
    # negative: a real dangling `key=` (one sign) still takes its value from the next line
    lines = [f"step {k}, loss=" if k % 2 else f"0.5, lr=0.1, time {k}" for k in range(1, 9)]
    steps = [p.printed for p in parse_lines(lines, PROFILES).progress]
    assert steps == [1, 3, 5, 7]


def test_keras_bars_of_one_total_each_epoch_stay_per_epoch_steps() -> None:
    # negative: the same total every epoch (and one evaluation total between) is one loop's
    # epochs, read job-wide as before, not one loop a bar
    lines: list[str] = []
    for epoch in range(1, 5):
        lines += [f"Epoch {epoch}/4",
                  "100/100 ━━━━━━━━━━━━━━━━━━━━ 3s 30ms/step - loss: 0.1000",
                  "20/20 ━━━━━━━━━━━━━━━━━━━━ 1s 10ms/step"]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (100, 400)
    assert abs(doc["step_time_s"]["median"] - 0.030) < 1e-6
