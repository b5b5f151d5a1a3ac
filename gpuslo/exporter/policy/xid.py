"""The Xid / SXid policy: which kernel-log events are fatal, per GPU family, as data.

The packaged policy is `gpuslo/data/xid_policy.yaml` (derived from NVIDIA's Xid catalogue,
https://docs.nvidia.com/deploy/xid-errors/; the file names its sources), with the driver-message
catalogue `gpuslo/data/driver_messages.yaml` under its key `driver_messages`
(`gpuslo.exporter.policy.driver_messages`). An operator overlay (`--policy FILE`) merges over
both: mappings merge key by key, lists and scalars replace.

`load_policy` is the I/O edge; `XidPolicy.rule_for` is pure, and
`gpuslo.exporter.policy.classify` applies it to a stream of kernel-log events. Rules:
- a code not in the policy is `unknown_code` (fatal: fail closed);
- Xids listed under `nvlink5` take their class from the message's `Fatal`/`Nonfatal` token,
  SXids from `Fatal`/`Non-fatal`; an Xid naming a recovery action (Xid 154's text) from
  `recovery_actions`;
- NVRM messages that are not Xid lines (a fallen-off-the-bus block, RmInitAdapter failures, ...)
  from the driver-message catalogue;
- a kernel splat through an NVIDIA module (an oops, WARNING, lockup) from `kernel_splats`
  (`gpuslo.exporter.policy.splats`);
- every rule carries its reason: a fatal entry's `reason` field, else `xid_fatal` (Xid) or
  `sxid_fatal` (SXid); non-fatal classes carry none.

Raises ConfigError (naming the file and the field) for an unreadable or invalid policy, including
an unknown field or GPU family (a typo must not be silently ignored).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuslo import names
from gpuslo.config_file import load_yaml
from gpuslo.errors import ConfigError
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent
from gpuslo.exporter.policy import driver_messages, splats
from gpuslo.exporter.policy.driver_messages import Catalogue, catalogue_of, validate_catalogue
from gpuslo.packaged import packaged_yaml

PACKAGED = "xid_policy.yaml"  # read through `gpuslo.packaged` (its parsed copy, without PyYAML)
# The fields a policy may have, by section: anything else is a typo that would silently change
# nothing, so it is a ConfigError naming the field.
TOP_KEYS = (
    "version",
    "unknown_code",
    "xid",
    "nvlink5",
    "recovery_actions",
    "sxid",
    "boot_noise",
    "escalation",
    "driver_messages",
    splats.SECTION,
)
SECTION_KEYS = {
    "xid": ("default", "families"),
    "nvlink5": ("codes", "tokens"),
    "sxid": ("tokens", "no_token", "codes"),
    "boot_noise": ("window_s", "families"),
}
RULE_KEYS = ("class", "action", "reason", "clears")
ESCALATION_KEYS = ("codes", "count", "window_s", "action")
NOISE_KEYS = ("xid", "sxid")
FAMILIES = ("default", *names.GPU_FAMILIES)


@dataclass(frozen=True)
class Rule:
    """Class (`names.EVENT_CLASSES`, or `unknown` for an unrecognised driver message), recovery
    action (`names.ACTIONS`) and reason (`names.REASON_LAYER`; None for non-fatal classes except
    `unknown`) of one event. `clears`: the event ends the GPU's active problem (Xid 154 back to
    None). `signal` and `entry` name the driver-message catalogue entry and `part` the pattern
    of it that matched; `xid` is the code the event is counted as (its own, or the catalogue's
    equivalent Xid)."""

    class_: str
    action: str
    reason: str | None = None
    clears: bool = False
    signal: str | None = None
    entry: str | None = None
    part: int = 0
    xid: int | None = None


def _rule(entry: Mapping[str, Any], default_reason: str, xid: int | None = None) -> Rule:
    """A Rule from a policy entry: a fatal entry's reason is its `reason` or `default_reason`."""
    fatal = entry["class"] == names.CLASS_FATAL
    return Rule(
        entry["class"],
        entry["action"],
        reason=(entry.get("reason") or default_reason) if fatal else None,
        clears=bool(entry.get("clears")),
        xid=xid,
    )


