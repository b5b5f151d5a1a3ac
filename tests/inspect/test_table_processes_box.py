"""The `nvidia-smi` table's own Processes box, printed after a blank line, is part of the table
when other output follows in the same file (newcomer6 finding 9, tests/fixtures/newcomer6/
inspect: `o_table_h100_ok.txt`, a 550 table of two H100 ending in `No running processes found`,
then gpud#1160's Xid 144 line or gpu-operator#610's fabric-manager journal, read `unknown`:
"lines 18-24: no parser recognises this part"). The negatives: text that is not a box after the
table, and the Processes box after a CSV (an output that ends in no box), are still
named as unrecognised."""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer6" / "inspect"
TABLE = (DATA / "o_table_h100_ok.txt").read_text()
XID_144 = (DATA / "d_xid144_nonfatal.txt").read_text()


def _inspect(text: str):
    findings = inspect_text(text, "paste.txt", InspectOptions())
    return verdict_from_findings(findings), {f.signal for f in findings}


def test_a_table_then_a_kernel_line_reads_both_and_nothing_else():
    verdict, signals = _inspect(TABLE + XID_144)
    assert verdict == "healthy" and "nothing_recognised" not in signals
    assert {"gpus_seen", "kernel_log_read"} <= signals


def test_a_table_then_a_fabric_manager_journal_reads_both():
    verdict, signals = _inspect((DATA / "p_h100_plus_fm.txt").read_text())
    assert verdict == "healthy" and "nothing_recognised" not in signals


def test_negative_prose_after_the_table_is_still_unrecognised():
    verdict, signals = _inspect(TABLE + "\nthe GPUs were slow after lunch, please check\n"
                                + XID_144)
    assert verdict == "unknown" and "nothing_recognised" in signals


def test_negative_a_box_after_an_output_that_is_no_box_is_still_unrecognised():
    """The same Processes box after a `--query-gpu` CSV (which ends in no box): not its part."""
    box = TABLE[TABLE.index("\n\n") + 2:]  # the Processes box alone
    assert box.lstrip().startswith("+---") and "Processes:" in box
    csv = (DATA / "v_query_ok.csv").read_text()
    verdict, signals = _inspect(csv + "\n" + box + XID_144)
    assert verdict == "unknown" and "nothing_recognised" in signals
