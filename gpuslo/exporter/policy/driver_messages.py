"""The driver-message catalogue: which NVRM messages (other than Xid and SXid lines) make a GPU or
the node unusable, as data (`gpuslo/data/driver_messages.yaml`, which names its sources).

The catalogue travels inside the Xid policy (`XidPolicy.data["driver_messages"]`), so the one
operator overlay (`--policy FILE`, key `driver_messages`) extends both. `validate_catalogue`
checks it (ConfigError naming the file and field); `Catalogue.match` and
`Catalogue.looks_like_error` are pure.

Rules:
- an entry matches when one of its `patterns` (regular expressions) is found in the message; the
  first entry in file order wins;
- an Xid or SXid record the parser could not read (`unreadable_records`) is `unknown`, reason
  `parse_error`;
- a message no entry matches that reads as an error (`error_words`) is `unknown`, reason
  `unrecognised_driver_message` (fail closed, as for an unknown Xid) — `fatal`, reason
  `unrecognised_fatal_message`, when it carries a fatal-class word (fallen off, uncorrectable,
  fatal, reset required: `policy.unrecognised.is_fatal_text`); any other is driver chatter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuslo import names, signal_names
from gpuslo.errors import ConfigError
from gpuslo.exporter.policy.severity_words import is_fatal_text

PACKAGED = "driver_messages.yaml"
CATALOGUE_KEYS = ("version", "unreadable_records", "error_words", "messages")
ENTRY_KEYS = ("patterns", "class", "action", "reason", "signal", "xid", "families", "source")
OVERRIDE_KEYS = ("class", "action", "reason")
DEFAULT_SIGNAL = "driver_message"
UNRECOGNISED = "unrecognised_driver_message"


@dataclass(frozen=True)
class MessageRule:
    """What the catalogue says of one message.

    Attributes:
        entry: the catalogue entry's name (`rm_init_adapter_failed`), or `unrecognised`.
        part: index of the pattern that matched (lines of one message match different parts).
        class_: `names.EVENT_CLASSES`, or `unknown` for an unrecognised error line.
        action: `names.ACTIONS`; reason: `names.REASON_LAYER` key or None (non-fatal classes).
        signal: the finding signal (`signal_names.SIGNALS`); xid: the equivalent Xid, or None.
    """

    entry: str
    part: int
    class_: str
    action: str
    reason: str | None
    signal: str
    xid: int | None = None


@dataclass(frozen=True)
class Catalogue:
    """A validated catalogue with its patterns compiled (build it with `catalogue_of`)."""

    entries: tuple[tuple[str, tuple[re.Pattern, ...], Mapping[str, Any]], ...]
    error_words: re.Pattern
    unreadable: re.Pattern

    def match(self, message: str, family: str | None) -> MessageRule | None:
        """The rule of the first entry one of whose patterns occurs in `message`, with the
        `family` override applied; None when no entry matches."""
        for name, patterns, entry in self.entries:
            for part, pattern in enumerate(patterns):
                if pattern.search(message):
                    return _rule(name, part, entry, family)
        return None

    def looks_like_error(self, message: str) -> bool:
        """True when `message` holds one of the catalogue's error words."""
        return self.error_words.search(message) is not None

    def classify(self, message: str, family: str | None) -> MessageRule | None:
        """`unknown` (parse_error) for an unreadable Xid/SXid record, else `match`, else an
        `unknown` rule for an error-looking line, else None (chatter)."""
        if self.unreadable.search(message):
            unknown = names.CLASS_UNKNOWN
            return MessageRule("unreadable_record", 0, unknown, "none", "parse_error", UNRECOGNISED)
        rule = self.match(message, family)
        if rule is not None:
            return rule
        if is_fatal_text(message):
            return MessageRule(UNRECOGNISED, 0, names.CLASS_FATAL, names.ACTION_DRAIN_AND_RESET,
                               "unrecognised_fatal_message", UNRECOGNISED)
        if not self.looks_like_error(message):
            return None
        return MessageRule(
            UNRECOGNISED, 0, names.CLASS_UNKNOWN, names.ACTION_NONE, UNRECOGNISED, UNRECOGNISED
        )


def _rule(name: str, part: int, entry: Mapping[str, Any], family: str | None) -> MessageRule:
    merged = {**entry, **((entry.get("families") or {}).get(family or "") or {})}
    class_ = merged["class"]
    reason = merged.get("reason") if class_ == names.CLASS_FATAL else None
    return MessageRule(
        entry=name,
        part=part,
        class_=class_,
        action=merged["action"],
        reason=reason,
        signal=merged.get("signal", DEFAULT_SIGNAL),
        xid=merged.get("xid"),
    )