@dataclass(frozen=True)
class Escalation:
    """`count` events of one of `codes` on one GPU within `window_s` seconds → fatal, `action`."""

    codes: frozenset[int]
    count: int
    window_s: float
    action: str


@dataclass(frozen=True)
class XidPolicy:
    """A validated policy. Build it with `load_policy` or `policy_from_mapping`."""

    data: Mapping[str, Any]
    source: str

    @functools.cached_property
    def catalogue(self) -> Catalogue:
        """The driver-message catalogue, compiled once per policy."""
        return catalogue_of(self.data["driver_messages"])

    def xid_rule(self, xid: int, family: str | None) -> Rule:
        """Rule of Xid `xid` for `family` (None: the `default` section only)."""
        section = self.data["xid"]
        family_rules = section.get("families", {}).get(family or "", {}) or {}
        entry = family_rules.get(xid) or section["default"].get(xid) or self.data["unknown_code"]
        return _rule(entry, "xid_fatal", xid)

    def is_token_dependent(self, xid: int) -> bool:
        """True when Xid `xid` takes its class from a severity token in its message."""
        return xid in self.data["nvlink5"]["codes"]

    def message_rule(self, message: str, family: str | None) -> Rule | None:
        """Rule of an NVRM message that is not an Xid or SXid line: the catalogue entry it
        matches, `unknown` when it reads as an error and matches nothing, None for chatter."""
        found = self.catalogue.classify(message, family)
        if found is None:
            return None
        return Rule(
            found.class_,
            found.action,
            reason=found.reason,
            signal=found.signal,
            entry=found.entry,
            part=found.part,
            xid=found.xid,
        )

    def rule_for(self, event: KernelEvent, family: str | None) -> Rule | None:
        """The base rule of one event (before boot noise and escalation); None for an NVRM
        message that is driver chatter."""
        if event.kind == "sxid":
            sxid = self.data["sxid"]
            entry = sxid["codes"].get(event.code) or sxid["tokens"].get(event.token or "")
            return _rule(entry or sxid["no_token"], "sxid_fatal", event.code)
        if event.kind in ("fallen_off_bus", "driver_message"):
            return self.message_rule(event.message, family)
        if event.kind == "kernel_splat":
            return self.splat_rule(event.token)
        if event.recovery is not None and event.recovery in self.data["recovery_actions"]:
            entry = self.data["recovery_actions"][event.recovery]
            return _rule(entry, "recovery_action", event.code)
        nvlink5 = self.data["nvlink5"]
        if event.code in nvlink5["codes"] and event.token in nvlink5["tokens"]:
            return _rule(nvlink5["tokens"][event.token], "xid_fatal", event.code)
        return self.xid_rule(event.code or 0, family)

    def splat_rule(self, kind: str | None) -> Rule:
        """Rule of a kernel splat of type `kind` through an NVIDIA module (`policy.splats`)."""
        signal = splats.splat_signal(kind)
        entry = splats.splat_entry(self.data.get(splats.SECTION), kind)
        if entry is None:  # a trace whose header the log does not show
            return Rule(names.CLASS_UNKNOWN, names.ACTION_NONE, "parse_error", signal=signal,
                        entry=kind)
        rule = _rule(entry, "driver_crash")
        return Rule(rule.class_, rule.action, rule.reason, signal=signal, entry=kind)

    def is_boot_noise(self, kind: str, code: int, family: str | None) -> bool:
        """True when `code` (kind `xid` or `sxid`) is listed as boot noise for `family`."""
        families = self.data["boot_noise"]["families"]
        entry = families.get(family or "default") or families.get("default") or {}
        return code in (entry.get(kind) or [])

    @property
    def boot_noise_window_s(self) -> float:
        """Seconds after the driver loads during which boot-noise codes are `noise`."""
        return float(self.data["boot_noise"]["window_s"])

    @property
    def escalations(self) -> tuple[Escalation, ...]:
        """The escalation rules, in file order."""
        return tuple(
            Escalation(frozenset(e["codes"]), e["count"], float(e["window_s"]), e["action"])
            for e in self.data["escalation"]
        )


