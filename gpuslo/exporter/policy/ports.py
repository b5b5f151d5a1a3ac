"""Port judgement: the findings drawn from RDMA ports (InfiniBand, RoCE, EFA), one rule for the
fabric tool outputs `inspect` reads (ibstat, ibstatus, ibdev2netdev, fi_info) and for sysfs,
which the `network_links` check reads. A port is usable only when its state is Active and its
physical state LinkUp (`Port.usable`).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuslo import names
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.verdict import Finding

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
