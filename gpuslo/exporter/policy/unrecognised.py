"""The device-and-severity fallback: a line no reader claims is never dropped (pure).

Every text source (kernel log, nvidia-fabricmanager log, nv-hostengine log, dcgm-exporter log, a
file no parser recognises) hands the lines its reader did not claim to `judge_lines`. A line that
names a device (`evidence.devices.device_of`) and carries an error word (`ERROR_WORDS`) becomes an
`Unrecognised` message for that device:
- in `inspect`: an `unknown` finding (`unrecognised_message`, layer observability) for that device
  naming the line (`unrecognised_findings`);
- in the live checks: a `warn` result naming the line, counted in
  `gpuslo_unrecognised_messages_total` (`unrecognised_results`), so driver or daemon chatter the
  catalogues do not know cannot make a GPU unusable until the next reboot;
- either way, a line with a fatal-class word (`FATAL_WORDS`: fallen off, uncorrectable, fatal,
  reset required; never "non-fatal") fails closed: class fatal / status `fail`, reason
  `unrecognised_fatal_message`. The logger's own level (`level=fatal`, `FATA[0000]`, `[FATAL]`:
  `severity_words.without_log_level`) is not such a word: it says how a daemon logged the line,
  not what happened to the device, so it makes an error line (unknown / `warn`), never a fatal
  one by itself.

Sources of the words: NVIDIA's Xid catalogue and driver README (fallen off the bus, reset
required), the PCIe base specification's error classes (uncorrectable fatal vs non-fatal), and
the Fabric Manager user guide (fatal / non-fatal SXid). A catalogue entry that claims a line
(an overlay, a reader) always wins over this fallback.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuslo import names
from gpuslo.exporter.evidence.devices import DeviceRef, device_of
from gpuslo.exporter.evidence.log_lines import Skip, matching_lines
from gpuslo.exporter.policy.severity_words import (
    ERROR_LITERALS,
    ERROR_WORDS,
    FATAL_WORDS,
    NOT_FATAL,
    is_fatal_text,
    without_log_level,
)

__all__ = ["FATAL_WORDS", "NOT_FATAL", "ERROR_WORDS", "ERROR_LITERALS", "is_fatal_text",
           "judge_line", "judge_lines"]
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

MAX_LINE = 4096  # characters of a line looked at (a hostile line stays linear and short)


@dataclass(frozen=True)
class Unrecognised:
    """One line no reader claims that names `device` and reads as an error; `fatal` when it
    carries a fatal-class word. `line` is 1-based in its source, `text` the line (stripped)."""

    line: int
    text: str
    device: DeviceRef
    fatal: bool


def judge_line(number: int, line: str) -> Unrecognised | None:
    """The fallback's reading of one unclaimed line: None unless it names a device and carries
    an error word; fatal when its words, the logger's level taken out, are fatal-class."""
    text = line[:MAX_LINE].strip()
    if not text or ERROR_WORDS.search(text) is None:
        return None
    device = device_of(text)
    if device is None:
        return None
    return Unrecognised(number, text, device, is_fatal_text(without_log_level(text)))


def judge_lines(lines: Iterable[tuple[int, str]]) -> list[Unrecognised]:
    """`judge_line` over (1-based number, line) pairs, the lines that read as device errors."""
    return [item for number, line in lines if (item := judge_line(number, line)) is not None]


def error_lines(text: str, skip: Skip | None = None) -> Iterator[tuple[int, str]]:
    """(number, line) of the lines of `text` holding an error word (`ERROR_WORDS`), those `skip`
    accepts left out (`evidence.log_lines.claimed`: what a reader claims)."""
    return matching_lines(text, ERROR_WORDS, skip)


def _message(item: Unrecognised) -> str:
    what = "a fatal-class word" if item.fatal else "an error word"
    return f"line {item.line} names {item.device.name} with {what} no reader knows: {item.text}"


def unrecognised_findings(kind: str, items: Iterable[Unrecognised]) -> list[Finding]:
    """One finding per (device, fatal or not): `unrecognised_message`, class unknown (reason
    `unrecognised_message`) or fatal (reason `unrecognised_fatal_message`), `events` = lines,
    the first line's number and text in `line` and `message`."""
    groups: dict[tuple[DeviceRef, bool], list[Unrecognised]] = {}
    for item in items:
        groups.setdefault((item.device, item.fatal), []).append(item)
    out = []
    for (device, fatal), members in groups.items():
        first = members[0]
        out.append(
            Finding(
                kind=kind,
                class_=names.CLASS_FATAL if fatal else names.CLASS_UNKNOWN,
                signal="unrecognised_message",
                reason="unrecognised_fatal_message" if fatal else "unrecognised_message",
                action=names.ACTION_DRAIN_AND_RESET if fatal else names.ACTION_NONE,
                events=len(members),
                line=first.line,
                message=_message(first)[:300],
                **device.finding_keys(),
            )
        )
    return out


def unrecognised_results(
    check: str, items: Iterable[Unrecognised], source: str, now: float
) -> list[CheckResult]:
    """The live checks' reading: one result per device scope (`DeviceRef.scope`): `fail`
    (`unrecognised_fatal_message`, drain_and_reset) when any of its lines carries a fatal-class
    word, else `warn` naming the first line and how many there were."""
    by_scope: dict[str, list[Unrecognised]] = {}
    for item in items:
        by_scope.setdefault(item.device.scope(), []).append(item)
    out = []
    for scope, members in sorted(by_scope.items()):
        fatal = [m for m in members if m.fatal]
        first = (fatal or members)[0]
        common = {"check": check, "scope": scope or NODE_SCOPE, "source": source,
                  "observed_at": now}
        message = f"{len(members)} unrecognised line(s); {_message(first)}"[:300]
        if fatal:
            out.append(CheckResult(status=names.STATUS_FAIL, reason="unrecognised_fatal_message",
                                   action=names.ACTION_DRAIN_AND_RESET, message=message, **common))
        else:
            out.append(CheckResult(status=names.STATUS_WARN, message=message, **common))
    return out