def _merge(base: Any, overlay: Any) -> Any:
    if isinstance(base, dict) and isinstance(overlay, dict):
        out = dict(base)
        for key, value in overlay.items():
            out[key] = _merge(base.get(key), value) if key in base else value
        return out
    return copy.deepcopy(overlay)


def _check_keys(
    mapping: dict, known: tuple[str, ...], where: str, source: str, what: str = "field"
) -> None:
    """Raise ConfigError naming the first key of `mapping` that is not in `known`."""
    for key in mapping:
        if key not in known:
            field = f"{where}.{key}" if where else str(key)
            raise ConfigError(
                f"{source}: field {field}: unknown {what} (known: {', '.join(known)})"
            )


def _check_rule(entry: Any, where: str, source: str) -> None:
    if not isinstance(entry, dict):
        raise ConfigError(f"{source}: field {where!r}: expected a mapping with class and action")
    _check_keys(entry, RULE_KEYS, where, source)
    reason = entry.get("reason")
    if reason is not None and (not isinstance(reason, str) or reason not in names.REASON_LAYER):
        raise ConfigError(
            f"{source}: field {where}.reason: {entry['reason']!r} is not a reason of names.py"
        )
    if not isinstance(entry.get("clears", False), bool):
        raise ConfigError(f"{source}: field {where}.clears: expected true or false")
    if entry.get("class") not in names.EVENT_CLASSES:
        raise ConfigError(
            f"{source}: field {where}.class: {entry.get('class')!r} is not one of "
            f"{', '.join(names.EVENT_CLASSES)}"
        )
    if entry.get("action") not in names.ACTIONS:
        raise ConfigError(
            f"{source}: field {where}.action: {entry.get('action')!r} is not one of "
            f"{', '.join(names.ACTIONS)}"
        )


def _check_codes(rules: Any, where: str, source: str) -> None:
    if not isinstance(rules, dict):
        raise ConfigError(f"{source}: field {where!r}: expected a mapping of code to rule")
    for code, entry in rules.items():
        if not isinstance(code, int) or isinstance(code, bool) or code < 0:
            raise ConfigError(f"{source}: field {where}.{code}: codes are whole numbers")
        _check_rule(entry, f"{where}.{code}", source)


def _check_sections(data: dict, source: str) -> None:
    _check_keys(data, TOP_KEYS, "", source)
    keys = ("unknown_code", "xid", "nvlink5", "recovery_actions", "sxid", "boot_noise")
    for key in (*keys, "driver_messages"):
        if not isinstance(data.get(key), dict):
            raise ConfigError(f"{source}: field {key!r}: missing or not a mapping")
    if not isinstance(data.get("escalation"), list):
        raise ConfigError(f"{source}: field 'escalation': expected a list")
    for key, known in SECTION_KEYS.items():
        _check_keys(data[key], known, key, source)
    for key in ("xid", "boot_noise"):
        families = data[key].get("families", {})
        if not isinstance(families, dict):
            raise ConfigError(
                f"{source}: field {key}.families: expected a mapping of GPU family ({{}} for none)"
            )
        _check_keys(families, FAMILIES, f"{key}.families", source, "GPU family")
    for key, field in (("nvlink5", "tokens"), ("sxid", "tokens"), ("sxid", "codes")):
        if not isinstance(data[key].get(field, {}), dict):
            raise ConfigError(f"{source}: field {key}.{field}: expected a mapping")
    codes = data["nvlink5"].get("codes", [])
    if not isinstance(codes, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in codes
    ):
        raise ConfigError(f"{source}: field nvlink5.codes: expected a list of Xid codes")


