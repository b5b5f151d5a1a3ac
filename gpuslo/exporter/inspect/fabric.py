"""Fabric-link findings for `gpuslo inspect`: `ibstat`, `ibstatus`, `fi_info -p efa` and
`ibdev2netdev` outputs, parsed by `gpuslo.exporter.evidence.fabric.tools` and judged by
`gpuslo.exporter.policy.ports` (the same rule the `network_links` check uses)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuslo import names
from gpuslo.exporter.evidence.fabric.ibv_devinfo import devinfo_failures, parse_ibv_devinfo
from gpuslo.exporter.evidence.fabric.tools import (
    fi_info_errors,
    ibstatus_failures,
    looks_like_fi_info,
    parse_fi_info,
    parse_ibdev2netdev,
    parse_ibstat,
    parse_ibstatus,
)
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.ports import (
    efa_findings,
    evaluate_ports,
    expectation_findings,
    missing_finding,
)
from gpuslo.verdict import Finding


def inspect_ibstat(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `ibstat` output. A device its own fatal `ibpanic` / `iberror` line
    names is `device_unreadable`; when no port at all was read and the tool failed, the tool
    itself failed: `source_unavailable` (unknown, layer observability; no port is judged). An
    `ibwarn` line is a warning, not a failure (`evidence.fabric.diag_errors`)."""
    report = parse_ibstat(text)
    if report.ports or not report.failures:
        return evaluate_ports(
            "ibstat", report.ports, options.expect_network_devices, report.unreadable,
            report.devices,
        )
    failure = tool_failure("ibstat", report.failures, "no port was read")
    named = [name for name in report.unreadable if name]
    expected = expectation_findings(
        "ibstat", report.devices, options.expect_network_devices, named
    )
    return [failure, *expected]


def tool_failure(kind: str, lines: Sequence[str], consequence: str) -> Finding:
    """The `source_unavailable` finding (unknown, tool_error, layer observability) for a fabric
    tool that failed: `lines` its own failure lines (`events` = how many), the first quoted."""
    return Finding(
        kind=kind,
        class_=names.CLASS_UNKNOWN,
        signal="source_unavailable",
        reason="tool_error",
        layer=names.LAYER_OBSERVABILITY,
        events=len(lines),
        message=f"{kind} failed: {lines[0]}: {consequence}",
    )


