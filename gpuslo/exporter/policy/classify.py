"""Kernel-log events classified by the Xid policy and the driver-message catalogue (pure).

`classify_events` walks the events of one log in order and gives each Xid, SXid,
fallen-off-the-bus and driver-message event its class, action and reason
(`gpuslo.exporter.policy.xid.XidPolicy.rule_for`), then applies what depends on the stream:
- boot noise: codes a family emits on a healthy boot are class `noise` within `window_s` seconds
  after the driver loads (they are still counted);
- escalation: a `warn` Xid repeated `count` times within `window_s` seconds on one GPU becomes
  `fatal` from the event that reaches the count;
- one message over several lines: a driver message matching another pattern of the catalogue
  entry the previous message on the same GPU matched, a few lines on, joins that event
  (`RmInitAdapter failed!` then `rm_init_adapter failed` is one failed attempt) when both read
  the same class: a fatal line (`Reset required` after an unrecognised `Check failed`) is an
  event of its own, never folded into an unknown one;
- a driver reload (`NVRM: loading NVIDIA ...`) ends what an unrecognised driver message left
  `unknown`: such a message before a reload is recorded as `warn`;
- a GSP RPC error report's own lines (catalogue entry `gsp_rpc_report`: the active RPC and the
  RPC history tables the driver prints under an Xid 119 or 120, open-gpu-kernel-modules
  kgspLogRpcDebugInfo) within `NEAR_LINES` lines or `REPORT_MOMENT_S` seconds of that Xid line
  or of the report's previous line add nothing; the first line of a report whose Xid line the
  log does not show is `unknown` (reason `parse_error`: neither the GPU nor the Xid is known),
  its later lines join it;
- the GSP Timeout banner the driver prints before its Xid 119 record (catalogue entry
  `gsp_timeout`, open-gpu-kernel-modules _kgspLogXid119) within `NEAR_LINES` lines or
  `REPORT_MOMENT_S` seconds of an Xid 119 or 120 line, on no GPU or the same one, is that Xid's
  preamble and adds nothing; without such an Xid line it is the fatal event (newcomer7 F11).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpuslo import names
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent
from gpuslo.exporter.policy.xid import Rule, XidPolicy
from gpuslo.verdict import Finding

MESSAGE_KINDS = ("fallen_off_bus", "driver_message")
# Events whose finding names a signal (the catalogue's, a kernel splat's) rather than a code.
SIGNAL_KINDS = (*MESSAGE_KINDS, "kernel_splat")
NEAR_LINES = 4  # lines of one driver message are at most this far apart
REPORT_ENTRY = "gsp_rpc_report"  # driver_messages.yaml: lines only a GSP RPC error report prints
REPORT_XIDS = frozenset({119, 120})  # GSP_RPC_TIMEOUT, GSP_ERROR: the Xids such a report follows
REPORT_MOMENT_S = 1.0  # one report's lines are printed within this many seconds
PREAMBLE_ENTRY = "gsp_timeout"  # driver_messages.yaml: the banner before an Xid 119 line


@dataclass(frozen=True)
class Classified:
    """A kernel event with what the policy gives it: class (`names.EVENT_CLASSES`, or `unknown`
    for an unrecognised driver message), action, reason (None unless fatal or unknown),
    the catalogue `signal`/`entry` of a driver message, `xid`, the code it is counted as (None:
    not counted as an Xid), and `clears`: the event ends the GPU's active problem."""

    event: KernelEvent
    class_: str
    action: str
    reason: str | None = None
    signal: str | None = None
    entry: str | None = None
    xid: int | None = None
    clears: bool = False


def _boot_noise(
    event: KernelEvent, load: tuple | None, policy: XidPolicy, family: str | None
) -> bool:
    if event.kind not in ("xid", "sxid") or event.code is None or event.timestamp is None:
        return False
    if not policy.is_boot_noise(event.kind, event.code, family):
        return False
    if load is not None and load[1] == event.clock_kind:
        return 0 <= event.timestamp - load[0] <= policy.boot_noise_window_s
    # No driver-load record on the same clock: kernel uptime bounds the time since the load.
    return event.clock_kind == "uptime" and event.timestamp <= policy.boot_noise_window_s


def _classified(event: KernelEvent, rule: Rule) -> Classified:
    return Classified(
        event, rule.class_, rule.action, rule.reason, rule.signal, rule.entry, rule.xid, rule.clears
    )


