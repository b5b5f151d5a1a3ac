"""Training-log profiles: the packaged `gpuslo/data/log_profiles.yaml` plus an operator overlay.

`load_profiles(overlay_path=None) -> Profiles` reads the packaged YAML (and the overlay, merged on
top), validates every field and compiles every regex. `build_profiles(document, source)` is the
pure part (a decoded YAML mapping in, `Profiles` out). Errors: `ConfigError` naming the file and
the field (`frameworks.megatron.rules[3].regex: ...`), also when the overlay cannot be read
(`gpuslo.config_file`: a regular file under the size cap, nesting checked before parsing).

Linear time: every regex is parsed with Python's own regex parser and rejected when a repeated
group holds another repeat (`(a+)+`, `(\\w{0,9}\\.){0,8}`) or when it uses a back-reference; every
record is cut to `MAX_RECORD` characters before matching, so no line, however long, costs more
than a bounded amount per rule.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from gpuslo import names
from gpuslo.config_file import load_yaml
from gpuslo.errors import ConfigError

try:  # Python 3.11+: the regex parser lives in re._parser
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older layout
    import sre_parse as _sre_parse  # type: ignore[no-redef]

PACKAGED = "log_profiles.yaml"
MAX_RECORD = 8192  # characters of one record that rules see
KINDS = ("step", "hint", "epoch", "init", "train_start", "restore", "save", "interruption",
         "restart", "alive", "end", "detect")  # fmt: skip
# restore `closes`: a line printed at the end of a load OR of a fresh initialisation (T5X's
# `Initialize/restore complete`): it ends a restore begun since the last progress line, and is
# nothing alone (`items._Grouper._restore`); save `closes`: the script goes on to save something
# that is no checkpoint on the very next line after a save's lone start line: that save's write
# returned (`items._Grouper._closes`), nothing alone
PHASES = {"restore": ("start", "end", "closes"),
          "save": ("start", "part", "end", "duration", "failed", "closes")}
STEP_TIME_IS = ("interval_mean", "single", "smoothed")
UNITS = {"ms": 1e-3, "s": 1.0}
_RULE_KEYS = {"kind", "regex", "contains", "fields", "phase", "cause", "layer", "priority", "hang",
              "record_end", "step_time_is", "warmup_first", "per_epoch", "same_total", "unit",
              "step_from"}  # fmt: skip
_TOP_KEYS = {"version", "prefixes", "splits", "timestamps", "inline_timestamps", "checkpoint_step",
             "common", "frameworks", "roles"}  # fmt: skip
PIN_ROLES = ("step", "total", "epoch", "elapsed", "remaining", "step_s", "window_s", "smoothed_s",
             "line_s", "rate_ips", "rate_spi", "metric")


@dataclass(frozen=True)
class Rule:
    """One compiled rule of a profile (see the YAML's header for kinds and groups)."""

    kind: str
    regex: re.Pattern[str]
    contains: str = ""
    fields: tuple[re.Pattern[str], ...] = ()
    phase: str = ""
    cause: str = ""
    layer: str = ""
    priority: int = 0
    hang: bool = False
    record_end: re.Pattern[str] | None = None
    step_time_is: str = "interval_mean"
    warmup_first: bool = False
    per_epoch: bool = False
    same_total: bool = False
    unit: str = ""
    step_from: str = ""
    where: str = ""  # the field path, for messages

    def match(self, text: str) -> dict[str, str] | None:
        """Named groups of the first match in `text` (fields merged in), None when no match."""
        if self.contains and self.contains not in text:
            return None
        found = self.regex.search(text)
        if found is None:
            return None
        groups = {k: v for k, v in found.groupdict().items() if v is not None}
        for extra in self.fields:
            more = extra.search(text)
            if more is not None:
                for k, v in more.groupdict().items():
                    if v is not None:
                        groups.setdefault(k, v)
        return groups


@dataclass(frozen=True)
class Framework:
    """A framework's profile: its name, a label for people, its rules in order, and whether it
    saves checkpoints without a line (`saves: silent`: Lightning's ModelCheckpoint)."""

    name: str
    label: str
    rules: tuple[Rule, ...]
    saves_silently: bool = False


@dataclass(frozen=True)
class Profiles:
    """Everything the parser needs, compiled. `frameworks` keeps the YAML order."""

    prefixes: tuple[re.Pattern[str], ...]
    splits: tuple[re.Pattern[str], ...]
    timestamps: tuple[re.Pattern[str], ...]
    inline_timestamps: tuple[re.Pattern[str], ...]
    checkpoint_step: tuple[re.Pattern[str], ...]
    common: tuple[Rule, ...]
    frameworks: dict[str, Framework] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    pins: dict[str, str] = field(default_factory=dict)  # field name → role (overlay `roles`)

    def saves_silently(self, framework: str | None) -> bool:
        """Whether `framework` (a name, None: not known) saves checkpoints without a line."""
        found = self.frameworks.get(framework) if framework else None
        return found is not None and found.saves_silently

    def names_only(self, framework: str) -> bool:
        """Whether `framework`'s profile reads nothing but its name: only `detect` rules, and
        its saves printed (Caffe, MMEngine, detectron2: the common families read them)."""
        found = self.frameworks.get(framework)
        return found is not None and not found.saves_silently and all(
            r.kind == "detect" for r in found.rules)

    def choose(self, hits: dict[str, int]) -> str | None:
        """The framework a log's lines name, from `hits` (framework → lines its rules matched):
        the most hits among the profiles that read something; a profile that reads only its
        name (`names_only`) names the log only where none of those matched, since choosing
        it would leave out another profile's events (ties: the first counted). None: no
        profile's line seen (the log is read by its templates and the common families)."""
        reading = {k: v for k, v in hits.items() if not self.names_only(k)}
        pool = reading or hits
        return max(pool, key=lambda k: pool[k]) if pool else None


def check_linear(pattern: str, where: str) -> None:
    """Raise ConfigError (naming `where`) unless `pattern` is free of nested repeats and
    back-references, the two constructs that make a backtracking regex super-linear."""
    try:
        parsed = _sre_parse.parse(pattern)
    except re.error as error:
        raise ConfigError(f"{where}: not a valid regex: {error}") from None

    def walk(items: Any, inside_repeat: bool) -> None:
        for op, arg in items:
            name = str(op)
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, sub = arg
                many = high is _sre_parse.MAXREPEAT or high > 1
                if many and inside_repeat:
                    raise ConfigError(f"{where}: nested quantifier (a repeat inside a repeated "
                                      f"group) can take exponential time: {pattern!r}")
                walk(sub, inside_repeat or many)
            elif name in ("GROUPREF", "GROUPREF_EXISTS"):
                raise ConfigError(f"{where}: back-references are not allowed: {pattern!r}")
            elif name == "SUBPATTERN":
                walk(arg[-1], inside_repeat)
            elif name == "BRANCH":
                for branch in arg[1]:
                    walk(branch, inside_repeat)
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(arg[1], inside_repeat)
            elif name == "ATOMIC_GROUP":
                walk(arg, inside_repeat)

    walk(parsed, False)


def _regex(value: Any, where: str) -> re.Pattern[str]:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: must be a non-empty regex string")
    check_linear(value, where)
    return re.compile(value)


def _regex_list(value: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"{where}: must be a list of regexes")
    return tuple(_regex(item, f"{where}[{i}]") for i, item in enumerate(value))


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a mapping with kind and regex")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    regex = _regex(raw.get("regex"), f"{where}.regex")
    phase = raw.get("phase", "")
    if kind in PHASES and phase not in PHASES[kind]:
        raise ConfigError(f"{where}.phase: {phase!r} is not one of {', '.join(PHASES[kind])}")
    layer = raw.get("layer", "")
    if kind == "interruption":
        if layer not in names.LAYERS:
            raise ConfigError(f"{where}.layer: {layer!r} is not one of {', '.join(names.LAYERS)}")
        if not isinstance(raw.get("cause"), str) or not raw["cause"]:
            raise ConfigError(f"{where}.cause: an interruption rule needs a cause name")
    priority = raw.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigError(f"{where}.priority: must be an integer")
    step_time_is = raw.get("step_time_is", "interval_mean")
    if step_time_is not in STEP_TIME_IS:
        raise ConfigError(f"{where}.step_time_is: {step_time_is!r} is not one of "
                          f"{', '.join(STEP_TIME_IS)}")
    unit = raw.get("unit", "")
    if unit and unit not in UNITS:
        raise ConfigError(f"{where}.unit: {unit!r} is not one of ms, s")
    step_from = raw.get("step_from", "")
    if step_from not in ("", "epoch"):
        raise ConfigError(f"{where}.step_from: only 'epoch' is known")
    if kind == "step" and not step_from and "step" not in regex.groupindex:
        fields = _regex_list(raw.get("fields"), f"{where}.fields")
        if not any("step" in f.groupindex for f in fields):
            raise ConfigError(f"{where}.regex: a step rule needs a (?P<step>...) group")
    contains = raw.get("contains", "")
    if not isinstance(contains, str):
        raise ConfigError(f"{where}.contains: must be a string")
    for flag in ("hang", "warmup_first", "per_epoch", "same_total"):
        if not isinstance(raw.get(flag, False), bool):
            raise ConfigError(f"{where}.{flag}: must be true or false")
    record_end = raw.get("record_end")
    return Rule(
        kind=kind, regex=regex, contains=contains,
        fields=_regex_list(raw.get("fields"), f"{where}.fields"), phase=phase,
        cause=str(raw.get("cause", "")), layer=layer, priority=priority,
        hang=bool(raw.get("hang", False)),
        record_end=_regex(record_end, f"{where}.record_end") if record_end is not None else None,
        step_time_is=step_time_is, warmup_first=bool(raw.get("warmup_first", False)),
        per_epoch=bool(raw.get("per_epoch", False)), same_total=bool(raw.get("same_total", False)),
        unit=unit, step_from=step_from, where=where,
    )  # fmt: skip


def _rules(value: Any, where: str) -> tuple[Rule, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: must be a list of rules")
    return tuple(_rule(item, f"{where}[{i}]") for i, item in enumerate(value))


def build_profiles(document: Any, source: str) -> Profiles:
    """Validate and compile a decoded profiles document (the packaged YAML, overlay merged).

    Raises ConfigError naming `source` and the field for any invalid entry."""
    try:
        return _build(document, source)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None


def _build(document: Any, source: str) -> Profiles:
    if not isinstance(document, dict):
        raise ConfigError("the document must be a mapping")
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"unknown top-level field(s) {', '.join(unknown)}")
    if document.get("version", 1) != 1:
        raise ConfigError(f"version: {document.get('version')!r} is not 1")
    raw_frameworks = document.get("frameworks") or {}
    if not isinstance(raw_frameworks, dict):
        raise ConfigError("frameworks: must be a mapping of name to profile")
    frameworks = {}
    for name, raw in raw_frameworks.items():
        where = f"frameworks.{name}"
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name):
            raise ConfigError(f"{where}: a framework name is lower-case letters, digits and _")
        if not isinstance(raw, dict) or "rules" not in raw:
            raise ConfigError(f"{where}: must be a mapping with label and rules")
        extra = sorted(set(raw) - {"label", "rules", "saves"})
        if extra:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(extra)}")
        if raw.get("saves", "printed") not in ("printed", "silent"):
            raise ConfigError(f"{where}.saves: {raw['saves']!r} is not printed or silent")
        frameworks[name] = Framework(name, str(raw.get("label", name)),
                                     _rules(raw["rules"], f"{where}.rules"),
                                     raw.get("saves") == "silent")
    for key in ("prefixes", "splits", "timestamps", "inline_timestamps", "checkpoint_step"):
        _regex_list(document.get(key), key)  # validate before compiling below
    pins = document.get("roles") or {}
    if not isinstance(pins, dict) or not all(
            isinstance(k, str) and v in PIN_ROLES for k, v in pins.items()):
        raise ConfigError(f"roles: must map a field name to one of {', '.join(PIN_ROLES)}")
    return Profiles(
        prefixes=_regex_list(document.get("prefixes"), "prefixes"),
        splits=_regex_list(document.get("splits"), "splits"),
        timestamps=_regex_list(document.get("timestamps"), "timestamps"),
        inline_timestamps=_regex_list(document.get("inline_timestamps"), "inline_timestamps"),
        checkpoint_step=_regex_list(document.get("checkpoint_step"), "checkpoint_step"),
        common=_rules(document.get("common") or [], "common"),
        frameworks=frameworks,
        sources=(source,),
        pins=dict(pins),
    )


