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
  read, never healthy; a start failure that a later `Started host engine version ...` line
  follows was retried and is none (`_retried_starts`);
- module errors (`hostengine_module_error`, repeated ones counted in `events`): warn, layer
  observability — the host engine's trouble, not a GPU fault. Besides the catalogued ones (a
  module that failed to load), a record at level ERROR or worse from a module (tagged
  `[[NvSwitch]]`, `[[SysMon]]`, not `[[Health]]`) is one, one finding per module and message
  (numbers aside) — unless it carries a fatal-class word or names a device with an error word
  (then the fallback judges it: unknown for that device, fatal with a fatal-class word);
- a console or `systemctl status` record no entry claims that carries a failure word
  (`policy.daemon_log.is_trouble`): `source_unavailable`, unknown (`unrecognised_message`);
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
from gpuslo.exporter.evidence.daemon_log import LogRecord
from gpuslo.exporter.evidence.dcgm.dcgmi import (
    HOST_ENGINE_START_FAILED,
    HOST_ENGINE_STARTED,
    unretried,
)
from gpuslo.exporter.evidence.hostengine import HealthReport, HostEngineLog, health_report
from gpuslo.exporter.policy import daemon_log as shared
from gpuslo.exporter.policy.unrecognised import is_fatal_text, judge_line
from gpuslo.packaged import packaged_yaml
from gpuslo.verdict import Finding

PACKAGED = "dcgm_hostengine.yaml"
KIND = "hostengine-log"


@dataclass(frozen=True)
class HostEnginePolicy:
    """The compiled host-engine catalogue."""

    severities: Mapping[str, str]
    systems: Mapping[str, tuple[str, str]]  # spelling -> (system key, reason)
    catalogue: shared.MessageCatalogue

    def system(self, printed: str) -> tuple[str, str]:
        """(system key, reason) of a system as printed; an unknown system keeps its name
        (lower case) and reason `diagnostic_failed`."""
        key = printed.strip().lower()
        return self.systems.get(key, (key.replace(" ", "_"), "diagnostic_failed"))

    def message(self, text: str) -> tuple[str, Mapping[str, Any]] | None:
        """(entry name, entry) of the first message entry whose pattern occurs in `text`."""
        return self.catalogue.match(text)


def policy_from_mapping(data: Mapping[str, Any]) -> HostEnginePolicy:
    """Compile the catalogue (the packaged file is checked by the tests)."""
    systems = {
        spelling: (key, entry["reason"])
        for key, entry in data["systems"].items()
        for spelling in entry["names"]
    }
    catalogue = shared.MessageCatalogue.from_mapping(data["messages"])
    return HostEnginePolicy(dict(data["severities"]), systems, catalogue)


@functools.cache
def packaged_hostengine_policy() -> HostEnginePolicy:
    """The packaged catalogue, compiled once."""
    return policy_from_mapping(packaged_yaml(PACKAGED))


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
        extra={"message_id": entry.get("message_id", name)},
    )


# A module's own error: the numbers in it (ids, counts, addresses) do not make another message.
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")
MODULE_ENTRY = {"class": names.CLASS_WARN, "signal": "hostengine_module_error"}


def module_error_key(record: LogRecord) -> str | None:
    """`module:<module>:<message, numbers masked>` when the record is a module's own error (level
    ERROR or worse, a module tag other than Health, no fatal-class word), else None."""
    text = shared.first_line(record)
    if record.level not in shared.ERROR_LEVELS or not record.module or record.module == "Health":
        return None
    if is_fatal_text(text) or judge_line(record.line, text) is not None:
        return None  # a fatal word, or a device named with an error word: the fallback's
    return f"module:{record.module}:{_NUMBERS.sub('N', text)[:200]}"


def _own_message(record: LogRecord, policy: HostEnginePolicy) -> tuple[str, Any] | None:
    """(name, entry) of the host engine's own trouble a record reports: a catalogued message
    (tried on its first line: a status block's state), else a module's own error."""
    matched = policy.message(shared.first_line(record)[:4096])
    if matched is None and (key := module_error_key(record)) is not None:
        matched = key, {**MODULE_ENTRY, "message_id": f"module:{record.module}"}
    return matched


def _wrapper_trouble(record: LogRecord) -> bool:
    """A console or status record with a failure word (ERROR-level records are not: the host
    engine logs ERROR-level chatter on healthy nodes)."""
    return record.unit in shared.WRAPPER_UNITS and shared.is_trouble(record)


def _retried_starts(log: HostEngineLog, matched: list[LogRecord]) -> set[int]:
    """Lines of the `matched` records that report a start failure (`dcgmi.HOST_ENGINE_START_
    FAILED`) which a later start line of the engine follows (`dcgmi.HOST_ENGINE_STARTED`, on any
    line of the log: the start was retried and the engine listens)."""
    failed = [r.line for r in matched if HOST_ENGINE_START_FAILED.search(shared.first_line(r))]
    lines = [*(pair for r in log.records for pair in shared.record_lines(r)), *log.other]
    started = [n for n, text in lines if HOST_ENGINE_STARTED.search(text[:4096])]
    return set(failed) - set(unretried(failed, started))


def hostengine_findings(
    log: HostEngineLog, policy: HostEnginePolicy, kind: str = KIND, other_lines: bool = True
) -> list[Finding]:
    """Every finding the log shows (see the module docstring), in line order; empty when the log
    holds no host-engine record (the caller reports that as nothing recognised). With
    `other_lines` False the lines that are no record are left to the caller's fallback."""
    if not log.records:
        return []
    walk = shared.sort_records(
        log.records, health_report, lambda record: _own_message(record, policy), _wrapper_trouble
    )
    own: dict[str, tuple[Mapping[str, Any], list[int], str]] = {}
    retried = _retried_starts(log, [record for record, _ in walk.matched])
    for record, (name, entry) in walk.matched:
        if record.line in retried:
            continue
        own.setdefault(name, (entry, [], shared.first_line(record)))[1].append(record.line)
    findings = health_findings(walk.extracted, policy, kind)
    findings += [_own_finding(n, e, lines, text, kind) for n, (e, lines, text) in own.items()]
    findings += [shared.error_finding(r, kind, "source_unavailable") for r in walk.trouble]
    findings += shared.fallback_findings(kind, walk.others, log, other_lines)
    findings.sort(key=lambda f: f.line or 0)
    return findings
