"""Judging a fabric-manager log (pure): NVSwitch SXid reports by the Fabric Manager user guide's
catalogue, the other messages by a catalogue of wordings, everything else by level and the
device-and-severity fallback. Used by `inspect` and by the live `fabricmanager` check alike.

The data is `gpuslo/data/fabric_manager.yaml` (its header names the sources: the Fabric Manager
user guide's appendix D, fatal / non-fatal / always fatal SXids, and its error-handling chapter).

Rules, per record in line order:
- `detected NVSwitch fatal|non-fatal error N`: one finding per (code, NVSwitch, port, class),
  `events` counting repeats; the class is the worse of FM's token and the catalogue section;
- a catalogued message: its class, action, signal (`fabric_manager_failed`,
  `fabric_manager_running`, `fabric_manager_not_applicable`, `fabric_manager_error`);
- a record no entry claims that is FM's error (level ERROR, FATAL or CRITICAL, or a console or
  `systemctl status` record with a failure word: `policy.daemon_log.is_trouble`):
  `fabric_manager_error`, class unknown (reason `unrecognised_message`), fatal when it carries a
  fatal-class word — an FM error is never read healthy;
- any other record: the device-and-severity fallback (`policy.unrecognised`); a line that is no
  record is tried on the entries marked `any_line` (the start script's usage text) first;
When the log shows the node has no NVSwitch (`applies: false`: NV_WARN_NOTHING_TO_DO), the
service's failure to start is expected and is not a fault: the log yields one
`fabric_manager_not_applicable` finding and no `fabric_manager_failed` one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpuslo import names
from gpuslo.exporter.evidence.daemon_log import LogRecord
from gpuslo.exporter.evidence.fabricmanager import FmLog, FmRecord, SwitchError, switch_error
from gpuslo.exporter.policy import daemon_log as shared
from gpuslo.packaged import packaged_yaml
from gpuslo.verdict import Finding

PACKAGED = "fabric_manager.yaml"
KIND = "fabricmanager-log"
CLASS_RANK = {
    names.CLASS_NOISE: 0,
    names.CLASS_OK: 0,
    names.CLASS_WARN: 1,
    names.CLASS_UNKNOWN: 2,
    names.CLASS_FATAL: 3,
}


@dataclass(frozen=True)
class SxidRule:
    """What the catalogue says of one SXid: class, action and the section it sits in."""

    class_: str
    action: str
    section: str


@dataclass(frozen=True)
class MessageEntry:
    """One catalogued fabric-manager message (see the data file)."""

    name: str
    class_: str
    action: str
    signal: str
    reason: str | None
    applies: bool
    any_line: bool = False


@dataclass(frozen=True)
class FmPolicy:
    """The compiled catalogue."""

    codes: Mapping[int, SxidRule]
    tokens: Mapping[str, SxidRule]
    no_token: SxidRule
    catalogue: shared.MessageCatalogue
    messages: Mapping[str, MessageEntry]

    def sxid_rule(self, code: int, token: str | None) -> SxidRule:
        """The worse of the token's rule and the code's catalogue rule (see the module doc)."""
        by_token = self.tokens.get(token or "", None)
        by_code = self.codes.get(code)
        candidates = [r for r in (by_code, by_token) if r is not None] or [self.no_token]
        if by_code is not None and by_code.class_ == names.CLASS_NOISE:
            return by_code  # the guide: "can be safely ignored"
        return max(candidates, key=lambda r: (CLASS_RANK[r.class_],
                                              names.ACTION_SEVERITY[r.action]))

    def message(self, text: str) -> MessageEntry | None:
        """The first catalogued message one of whose patterns occurs in `text`."""
        hit = self.catalogue.match(text)
        return self.messages[hit[0]] if hit else None


def policy_from_mapping(data: Mapping[str, Any]) -> FmPolicy:
    """Compile the catalogue (the packaged file is checked by the tests)."""
    sxid = data["sxid"]
    codes: dict[int, SxidRule] = {}
    for section, entry in sxid["sections"].items():
        for code in entry["codes"]:
            codes[int(code)] = SxidRule(entry["class"], entry["action"], section)
    tokens = {k: SxidRule(v["class"], v["action"], "token") for k, v in sxid["tokens"].items()}
    no_token = SxidRule(sxid["no_token"]["class"], sxid["no_token"]["action"], "no_token")
    messages = {
        str(name): MessageEntry(
            name=str(name),
            class_=entry["class"],
            action=entry["action"],
            signal=entry["signal"],
            reason=entry.get("reason"),
            applies=entry.get("applies", True),
            any_line=entry.get("any_line", False),
        )
        for name, entry in data["messages"].items()
    }
    catalogue = shared.MessageCatalogue.from_mapping(data["messages"])
    return FmPolicy(codes, tokens, no_token, catalogue, messages)


@functools.cache
def packaged_fm_policy() -> FmPolicy:
    """The packaged catalogue, compiled once."""
    return policy_from_mapping(packaged_yaml(PACKAGED))


def _sxid_key(error: SwitchError, rule: SxidRule) -> tuple:
    return (error.code, error.pci, error.physical_id, error.port, rule.class_)


def sxid_findings(errors: list[SwitchError], policy: FmPolicy, kind: str = KIND) -> list[Finding]:
    """One finding per (SXid, NVSwitch, port, class), `events` = reports, in line order."""
    groups: dict[tuple, tuple[SwitchError, SxidRule, int]] = {}
    for error in errors:
        rule = policy.sxid_rule(error.code, error.token)
        key = _sxid_key(error, rule)
        first, _, count = groups.get(key, (error, rule, 0))
        groups[key] = (first, rule, count + 1)
    out = []
    for error, rule, count in groups.values():
        fatal = rule.class_ == names.CLASS_FATAL
        device = f"nvswitch {error.physical_id}" if error.physical_id is not None else None
        out.append(
            Finding(
                kind=kind,
                class_=rule.class_,
                sxid=error.code,
                pci=error.pci,
                device=device,
                action=rule.action,
                reason="sxid_fatal" if fatal else None,
                layer=None if fatal else names.LAYER_NODE,
                events=count,
                line=error.line,
                message=f"{error.message} ({error.token}; Fabric Manager guide: "
                f"{rule.section.replace('_', '-')})"[:300],
                extra={"port": error.port} if error.port is not None else {},
            )
        )
    return out


# A catalogued record that reports something that happened (a fault, a warning) is one event;
# its continuation lines (`key : value` detail of an NVL error record) belong to it.
EVENT_CLASSES = (names.CLASS_FATAL, names.CLASS_WARN)
# The detail a GPU NVL error record carries on its continuation lines, kept in the message: the
# record names its GPU by fabric GUID and port only (no PCI address).
_DETAIL_KEYS = re.compile(r"^\s*(gpuGuid|portNum|errorCode|portDownReasonCode)\s*:\s*(\S+)", re.M)


def _record_text(record: FmRecord) -> str:
    """The record's first line, with the GPU/port detail of its continuation lines."""
    detail = " ".join(f"{k}={v}" for k, v in _DETAIL_KEYS.findall(record.message))
    head = shared.first_line(record).rstrip(" :")
    if detail:
        return f"{head}: {detail}"
    # a console line wrapped after its colon: the reason on the next line is the message's
    wrapped = record.unit in shared.WRAPPER_UNITS
    return shared.catalogue_text(record) if wrapped else shared.first_line(record)


