"""A save said again by a later line names the file the save before it wrote, however the path
is printed (`story.restates`, the one test `notices.said_again` and `items._restated` ask). The
spellings are fresh12 O19's: an XGBoost pipeline logs `Saved model to:
output\\linear\\xgboost_model.pkl` (Windows separators), and its summary, after `Training
Complete!`, `Model saved to: output/linear/xgboost_model.pkl` and `Outputs saved to:
output/linear`.
"""

from __future__ import annotations

from gpuslo.goodput.logs.items import Save, restates
from gpuslo.goodput.logs.notices import said_again

WRITTEN = "output\\linear\\xgboost_model.pkl"  # O19 line 139
SAID = "output/linear/xgboost_model.pkl"  # O19 line 150
FOLDER = "output/linear"  # O19 line 151


def _save(line: int, named_path: str, lines: int = 1) -> Save:
    return Save(line, None, ended=True, named_path=named_path, lines=lines)


def test_one_end_line_naming_the_saved_file_with_other_separators_is_that_save_said_again():
    first, again = _save(139, WRITTEN, lines=3), _save(150, SAID)
    assert said_again([first, again]) == [again]
    assert said_again([first, _save(150, "./" + WRITTEN)]) != []  # `./` names the same folder


def test_a_line_naming_another_file_or_the_folder_is_no_save_said_again():
    # negatives: the summary's folder (O19 line 151) and a sibling file are other targets
    first = _save(139, WRITTEN, lines=3)
    assert said_again([first, _save(151, FOLDER)]) == []
    assert said_again([first, _save(150, "output/linear/xgboost_model.json")]) == []


def test_the_one_test_of_a_save_said_again_reads_the_file_its_lines_named():
    # `story.restates`, asked by `notices.said_again` and `items._restated` alike
    first = _save(139, WRITTEN, lines=3)
    assert restates(SAID, first) and restates("./" + SAID, first)
    assert not restates(FOLDER, first) and not restates("", first)  # negatives
    assert not restates(SAID, _save(139, ""))  # a save that named no file is restated by none
