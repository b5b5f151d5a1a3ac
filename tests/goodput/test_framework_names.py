"""Which framework a log's own lines name (`Profiles.choose`, the `detect` rules of
gpuslo/data/log_profiles.yaml), and what a resume at the head of a Lightning log then reads as
(newcomer4 findings 7 and 14). Real lines: an OpenFold/Lightning run on 8x H100 (shared T21's
source, find_string id 67211013318), Caffe's MNIST example, an MMSegmentation PSPNet run and a
detectron2 run (sources in /work/wt/newcomer4_inputs/SOURCES.md). Negatives: a log that only
names those frameworks in paths is named by none of them, and a profile that reads nothing but
its name never displaces one that reads events."""

from __future__ import annotations

from pathlib import Path

from gpuslo.cli.goodput import render_text
from gpuslo.goodput.logs import analyse_log, load_profiles

DATA = Path(__file__).parent / "data" / "framework_names"
LIGHTNING_RESUME = (DATA / "lightning_resume.log").read_text(encoding="utf-8")
CAFFE = (DATA / "caffe_mnist.log").read_text(encoding="utf-8")
MMENGINE = (DATA / "mmseg_pspnet.log").read_text(encoding="utf-8")
DETECTRON2 = (DATA / "detectron2_end.log").read_text(encoding="utf-8")
# negative: the frameworks' names in paths only (a plain loop loading weights from such folders)
NAMES_IN_PATHS = (DATA / "names_in_paths.log").read_text(encoding="utf-8")


def _read(tmp_path: Path, text: str, gpus: int | None = None) -> dict:
    log = tmp_path / "train.log"
    log.write_text(text, encoding="utf-8")
    return analyse_log(log, gpus=gpus).document


def test_lightning_is_named_by_its_own_resume_line_and_its_goodput_is_unknown(tmp_path):
    doc = _read(tmp_path, LIGHTNING_RESUME, gpus=8)
    assert doc["framework"] == "lightning"
    block = doc["goodput"]
    # Lightning saves without a line: a restore at the head proves the earlier run's commit, not
    # this log's, so goodput is unknown with its reason, never a headline 0.0
    assert block["goodput"] is None and block["status"] == "unknown"
    assert block["reason"].startswith("no commit evidence")
    assert doc["status"] == "unknown"
    assert [(r["resumed_from_step"], r["opens_log"], r["lost_steps"]) for r in doc["restarts"]] \
        == [(1250, True, None)]
    text = render_text(doc | {"file": "t13.log"})
    assert "resumed from step 1250 as the log opens" in text and "lost an unknown" not in text


def test_the_same_bar_without_lightning_s_words_names_no_framework(tmp_path):
    # negative: the path of a pytorch_lightning module in a warning is no Lightning line
    lines = LIGHTNING_RESUME.splitlines(keepends=True)
    doc = _read(tmp_path, "".join(x for x in lines if not x.startswith("Restored all")))
    assert doc["framework"] is None
    assert "framework not named by its lines" in render_text(doc | {"file": "x.log"})


def test_caffe_mmengine_and_detectron2_are_named_by_their_own_lines(tmp_path):
    assert _read(tmp_path, CAFFE)["framework"] == "caffe"
    assert _read(tmp_path, MMENGINE)["framework"] == "mmengine"
    assert _read(tmp_path, DETECTRON2)["framework"] == "detectron2"


def test_a_log_that_names_frameworks_only_in_paths_is_none_of_them(tmp_path):
    doc = _read(tmp_path, NAMES_IN_PATHS)
    assert doc["framework"] is None and doc["steps"]["last"] == 40


def test_a_profile_that_reads_only_its_name_never_displaces_one_that_reads_events():
    profiles = load_profiles()
    assert profiles.names_only("mmengine") and profiles.names_only("caffe")
    assert not profiles.names_only("lightning")  # its silent saves change the reading
    assert not profiles.names_only("deepspeed")
    assert profiles.choose({"mmengine": 40, "deepspeed": 1}) == "deepspeed"
    assert profiles.choose({"mmengine": 40}) == "mmengine"
    assert profiles.choose({"megatron": 5, "lightning": 6}) == "lightning"  # most hits, as before
    assert profiles.choose({}) is None
