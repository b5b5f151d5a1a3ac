"""Port judgement: the findings drawn from RDMA ports (InfiniBand, RoCE, EFA), the one rule for
the fabric tool outputs `inspect` reads (ibstat, ibstatus, ibdev2netdev, fi_info) and for sysfs,
which the `network_links` check reads (the check maps the classes to statuses:
`status_of`).

Rules (InfiniBand Architecture Specification PortState / PortPhysicalState; shared/corpus cases
006, 007, 008, 041, 055):
- a port is usable only when its state is Active and its physical state LinkUp: `port_active`;
- a port that is not: `port_down`, fatal, reason `network_port_down`. The action names the
  likely cause: physical state `Disabled` is an administrative choice (enable the port), and a
  physical link that is up (`LinkUp`, state Down/Init/Armed) waits for the subnet manager or its
  partition/VF configuration: neither is a cable fault (action none); any other physical state
  (`Polling`, `Sleep`, `LinkErrorRecovery`, ...) asks to check the cabling;
- a port with no state shown is `device_unreadable` (unknown); so is an Active port whose
  physical state is not shown (an ibstat block cut after `State: Active`, a sysfs `phys_state`
  not read): Active needs the physical link up (IBA PortState), so it is not a down port, and
  whether it is usable is not shown either;
- with an expected device set (names), a device outside it is inventory (`port_not_expected`,
  ok), not judged; the expected devices still fail closed: one not shown is
  `network_devices_missing` (fatal), one a tool could not read `device_unreadable` (unknown);
- with an expected count, fewer devices are `network_devices_missing` (fatal);
- with no expectation, a down port that is an unused spare (switched off, of an adapter model in
  use, a minority of the node's ports) is warn: `gpuslo.exporter.policy.port_spares`;
- an Active port below a configured rate is `port_degraded`, fatal (collectives crawl at a
  fraction of the bandwidth, shared/MISSION.md); without a configured rate, one below the
  fastest usable port of the same link layer *and the same capability* (`Port.speed_class`: the
  same adapter model, else the same lane speed, else the same adapter) is `port_degraded`, warn:
  a port is judged against what its own adapter can do, never against a faster model on the
  same node (a node may mix ConnectX-6 HDR and ConnectX-7 NDR adapters);
- EFA: the driver reports every port ACTIVE, so the device count against the expected count is
  what counts (`efa_findings`): fewer is fatal, devices with no expected count unknown; a netdev
  without carrier is `port_down`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpuslo import names
from gpuslo.exporter.evidence.fabric.ports import PHYSICAL_LINK_UP, STATE_ACTIVE, Port
from gpuslo.exporter.policy.port_spares import PHYSICAL_DISABLED, spare_ports
from gpuslo.verdict import Finding

STATUS_OF_CLASS = {
    names.CLASS_OK: names.STATUS_OK,
    names.CLASS_WARN: names.STATUS_WARN,
    names.CLASS_FATAL: names.STATUS_FAIL,
    names.CLASS_UNKNOWN: names.STATUS_UNKNOWN,
}


def status_of(finding: Finding) -> str:
    """The check status for a port finding's class (ok, warn, fail, unknown)."""
    return STATUS_OF_CLASS.get(finding.class_, names.STATUS_OK)


def _where(port: Port) -> str:
    return f"{port.device} port {port.port}" if port.device else "port"


def down_action(port: Port) -> str:
    """The action for a port that is not usable (see the module rules)."""
    physical = port.physical_state.lower()
    if physical in (PHYSICAL_DISABLED.lower(), PHYSICAL_LINK_UP.lower()):
        return names.ACTION_NONE
    return names.ACTION_CHECK_CABLING


# What each port state means (InfiniBand Architecture Specification vol. 1, PortInfo PortState
# and PortPhysicalState; NVIDIA's ibstat(8) prints these words), keyed lower case without spaces.
STATE_MEANING = {
    "down": "no logical link",
    "initializing": "the link is trained but no subnet manager has configured the port yet, "
    "so it carries no data",
    "armed": "configured by the subnet manager but not yet activated, so it carries no data",
    "activedefer": "was Active and is deferring after a link error",
}
PHYSICAL_MEANING = {
    "polling": "looking for a peer: no cable, or nothing answers at the other end",
    "disabled": "switched off by an administrator",
    "sleep": "asleep, not looking for a peer",
    "portconfigurationtraining": "still training the link",
    "linkerrorrecovery": "recovering from link errors",
    "phytest": "in a physical-layer test mode",
    "linkup": "physical link up",
}