def _message_finding(record: FmRecord, entry: MessageEntry, applies: bool, kind: str) -> Finding:
    class_ = entry.class_
    if entry.signal == "fabric_manager_failed" and not applies:
        class_ = names.CLASS_OK  # no NVSwitch: FM exiting is the expected answer
    fatal = class_ == names.CLASS_FATAL
    return Finding(
        kind=kind,
        class_=class_,
        signal=entry.signal,
        action=entry.action if fatal else names.ACTION_NONE,
        reason=(entry.reason or "fabric_unhealthy") if fatal else None,
        layer=None if fatal else names.LAYER_NODE,
        line=record.line,
        events=1 if class_ in EVENT_CLASSES else None,
        message=_record_text(record)[:300],
        extra={"message_id": entry.name},
    )


def _not_applicable(records: list[FmRecord], policy: FmPolicy) -> FmRecord | None:
    for record in records:
        entry = policy.message(shared.catalogue_text(record))
        if entry is not None and not entry.applies:
            return record
    return None


def _loose_findings(log: FmLog, policy: FmPolicy, applies: bool, kind: str) -> list[Finding]:
    """One finding per `any_line` catalogue entry one of the lines that are no record matches
    (the start script's own lines carry no FM prefix); a failure is not one where FM does not
    apply (no NVSwitch)."""
    out: dict[str, Finding] = {}
    for number, text in log.other:
        entry = policy.message(text[:4096].strip())
        if entry is None or not entry.any_line or entry.name in out:
            continue
        if entry.signal == "fabric_manager_failed" and not applies:
            continue
        record = LogRecord(number, 1, "", "console", None, text.strip())
        out[entry.name] = _message_finding(record, entry, applies, kind)
    return list(out.values())


def fabricmanager_findings(
    log: FmLog, policy: FmPolicy, kind: str = KIND, other_lines: bool = True
) -> list[Finding]:
    """Every finding the log shows (see the module docstring), in line order. Empty when the log
    holds no fabric-manager record (the caller reports that as nothing recognised). With
    `other_lines` False the lines that are no record are left to the caller's fallback (`inspect`
    runs it once over a text several readers share)."""
    records = list(log.records)
    if not records:
        return []
    absent = _not_applicable(records, policy)
    walk = shared.sort_records(
        records, switch_error, lambda record: policy.message(shared.catalogue_text(record))
    )
    findings = [
        _message_finding(record, entry, absent is None, kind)
        for record, entry in walk.matched
        if entry.applies and (absent is None or entry.signal != "fabric_manager_failed")
    ]
    findings += [shared.error_finding(r, kind, "fabric_manager_error") for r in walk.trouble]
    findings += sxid_findings(walk.extracted, policy, kind)
    findings += _loose_findings(log, policy, absent is None, kind)
    findings += shared.fallback_findings(kind, walk.others, log, other_lines)
    if absent is not None:
        entry = policy.message(shared.catalogue_text(absent))
        findings.append(_message_finding(absent, entry, False, kind))
    findings = [replace(f, kind=kind) for f in findings]
    findings.sort(key=lambda f: f.line or 0)
    return findings
