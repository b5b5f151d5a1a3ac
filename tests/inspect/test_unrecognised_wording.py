"""The device-and-severity fallback's message reads as English: "with a fatal-class word" and
"with an error word" (newcomer6 finding 17: "with an fatal-class word", from the standard AER
line `pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received` in
tests/fixtures/newcomer6/inspect/y_misc_kernel.txt). The negative: the mlx5 health line of the
same file, an error word without a fatal one, keeps "an"."""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer6" / "inspect" / \
    "y_misc_kernel.txt"


def test_fallback_messages_use_the_right_article():
    findings = inspect_text(LOG.read_text(), LOG.name, InspectOptions())
    messages = {f.line: f.message for f in findings if f.signal == "unrecognised_message"}
    assert "names 00000000:3A:00.0 with a fatal-class word no reader knows" in messages[5]
    assert "with an error word no reader knows" in messages[4]
    assert not any("an fatal" in m for m in messages.values())