def meaning(port: Port) -> str:
    """Why a port that is not usable is not: its state's meaning, or for a Down port (or an
    Active one whose link is not up) its physical state's; "" for words the spec does not
    name."""
    state = STATE_MEANING.get(port.state.lower().replace(" ", ""), "")
    physical = PHYSICAL_MEANING.get(port.physical_state.lower(), "")
    if port.state.lower() in ("down", STATE_ACTIVE.lower()) and physical:
        return physical if port.physical_state.lower() != "linkup" else (
            "the physical link is up but the port was not brought up")
    return state


def port_finding(kind: str, port: Port, rate_gbps: float | None = None) -> Finding:
    """One finding per judged port: `port_active` (ok), `port_down` (fatal), `port_degraded`
    (fatal, below the configured `rate_gbps`) or `device_unreadable` (unknown: no state, or
    Active with no physical state)."""
    base = {"kind": kind, "device": port.device or None}
    if not port.state:
        return Finding(
            class_=names.CLASS_UNKNOWN,
            signal="device_unreadable",
            reason="parse_error",
            message=f"{_where(port)}: no state shown",
            **base,
        )
    if port.state.lower() == STATE_ACTIVE.lower() and not port.physical_state:
        return Finding(
            class_=names.CLASS_UNKNOWN,
            signal="device_unreadable",
            reason="parse_error",
            state=port.state,
            message=f"{_where(port)} is {port.state} but its physical state is not shown "
            "(output cut short?): not judged",
            **base,
        )
    states = {"state": port.state, "physical_state": port.physical_state or "unknown"}
    if not port.usable:
        why = {names.ACTION_NONE: " (not a cabling fault)"}.get(down_action(port), "")
        said = f": {meaning(port)}" if meaning(port) else ""
        return Finding(
            class_=names.CLASS_FATAL,
            signal="port_down",
            reason="network_port_down",
            action=down_action(port),
            message=f"{_where(port)} is {port.state} (physical state "
            f"{port.physical_state or '?'}){said}; not usable{why}",
            **states,
            **base,
        )
    if rate_gbps is not None and (port.rate_gbps is None or port.rate_gbps < rate_gbps):
        return Finding(
            class_=names.CLASS_FATAL,
            signal="port_degraded",
            reason="network_port_degraded",
            action=names.ACTION_CHECK_CABLING,
            message=f"{_where(port)} active at {port.rate_gbps} Gb/s, expected {rate_gbps:g}",
            **states,
            **base,
        )
    rate = f" at {port.rate_gbps:g} Gb/s" if port.rate_gbps is not None else ""
    return Finding(
        class_=names.CLASS_OK,
        signal="port_active",
        message=f"{_where(port)} {port.state}/{port.physical_state}{rate}",
        **states,
        **base,
    )


def not_expected_finding(kind: str, port: Port) -> Finding:
    """`port_not_expected` (ok): a port of a device outside the expected set, as inventory."""
    return Finding(
        kind=kind,
        class_=names.CLASS_OK,
        signal="port_not_expected",
        device=port.device or None,
        state=port.state or None,
        physical_state=port.physical_state or None,
        message=f"{_where(port)} {port.state or '?'}/{port.physical_state or '?'}: not an "
        "expected device, not judged",
    )


def degraded_findings(kind: str, ports: Iterable[Port]) -> list[Finding]:
    """`port_degraded` (warn) for an active port whose rate is below the fastest active port
    of the same link layer and capability (`Port.speed_class`) in the same evidence."""
    usable = [port for port in ports if port.usable and port.rate_gbps is not None]
    fastest: dict[tuple[str, str], float] = {}
    for port in usable:
        key = (port.link_layer, port.speed_class)
        fastest[key] = max(fastest.get(key, 0.0), port.rate_gbps)
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
            message=f"{_where(port)} active at {port.rate_gbps:g} Gb/s, others of its "
            f"{port.speed_class} at {fastest[(port.link_layer, port.speed_class)]:g} Gb/s",
        )
        for port in usable
        if port.rate_gbps < fastest[(port.link_layer, port.speed_class)]
    ]


def expectation_findings(
    kind: str,
    seen: Iterable[str],
    expected: int | tuple[str, ...] | None,
    unreadable: Iterable[str] = (),
) -> list[Finding]:
    """Compare the devices seen against the expected count or names: a named device a tool
    said it could not read is `device_unreadable` (unknown, tool_error); one simply absent, or a
    count short of the expected count, is `network_devices_missing` (fatal)."""
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


