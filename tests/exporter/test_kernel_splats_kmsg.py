"""A kernel splat split between two /dev/kmsg reads is one event, judged once, in the live `xid`
check (issue 24, `checks.xid_carry`): the same reading `inspect` gives the whole log.

The records are real lines (tests/fixtures/kernel_splats/, sources in test_kernel_splats.py):
fresh11 1309's oops at nvidia's load (`BUG: kernel NULL pointer dereference`, then the die line,
then `RIP: 0010:nvlogInit+0x6/0xd0 [nvidia]`), and open-gpu-kernel-modules#968's frames in
nvidia as the next read's records. Each split is tried at every record boundary.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.checks.xid_carry import CARRY_LINES
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kernel_splats"
OOPS_1309 = (FIXTURES / "oops-1309.txt").read_text(encoding="utf-8")
TRACE_968 = (FIXTURES / "trace-968.txt").read_text(encoding="utf-8")
OOPS = [line.split("] ", 1)[1] for line in OOPS_1309.splitlines()]
FRAMES = [line.split("kernel: ", 1)[1] for line in TRACE_968.splitlines() if "[nvidia]" in line]


def records(texts: list[str], first: int) -> str:
    return "".join(f"3,{n},{2_600_000 + n},-;{text}\n" for n, text in enumerate(texts, first))


class Node:
    """A /dev/kmsg (a file of records here), its boot id and the check's state directory."""

    def __init__(self, root: Path) -> None:
        self.kmsg, self.procfs, self.state = root / "kmsg", root / "proc", root / "state"
        (self.procfs / "sys/kernel/random").mkdir(parents=True)
        (self.procfs / "sys/kernel/random/boot_id").write_text("boot-1\n")
        self.written = 0

    def read(self, texts: list[str]) -> tuple[list, int]:
        """Append `texts` as the next records and run the check: the node's problems (status,
        reason) and how many GPU events this read judged (the node result's count: one result
        per scope folds a warn under the node's fail, the count does not)."""
        with self.kmsg.open("a") as out:
            out.write(records(texts, self.written))
        self.written += len(texts)
        context = CheckContext(kmsg_path=self.kmsg, procfs=self.procfs, state_dir=self.state,
                               clock=lambda: 1_700_000_000.0)
        results = XidCheck().run(context).results
        (read,) = [r for r in results if r.scope == "node" and "records read" in r.message]
        judged = int(re.search(r"(\d+) GPU events", read.message).group(1))
        return [(r.status, r.reason) for r in results if r.scope == "node" and r.reason], judged


FAIL = (names.STATUS_FAIL, "driver_crash")


@pytest.mark.parametrize("cut", range(1, len(OOPS)))
def test_an_oops_cut_by_a_read_is_one_fatal_event(tmp_path, cut):
    node = Node(tmp_path)
    (first, one), (second, two) = node.read(OOPS[:cut]), node.read(OOPS[cut:])
    whole = [e for e in parse_kernel_log(records(OOPS, 0)) if e.kind == "kernel_splat"]
    assert [e.token for e in whole] == ["oops"]
    # read apart, the header alone would be no event and the frame alone a headerless trace (a
    # warn): with the carry, the oops fails the node once its NVIDIA frame is read, one event
    assert (first, second) in (([FAIL], [FAIL]), ([], [FAIL]))
    assert one + two == 1


@pytest.mark.parametrize("cut", range(0, len(FRAMES)))
def test_frames_of_a_judged_splat_in_the_next_read_are_not_a_second_event(tmp_path, cut):
    node = Node(tmp_path)
    assert node.read(OOPS + FRAMES[:cut]) == ([FAIL], 1)
    assert node.read(FRAMES[cut:]) == ([FAIL], 0)  # the problem held, no trace judged beside it


def test_a_splat_in_a_later_read_is_still_judged_and_the_carry_stays_bounded(tmp_path):
    """The negative: carrying the last reads hides nothing new. Frames more than a splat's reach
    after it, and a second oops, are judged; the state keeps at most `CARRY_LINES` records."""
    node = Node(tmp_path)
    node.read(OOPS)
    filler = [f"NVRM: GPU at PCI:0000:{n:02x}:00: GPU-{n}" for n in range(CARRY_LINES + 10)]
    assert node.read(filler)[0] == [FAIL]
    state = (tmp_path / "state" / "xid_kmsg_state.json").read_text()
    assert state.count("GPU at PCI") <= CARRY_LINES
    assert node.read(FRAMES) == ([FAIL], 1)  # beyond the splat's reach: a trace of its own
    assert node.read(OOPS) == ([FAIL], 1)  # a new oops: judged
