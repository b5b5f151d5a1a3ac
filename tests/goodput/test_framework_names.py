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

LIGHTNING_RESUME = """\
Total estimated model params size (MB): 372
Restored all states from the checkpoint at /output/PDB/2021-10-10/checkpoints/0-1250.ckpt
/opt/conda/lib/python3.10/site-packages/pytorch_lightning/utilities/data.py:106: Total length of `list` across ranks is zero. Please make sure this was your intention.
Epoch 1/999 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 0/1250 0:00:00 • -:--:-- 0.00it/s
Epoch 1/999 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 7/1250 0:01:13 • 1:28:29 0.23it/s train/loss: 49.389
"""

CAFFE = """\
I0321 17:37:29.109053 14186 sgd_solver.cpp:112] Iteration 4800, lr = 0.00745253
I0321 17:37:29.796532 14186 solver.cpp:239] Iteration 4900 (145.463 iter/s, 0.687461s/100 iters), loss = 0.00938823
I0321 17:37:29.796571 14186 solver.cpp:258]     Train net output #0: loss = 0.00938809 (* 1 = 0.00938809 loss)
I0321 17:37:29.796578 14186 sgd_solver.cpp:112] Iteration 4900, lr = 0.00741498
I0321 17:37:30.475172 14186 solver.cpp:464] Snapshotting to binary proto file examples/mnist/lenet/lenet_solver_iter_5000.caffemodel
"""

MMENGINE = """\
06/16 16:05:22 - mmengine - INFO - Iter(train) [2900/3000]  lr: 9.3518e-03  eta: 0:00:14  time: 0.1444  data_time: 0.0026  memory: 3774  loss: 0.0396
06/16 16:05:36 - mmengine - INFO - Exp name: pspnet-watermelon_20230616_155808
06/16 16:05:36 - mmengine - INFO - Iter(train) [3000/3000]  lr: 9.3294e-03  eta: 0:00:00  time: 0.1497  data_time: 0.0026  memory: 3774  loss: 0.0361
06/16 16:05:36 - mmengine - INFO - Saving checkpoint at 3000 iterations
"""

DETECTRON2 = """\
[09/02 02:42:26 d2.utils.events]:  eta: 0:00:50  iter: 259  total_loss: 0.381  time: 1.2532  data_time: 0.0104  lr: 0.000
[09/02 02:42:51 d2.utils.events]:  eta: 0:00:25  iter: 279  total_loss: 0.3301  time: 1.2525  data_time: 0.0099  lr: 0.000
[09/02 02:43:17 d2.utils.events]:  eta: 0:00:00  iter: 299  total_loss: 0.3553  time: 1.2533  data_time: 0.0109  lr: 0.000
[09/02 02:43:17 d2.engine.hooks]: Overall training speed: 298 iterations in 0:06:13 (1.2533 s / it)
"""

# the names in paths only: a plain loop's lines that load weights from such folders
NAMES_IN_PATHS = """\
2024-03-01 10:00:00 loading /models/mmengine/detectron2/caffe/lenet_iter_5000.caffemodel
2024-03-01 10:00:01 /opt/conda/lib/python3.10/site-packages/pytorch_lightning/utilities/data.py:106: Total length of `list` across ranks is zero.
2024-03-01 10:00:02 reading /data/d2.utils.events/lightning_logs/version_0/mmengine - INFO - notes.txt
2024-03-01 10:00:10 step 10 loss 2.31
2024-03-01 10:00:20 step 20 loss 2.20
2024-03-01 10:00:30 step 30 loss 2.11
2024-03-01 10:00:40 step 40 loss 2.05
"""


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
