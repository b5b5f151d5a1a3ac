"""What proves a commit (issue 23): goodput is a number only where the log proves which of its
progress was committed; else `unknown`, never 0.0 or a wasted-progress figure the lines do not
prove. Real logs from ../shared/training_logs (facts in its expected.yaml and h200/README.md),
and hand-varied lines for the negatives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuslo import names
from gpuslo.cli.goodput import _one_model, render_text
from gpuslo.errors import ConfigError
from gpuslo.exporter.jobs.logs import recompute
from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.profiles import build_profiles, merge
from gpuslo.goodput.slowdown import SlowdownRule
from tests.goodput.test_log_classes import PROFILES, read

HERE = Path(__file__).resolve().parent
SHARED = next((p / "shared" / "training_logs" for p in HERE.parents
               if (p / "shared" / "training_logs" / "expected.yaml").is_file()), None)
needs_shared = pytest.mark.skipif(SHARED is None, reason="../shared/training_logs is not here")


def _case(prefix: str) -> Path:
    found = sorted((SHARED / "cases").glob(f"{prefix}_*.log"))
    if not found:
        pytest.skip(f"{prefix} is held back (not in cases/)")
    return found[0]


def _stamped(lines: list[str]) -> list[str]:
    return [f"2024-03-01 10:{k // 60:02d}:{k % 60:02d} {line}" for k, line in enumerate(lines)]


def _iters(first: int, last: int) -> list[str]:
    return [f"iter {n} | loss {5 - n / 100:.3f}" for n in range(first, last + 1)]


# -- a restore before any progress, in a framework that saves silently -------------------------
@needs_shared
def test_lightning_restore_at_the_head_is_no_commit_of_the_logs_progress() -> None:
    # T21: Lightning restores 0-1250.ckpt, then its rich bar runs 0/1250 → 7/1250 (73 s) and
    # the excerpt ends; ModelCheckpoint prints nothing, so whether steps past the restore were
    # committed cannot be told (was: goodput 0.0, all 584 GPU-s uncommitted)
    doc = analyse_log(_case("T21"), PROFILES, gpus=8).document
    assert doc["framework"] == "lightning"
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [1250]
    g = doc["goodput"]
    assert g["status"] == names.STATUS_UNKNOWN and g["goodput"] is None
    assert "no commit evidence" in g["reason"] and "Lightning" in g["reason"]
    assert g["progress_gpu_s"] == 8 * 73.0 and g["uncommitted_gpu_s"] is None


@needs_shared
def test_lightning_restore_after_progress_still_proves_the_commit() -> None:
    # negative: the h200 crash/resume log's restore of step 2532 follows run A's progress past
    # 2532, so it proves that commit: goodput is a number, not 0 (h200/README.md)
    doc = analyse_log(SHARED / "h200" / "lightning-tqdm-crash-resume-h200.log", PROFILES,
                      gpus=1).document
    g = doc["goodput"]
    assert g["status"] == "ok" and 0 < g["goodput"] < 1
    assert g["gpu_seconds"]["productive"] == pytest.approx(34, rel=0.05)


def test_a_restore_at_the_head_counts_where_the_job_prints_its_saves() -> None:
    # negative: the same shape from a job that prints its saves (no framework profile says it
    # saves silently): its silence after the restore says nothing was committed since
    lines = _stamped(["Loading checkpoint from ckpt/model_step10.pt", *_iters(11, 30)])
    g = read(lines)["goodput"]
    assert g["status"] == "ok" and g["goodput"] == 0.0
    assert g["uncommitted_gpu_s"] > 0 and "progress_gpu_s" not in g


def test_an_overlay_can_say_a_framework_saves_silently() -> None:
    base = {"version": 1, "frameworks": {"mine": {"label": "x", "rules": []}}}
    silent = build_profiles(merge(base, {"frameworks": {"mine": {"saves": "silent"}}}, "o"), "o")
    assert silent.saves_silently("mine") and not silent.saves_silently(None)
    assert not build_profiles(base, "b").saves_silently("mine")
    with pytest.raises(ConfigError, match="saves"):
        build_profiles(merge(base, {"frameworks": {"mine": {"saves": "loud"}}}, "o"), "o")


# -- a restart with no commit evidence: no wasted-progress figure --------------------------------
@needs_shared
def test_a_crash_and_restart_with_no_commit_books_no_wasted_progress() -> None:
    # T04: Megatron-DeepSpeed at iteration 43680, an ECC crash, a restart that dies in init; no
    # save or load line, so which step was committed is unknown, and so is what was wasted
    # (was: 204.7 GPU-s of wasted_progress with goodput null)
    analysis = analyse_log(_case("T04"), PROFILES, gpus=8)
    for g in (analysis.document["goodput"],
              _one_model(analysis, SlowdownRule())["goodput"]):  # what `gpuslo goodput` prints
        assert g["status"] == names.STATUS_UNKNOWN and g["goodput"] is None
        assert g["gpu_seconds"]["wasted_progress"] is None
        assert g["gpu_seconds"][names.CATEGORY_PRODUCTIVE] is None
        assert g["uncommitted_gpu_s"] is None
        assert g["progress_gpu_s"] == pytest.approx(8 * 25.5934, rel=0.001)
        assert g["interruptions"] == {names.LAYER_NODE: 1, names.LAYER_TRAINING: 1}
    assert "goodput unknown" in render_text({"file": "T04", **analysis.document})


def test_a_restart_after_a_commit_keeps_its_wasted_progress() -> None:
    # negative: saved at 10, ran to 15, crashed and restored 10: 5 steps wasted, proven
    lines = _stamped([*_iters(1, 10), "Saving checkpoint to ckpt/model_step10.pt", *_iters(11, 15),
                      "Traceback (most recent call last):", "RuntimeError: boom",
                      "Loading checkpoint from ckpt/model_step10.pt", *_iters(11, 20)])
    g = read(lines)["goodput"]
    assert g["status"] == "ok" and g["gpu_seconds"]["wasted_progress"] > 0
    assert "progress_gpu_s" not in g


# -- a save to a temporary target the log ends inside --------------------------------------------
_HF_SAVE = ["Saving model checkpoint to out/tmp-checkpoint-40",
            "Configuration saved in out/tmp-checkpoint-40/config.json"]


@needs_shared
def test_a_save_the_log_ends_inside_is_listed_and_commits_nothing() -> None:
    # T19: HF Trainer at step 40 starts `Saving model checkpoint to data/tmp-checkpoint-…`,
    # writes its config.json, and the log ends: the rename to checkpoint-40 that commits it is
    # not shown (the thread's job crashed in that rename). The save is listed (expected.yaml),
    # no commit is proven (was: goodput 0.999986, all 3528 GPU-s productive)
    doc = analyse_log(_case("T19"), PROFILES, gpus=8).document
    assert [s["step"] for s in doc["checkpoint_saves"]] == [40]
    g = doc["goodput"]
    assert g["status"] == names.STATUS_UNKNOWN and g["goodput"] is None
    assert g["gpu_seconds"][names.CATEGORY_PRODUCTIVE] is None
    assert any("temporary target" in note for note in doc["notes"])


def test_a_file_written_into_the_save_is_a_part_not_its_end() -> None:
    # negative: the same save, then the loop goes on (HF renames before it returns): committed
    lines = _stamped([*_iters(1, 40), *_HF_SAVE, *_iters(41, 50)])
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [40]
    assert doc["goodput"]["status"] == "ok" and doc["goodput"]["goodput"] > 0.7
    # and a stop right after the config file: the save was cut short, nothing committed
    cut = read(_stamped([*_iters(1, 40), *_HF_SAVE, "Traceback (most recent call last):",
                         "OSError: [Errno 39] Directory not empty"]))
    assert cut["goodput"]["status"] == names.STATUS_UNKNOWN


def test_a_save_to_its_own_name_that_ends_the_log_is_counted() -> None:
    # negative: a save not to a temporary name (Keras' `saving model to …h5`, Marian's
    # `Saving model weights … to model.npz`) commits its step even as the log's last line
    lines = _stamped([*_iters(1, 20), "Saving checkpoint to ckpt/model_step20.pt"])
    g = read(lines)["goodput"]
    assert g["status"] == "ok" and g["goodput"] == 1.0


# -- one status for an unknown goodput: the CLI's exit, the exporter, the report ----------------
@needs_shared
def test_an_unknown_goodput_makes_the_logs_status_unknown_with_or_without_gpus() -> None:
    # README: exit 1 is unknown. With --gpus the goodput is what was asked for: T21's is
    # unknown, so is its status (was: status ok, exit 0, goodput 0.0). Without --gpus the same
    # facts give the same status (was: ok, exit 0, newcomer4 finding 9): the GPU count scales
    # GPU-seconds and nothing else; the reason is a note, and no goodput object is given
    log = str(_case("T21"))
    asked = subprocess.run([sys.executable, "-m", "gpuslo", "goodput", log, "--gpus", "8",
                            "--format", "json"], capture_output=True, text=True, timeout=120)
    assert asked.returncode == 1, asked.stderr
    doc = json.loads(asked.stdout)
    assert doc["status"] == names.STATUS_UNKNOWN and doc["steps"]["last"] == 7
    assert "no commit evidence" in doc["goodput"]["reason"]
    read_only = subprocess.run([sys.executable, "-m", "gpuslo", "goodput", log, "--format",
                                "json"], capture_output=True, text=True, timeout=120)
    assert read_only.returncode == 1, read_only.stderr
    doc = json.loads(read_only.stdout)
    assert doc["status"] == names.STATUS_UNKNOWN and doc["goodput"] is None
    assert doc["steps"]["last"] == 7  # the progress is still read
    assert any(n.startswith("goodput unknown: no commit evidence") for n in doc["notes"])


@needs_shared
def test_the_exporter_exposes_no_goodput_the_log_cannot_prove() -> None:
    # the same rule behind `exporter --job-log`: T21 exposes its progress and why its goodput is
    # unknown, never GPU-seconds (the collector, tests/exporter/test_job_log_no_commit.py); the
    # h200 crash/resume log, whose restore proves its commit, is exposed with its goodput
    def lines(path: Path) -> list[tuple[None, str]]:
        return [(None, text) for text in path.read_text(encoding="utf-8").splitlines()]

    silent = recompute(lines(_case("T21")), "t21", 8)
    assert silent is not None and silent.goodput_unknown == "no_commit_evidence"
    assert silent.last_step > 0
    resumed = recompute(lines(SHARED / "h200" / "lightning-tqdm-crash-resume-h200.log"), "h", 1)
    assert resumed is not None and resumed.gpu_seconds[names.CATEGORY_PRODUCTIVE] > 0


@needs_shared
def test_a_restore_after_progress_with_no_stop_line_lists_the_stop_it_proves() -> None:
    # h200/README.md: run A exits with no line at step 2869, run B restores step 2532: the
    # calculator counts one interruption (observability: the journal just stopped); the list
    # says the same (was: `interruptions` [] beside goodput.interruptions {observability: 1})
    doc = analyse_log(SHARED / "h200" / "lightning-tqdm-crash-resume-h200.log", PROFILES,
                      gpus=1).document
    assert [(i["after_step"], i["cause"], i["layer"]) for i in doc["interruptions"]] == [
        (2868, "unknown", names.LAYER_OBSERVABILITY)]
    assert doc["goodput"]["interruptions"] == {names.LAYER_OBSERVABILITY: 1}
    assert [(r["resumed_from_step"], r["lost_steps"]) for r in doc["restarts"]] == [(2532, 336)]
