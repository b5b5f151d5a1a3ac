"""nvidia-smi fault-carrying fields shown as `N/A` on a GPU that carries them (newcomer6
finding 11, tests/fixtures/newcomer6/inspect, hand-made by the newcomer in nvidia-smi's formats):
`DRAM Uncorrectable : N/A` (volatile and aggregate) beside `ECC Mode / Current : Enabled`, and a
`--query-gpu` CSV row of an A100 reading `[N/A]` for its uncorrectable ECC total, read healthy
with no note. They are `health_field_unreadable` (unknown) now. The negatives are real outputs
where `N/A` is the answer: GeForce (no ECC), ECC disabled, an A100 in MIG mode whose 510 driver
leaves the volatile counters `N/A` (its aggregate ones read), retired pages on Ampere and later
(they remap rows instead), remapped rows on a T4 (no row remapper)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

REPO = Path(__file__).resolve().parents[2]
NEWCOMER = REPO / "tests" / "fixtures" / "newcomer6" / "inspect"
CORPUS = REPO / "tests" / "data" / "corpus"


def _inspect(path: Path):
    findings = inspect_text(path.read_text(), str(path), InspectOptions())
    return verdict_from_findings(findings), findings


def _unreadable(findings) -> list:
    return [f for f in findings if f.signal == "health_field_unreadable"]


def test_dram_counts_na_with_ecc_enabled_are_unread():
    verdict, findings = _inspect(NEWCOMER / "w_ecc_q_na.txt")
    assert verdict == "unknown"
    (found,) = _unreadable(findings)
    assert found.pci == "00000000:18:00.0" and "ECC mode Enabled" in found.message


def test_an_a100_csv_row_of_na_is_unread_and_the_row_beside_it_is_not():
    verdict, findings = _inspect(NEWCOMER / "u_query_hdr.csv")
    assert verdict == "unknown"
    (found,) = _unreadable(findings)
    assert found.gpu == "1"  # GPU 0 reads 0 and `No`: its retired pages N/A is an A100's answer


def test_negative_the_same_a100_rows_with_numbers_stay_healthy():
    verdict, findings = _inspect(NEWCOMER / "v_query_ok.csv")
    assert verdict == "healthy" and not _unreadable(findings)


@pytest.mark.parametrize("case", [
    "fresh13/cases/1501_*",  # GeForce RTX 4070 laptop: ECC Mode N/A, every counter N/A
    "fresh8/cases/1002_*",  # eight RTX 4090, ECC Disabled
    "fresh8/cases/1015_*",  # A100 in MIG mode, 510: volatile DRAM N/A, aggregate read
    "fresh13/cases/1519_*",  # four A100 ECC on: retired pages N/A (rows are remapped instead)
    "fresh13/cases/1502_*",  # GH200: retired pages N/A
    "fresh5/cases/601_*",  # Tesla T4, ECC on: remapped rows N/A (no row remapper)
    "fresh/cases/218_*",  # P100: per-location L1 / CBU counters N/A
    "fresh7/cases/906_*",  # TITAN V, ECC N/A
    "fresh7/cases/905_*",  # eight H100, ECC on: retired pages N/A
])
def test_negative_na_where_it_is_the_answer_is_not_unread(case):
    (path,) = sorted(CORPUS.glob(case))
    _, findings = _inspect(path)
    assert not _unreadable(findings), [f.message for f in _unreadable(findings)]


@pytest.mark.parametrize("mig, unread", [("Disabled", True), ("Enabled", False)])
def test_remapped_rows_na_count_only_outside_mig(tmp_path, mig, unread):
    """Remapped rows read `N/A` in MIG mode (corpus 051, 625, 2007), so only an HBM Ampere-or-
    later GPU shown with MIG disabled has them unread (a CSV in `--query-gpu`'s own layout)."""
    path = tmp_path / "q.csv"
    path.write_text("index, name, mig.mode.current, ecc.errors.uncorrected.aggregate.total, "
                    f"remapped_rows.pending\n0, NVIDIA H100 80GB HBM3, {mig}, 0, [N/A]\n")
    _, findings = _inspect(path)
    assert bool(_unreadable(findings)) is unread
