"""Classes of input the fresh5 first-contact batch of issue 23 showed unread, each read on lines in
the shape of the real ones (other numbers, other names), with a negative beside it: a similar
line that must not be read that way."""

from __future__ import annotations

from tests.goodput.test_log_classes import read, steps


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- a launcher's or scheduler's restart line is a restart on its own (no error line before) -----
ELASTIC = "INFO:torch.distributed.elastic.agent.server.api:[default] "


def test_an_elastic_agent_restarting_its_worker_group_is_a_restart() -> None:
    lines = [ELASTIC + "Worker group FAILED. 2/2 attempts left; will restart worker group",
             ELASTIC + "Stopping worker group", ELASTIC + "Rendezvous'ing worker group",
             ELASTIC + "Starting worker group"]
    assert len(read(lines)["restarts"]) == 1


def test_one_restart_told_by_two_agents_is_one() -> None:
    # negative: two nodes' agents print the same restart line; no progress between them
    line = ELASTIC + "Worker group FAILED. 3/3 attempts left; will restart worker group"
    assert len(read([line, line.replace("[default]", "[default] ")])["restarts"]) == 1


SUBMITIT = "submitit {level} (2023-03-02 11:{m}:{s},104) - {text}"


def test_a_preempted_and_requeued_job_that_starts_again_is_one_restart() -> None:
    start = "Starting with JobEnvironment(job_id=8123, hostname=gpu-7, local_rank=0(4))"
    texts = [("INFO", "05", "10", start),
             ("WARNING", "09", "40", "Caught signal SIGUSR2 on gpu-7: this job is preempted."),
             ("INFO", "09", "41", "Requeued job 8123 (2 remaining timeouts)"),
             ("INFO", "09", "41", "Exiting gracefully after preemption/timeout."),
             ("INFO", "14", "02", start)]
    lines = [SUBMITIT.format(level=lv, m=m, s=s, text=t) for lv, m, s, t in texts]
    assert len(read(lines)["restarts"]) == 1
    assert len(read(lines[:3])["restarts"]) == 1  # the requeue alone: the job will run again
    assert len(read(lines[:2] + lines[3:])["restarts"]) == 1  # the start after the preemption


def test_a_first_start_and_a_requeue_option_are_no_restart() -> None:
    # negative: the job's first start, and a config line naming the requeue option
    lines = [SUBMITIT.format(level="INFO", m="01", s="00",
                             text="Starting with JobEnvironment(job_id=9, hostname=n1)"),
             "slurm_requeue: True, requeue on timeout enabled"]
    assert read(lines)["restarts"] == []
