"""A job log that dates nothing (no stamp, no CRI time) has no time of day for its progress:
`gpuslo_job_last_progress_timestamp_seconds` is when the exporter saw its step count change, never
the log's own seconds since its start read as a Unix time. Found by newcomer5 (#11,
tests/fixtures/newcomer5/README.md): fairseq's `train_wall=5026` was exported as 5026 (1970), so
`time() - ...` saw a job last seen 56 years ago."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO
from prometheus_client.parser import text_string_to_metric_families

from gpuslo.exporter.jobs.log_reading import recompute
from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.snapshot import NodeSnapshot

FIXTURES = REPO / "tests" / "fixtures" / "newcomer5"
FAIRSEQ = "T10_fairseq_transformer_issue514.log"  # `wall`/`train_wall` since start, no stamp
PPOCR = "T04_ppocrv5_det_issue16562.log"  # `[2025/09/24 12:13:19] ppocr INFO: ...`
NOW = 1_800_000_000.0  # the exporter's clock (2027-01-15)
NEXT_STEP = ("| epoch 010:   2000 / 2737 loss=6.144, nll_loss=4.983, ppl=31.62, wps=12814, "
             "ups=4.8, wpb=2570, bsz=106, num_updates=26634, lr=0.000193, gnorm=1.3, clip=0%, "
             "oom=0, wall=5617, train_wall=5214\n")


def exposed(folder: Path, state: Path, now: float) -> dict[tuple[str, str], float]:
    """(series name, job) -> value of the job series an exporter following `folder/*` exposes
    with its clock at `now`."""
    tailer = JobLogTailer([str(folder / "*")], state, default_gpus=8, settle_s=0,
                          clock=lambda: now)
    exporter = Exporter(lambda: NodeSnapshot("n1"), None, job_logs=tailer,
                        job_hold_s=float("inf"))
    exporter.poll_journals()
    text = exporter.exposition().decode()
    return {(s.name, s.labels.get("job", "")): s.value
            for f in text_string_to_metric_families(text) for s in f.samples
            if s.name.startswith("gpuslo_job")}


def _logs(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, fixture in files.items():
        (folder / name).write_bytes((FIXTURES / fixture).read_bytes())
    return folder


LAST = "gpuslo_job_last_progress_timestamp_seconds"


def test_an_undated_log_is_dated_by_when_the_exporter_saw_its_progress(tmp_path):
    folder = _logs(tmp_path, **{"jobA.log": FAIRSEQ, "jobB.log": PPOCR})
    series = exposed(folder, tmp_path / "state", NOW)
    assert series[("gpuslo_job_last_step", "jobA")] == 25634
    assert series[(LAST, "jobA")] == NOW  # was 5026.0: train_wall read as 1970-01-01T01:23:46Z
    # The negative: a stamped log's last progress is its own stamp, not the exporter's clock.
    assert series[(LAST, "jobB")] != NOW
    assert 1.7587e9 < series[(LAST, "jobB")] < 1.7588e9  # 2025-09-24, the log's last step


def test_the_time_seen_survives_a_restart_and_moves_only_with_the_step(tmp_path):
    folder = _logs(tmp_path, **{"jobA.log": FAIRSEQ})
    state = tmp_path / "state"
    exposed(folder, state, NOW)
    # Restarted 10 min later, the log unchanged: the progress was seen at NOW, not at restart.
    assert exposed(folder, state, NOW + 600)[(LAST, "jobA")] == NOW
    with open(folder / "jobA.log", "a") as f:  # the cut last line ends; a new step arrives
        f.write("\n" + NEXT_STEP)
    later = exposed(folder, state, NOW + 1200)
    assert later[("gpuslo_job_last_step", "jobA")] == 26634
    assert later[(LAST, "jobA")] == NOW + 1200


def test_the_pure_reading_gives_an_undated_log_no_time_of_day():
    lines = [(None, line) for line in (FIXTURES / FAIRSEQ).read_text().splitlines()]
    goodput = recompute(lines, "jobA", 8)
    assert goodput.last_step == 25634
    assert goodput.last_progress_t == 0.0 and goodput.last_event_t == 0.0
