"""RDMA ports (InfiniBand, RoCE, EFA) as tools and sysfs show them: evidence, no judging.

Port states follow the InfiniBand Architecture Specification's PortState and PortPhysicalState
(`ibstat` spells them `Active`, `Down`, `Initializing`, `Armed`; sysfs and `ibstatus` print
`4: ACTIVE`, `5: LinkUp`). The judgement is `gpuslo.exporter.policy.ports`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# sysfs/ibstatus state words (IBA PortState) -> ibstat's spelling.
_STATE_WORDS = {
    "DOWN": "Down",
    "INIT": "Initializing",
    "INITIALIZING": "Initializing",
    "ARMED": "Armed",
    "ACTIVE": "Active",
    "ACTIVE_DEFER": "ActiveDefer",
}
STATE_ACTIVE = "Active"
PHYSICAL_LINK_UP = "LinkUp"


@dataclass(frozen=True)
class Port:
    """One RDMA port as a tool or sysfs shows it.

    Attributes:
        device: RDMA device name (`mlx5_0`, `rdmap16s27` for EFA).
        port: port number (1-based).
        state: IBA port state in ibstat's spelling (`Active`, `Down`, ...), "" when not shown.
        physical_state: `LinkUp`, `Polling`, `Disabled`, ..., "" when not shown.
        rate_gbps: link rate in Gb/s, None when not shown.
        link_layer: `InfiniBand` or `Ethernet` (RoCE), "" when not shown.
        driver: kernel driver (`mlx5_core`, `efa`), "" when unknown.
        netdev: the network interface bound to the port, "" when unknown.
        carrier: netdev carrier (True up, False down), None when unknown.
        model: the adapter model (ibstat `CA type`, sysfs `hca_type`: `MT4129`), "" when unknown.
        rate_text: the rate as printed (`100 Gb/sec (4X EDR)`), "" when not shown.
        base_lid: the port's LID (`ibstat` `Base lid: 38`, `ibstatus` `base lid: 0x26`), None
            when not shown.
    """

    device: str
    port: int
    state: str = ""
    physical_state: str = ""
    rate_gbps: float | None = None
    link_layer: str = ""
    driver: str = ""
    netdev: str = ""
    carrier: bool | None = None
    model: str = ""
    rate_text: str = ""
    base_lid: int | None = None

    @property
    def fabric_assigned(self) -> bool:
        """True when the port holds a unicast LID (0x0001-0xBFFF) on an InfiniBand link: the
        subnet manager assigns one only to a port it brought onto the fabric, and the port keeps
        it when its link later goes down (IBA vol. 1 §4.1 LID ranges, §14.2.5 PortInfo.LID set
        by the SM; an uncabled or never-configured port reads 0, or 0xFFFF, the permissive LID).
        A RoCE port (Ethernet link layer) has no LID."""
        return (self.link_layer.lower() != "ethernet" and self.base_lid is not None
                and 0x0001 <= self.base_lid <= 0xBFFF)

    @property
    def speed_class(self) -> str:
        """What bounds this port's rate, to compare it with ports of the same capability only:
        its adapter model when known, else the lane speed the rate names (`EDR`, `HDR`, `NDR`:
        `100 Gb/sec (4X EDR)`), else its own device (the ports of one adapter)."""
        if self.model:
            return f"model {self.model}"
        lane = re.search(r"\(\s*\d+X\s+([A-Z]{2,4})\s*\)", self.rate_text)
        return f"speed {lane.group(1)}" if lane else f"device {self.device}"

    @property
    def usable(self) -> bool:
        """True when the port is Active with its physical link up."""
        return (
            self.state.lower() == STATE_ACTIVE.lower()
            and self.physical_state.lower() == PHYSICAL_LINK_UP.lower()
        )


def parse_lid(text: str) -> int | None:
    """`38` or `0x26` -> the LID; None when not a number."""
    text = text.strip()
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def normalise_state(text: str) -> str:
    """`4: ACTIVE` or `ACTIVE` or `Active` -> `Active`; unknown words are kept as given."""
    word = re.sub(r"^\s*\d+\s*:\s*", "", text).strip()
    return _STATE_WORDS.get(word.upper(), word)


def normalise_physical_state(text: str) -> str:
    """`5: LinkUp` -> `LinkUp`; `7: Phy Test` -> `PhyTest`."""
    return re.sub(r"^\s*\d+\s*:\s*", "", text).strip().replace(" ", "")


def parse_rate(text: str) -> float | None:
    """`100 Gb/sec (4X EDR)` or `200` (ibstat, Gb/s) -> 100.0 / 200.0; None when no number."""
    match = re.match(r"\s*(\d+(?:\.\d+)?)", text)
    return float(match.group(1)) if match else None
