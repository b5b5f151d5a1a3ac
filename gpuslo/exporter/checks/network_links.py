"""`network_links` check: InfiniBand ports and EFA devices against what the node should have.

Evidence: sysfs (`gpuslo.exporter.evidence.fabric.sysfs.read_infiniband_sysfs` under
`context.sysfs`).
Rules:
- InfiniBand/RoCE port (driver not `efa`): ok when Active with physical state LinkUp; `fail`
  `network_port_down` (action check_cabling) otherwise; `unknown` `parse_error` when its state
  could not be read; `fail` `network_port_degraded` when Active below the configured rate
  (`config["network"]["infiniband_rate_gbps"]`: collectives still run, at a fraction of the
  bandwidth, so the job crawls instead of crashing — shared/MISSION.md).
- InfiniBand devices fewer than `expect_network_devices["infiniband"]` → `fail`
  `network_devices_missing`.
- EFA: the driver reports every port ACTIVE, so the device count is compared against the
  configured count (`expect_network_devices["efa"]`) or the count for `context.instance_type`
  (`fabric_sysfs.EFA_DEVICES_BY_INSTANCE_TYPE`). Fewer → `fail` `network_devices_missing`; EFA
  devices present but no expected count → `unknown` `no_data` (an unknown instance type is never
  `ok`). A netdev with carrier 0 → `fail` `network_port_down` for that device.
- No InfiniBand or EFA device and none expected → one explicit not-applicable result (a sysfs
  with `class/` but no `class/infiniband`); a root that is not a sysfs (missing, no `class/`) →
  `unknown` `dependency_missing` naming it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpuslo import names
from gpuslo.errors import DependencyMissing, InputError, ToolError
from gpuslo.exporter.checks.base import DEFAULT_INTERVAL_S, CheckContext, CheckOutput
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.exporter.evidence.fabric.sysfs import (
    EFA_DRIVER,
    NotSysfs,
    expected_efa_devices,
    read_infiniband_sysfs,
)
from gpuslo.verdict import NODE_SCOPE, CheckResult

CHECK = "network_links"


@dataclass(frozen=True)
class LinkExpectation:
    """What the node should have. `None` means not known. Rates in Gb/s."""

    infiniband_devices: int | None = None
    efa_devices: int | None = None
    infiniband_rate_gbps: float | None = None
    instance_type: str = ""


def _result(scope: str, status: str, message: str, reason: str = "", **extra) -> CheckResult:
    action = names.ACTION_CHECK_CABLING if status == names.STATUS_FAIL else names.ACTION_NONE
    return CheckResult(
        check=CHECK,
        scope=scope,
        status=status,
        reason=reason,
        action=action,
        message=message,
        **extra,
    )


def evaluate_port(port: Port, rate_gbps: float | None) -> CheckResult:
    """One InfiniBand/RoCE port → ok, fail (`network_port_down`, `network_port_degraded`) or
    unknown (`parse_error`: state unreadable)."""
    where = f"{port.device} port {port.port}"
    if not port.state:
        return _result(
            port.device, names.STATUS_UNKNOWN, f"{where}: state unreadable", "parse_error"
        )
    if not port.usable:
        return _result(
            port.device,
            names.STATUS_FAIL,
            f"{where} {port.state}/{port.physical_state or '?'}",
            "network_port_down",
        )
    if rate_gbps is not None and (port.rate_gbps is None or port.rate_gbps < rate_gbps):
        return _result(
            port.device,
            names.STATUS_FAIL,
            f"{where} active at {port.rate_gbps} Gb/s, expected {rate_gbps:g}",
            "network_port_degraded",
        )
    return _result(
        port.device, names.STATUS_OK, f"{where} Active/LinkUp at {port.rate_gbps:g} Gb/s"
    )


def _count(kind: str, seen: int, expected: int | None) -> CheckResult:
    if expected is None:
        return _result(
            NODE_SCOPE,
            names.STATUS_UNKNOWN,
            f"{seen} {kind} device(s); expected count unknown (set it)",
            "no_data",
        )
    if seen < expected:
        return _result(
            NODE_SCOPE,
            names.STATUS_FAIL,
            f"{seen} of {expected} {kind} devices present",
            "network_devices_missing",
        )
    return _result(NODE_SCOPE, names.STATUS_OK, f"{seen} of {expected} {kind} devices present")


def _efa_results(efa: Sequence[Port], expectation: LinkExpectation) -> list[CheckResult]:
    expected = expected_efa_devices(expectation.instance_type, expectation.efa_devices)
    if not efa and not expected:
        return []
    devices = sorted({port.device for port in efa})
    results = [_count("EFA", len(devices), expected)]
    for port in efa:
        if port.carrier is False:
            results.append(
                _result(
                    port.device,
                    names.STATUS_FAIL,
                    f"{port.device}: netdev {port.netdev} has no carrier",
                    "network_port_down",
                )
            )
    return results


def evaluate_network_links(
    ports: Sequence[Port], expectation: LinkExpectation
) -> list[CheckResult]:
    """Results for every port and device count (pure; `observed_at` is left 0 for the caller)."""
    efa = [port for port in ports if port.driver == EFA_DRIVER]
    infiniband = [port for port in ports if port.driver != EFA_DRIVER]
    results = [evaluate_port(port, expectation.infiniband_rate_gbps) for port in infiniband]
    ib_devices = len({port.device for port in infiniband})
    if expectation.infiniband_devices is not None and (
        ib_devices or expectation.infiniband_devices
    ):
        results.append(_count("InfiniBand", ib_devices, expectation.infiniband_devices))
    results += _efa_results(efa, expectation)
    if not results:
        return [
            _result(
                NODE_SCOPE,
                names.STATUS_OK,
                "not applicable: no InfiniBand or EFA device on this node and none expected",
                applicable=False,
            )
        ]
    return results


def expectation_from_context(context: CheckContext) -> LinkExpectation:
    """Expected counts from `context.expect_network_devices` (`infiniband`, `efa`), the instance
    type, and the InfiniBand rate from `context.config["network"]["infiniband_rate_gbps"]`."""
    network = context.config.get("network") or {}
    rate = network.get("infiniband_rate_gbps")
    return LinkExpectation(
        infiniband_devices=context.expect_network_devices.get("infiniband"),
        efa_devices=context.expect_network_devices.get("efa"),
        infiniband_rate_gbps=float(rate) if rate is not None else None,
        instance_type=context.instance_type,
    )


@dataclass
class NetworkLinksCheck:
    """The `network_links` check (see the module docstring for its rules)."""

    name: str = CHECK
    interval_s: float = DEFAULT_INTERVAL_S
    dependencies: tuple[str, ...] = field(default=("sysfs:class/infiniband",))

    def run(self, context: CheckContext) -> CheckOutput:
        """Read sysfs under `context.sysfs` and evaluate. Facts for the snapshot: devices present
        and expected by kind (`infiniband`, `efa`; `gpuslo_network_devices{,_expected}`). Raises
        DependencyMissing when `context.sysfs` is not a sysfs (missing, or no `class/`), ToolError
        when a sysfs file exists but cannot be read."""
        started = time.monotonic()
        try:
            ports = read_infiniband_sysfs(context.sysfs)
        except NotSysfs as error:
            raise DependencyMissing(str(error)) from None
        except InputError as error:
            raise ToolError(str(error)) from None
        expectation = expectation_from_context(context)
        now = context.clock() if context.clock else time.time()
        duration = time.monotonic() - started
        source = f"sysfs {context.sysfs}"
        results = [
            _stamp(result, source, now, duration)
            for result in evaluate_network_links(ports, expectation)
        ]
        return CheckOutput(results, device_counts(ports, expectation))


def device_counts(ports: Sequence[Port], expectation: LinkExpectation) -> dict[str, dict[str, int]]:
    """`{"network_devices": {kind: present}, "network_devices_expected": {kind: expected}}` with
    kinds `infiniband` and `efa`; an expected count that is not known is left out."""
    efa = {port.device for port in ports if port.driver == EFA_DRIVER}
    infiniband = {port.device for port in ports if port.driver != EFA_DRIVER}
    expected = {
        "infiniband": expectation.infiniband_devices,
        "efa": expected_efa_devices(expectation.instance_type, expectation.efa_devices),
    }
    return {
        "network_devices": {"efa": len(efa), "infiniband": len(infiniband)},
        "network_devices_expected": {k: v for k, v in expected.items() if v is not None},
    }


def _stamp(result: CheckResult, source: str, now: float, duration: float) -> CheckResult:
    return replace(result, source=source, observed_at=now, duration_s=duration)
