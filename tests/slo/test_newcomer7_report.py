"""Newcomer 7 F5 and F16 (tests/data/newcomer7/FINDINGS.md), `report --prometheus` on a store
whose exporters publish the job counters but no `gpuslo_gpu_allocation` (no allocation source):
the jobs table printed "GPUs 0" for jobs of 8 to 24 GPUs (`| a/job-0000 | 0 | 715.5 | 0.9840 |`)
and "No job interruptions can be counted (the data has no jobs)" under a table of 5 jobs. A GPU
count no source gave is unknown (—); the sentence names the missing allocation series. The
negatives: a known count is printed, and data without jobs keeps its own reason."""

from __future__ import annotations

from types import SimpleNamespace

from gpuslo.slo.report.badput import _job_table
from gpuslo.slo.report.sections import _rate_line

NO_ALLOCATION = ("no gpuslo_gpu_allocation series in the window: job interruptions are counted "
                 "per allocated GPU-day, and no job's GPU-time is allocated")


def test_f5_a_gpu_count_no_source_gave_is_unknown_not_zero():
    jobs = [{"job": "a/job-0000", "gpus": 0, "allocated_gpu_seconds": 715.5 * 3600,
             "goodput_ratio": 0.984, "ettr": None},
            {"job": "b/job-0003", "gpus": 24, "allocated_gpu_seconds": 488.0 * 3600,
             "goodput_ratio": 0.9836, "ettr": None}]
    rows = {row[0]: row[1] for row in _job_table(jobs).rows}
    assert rows == {"a/job-0000": "—", "b/job-0003": "24"}  # the negative: 24 is known


def test_f16_the_interruptions_sentence_names_the_missing_allocations():
    doc = {"interruption_basis": "faults", "interruptions_per_1000_gpu_days": 0.5,
           "gpu_fault_starts": 3, "data_quality": {"cannot_fill": {
               "interruptions": NO_ALLOCATION}}}
    line = _rate_line(doc, SimpleNamespace(faults=2))
    assert "no gpuslo_gpu_allocation series" in line and "the data has no jobs" not in line


def test_f16_negative_data_without_jobs_keeps_its_reason():
    doc = {"interruption_basis": "faults", "interruptions_per_1000_gpu_days": 0.5,
           "gpu_fault_starts": 3, "data_quality": {"cannot_fill": {}}}
    assert "(the data has no jobs)" in _rate_line(doc, SimpleNamespace(faults=2))