def merge(base: dict[str, Any], overlay: Any, source: str) -> dict[str, Any]:
    """The packaged document with `overlay` on top (pure): lists of the overlay go first,
    a framework in the overlay replaces the packaged one field by field."""
    if overlay is None:
        return copy.deepcopy(base)
    if not isinstance(overlay, dict):
        raise ConfigError(f"{source}: the overlay must be a mapping")
    merged = copy.deepcopy(base)
    for key, value in overlay.items():
        if key in ("prefixes", "splits", "timestamps", "inline_timestamps", "checkpoint_step",
                   "common"):
            if not isinstance(value, list):
                raise ConfigError(f"{source}: {key}: must be a list")
            merged[key] = list(value) + list(merged.get(key) or [])
        elif key == "roles":
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: roles: must be a mapping of field name to role")
            merged["roles"] = {**(merged.get("roles") or {}), **value}
        elif key == "frameworks":
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: frameworks: must be a mapping")
            for name, profile in value.items():
                if not isinstance(profile, dict):
                    raise ConfigError(f"{source}: frameworks.{name}: must be a mapping")
                merged.setdefault("frameworks", {})[name] = {
                    **merged.get("frameworks", {}).get(name, {}), **profile}
        else:
            merged[key] = value
    return merged


def load_profiles(overlay_path: str | None = None) -> Profiles:
    """The packaged profiles, with the overlay file at `overlay_path` merged on top.

    Raises ConfigError (file and field named) when the overlay cannot be read
    (`gpuslo.config_file`), or when it or the merged result is invalid."""
    if overlay_path is None:
        return _packaged_profiles()
    base = _packaged_document()
    overlay = load_yaml(overlay_path, "log-profile overlay")
    profiles = build_profiles(merge(base, overlay, overlay_path), overlay_path)
    return Profiles(**{**profiles.__dict__, "sources": (f"gpuslo/data/{PACKAGED}", overlay_path)})


@functools.cache
def _packaged_profiles() -> Profiles:
    """The packaged profiles alone, built once a process (checking and compiling their ~220
    patterns took ~0.06 s of every `gpuslo goodput`); shared, so never changed by a caller."""
    return build_profiles(_packaged_document(), f"gpuslo/data/{PACKAGED}")


def _packaged_document() -> dict:
    """The packaged YAML decoded (a new object each call: `merge` may change it), with libyaml's
    safe loader where built: the file is known good, and pure-Python PyYAML took ~0.1 s."""
    packaged = resources.files("gpuslo").joinpath("data", PACKAGED).read_text(encoding="utf-8")
    return yaml.load(packaged, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
