"""Which job a `--job-log` file is. Found by newcomer3 (#1, #9): with one folder per job and a
fixed log name (`/shared/runs/<id>/train.log`), `--job-log '/runs/*/train.log'` merged two jobs
into one job `train` and counted the day between them as productive (630,000 GPU-s against
6,000); a copied pod folder whose last part is not a UUID (`ns_trainer-0_uid/trainer/{0,1}.log`)
became jobs `0` and `1`, so the container restart was missed; a glob that matched nothing was
silent. The rule: a job is named after the path parts the glob varies over (or its pod folder),
two different files are never one job, and a glob that matches nothing is logged and counted."""

from __future__ import annotations

import logging
import shutil

from conftest import SHARED

from gpuslo.exporter.jobs.log_reading import job_of, jobs_of, pod_of
from gpuslo.exporter.jobs.logs import JobLogTailer

CASES = SHARED / "training_logs" / "cases"
T03 = next(CASES.glob("T03_*.log"))
T04 = next(CASES.glob("T04_*.log"))


def productive(tailer: JobLogTailer) -> dict[str, float]:
    return {job: g.gpu_seconds["productive"] for job, g in tailer.jobs(100)}


def test_two_jobs_whose_logs_share_a_name_are_two_jobs(tmp_path):
    for job, log in (("jobA", T03), ("jobB", T04)):
        (tmp_path / "runs" / job).mkdir(parents=True)
        shutil.copy(log, tmp_path / "runs" / job / "train.log")
    tailer = JobLogTailer([str(tmp_path / "runs" / "*" / "train.log")], tmp_path / "s",
                          default_gpus=8)
    tailer.poll()
    got = productive(tailer)
    assert set(got) == {"jobA", "jobB"}
    for job, log in (("jobA", T03), ("jobB", T04)):  # each as it reads alone
        alone = JobLogTailer([str(log)], tmp_path / f"alone-{job}", default_gpus=8)
        alone.poll()
        assert list(productive(alone).values()) == [got[job]]


def test_the_name_comes_from_the_parts_the_glob_varies_over():
    assert job_of("/runs/jobA/train.log", "/runs/*/train.log")[0] == "jobA"
    assert job_of("/runs/jobA/rank0.log", "/runs/*/*.log")[0] == "jobA:rank0"
    # the negative: a glob over file names keeps naming the job after the file
    assert job_of("/shared/logs/slurm-4242.out", "/shared/logs/*.out")[0] == "slurm-4242"
    assert job_of("/shared/logs/slurm-4242.out")[0] == "slurm-4242"


def test_two_files_that_would_share_a_name_are_not_merged(caplog):
    groups, clashes = jobs_of([("/a/*.log", "/a/train.log"), ("/b/*.log", "/b/train.log"),
                               ("/a/*", "/a/train.log")])  # the same file twice: one job
    assert sorted(groups) == ["a:train.log", "b:train.log"]
    assert len(clashes) == 1 and "'train'" in clashes[0]
    assert all(len(paths) == 1 for _, paths in groups.values())


def test_a_pod_folder_without_a_uuid_is_still_one_container():
    identity = pod_of("/x/pods/ns_trainer-0_uid/trainer/1.log")
    assert (identity.namespace, identity.pod, identity.container) == ("ns", "trainer-0",
                                                                      "trainer")
    groups, _ = jobs_of([("/x/pods/*/*/*.log", f"/x/pods/ns_trainer-0_uid/trainer/{n}.log")
                         for n in (0, 1)])
    assert list(groups) == ["ns:trainer-0:trainer"]
    # the negatives: a numbered log in a folder not of the pod shape, or not named <n>.log
    assert pod_of("/runs/exp1/ckpt/0.log") is None
    assert pod_of("/x/pods/ns_trainer-0_uid/trainer/train.log") is None
    assert job_of("/runs/exp1/ckpt/0.log", "/runs/*/ckpt/*.log")[0] == "exp1:0"


def test_a_glob_that_matches_nothing_is_said_and_counted(tmp_path, caplog):
    (tmp_path / "logs").mkdir()
    tailer = JobLogTailer([str(tmp_path / "nope" / "*.log"), str(tmp_path / "logs" / "*.log")],
                          tmp_path / "s", default_gpus=8)
    with caplog.at_level(logging.WARNING):
        tailer.poll()
        tailer.poll()
    assert tailer.errors["no_match"] == 2  # once per glob, not once per poll
    assert sum("matches no file" in r.getMessage() for r in caplog.records) == 2


def test_a_glob_that_matches_is_not_counted(tmp_path):
    (tmp_path / "logs").mkdir()
    shutil.copy(T03, tmp_path / "logs" / "slurm-7.out")
    tailer = JobLogTailer([str(tmp_path / "logs" / "*.out")], tmp_path / "s", default_gpus=8)
    tailer.poll()
    assert tailer.errors["no_match"] == 0 and [j for j, _ in tailer.jobs(10)] == ["slurm-7"]