class _Stream:
    """The state `classify_events` keeps while walking one log."""

    def __init__(self, policy: XidPolicy, family: str | None) -> None:
        self.policy, self.family = policy, family
        self.out: list[Classified] = []
        self.load: tuple[float, str] | None = None
        self.recent: dict[tuple[str | None, int], deque[float]] = defaultdict(deque)
        # (pci, entry) -> (index in out, parts seen) of the last driver message there
        self.messages: dict[tuple[str | None, str], tuple[int, set[str]]] = {}
        self.report_last: KernelEvent | None = None  # the open GSP RPC report's last line

    def driver_load(self, event: KernelEvent) -> None:
        if event.timestamp is not None:
            self.load = (event.timestamp, event.clock_kind)
        for index, item in enumerate(self.out):
            if item.class_ == names.CLASS_UNKNOWN:
                self.out[index] = replace(item, class_=names.CLASS_WARN, reason=None)
        self.messages.clear()

    def joins(self, event: KernelEvent, rule: Rule) -> bool:
        """True (and the earlier event extended) when `event` is another line of the last
        message of the same catalogue entry on the same GPU."""
        if event.kind not in MESSAGE_KINDS or rule.entry is None:
            return False
        key = (event.pci, rule.entry)
        last = self.messages.get(key)
        part = event.message if rule.class_ == names.CLASS_UNKNOWN else str(rule.part)
        if last is not None:
            index, parts = last
            earlier = self.out[index].event
            near = event.line - (earlier.line + earlier.lines - 1) <= NEAR_LINES
            same = self.out[index].class_ == rule.class_  # a fatal line never hides in an unknown
            if near and same and part not in parts and rule.class_ != names.CLASS_UNKNOWN:
                parts.add(part)
                grown = replace(earlier, lines=earlier.lines + event.lines)
                self.out[index] = replace(self.out[index], event=grown)
                return True
        self.messages[key] = (len(self.out), {part})
        return False

    def in_report(self, event: KernelEvent, rule: Rule) -> bool:
        """True when `event` is a line of the GSP RPC error report open now (module docstring);
        an Xid 119/120 opens one, a report line with none open is made the `unknown` event."""
        if event.kind == "xid" and event.code in REPORT_XIDS:
            self.report_last = event
            self.drop_preamble(event)
            return False
        if rule.entry != REPORT_ENTRY:
            return False
        last, self.report_last = self.report_last, event
        return last is not None and _same_report(last, event)

    def drop_preamble(self, xid: KernelEvent) -> None:
        """Remove the `PREAMBLE_ENTRY` events printed just before the Xid 119/120 `xid` (on no
        GPU or on its GPU): they are its banner, the Xid line is the event."""
        while self.out:
            last = self.out[-1]
            if last.entry != PREAMBLE_ENTRY or last.event.pci not in (None, xid.pci):
                return
            if not _same_report(last.event, xid):
                return
            self.out.pop()
            gone = len(self.out)
            self.messages = {k: v for k, v in self.messages.items() if v[0] != gone}

    def add(self, event: KernelEvent) -> None:
        rule = self.policy.rule_for(event, self.family)
        if rule is None or self.in_report(event, rule) or self.joins(event, rule):
            return
        if rule.entry == REPORT_ENTRY:
            rule = replace(rule, class_=names.CLASS_UNKNOWN, action=names.ACTION_NONE,
                           reason="parse_error")
        if _boot_noise(event, self.load, self.policy, self.family):
            rule = replace(rule, class_=names.CLASS_NOISE, action=names.ACTION_NONE, reason=None)
        elif rule.class_ == names.CLASS_WARN and event.kind == "xid":
            rule = _escalate(event, rule, self.policy, self.recent)
        self.out.append(_classified(event, rule))


def _same_report(last: KernelEvent, event: KernelEvent) -> bool:
    """True when `event` follows `last` within `NEAR_LINES` lines or `REPORT_MOMENT_S` seconds on
    the same clock (a report's mailbox and core dumps may lie between its Xid and its tables)."""
    if 0 <= event.line - (last.line + last.lines - 1) <= NEAR_LINES:
        return True
    if last.timestamp is None or event.timestamp is None or last.clock_kind != event.clock_kind:
        return False
    return 0 <= event.timestamp - last.timestamp <= REPORT_MOMENT_S


def classify_events(
    events: Iterable[KernelEvent], policy: XidPolicy, family: str | None
) -> list[Classified]:
    """Classify Xid, SXid, fallen-off-the-bus, driver-message and kernel-splat events in order
    (pure; the rules are the module docstring's).

    Driver-load records set the boot-noise reference and settle earlier unrecognised messages;
    port-state and driver-load records, and driver chatter, are not returned. Escalation counts
    events per (PCI address, Xid) with timestamps in seconds.
    """
    stream = _Stream(policy, family)
    for event in events:
        if event.kind == "driver_load":
            stream.driver_load(event)
        elif event.kind in ("xid", "sxid", *SIGNAL_KINDS):
            stream.add(event)
    return stream.out


def recent_last(recent: dict) -> float | None:
    """The latest timestamp seen by the escalation counter, None before any."""
    return max((times[-1] for times in recent.values() if times), default=None)


def _escalate(event: KernelEvent, rule: Rule, policy: XidPolicy, recent: dict) -> Rule:
    for escalation in policy.escalations:
        if event.code not in escalation.codes:
            continue
        # An event without a timestamp counts as inside the window (fail closed).
        now = event.timestamp if event.timestamp is not None else (recent_last(recent) or 0.0)
        times = recent[(event.pci, event.code)]
        times.append(now)
        while times and now - times[0] > escalation.window_s:
            times.popleft()
        if len(times) >= escalation.count:
            return replace(
                rule, class_=names.CLASS_FATAL, action=escalation.action, reason="xid_fatal"
            )
        return rule
    return rule


def xid_finding(
    kind: str,
    xid: int,
    policy: XidPolicy,
    *,
    gpu: str | None = None,
    uuid: str | None = None,
    pci: str | None = None,
    family: str | None = None,
) -> Finding:
    """The finding for a last-Xid value from DCGM, classed by `policy` for the GPU `family` (a
    name outside `names.GPU_FAMILIES` means the family's defaults). A fatal Xid carries its
    policy reason (pure)."""
    family = family if family in names.GPU_FAMILIES else None
    rule = policy.xid_rule(xid, family)
    return Finding(
        kind=kind,
        class_=rule.class_,
        xid=xid,
        gpu=gpu,
        uuid=uuid,
        pci=pci,
        action=rule.action,
        reason=rule.reason,
        message=f"last Xid reported by DCGM is {xid}",
    )


def reason_of(classified: Classified) -> str | None:
    """The bounded reason of a classified event: fatal and unknown events carry one (from the
    policy entry), the other classes none."""
    return classified.reason
