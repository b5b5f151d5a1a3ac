"""nvidia-smi -q output that counts more GPUs ("Attached GPUs : 8") than it shows blocks for.

A `-i N` query and a paste cut at a block boundary read the same, and ../shared/corpus case 030
(a real `-i 0` capture) must read healthy; so without `--expect-gpus` the verdict is the shown
GPUs' and a `gpus_not_shown` finding (class ok) says the other seven were not judged. With
`--expect-gpus 8` the same text is unknown (`gpu_missing`, no_data).
"""

from __future__ import annotations

from gpuslo.cli.inspect import render_text
from gpuslo.exporter.inspect.kinds import inspect_files, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions

# the newcomer's cut-off paste: eight attached, one block
CUT = """==============NVSMI LOG==============

Driver Version                            : 550.54.15
Attached GPUs                             : 8
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    GPU UUID                              : GPU-11111111-2222-3333-4444-555555555555
    Remapped Rows
        Pending                           : No
        Remapping Failure Occurred        : No
"""


def _signals(findings):
    return {f.signal: f for f in findings}


def test_fewer_blocks_than_attached_says_seven_not_judged():
    found = _signals(inspect_text(CUT, "cut.txt", InspectOptions()))
    hidden = found["gpus_not_shown"]
    assert hidden.class_ == "ok" and hidden.count == 7
    assert "7 of 8 attached GPUs not shown" in hidden.message
    assert "--expect-gpus 8" in hidden.message
    assert "gpu_missing" not in found


def test_with_expected_count_the_same_text_is_unknown(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text(CUT)
    report = inspect_files([str(path)], InspectOptions(expect_gpus=8))
    assert report["verdict"] == "unknown"
    missing = [f for f in report["findings"] if f.get("signal") == "gpu_missing"]
    assert missing and missing[0]["count"] == 7


def test_terminal_headline_says_the_verdict_covers_only_the_shown(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text(CUT)
    text = render_text(inspect_files([str(path)], InspectOptions()))
    assert "GPUs seen: 1 of 8 attached (the verdict covers only the GPUs shown)" in text


def test_negative_all_attached_shown_has_no_such_finding():
    whole = CUT.replace("Attached GPUs                             : 8",
                        "Attached GPUs                             : 1")
    found = _signals(inspect_text(whole, "one.txt", InspectOptions()))
    assert "gpus_not_shown" not in found and "gpu_missing" not in found
    assert found["gpus_seen"].count == 1


def test_negative_no_attached_line_is_not_guessed():
    bare = "\n".join(line for line in CUT.splitlines() if "Attached" not in line) + "\n"
    assert "gpus_not_shown" not in _signals(inspect_text(bare, "bare.txt", InspectOptions()))