def validate(data: Any, source: str) -> None:
    """Raise ConfigError naming `source` and the field when `data` is not a valid policy."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a YAML mapping at the top level")
    _check_sections(data, source)
    _check_rule(data["unknown_code"], "unknown_code", source)
    _check_codes(data["xid"].get("default"), "xid.default", source)
    for family, rules in (data["xid"].get("families") or {}).items():
        _check_codes(rules or {}, f"xid.families.{family}", source)
    for key in ("tokens",):
        for token, entry in (data["nvlink5"].get(key) or {}).items():
            _check_rule(entry, f"nvlink5.tokens.{token}", source)
    for text, entry in data["recovery_actions"].items():
        _check_rule(entry, f"recovery_actions.{text}", source)
    for token, entry in (data["sxid"].get("tokens") or {}).items():
        _check_rule(entry, f"sxid.tokens.{token}", source)
    _check_rule(data["sxid"].get("no_token"), "sxid.no_token", source)
    _check_codes(data["sxid"].get("codes") or {}, "sxid.codes", source)
    _check_boot_noise(data["boot_noise"], source)
    for index, rule in enumerate(data["escalation"]):
        _check_escalation(rule, f"escalation[{index}]", source)
    validate_catalogue(data["driver_messages"], source)
    splats.check_section(data.get(splats.SECTION), source, _check_rule)


def _check_boot_noise(section: dict, source: str) -> None:
    window = section.get("window_s")
    if not isinstance(window, int | float) or isinstance(window, bool) or window < 0:
        raise ConfigError(f"{source}: field boot_noise.window_s: expected seconds >= 0")
    for family, entry in (section.get("families") or {}).items():
        if entry is not None and not isinstance(entry, dict):
            raise ConfigError(f"{source}: field boot_noise.families.{family}: expected a mapping")
        _check_keys(entry or {}, NOISE_KEYS, f"boot_noise.families.{family}", source)
        for kind in ("xid", "sxid"):
            codes = (entry or {}).get(kind) or []
            if not isinstance(codes, list) or not all(isinstance(c, int) for c in codes):
                raise ConfigError(
                    f"{source}: field boot_noise.families.{family}.{kind}: expected a list of codes"
                )


def _check_escalation(rule: Any, where: str, source: str) -> None:
    if not isinstance(rule, dict):
        raise ConfigError(f"{source}: field {where}: expected a mapping")
    _check_keys(rule, ESCALATION_KEYS, where, source)
    codes = rule.get("codes")
    if not isinstance(codes, list) or not codes or not all(isinstance(c, int) for c in codes):
        raise ConfigError(f"{source}: field {where}.codes: expected a list of Xid codes")
    if not isinstance(rule.get("count"), int) or rule["count"] < 2:
        raise ConfigError(f"{source}: field {where}.count: expected a whole number >= 2")
    window = rule.get("window_s")
    if not isinstance(window, int | float) or isinstance(window, bool) or window <= 0:
        raise ConfigError(f"{source}: field {where}.window_s: expected seconds > 0")
    if rule.get("action") not in names.ACTIONS:
        raise ConfigError(f"{source}: field {where}.action: {rule.get('action')!r} unknown")


def policy_from_mapping(
    data: Any, source: str, overlay: Any = None, overlay_source: str = ""
) -> XidPolicy:
    """Validate `data` (and `overlay` merged over it) into an XidPolicy (pure).

    Raises ConfigError naming the file and field of the first problem.
    """
    validate(data, source)
    if overlay is None:
        return XidPolicy(data, source)
    if not isinstance(overlay, dict):
        raise ConfigError(f"{overlay_source}: expected a YAML mapping at the top level")
    merged = _merge(data, overlay)
    validate(merged, overlay_source)
    return XidPolicy(merged, f"{source} + {overlay_source}")


@functools.cache
def packaged_policy() -> XidPolicy:
    """The packaged policy with the packaged driver-message catalogue, read and validated once
    per process (it is never mutated)."""
    data = packaged_yaml(PACKAGED)
    data["driver_messages"] = packaged_yaml(driver_messages.PACKAGED)
    return policy_from_mapping(data, f"gpuslo/data/{PACKAGED}")


def load_policy(overlay_path: str | None = None) -> XidPolicy:
    """The packaged policy, with the operator overlay at `overlay_path` merged over it.

    Raises ConfigError when the overlay is missing, unreadable, not a regular file, too large or
    too deep, not YAML (`gpuslo.config_file`) or has an invalid field.
    """
    if overlay_path is None:
        return packaged_policy()
    data = packaged_policy().data
    overlay = load_yaml(overlay_path, "policy")
    return policy_from_mapping(data, f"gpuslo/data/{PACKAGED}", overlay, overlay_path)