def _fail(source: str, field: str, why: str) -> None:
    raise ConfigError(f"{source}: field {field}: {why}")


def _check_pattern(text: Any, field: str, source: str) -> None:
    if not isinstance(text, str) or not text:
        _fail(source, field, "expected a regular expression")
    try:
        re.compile(text)
    except re.error as error:
        _fail(source, field, f"not a valid regular expression ({error})")


def _check_override(entry: Mapping[str, Any], field: str, source: str) -> None:
    if entry.get("class") is not None and entry["class"] not in names.EVENT_CLASSES:
        known = ", ".join(names.EVENT_CLASSES)
        _fail(source, f"{field}.class", f"{entry['class']!r} is not one of {known}")
    if entry.get("action") is not None and entry["action"] not in names.ACTIONS:
        known = ", ".join(names.ACTIONS)
        _fail(source, f"{field}.action", f"{entry['action']!r} is not one of {known}")
    if entry.get("reason") is not None and entry["reason"] not in names.REASON_LAYER:
        _fail(source, f"{field}.reason", f"{entry['reason']!r} is not a reason of names.py")


def _check_entry(name: str, entry: Any, source: str) -> None:
    field = f"driver_messages.messages.{name}"
    if not isinstance(entry, dict):
        _fail(source, field, "expected a mapping with patterns, class and action")
    for key in entry:
        if key not in ENTRY_KEYS:
            _fail(source, f"{field}.{key}", f"unknown field (known: {', '.join(ENTRY_KEYS)})")
    patterns = entry.get("patterns")
    if not isinstance(patterns, list) or not patterns:
        _fail(source, f"{field}.patterns", "expected a list of regular expressions")
    for index, pattern in enumerate(patterns):
        _check_pattern(pattern, f"{field}.patterns[{index}]", source)
    for key in ("class", "action"):
        if entry.get(key) is None:
            _fail(source, f"{field}.{key}", "missing")
    _check_override(entry, field, source)
    if entry["class"] == names.CLASS_FATAL and not entry.get("reason"):
        _fail(source, f"{field}.reason", "a fatal entry needs a reason")
    if entry.get("signal", DEFAULT_SIGNAL) not in signal_names.SIGNALS:
        _fail(source, f"{field}.signal", f"{entry.get('signal')!r} is not a signal of names.py")
    xid = entry.get("xid")
    if xid is not None and (not isinstance(xid, int) or isinstance(xid, bool) or xid < 0):
        _fail(source, f"{field}.xid", "expected an Xid code")
    _check_families(entry.get("families"), field, source)


def _check_families(families: Any, field: str, source: str) -> None:
    if families is None:
        return
    if not isinstance(families, dict):
        _fail(source, f"{field}.families", "expected a mapping of GPU family")
    for family, override in families.items():
        if family not in names.GPU_FAMILIES:
            _fail(source, f"{field}.families.{family}", "unknown GPU family")
        if not isinstance(override, dict) or set(override) - set(OVERRIDE_KEYS):
            _fail(source, f"{field}.families.{family}", "expected class/action/reason")
        _check_override(override, f"{field}.families.{family}", source)


def validate_catalogue(data: Any, source: str) -> None:
    """Raise ConfigError naming `source` and the field when `data` is not a valid catalogue."""
    if not isinstance(data, dict):
        _fail(source, "driver_messages", "expected a mapping")
    for key in data:
        if key not in CATALOGUE_KEYS:
            known = ", ".join(CATALOGUE_KEYS)
            _fail(source, f"driver_messages.{key}", f"unknown field (known: {known})")
    _check_pattern(data.get("error_words"), "driver_messages.error_words", source)
    _check_pattern(data.get("unreadable_records"), "driver_messages.unreadable_records", source)
    messages = data.get("messages")
    if not isinstance(messages, dict):
        _fail(source, "driver_messages.messages", "expected a mapping of entry name to entry")
    for name, entry in messages.items():
        _check_entry(str(name), entry, source)


def catalogue_of(data: Mapping[str, Any]) -> Catalogue:
    """Compile a validated catalogue (pure)."""
    entries = tuple(
        (str(name), tuple(re.compile(p) for p in entry["patterns"]), entry)
        for name, entry in data["messages"].items()
    )
    return Catalogue(
        entries,
        re.compile(data["error_words"], re.IGNORECASE),
        re.compile(data["unreadable_records"]),
    )