def inspect_ibstatus(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `ibstatus` output. A device the script's own fatal error names
    (`ibstatus_failures`) is `device_unreadable`; when no port at all was read, the tool itself
    failed: `source_unavailable` (unknown, layer observability; the ports were not judged), and
    expected devices are missing."""
    ports, failed = parse_ibstatus(text), ibstatus_failures(text)
    named = [name for name in failed if name]
    if ports or not failed:
        return evaluate_ports("ibstatus", ports, options.expect_network_devices, named)
    failure = Finding(
        kind="ibstatus",
        class_=names.CLASS_UNKNOWN,
        signal="source_unavailable",
        reason="tool_error",
        layer=names.LAYER_OBSERVABILITY,
        events=len(failed),
        message="ibstatus failed: no InfiniBand device in /sys/class/infiniband"
        + (f" ({', '.join(named)})" if named else "")
        + ": no port was read",
    )
    return [failure, *expectation_findings("ibstatus", (), options.expect_network_devices, named)]


def inspect_fi_info(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `fi_info -p efa`: `efa_devices` (count; ok when at least the expected
    count, or when devices are seen and none is expected; fatal when fewer than expected: a count
    short of the expectation is never shown as ok) and `network_devices_missing`. Output
    that is only a negative libfabric code (`fi_getinfo: -61 (No data available)`: no provider
    found) is 0 devices: fatal when devices are expected, unknown otherwise."""
    if not looks_like_fi_info(text):
        return []  # not fi_info output at all (wrong --kind): nothing recognised, never "0 EFA"
    devices = parse_fi_info(text)
    errors = fi_info_errors(text)
    expected = options.expect_efa_devices
    if expected is None and isinstance(options.expect_network_devices, int):
        expected = options.expect_network_devices
    blind = not devices and expected is None  # nothing seen, nothing to compare against
    short = expected is not None and len(devices) < expected
    finding = Finding(
        kind="fi-info",
        class_=names.CLASS_UNKNOWN if blind else names.CLASS_FATAL if short else names.CLASS_OK,
        signal="efa_devices",
        count=len(devices),
        reason="no_data" if blind else "network_devices_missing" if short else None,
        message=f"{len(devices)} EFA device(s): {', '.join(devices) or 'none'}"
        + (f" (fi_getinfo answered {', '.join(errors)}: no EFA provider)" if errors else ""),
    )
    if short:
        return [finding, missing_finding("fi-info", expected, len(devices))]
    return [finding]


def inspect_ibdev2netdev(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `ibdev2netdev`: one `network_device` finding per port (ok; warn when the
    netdev is down, which says nothing about the InfiniBand link) and the expected-device check."""
    ports = parse_ibdev2netdev(text)
    findings = []
    for port in ports:
        up = "up" if port.carrier else "down (netdev state, not the InfiniBand link)"
        findings.append(
            Finding(
                kind="ibdev2netdev",
                class_=names.CLASS_OK if port.carrier else names.CLASS_WARN,
                signal="network_device",
                device=port.device,
                message=f"{port.device} port {port.port} -> {port.netdev} {up}",
            )
        )
    seen = {port.device for port in ports}
    return findings + expectation_findings("ibdev2netdev", seen, options.expect_network_devices)


def inspect_ibv_devinfo(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `ibv_devinfo [-v]`: EFA devices against the expected EFA count
    (`efa_findings`), the other RDMA ports by the port rules (`evaluate_ports`), and the tool's
    own failures (`devinfo_failures`), which are answers, never healthy:
    - `Failed to get IB devices list: ...`: the tool read nothing: `source_unavailable` (unknown),
      and expected devices missing (fatal);
    - `No IB devices found`: 0 devices: missing (fatal) when devices are expected, else
      `network_devices` unknown (no_data, with the libibverbs warnings that explain it);
    - a device it could not open or query, or one libibverbs could not use: `device_unreadable`
      (unknown, tool_error), beside the devices it did read; `IB device 'X' wasn't found`: X
      missing (fatal)."""
    ports = parse_ibv_devinfo(text)
    failed = devinfo_failures(text)
    efa = [port for port in ports if port.driver == "efa"]
    others = [port for port in ports if port.driver != "efa"]
    expected = options.expect_network_devices
    findings = []
    if failed.list_failed and not ports:
        findings.append(tool_failure("ibv-devinfo", [failed.list_failed], "no device was read"))
    elif failed.no_devices and not ports and expected is None and not options.expect_efa_devices:
        findings.append(_no_devices(failed.warnings))
    if efa or options.expect_efa_devices:
        findings += efa_findings("ibv-devinfo", efa, options.expect_efa_devices)
    if others or (not efa and expected is not None):
        findings += evaluate_ports("ibv-devinfo", others, expected, failed.warned + failed.named)
    elif failed.warned or failed.named:
        findings += expectation_findings("ibv-devinfo", (), None, failed.warned + failed.named)
    findings += [missing_finding("ibv-devinfo", 1, 0, device=name) for name in failed.not_found]
    unnamed = len(failed.unreadable) - len(failed.named)
    if unnamed > 0:
        findings.append(_unopened(failed.unreadable, unnamed))
    return findings


def _no_devices(warnings: Sequence[str]) -> Finding:
    """`network_devices` unknown (no_data): `ibv_devinfo` listed no device and none is expected."""
    why = f" (libibverbs: {'; '.join(warnings[:2])})" if warnings else ""
    return Finding(
        kind="ibv-devinfo",
        class_=names.CLASS_UNKNOWN,
        signal="network_devices",
        count=0,
        reason="no_data",
        message=f"ibv_devinfo: No IB devices found{why}: 0 RDMA devices; set "
        "--expect-network-devices to judge whether the node should have some",
    )


def _unopened(lines: Sequence[str], count: int) -> Finding:
    """`device_unreadable` (unknown, tool_error): devices `ibv_devinfo` could not open or query,
    unnamed (it prints the failure before a device's `hca_id:`)."""
    return Finding(
        kind="ibv-devinfo",
        class_=names.CLASS_UNKNOWN,
        signal="device_unreadable",
        reason="tool_error",
        events=count,
        message=f"ibv_devinfo could not read {count} device(s) ({lines[0]}): not judged",
    )