def test_f10_a_number_yaml_reads_as_text_is_named_so(tmp_path, capsys):
    """Newcomer 7 F10: `ttft_seconds: 1e-3` (PyYAML, YAML 1.1: the string '1e-3') was refused
    as out of (0, 3600]; the message now says it is text, not a number. The negative: 4000 is
    a number out of range and gets no such words."""
    from gpuslo.cli import main
    for text, hint in (("1e-3", True), ('"0.5"', True), ("4000", False)):
        spec = tmp_path / "s.yml"
        spec.write_text(f"serving:\n  ttft_seconds: {text}\n")
        assert main(["rules", "--slo", str(spec), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "must be seconds in (0, 3600]" in err
        assert ("text, not a number" in err) is hint, err


def test_f18_a_file_not_read_is_not_among_the_logs_read(tmp_path):
    """Newcomer 7 F18: `report --training-log tl` over six logs and `junk.log` (random bytes,
    "binary file ... not read") said "goodput unknown for every training log read (7)". The
    MaxText log is tests/data/newcomer7/maxtext_4847.log, copied from the newcomer's
    newcomer7-inputs/tl/maxtext_4847.log (MaxText `completed step` lines; no save line, so its
    goodput is unknown)."""
    import random
    from pathlib import Path

    from gpuslo.slo.sources.training_logs import load_training_logs
    log = Path(__file__).resolve().parent.parent / "data" / "newcomer7" / "maxtext_4847.log"
    (tmp_path / "maxtext_4847.log").write_bytes(log.read_bytes())
    alone = load_training_logs([str(tmp_path)], 8)  # the negative: one log, read
    (tmp_path / "junk.log").write_bytes(random.Random(7).randbytes(200_000))
    frames = load_training_logs([str(tmp_path)], 8)
    assert alone.goodput_logs == frames.goodput_logs == (0, 1)
    assert "every training log read (1)" in frames.cannot_fill["job_goodput"]
    assert "junk.log: binary file" in frames.cannot_fill["training_logs"]


def test_f5_the_crawl_blames_missing_allocations_not_unusable_gpus():
    """Newcomer 7 F5: "11.1 GPU-hours lost to steps slower ... The capacity accounting counts
    0.0 of them: the rest fell on allocated time that was not usable (unknown or unhealthy
    GPUs)" on a fleet whose usable ratio was 0.994 and that had no allocation series. The
    negative: with allocations the unusable-GPU reason stays."""
    from gpuslo.slo.report.crawl import crawl
    figures = {"slowdown_gpu_hours": 11.1, "capacity_slowdown_gpu_hours": 0.0, "rows": [],
               "rule": {}, "by_layer": {}}
    doc = {"jobs": [{"job": "a/job-0000"}], "crawl": figures, "data_quality": {"cannot_fill": {
        "allocations": "no gpuslo_gpu_allocation series in the window"}}}
    text = " ".join(crawl(doc, {}, None, None).lines)
    assert "no job's time is allocated (no gpuslo_gpu_allocation" in text
    assert "not usable" not in text
    doc["data_quality"] = {"cannot_fill": {}}
    assert "not usable" in " ".join(crawl(doc, {}, None, None).lines)


def test_f5_headline_productive_and_badput_unknown_without_allocations():
    """Newcomer 7 F5: "productive GPU-hours (capacity accounting): 0.0" and "job badput ... node
    0.0, platform 0.0, training 0.0, observability 0.0" beside per-job goodput 0.91-0.98, on a
    store with no allocation series. The golden report's JSON twin stands for the engine's
    document; the negative is the golden itself (allocations there: figures printed)."""
    import json
    from pathlib import Path

    from gpuslo.slo.report.markdown import BADPUT_LABEL, headline
    golden = Path(__file__).resolve().parent.parent / "golden" / "report" / "report.json"
    doc = json.loads(golden.read_text())
    doc.get("report", {}).pop("figures", None)  # figures from the engine's keys, as built
    rows = dict(headline(doc))
    productive = next(k for k in rows if k.startswith("productive GPU-hours"))
    assert not rows[productive].startswith("—") and not rows[BADPUT_LABEL].startswith("—")
    why = "no gpuslo_gpu_allocation series in the window"
    doc["allocated_gpu_hours"] = doc["productive_gpu_hours"] = 0.0
    doc["data_quality"]["cannot_fill"] = {**doc["data_quality"].get("cannot_fill", {}),
                                          "allocations": why}
    rows = dict(headline(doc))
    assert rows[productive] == f"— (not available: {why})"
    assert rows[BADPUT_LABEL] == "— (not available)"


def test_f5_json_a_job_gpu_count_no_source_gave_is_null_with_its_reason():
    """newcomer7 F5 (its JSON): `report --prometheus` without an allocation source wrote
    `"gpus": 0` for jobs of 8 to 24 GPUs; the job counters carry no GPU count. Null, and why.
    The negative: a count a source gave (the journals' 8) is kept."""
    import pandas as pd

    from gpuslo.slo.result import GPUS_UNKNOWN, job_records

    jobs = pd.DataFrame({"job": ["a/job-0000", "b/job-0003"], "gpus": [0, 24],
                         "goodput_ratio": [0.984, 0.9836]}).set_index("job")
    rows = {row["job"]: row for row in job_records(jobs)}
    assert rows["a/job-0000"]["gpus"] is None
    assert rows["a/job-0000"]["gpus_unknown"] == GPUS_UNKNOWN
    assert rows["b/job-0003"]["gpus"] == 24 and "gpus_unknown" not in rows["b/job-0003"]


def test_f5_json_through_the_week_without_gpu_counts():
    """The same through `compute_week(...).to_json_dict()`: a simulated day whose job events
    carry no GPU count (as the Prometheus source builds them from the job counters alone)."""
    import pandas as pd

    from gpuslo.slo.engine import compute_week
    from gpuslo.slo.frames import Frames
    from gpuslo.slo.simulate import faults
    from gpuslo.slo.simulate.fleet import simulate
    from gpuslo.slo_spec import SloSpec

    start = pd.Timestamp("2026-11-23", tz="UTC")
    sim = simulate(faults.Fleet(nodes=2, gpus_per_node=4, days=1), seed=1, start=start)
    known = compute_week(Frames(**sim.frames), sim.start, sim.end, SloSpec()).to_json_dict()
    assert known["jobs"] and all(j["gpus"] for j in known["jobs"])
    events = sim.frames["job_events"].assign(gpus=0)
    doc = compute_week(Frames(**{**sim.frames, "job_events": events}), sim.start, sim.end,
                       SloSpec()).to_json_dict()
    assert doc["jobs"] and all(j["gpus"] is None and j["gpus_unknown"] for j in doc["jobs"])
