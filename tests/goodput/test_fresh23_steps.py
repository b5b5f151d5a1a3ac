"""Step-time classes the fresh23 first-contact batch showed misread (13/19 at first contact,
tests/data/first_contact/training_logs_fresh23_2026-12-07.txt), each on the case's real lines
(tests/data/training_logs/fresh23, SOURCES_aa.md) with a negative beside it: a near-miss that
must not be read that way.

- `A (B): a (b)` names each value by its own name: BasicSR's `time (data): 0.326 (0.002)` is
  the iteration's time, then the data loading's (AA19, Flare7K);
- a step printed again by its own template with no later stamp (absl's line, then the same
  record on stdout) is one step's lines, no other work in the next window (AA01, TF Model
  Garden's Orbit);
- a rate printed to one figure (`steps/sec:    0.1`) only bounds the step time that the stamps
  of the same records measure (AA01);
- finished tqdm bars of two totals drawn in turn (training, then validation) count steps, and
  `Epoch 6 complete.` closes the epoch of the bar above it (AA17, FoodSeg_mask2former).
"""

from __future__ import annotations

from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from gpuslo.goodput.logs.tokens import values
from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh23", name)


def _median(doc: dict) -> float | None:
    return doc["step_time_s"]["median"]


def _roles(lines: list[str]) -> dict[str, str]:
    """Field key → role of the one template `lines` make."""
    (tpl,) = group([SampleRecord(k, t, None, None) for k, t in enumerate(lines, 1)])
    reading = read_template(tpl)
    return {f.key: reading.roles[f.index].role for f in tpl.fields}


# -- `time (data): a (b)` (Flare7K's BasicSR logger, ykdai/Flare7K#25, fresh23 AA19) ------------
_AA19 = ("[debug..][epoch:  0, iter:  15,848, lr:(1.000e-04,)] [eta: 2 days, 12:42:48, "
         "time (data): 0.326 (0.002)] l1_flare: 7.9467e-02 l1_base: 7.2548e-02")


def test_a_paired_name_gives_each_value_its_own_name() -> None:
    found = values(_AA19)
    keys = {v.key: v.number for v in found}
    assert keys["time"] == 0.326 and keys["data"] == 0.002
    assert _roles([_AA19, _AA19.replace("15,848", "15,868").replace("0.326", "0.331")])[
        "time"] == "step_s"


def test_the_echoed_basicsr_record_gives_the_step_time() -> None:
    doc = read(case("AA19"))
    assert abs(_median(doc) - 0.326) < 1e-6
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (15848, 15848)


def test_a_bracketed_unit_or_a_lone_bracket_pairs_nothing() -> None:
    # negative: `(ms)` is the unit of one value; a bracket with no value after it names no pair
    found = values("elapsed time per iteration (ms): 1234.5 (1200.1) | loss 2.1")
    assert found[0].key == "elapsed time per iteration (ms)" and found[1].key == ""
    assert values("time (data): 0.326 | loss 1.2")[0].key == "time (data)"
    assert values("time (data): 0.326 (0.002, 3)")[1].key == ""
