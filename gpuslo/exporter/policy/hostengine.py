"""Judging a DCGM host-engine log (pure): health-watch results per GPU and system, the host
engine's own failures, and the device-and-severity fallback. Used by `inspect` and by the live
`hostengine` check alike.

The data is `gpuslo/data/dcgm_hostengine.yaml` (its header names the sources: the DCGM user
guide's health systems and results, DcgmHealthWatch.cpp, real logs).

Rules:
- `Detected a WARNING|FAILURE in health system <System>: '<text>'`: one `dcgm_health` finding per
  (GPU, system, class), `events` counting repeats; WARNING is warn, FAILURE fatal with the
  system's reason and action `drain_and_reset`; the GPU is the one the text names;
- a host-engine failure (`source_unavailable`): unknown, layer observability — the GPUs were not
  read, never healthy;
- module errors (`hostengine_module_error`, repeated ones counted in `events`): warn, layer
  observability — the host engine's trouble, not a GPU fault;
- every other record (any level: the host engine logs ERROR-level chatter such as "No data is
  available" on healthy nodes) goes to the device-and-severity fallback.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuslo import names
from gpuslo.exporter.evidence.hostengine import HealthReport, HostEngineLog, health_report
from gpuslo.exporter.policy.unrecognised import judge_lines, unrecognised_findings
from gpuslo.exporter.policy.xid import _packaged_yaml
from gpuslo.verdict import Finding

PACKAGED = "dcgm_hostengine.yaml"
KIND = "hostengine-log"


@dataclass(frozen=True)
class HostEnginePolicy:
    """The compiled host-engine catalogue."""

    severities: Mapping[str, str]
    systems: Mapping[str, tuple[str, str]]  # spelling -> (system key, reason)
    messages: tuple[tuple[str, tuple[re.Pattern, ...], Mapping[str, Any]], ...]

    def system(self, printed: str) -> tuple[str, str]:
        """(system key, reason) of a system as printed; an unknown system keeps its name
        (lower case) and reason `diagnostic_failed`."""
        key = printed.strip().lower()
        return self.systems.get(key, (key.replace(" ", "_"), "diagnostic_failed"))

    def message(self, text: str) -> tuple[str, Mapping[str, Any]] | None:
        """(entry name, entry) of the first message entry whose pattern occurs in `text`."""
        for name, patterns, entry in self.messages:
            if any(p.search(text) for p in patterns):
                return name, entry
        return None


def policy_from_mapping(data: Mapping[str, Any]) -> HostEnginePolicy:
    """Compile the catalogue (the packaged file is checked by the tests)."""
    systems = {
        spelling: (key, entry["reason"])
        for key, entry in data["systems"].items()
        for spelling in entry["names"]
    }
    messages = tuple(
        (name, tuple(re.compile(p, re.IGNORECASE) for p in entry["patterns"]), entry)
        for name, entry in data["messages"].items()
    )
    return HostEnginePolicy(dict(data["severities"]), systems, messages)


@functools.cache
def packaged_hostengine_policy() -> HostEnginePolicy:
    """The packaged catalogue, compiled once."""
    return policy_from_mapping(_packaged_yaml(PACKAGED))


def health_findings(
    reports: list[HealthReport], policy: HostEnginePolicy, kind: str = KIND
) -> list[Finding]:
    """One `dcgm_health` finding per (GPU, system, class), `events` = reports (module doc)."""
    groups: dict[tuple, list[HealthReport]] = {}
    for report in reports:
        class_ = policy.severities.get(report.severity, names.CLASS_FATAL)
        system, _ = policy.system(report.system)
        groups.setdefault((report.gpu, system, class_), []).append(report)
    out = []
    for (gpu, system, class_), members in groups.items():
        first = members[0]
        fatal = class_ == names.CLASS_FATAL
        out.append(
            Finding(
                kind=kind,
                class_=class_,
                signal="dcgm_health",
                gpu=gpu,
                reason=policy.system(first.system)[1] if fatal else None,
                layer=None if fatal else names.LAYER_NODE,
                action=names.ACTION_DRAIN_AND_RESET if fatal else names.ACTION_NONE,
                events=len(members),
                line=first.line,
                message=f"DCGM health {first.severity} in {first.system}: {first.text}"[:300],
                extra={"system": system},
            )
        )
    return out


def _own_finding(name: str, entry: Mapping[str, Any], lines: list[int], text: str,
                 kind: str) -> Finding:
    class_ = entry["class"]
    reason = entry.get("reason")
    return Finding(
        kind=kind,
        class_=class_,
        signal=entry["signal"],
        reason=reason,
        layer=names.LAYER_OBSERVABILITY,
        action=names.ACTION_NONE,
        events=len(lines),
        line=lines[0],
        message=f"{len(lines)} x {text}"[:300],
        extra={"message_id": name},
    )


def hostengine_findings(
    log: HostEngineLog, policy: HostEnginePolicy, kind: str = KIND, other_lines: bool = True
) -> list[Finding]:
    """Every finding the log shows (see the module docstring), in line order; empty when the log
    holds no host-engine record (the caller reports that as nothing recognised). With
    `other_lines` False the lines that are no record are left to the caller's fallback."""
    if not log.records:
        return []
    reports, others = [], list(log.other) if other_lines else []
    own: dict[str, tuple[Mapping[str, Any], list[int], str]] = {}
    for record in log.records:
        report = health_report(record)
        if report is not None:
            reports.append(report)
            continue
        first = record.message.split("\n", 1)[0]
        matched = policy.message(first[:4096])
        if matched is not None:
            name, entry = matched
            own.setdefault(name, (entry, [], first))[1].append(record.line)
            continue
        others += [(record.line + i, t) for i, t in enumerate(record.message.split("\n"))]
    findings = health_findings(reports, policy, kind)
    findings += [_own_finding(n, e, lines, text, kind) for n, (e, lines, text) in own.items()]
    findings += unrecognised_findings(kind, judge_lines(others))
    findings.sort(key=lambda f: f.line or 0)
    return findings
