"""Which inactive NVLink links are a fault: the one rule for every source of per-link states
(`nvidia-smi nvlink -s`, NVML `nvmlDeviceGetNvLinkState`, `dcgmi nvlink -s`), applied by
`policy.gpu.evaluate_gpu` for `inspect` and the live `nvlink` check alike.

On an NVSwitch (SXM / HGX) board every link the GPU lists is wired to the fabric or to its
peers, so a listed link that is inactive is bandwidth and peer traffic lost: fatal, drain and
reset (shared/corpus case 005, a V100-SXM2 with links 3 and 5 down).

A PCIe board's NVLink runs over optional bridges between a pair of boards, each bridge carrying
a fixed group of links, and some boards list more links than their bridges can carry (NVIDIA
product briefs; tests/data/corpus/SOURCES.md [BRIDGE]):

- H100 PCIe and H100 NVL: 18 NVLink 4 links on the die, nvidia-smi lists all 18; three NVLink
  bridges per pair, 600 GB/s bidirectional = 12 links of 50 GB/s, four per bridge. The other
  six never connect (fresh15 case 1720: links 4, 5, 10, 11, 16, 17 `<inactive>` on both GPUs of
  a bridged pair, by design);
- A100 PCIe: 12 NVLink 3 links, three bridges of four (600 GB/s bidirectional);
- RTX A6000 and A40: 4 NVLink 3 links, one bridge (112.5 GB/s bidirectional).

For such a board (`BRIDGED`), judged by how many links are up (which links a bridge carries is
not printed, only how many there are):

- as many as its bridges can carry: the rest are slots no bridge reaches, no problem;
- none: no bridge fitted, or every bridge down; a snapshot cannot tell: warn (the same reading
  as nvidia-smi's "all links are inActive", which a bridgeless board prints);
- a whole number of bridges but fewer than the board takes: a bridge not fitted or one whose
  links all went down; a snapshot cannot tell: warn, check the bridges. The node config's
  `expect_nvlinks` makes the live check fail on fewer links than the operator fitted;
- a count that is no whole number of bridges: a bridge with some of its links down, the same
  fault as on an SXM board: fatal (fresh14 case 1619, one of two links of an RTX 2080 Ti bridge).

A model not in the table, a GPU whose model the output does not show, or more links up than the
table allows keeps the SXM rule: any listed inactive link is fatal (fail closed).

One reading is none of these (`unlinked_node`): an output that names no GPU model (`dcgmi nvlink
-s`) and shows every listed link of every GPU down with no NVSwitch. A PCIe board with no
bridge fitted reads exactly so (shared/corpus case 052, NVIDIA/DCGM#198: two H100 NVL, 18 links
`D` each, "No NvSwitches found"), as does an NVSwitch-less SXM board whose every link failed;
the output cannot tell which, so it is unknown for each GPU (nvlink_inactive, reason no_data,
action none), never a drain and reset of GPUs that may be fine over PCIe: an output that names
the model (nvidia-smi -q, -L, nvlink -s) decides it by the rules above. One link up anywhere,
or an NVSwitch listed, and the fabric is in use: the rules above apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo import names
from gpuslo.exporter.policy.gpu_problem import GpuProblem


@dataclass(frozen=True)
class Bridged:
    """A PCIe board whose NVLink runs over bridges: `per_bridge` links each, `bridges` at most."""

    model: re.Pattern
    per_bridge: int
    bridges: int

    @property
    def links(self) -> int:
        """The most links the board's bridges carry."""
        return self.per_bridge * self.bridges


BRIDGED = (
    Bridged(re.compile(r"\bH100\b.*\b(?:PCIe|NVL)\b", re.IGNORECASE), 4, 3),
    Bridged(re.compile(r"\bA100\b.*\bPCIe\b", re.IGNORECASE), 4, 3),
    Bridged(re.compile(r"\b(?:RTX A6000|A40)\b", re.IGNORECASE), 4, 1),
)


def bridged_board(model: str | None) -> Bridged | None:
    """The `BRIDGED` entry whose pattern the product name `model` matches, else None."""
    if not model:
        return None
    return next((board for board in BRIDGED if board.model.search(model)), None)


def _down(down: list[int], klass: str, action: str, note: str) -> GpuProblem:
    return GpuProblem(
        signal="nvlink_inactive",
        class_=klass,
        reason="nvlink_down",
        action=action,
        message=f"NVLink links {', '.join(map(str, down))} inactive{note}",
        links=tuple(down),
        count=len(down),
    )


def nvlink_state_problems(model: str | None, states: dict[int, bool] | None) -> list[GpuProblem]:
    """The `nvlink_inactive` problem of one GPU's link states {link: up} (the module rules),
    [] when no listed link is down or the down ones are slots no bridge reaches."""
    down = sorted(link for link, up in (states or {}).items() if not up)
    if not down:
        return []
    board = bridged_board(model)
    active = len(states) - len(down)
    if board is None or active > board.links:
        return [_down(down, names.CLASS_FATAL, names.ACTION_DRAIN_AND_RESET, "")]
    if active == board.links:
        return []
    if active % board.per_bridge:
        note = (f": {active} up is no whole number of bridges of {board.per_bridge} links "
                "(a bridge with links down)")
        return [_down(down, names.CLASS_FATAL, names.ACTION_DRAIN_AND_RESET, note)]
    note = (f": {active} of the {board.links} links this board's {board.bridges} bridge(s) "
            "carry are up (a bridge not fitted, or all its links down)")
    return [_down(down, names.CLASS_WARN, names.ACTION_CHECK_CABLING, note)]


def unlinked_node(states: dict[str, dict[int, bool]], switches: int) -> bool:
    """True when `states` ({GPU: {link: up}}, from an output that names no GPU model) lists links
    and shows none of them up on any GPU, and the output lists no NVSwitch (`switches` = 0):
    a node whose NVLink is not in use at all (the module docstring)."""
    listed = [up for links in states.values() for up in links.values()]
    return bool(listed) and not any(listed) and switches == 0


def unlinked_problem(down: list[int]) -> GpuProblem:
    """The unknown `nvlink_inactive` problem of one GPU of an `unlinked_node`."""
    return GpuProblem(
        signal="nvlink_inactive",
        class_=names.CLASS_UNKNOWN,
        reason="no_data",
        action=names.ACTION_NONE,
        message=f"all {len(down)} NVLink links inactive on every GPU, no NVSwitch: a PCIe board "
        "with no NVLink bridge fitted reads so (not a fault), as does a board whose every link "
        "failed; the output names no model: judge it with one that does (nvidia-smi -q)",
        links=tuple(down),
        count=len(down),
    )
