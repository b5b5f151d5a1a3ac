"""`network_links` check: InfiniBand ports and EFA devices against what the node should have.

Evidence: sysfs (`gpuslo.exporter.evidence.fabric.sysfs.read_infiniband_sysfs` under
`context.sysfs`). Judgement: `gpuslo.exporter.policy.ports`, the same rules `gpuslo inspect`
applies to ibstat/ibstatus output, so the same ports get the same verdict; this check maps the
findings' classes to statuses (ok, warn, fail, unknown), one result per device (a finding that
names none, such as a missing device, is `node`). In short:
- InfiniBand/RoCE port (driver not `efa`): ok when Active with physical state LinkUp; `fail`
  `network_port_down` otherwise (action check_cabling, except physical state Disabled or a
  physical link up waiting for the subnet manager: none); `unknown` `parse_error` when its state
  could not be read; `fail` `network_port_degraded` when Active below the configured rate
  (`config["network"]["infiniband_rate_gbps"]`), `warn` when below the other ports' rate;
- InfiniBand devices fewer than `expect_network_devices["infiniband"]` → `fail`
  `network_devices_missing`;
- EFA: the device count against the configured count (`expect_network_devices["efa"]`) or the
  count for `context.instance_type` (`fabric_sysfs.EFA_DEVICES_BY_INSTANCE_TYPE`); fewer → `fail`
  `network_devices_missing`; EFA devices present but no expected count → `unknown` `no_data`
  (an unknown instance type is never `ok`); a netdev with carrier 0 → `fail`
  `network_port_down` for that device;
- no InfiniBand or EFA device and none expected → one explicit not-applicable result (a sysfs
  with `class/` but no `class/infiniband`); a root that is not a sysfs (missing, no `class/`) →
  `unknown` `dependency_missing` naming it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpuslo import names
from gpuslo.errors import DependencyMissing, InputError, ToolError
from gpuslo.exporter.checks.base import (
    DEFAULT_INTERVAL_S,
    CheckContext,
    CheckOutput,
    NetworkFacts,
)
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.exporter.evidence.fabric.sysfs import (
    EFA_DRIVER,
    NotSysfs,
    expected_efa_devices,
    read_infiniband_sysfs,
)
from gpuslo.exporter.policy.ports import efa_findings, evaluate_ports, status_of
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

CHECK = "network_links"
KIND = "sysfs"
SUMMARY_SIGNALS = ("ports_active",)  # inventory totals, not a result of their own


@dataclass(frozen=True)
class LinkExpectation:
    """What the node should have. `None` means not known. Rates in Gb/s."""

    infiniband_devices: int | None = None
    efa_devices: int | None = None
    infiniband_rate_gbps: float | None = None
    instance_type: str = ""


def _result(scope: str, status: str, message: str, reason: str = "", **extra) -> CheckResult:
    return CheckResult(
        check=CHECK, scope=scope, status=status, reason=reason, message=message, **extra
    )


def result_of(finding: Finding) -> CheckResult:
    """The check result for one port finding: its device's scope (else `node`), the status of
    its class, its reason and action."""
    status = status_of(finding)
    reason = finding.reason or ""
    if status in (names.STATUS_OK, names.STATUS_WARN) and reason not in names.REASON_LAYER:
        reason = ""
    return _result(
        finding.device or NODE_SCOPE,
        status,
        finding.message or finding.signal or "",
        reason,
        action=finding.action or names.ACTION_NONE,
    )


def _infiniband_results(ports: Sequence[Port], expectation: LinkExpectation) -> list[CheckResult]:
    expected = expectation.infiniband_devices
    findings = evaluate_ports(KIND, ports, expected, rate_gbps=expectation.infiniband_rate_gbps)
    results = [result_of(f) for f in findings if f.signal not in SUMMARY_SIGNALS]
    devices = len({port.device for port in ports})
    missing = any(f.signal == "network_devices_missing" for f in findings)
    if expected is not None and (devices or expected) and not missing:
        message = f"{devices} of {expected} InfiniBand devices present"
        results.append(_result(NODE_SCOPE, names.STATUS_OK, message))
    return results


def evaluate_network_links(
    ports: Sequence[Port], expectation: LinkExpectation
) -> list[CheckResult]:
    """Results for every port and device count (pure; `observed_at` is left 0 for the caller)."""
    efa = [port for port in ports if port.driver == EFA_DRIVER]
    infiniband = [port for port in ports if port.driver != EFA_DRIVER]
    results = _infiniband_results(infiniband, expectation)
    expected_efa = expected_efa_devices(expectation.instance_type, expectation.efa_devices)
    results += [result_of(f) for f in efa_findings(KIND, efa, expected_efa)]
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


def device_counts(ports: Sequence[Port], expectation: LinkExpectation) -> NetworkFacts:
    """Devices present and expected by kind (`infiniband`, `efa`); an expected count that is not
    known is left out."""
    efa = {port.device for port in ports if port.driver == EFA_DRIVER}
    infiniband = {port.device for port in ports if port.driver != EFA_DRIVER}
    expected = {
        "infiniband": expectation.infiniband_devices,
        "efa": expected_efa_devices(expectation.instance_type, expectation.efa_devices),
    }
    return NetworkFacts(
        network_devices={"efa": len(efa), "infiniband": len(infiniband)},
        network_devices_expected={k: v for k, v in expected.items() if v is not None},
    )


def _stamp(result: CheckResult, source: str, now: float, duration: float) -> CheckResult:
    return replace(result, source=source, observed_at=now, duration_s=duration)