def missing_finding(
    kind: str, expected: int, seen: int, device: str | None = None, what: str = "devices"
) -> Finding:
    """`network_devices_missing` (fatal, check the cabling)."""
    text = f"{device} not shown" if device else f"{seen} of {expected} {what} present"
    return Finding(
        kind=kind,
        class_=names.CLASS_FATAL,
        signal="network_devices_missing",
        device=device,
        count=seen,
        reason="network_devices_missing",
        action=names.ACTION_CHECK_CABLING,
        message=text,
    )


def evaluate_ports(
    kind: str,
    ports: Iterable[Port],
    expected: int | tuple[str, ...] | None,
    unreadable: Iterable[str] = (),
    devices: Iterable[str] = (),
    rate_gbps: float | None = None,
) -> list[Finding]:
    """Findings for a set of InfiniBand/RoCE ports (the module rules): one per port, the
    `ports_active` inventory (class ok, count of usable judged ports; left out when no port is
    usable: [MLNX] only an Active port carries traffic, fresh6 709/728) and the comparison
    against the expected devices. `rate_gbps`: the configured rate (None: compare the ports
    with one another)."""
    ports = list(ports)
    named = expected if isinstance(expected, tuple) else None
    judged = [p for p in ports if named is None or p.device in named]
    findings = [not_expected_finding(kind, p) for p in ports if p not in judged]
    findings += [port_finding(kind, port, rate_gbps) for port in judged]
    if expected is None:
        findings = spare_ports(findings, judged)
    if rate_gbps is None:
        findings += degraded_findings(kind, judged)
    active = sum(port.usable for port in judged)
    if active:  # "0 of N active" is no inventory to read ok: the port findings say it
        findings.append(
            Finding(
                kind=kind,
                class_=names.CLASS_OK,
                signal="ports_active",
                count=active,
                message=f"{active} of {len(judged)} ports active",
            )
        )
    seen = {port.device for port in ports} | set(devices)
    return findings + expectation_findings(kind, seen, expected, unreadable)


def log_port_down_spare(
    device: str, ever_up: bool, others_up: bool, expected: int | tuple[str, ...] | None
) -> str:
    """Why a port a kernel log shows still down at its end is an unused spare, not a lost path
    (warn, no action), or "" (fatal): the rule `spare_ports` applies to the fabric tools, for
    the log's `Link down` / `DOWN` messages. The mlx5 driver prints `Link down` when it starts a
    netdev with no carrier, so a port never seen up is one the node may not use (an uncabled
    second port, a front-end NIC left idle) -- a spare when another port of the node is up and
    no devices are expected. A port that was up and went down, a named expected device, or a
    node with no port up keeps the fatal (fresh7 919: an HGX H100 boot log, three idle Ethernet
    ports down beside the up boot NIC)."""
    if ever_up or not others_up:
        return ""
    if isinstance(expected, tuple) and device in expected:
        return ""
    if isinstance(expected, int):
        return ""
    return ("never up in this log while another port is up, and no devices are expected: an "
            "unused or uncabled port (set --expect-network-devices to judge it)")


def efa_findings(kind: str, ports: Sequence[Port], expected: int | None) -> list[Finding]:
    """EFA devices against the expected count (the module rules): `network_devices_missing`
    when fewer, `efa_devices` unknown (no_data) when devices are present but no count is
    expected, ok otherwise; `port_down` for a device whose netdev has no carrier."""
    devices = sorted({port.device for port in ports})
    if not devices and not expected:
        return []
    if expected is not None and len(devices) < expected:
        out = [missing_finding(kind, expected, len(devices), what="EFA devices")]
    else:
        blind = expected is None
        out = [
            Finding(
                kind=kind,
                class_=names.CLASS_UNKNOWN if blind else names.CLASS_OK,
                signal="efa_devices",
                count=len(devices),
                reason="no_data" if blind else None,
                message=f"{len(devices)} EFA device(s); the expected EFA device count is not "
                "configured, so a missing one cannot be told: set it (gpuslo check: "
                "--expect-network-devices efa=N; gpuslo inspect: --expect-efa-devices N)"
                if blind
                else f"{len(devices)} of {expected} EFA devices present",
            )
        ]
    for port in ports:
        if port.carrier is False:
            out.append(
                Finding(
                    kind=kind,
                    class_=names.CLASS_FATAL,
                    signal="port_down",
                    device=port.device,
                    reason="network_port_down",
                    action=names.ACTION_CHECK_CABLING,
                    message=f"{port.device}: netdev {port.netdev} has no carrier",
                )
            )
    return out
