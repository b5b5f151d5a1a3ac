"""RDMA ports (InfiniBand, RoCE, EFA) and the findings drawn from them, shared by the fabric tool
parsers (`gpuslo.exporter.fabric`), sysfs (`gpuslo.exporter.fabric_sysfs`) and the
`network_links` check.

Port states follow the InfiniBand Architecture Specification's PortState and PortPhysicalState
(`ibstat` spells them `Active`, `Down`, `Initializing`, `Armed`; sysfs and `ibstatus` print
`4: ACTIVE`, `5: LinkUp`). A port is usable only when its state is Active and its physical state
LinkUp.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gpuslo import names
from gpuslo.verdict import Finding

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

    @property
    def usable(self) -> bool:
        """True when the port is Active with its physical link up."""
        return (
            self.state.lower() == STATE_ACTIVE.lower()
            and self.physical_state.lower() == PHYSICAL_LINK_UP.lower()
        )


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


# ------------------------------------------------------------------------------------------------
# evaluation shared by ibstat, ibstatus and sysfs
# ------------------------------------------------------------------------------------------------


def port_finding(kind: str, port: Port) -> Finding:
    """One finding per port: `port_active` (ok), `port_down` (fatal, check the cabling), or
    `device_unreadable` (unknown) when the evidence shows the port without its state."""
    where = f"{port.device} port {port.port}" if port.device else "port"
    if not port.state:
        return Finding(
            kind=kind,
            class_=names.CLASS_UNKNOWN,
            signal="device_unreadable",
            device=port.device or None,
            reason="parse_error",
            message=f"{where}: no state shown",
        )
    if port.usable:
        rate = f" at {port.rate_gbps:g} Gb/s" if port.rate_gbps is not None else ""
        return Finding(
            kind=kind,
            class_=names.CLASS_OK,
            signal="port_active",
            device=port.device or None,
            state=port.state,
            physical_state=port.physical_state,
            message=f"{where} {port.state}/{port.physical_state}{rate}",
        )
    return Finding(
        kind=kind,
        class_=names.CLASS_FATAL,
        signal="port_down",
        device=port.device or None,
        state=port.state or "unknown",
        physical_state=port.physical_state or "unknown",
        reason="network_port_down",
        action=names.ACTION_CHECK_CABLING,
        message=f"{where} is {port.state or '?'} (physical state {port.physical_state or '?'})",
    )


def expectation_findings(
    kind: str,
    seen: Iterable[str],
    expected: int | tuple[str, ...] | None,
    unreadable: Iterable[str] = (),
) -> list[Finding]:
    """Compare the devices seen against the expected count or names.

    A named device that a tool said it could not read is `device_unreadable` (unknown,
    tool_error); one simply absent is `network_devices_missing` (fatal). A count short of the
    expected count is `network_devices_missing` too.
    """
    seen_set, unreadable_set = set(seen), set(unreadable)
    out = [
        Finding(
            kind=kind,
            class_=names.CLASS_UNKNOWN,
            signal="device_unreadable",
            device=name or None,
            reason="tool_error",
            message=f"{name or 'a device'}: the tool could not read it (partial output)",
        )
        for name in sorted(unreadable_set - seen_set)
    ]
    if isinstance(expected, tuple):
        for name in sorted(set(expected) - seen_set - unreadable_set):
            out.append(missing_finding(kind, 1, 0, device=name))
    elif expected is not None and len(seen_set) < expected:
        out.append(missing_finding(kind, expected, len(seen_set)))
    return out


def missing_finding(kind: str, expected: int, seen: int, device: str | None = None) -> Finding:
    what = f"{device} not shown" if device else f"{seen} of {expected} expected devices seen"
    return Finding(
        kind=kind,
        class_=names.CLASS_FATAL,
        signal="network_devices_missing",
        device=device,
        count=seen,
        reason="network_devices_missing",
        action=names.ACTION_CHECK_CABLING,
        message=what,
    )


def evaluate_ports(
    kind: str,
    ports: Iterable[Port],
    expected: int | tuple[str, ...] | None,
    unreadable: Iterable[str] = (),
    devices: Iterable[str] = (),
) -> list[Finding]:
    """Findings for a set of ports: one per port, the `ports_active` inventory (class ok, count of
    usable ports) and the comparison against the expected devices (`expectation_findings`)."""
    ports = list(ports)
    findings = [port_finding(kind, port) for port in ports] + degraded_findings(kind, ports)
    active = sum(port.usable for port in ports)
    if ports:
        findings.append(
            Finding(
                kind=kind,
                class_=names.CLASS_OK,
                signal="ports_active",
                count=active,
                message=f"{active} of {len(ports)} ports active",
            )
        )
    seen = {port.device for port in ports} | set(devices)
    findings += expectation_findings(kind, seen, expected, unreadable)
    return findings


def degraded_findings(kind: str, ports: Iterable[Port]) -> list[Finding]:
    """`port_degraded` (class warn) for an active port whose rate is below the fastest active port
    of the same link layer in the same evidence: collectives still run, at a fraction of the
    bandwidth (shared/MISSION.md). Warn, not fatal: a node may mix link speeds on purpose."""
    usable = [port for port in ports if port.usable and port.rate_gbps is not None]
    fastest: dict[str, float] = {}
    for port in usable:
        fastest[port.link_layer] = max(fastest.get(port.link_layer, 0.0), port.rate_gbps)
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_WARN,
            signal="port_degraded",
            device=port.device,
            state=port.state,
            physical_state=port.physical_state,
            reason="network_port_degraded",
            action=names.ACTION_CHECK_CABLING,
            message=f"{port.device} port {port.port} active at {port.rate_gbps:g} Gb/s, "
            f"others at {fastest[port.link_layer]:g} Gb/s",
        )
        for port in usable
        if port.rate_gbps < fastest[port.link_layer]
    ]
