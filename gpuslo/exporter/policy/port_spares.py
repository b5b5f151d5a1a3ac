"""Which down ports are an unused spare, not a lost path, when no devices are expected: the rule
`gpuslo.exporter.policy.ports.evaluate_ports` applies to the fabric tools (ibstat, ibstatus,
ibv_devinfo, ibdev2netdev) and to sysfs.

A spare is an extra port the node does not use: switched off, of an adapter model the node does
use, and a minority of the node's ports. What the IBA PortPhysicalState values mean (IBA vol. 1
§14.2.5.6 PortInfo, NVIDIA/Mellanox `ibstat` and `ibv_devinfo` documentation):
- `Disabled` (3): the port is switched off (by management, `ibportstate ... disable`, or, for a
  RoCE port, an Ethernet link with no carrier): it does not try to carry a link;
- `Polling` (2): the port is enabled and sends training sequences looking for a link partner,
  which it does not find (no cable, a dead cable, or the far end down). An uncabled port and a
  pulled or broken cable read the same, so an enabled port that is Polling is never read as a
  spare: it stays a lost path (check the cabling); a port left unused on purpose is disabled,
  and then reads `Disabled`;
- `LinkUp` (5) with a state other than Active: cabled, waiting for the subnet manager: not a
  spare either.

With no expected devices, a `port_down` is a spare (warn, no action) only when all hold:
- some port of the node is Active (only Active ports carry traffic, [MLNX]);
- its physical state is `Disabled`;
- it holds no LID the subnet manager assigned (`Port.fabric_assigned`: it was on the fabric and
  went down; fresh10 case 1214);
- its adapter model, when shown (`CA type`), has an Active port on the node: a whole model with
  none active is the node's fabric adapters down, not a spare (fresh12 case 1422: an HGX B300
  with its seven ConnectX-8 ports Disabled beside four active ConnectX-7);
- the node's down ports are a strict minority of its ports (fewer than half): most of a node's
  ports down is no spare (fatal). Exactly half down is no spare either, but not shown to be a
  lost path: one port of a dual-port adapter left uncabled reads the same as one that lost its
  link (fresh2 case 322: a dual-port ConnectX-3 with port 2 down, read [healthy, unknown]; fresh24
  case 2611: one of two ConnectX-6 Dx functions Disabled, and the thread says a process had been
  given it, read [unhealthy, unknown]), so it is `unknown` (no_data) until devices are expected.
A port of a multi-port adapter whose sibling is Active, with its physical state not shown
(`ibv_devinfo` without `-v`: `PORT_DOWN` only) and the last three conditions met, is `unknown`
(no_data): a disabled spare and a Polling link with no partner cannot be told apart (fresh2 case
322). Every other `port_down` keeps its fatal (fresh12 case 1409: port 2 of a dual-port HCA
Polling beside an Active port 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpuslo import names
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.verdict import Finding

PHYSICAL_DISABLED = "Disabled"
PHYSICAL_POLLING = "Polling"
_JUDGE_IT = "(set --expect-network-devices to judge it)"


@dataclass(frozen=True)
class _Node:
    """What the spare rule needs of the node's judged ports."""

    active_devices: frozenset[str]
    active_models: frozenset[str]
    ports_per_device: Counter
    down: int
    total: int

    @classmethod
    def of(cls, ports: Sequence[Port]) -> _Node:
        active = [port for port in ports if port.usable]
        return cls(
            active_devices=frozenset(port.device for port in active),
            active_models=frozenset(port.model for port in active if port.model),
            ports_per_device=Counter(port.device for port in ports),
            down=len(ports) - len(active),
            total=len(ports),
        )

    def sibling_active(self, port: Port) -> bool:
        """True when another port of the same multi-port adapter is Active."""
        return port.device in self.active_devices and self.ports_per_device[port.device] > 1

    def not_spare(self, port: Port) -> str:
        """Why a down port that looks switched off is still no spare ("" when it is one)."""
        if port.fabric_assigned:
            return "it holds the LID the subnet manager gave it: it was on the fabric"
        if port.model and port.model not in self.active_models:
            return f"no {port.model} port of the node is active: not a spare"
        if 2 * self.down > self.total:
            return f"{self.down} of the node's {self.total} ports are down: not spares"
        return ""

    @property
    def half_down(self) -> bool:
        """True when exactly half the node's ports are down (no minority, no majority)."""
        return 2 * self.down == self.total


def _physical(port: Port) -> str:
    return port.physical_state.lower()


def _spare(f: Finding, why: str) -> Finding:
    return replace(f, class_=names.CLASS_WARN, action=None, reason=None,
                   message=f"{f.message}; {why} and no devices are expected: a spare port "
                   f"{_JUDGE_IT}")


def _half(f: Finding, node: _Node) -> Finding:
    return replace(
        f, class_=names.CLASS_UNKNOWN, action=None, reason="no_data",
        message=f"{f.message}; {node.down} of the node's {node.total} ports are down, not a "
        "minority, so not a spare; an adapter port left unused and a port that lost its link "
        "read the same here " + _JUDGE_IT,
    )


def _unseen(f: Finding, port: Port) -> Finding:
    return replace(
        f, class_=names.CLASS_UNKNOWN, action=None, reason="no_data",
        message=f"{f.message}; another port of {port.device} is active, but this port's "
        "physical state is not shown: a switched-off spare (Disabled) and an enabled port with "
        "no link partner (Polling) read the same here (`ibv_devinfo -v` or `ibstat` shows it) "
        + _JUDGE_IT,
    )


def _judge(f: Finding, port: Port, node: _Node) -> Finding:
    """One port's finding under the module rules."""
    if f.signal != "port_down" or f.class_ != names.CLASS_FATAL or not node.active_devices:
        return f
    physical = _physical(port)
    if physical == PHYSICAL_POLLING.lower() and node.sibling_active(port):
        return replace(f, message=f"{f.message}; the port is enabled and finds no link partner: "
                       "not a spare (a port left unused on purpose is disabled)")
    disabled = physical == PHYSICAL_DISABLED.lower()
    unseen = not physical and node.sibling_active(port)
    if not (disabled or unseen):
        return f
    why_not = node.not_spare(port)
    if why_not:
        return replace(f, message=f"{f.message}; {why_not}")
    if node.half_down:
        return _half(f, node)
    if unseen:
        return _unseen(f, port)
    return _spare(f, "the port is disabled while other ports are active")


def spare_ports(findings: list[Finding], ports: Sequence[Port]) -> list[Finding]:
    """The module rules over `ports`' own `port_finding`s (same order, same length): a spare
    `port_down` becomes warn (no action, no reason), one whose physical state is not shown
    unknown (no_data); the others keep their class, with the reason they are no spare added
    to the message."""
    node = _Node.of(ports)
    return [_judge(f, port, node) for f, port in zip(findings, ports, strict=True)]
