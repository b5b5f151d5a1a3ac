"""Kernel-log events → `inspect` findings, classified with the Xid policy (pure).

One finding per (code or signal, PCI address or device, class, cause) with `events` counting the
occurrences; keys as shared/corpus/expected.yaml uses them. Xid 154 sets the action of the fatal
findings on its GPU. What the same capture shows later is said, never acted on (`_later`): a
fatal finding followed by an NVIDIA driver load (a reboot or a reload: journalctl -k's next
boot) or by an Xid 154 that sets its GPU's recovery action back to None keeps its class and
action, and its message says so and asks for validation (`extra.later`). A kernel log always
yields one `kernel_log_read` inventory finding (class ok, count = records), so a log with no GPU
event is healthy, not unknown; text with no kernel-log record at all yields nothing (inspect
turns that into `nothing_recognised`).

A last line without its newline is not read as an event (the first half of `Xid ...: 63` is
not an Xid 6; the live check waits for the newline instead): `kernel_log_read` says the last
line was incomplete, and when it holds a GPU marker an `incomplete_last_line` finding is
`unknown` (reason parse_error), so the verdict is never healthy on a record that was cut off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpuslo import names
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent
from gpuslo.exporter.evidence.kernel_log.pcie_notice import BandwidthNotice, bandwidth_notices
from gpuslo.exporter.evidence.kernel_log.read import (
    GPU_MARKER,
    kernel_records,
    scan_kernel_log_file,
    scan_kernel_log_text,
)
from gpuslo.exporter.evidence.log_lines import claimed
from gpuslo.exporter.inspect.kernel_log_scan import FILE_SCAN, KIND
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.classify import (
    SIGNAL_KINDS,
    Classified,
    classify_events,
    reason_of,
)
from gpuslo.exporter.policy.kernel_aer import fallback_findings
from gpuslo.exporter.policy.pcie_notice import notice_findings
from gpuslo.exporter.policy.ports import log_port_down_spare
from gpuslo.exporter.policy.unrecognised import judge_lines
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.verdict import Finding, layer_of_class

PORT_UP_STATES = ("active", "up")
PORT_DOWN_STATES = ("down", "disabled")


@dataclass
class _Group:
    first: Classified
    events: int = 0
    actions: list[str] = field(default_factory=list)
    last_line: int = 0


def _key(item: Classified) -> tuple:
    event = item.event
    code_or_signal = event.code if event.kind in ("xid", "sxid") else item.entry
    where = event.device if event.kind == "sxid" else event.pci
    return (event.kind, code_or_signal, where, item.class_, event.caused_by, event.gpu_instance)


def _recovery_actions(classified: list[Classified]) -> dict[str | None, tuple[str, int]]:
    """The latest recovery action an Xid names (Xid 154's text) and its line, per PCI address."""
    out: dict[str | None, tuple[str, int]] = {}
    for item in classified:
        if item.event.kind == "xid" and item.event.recovery:
            out[item.event.pci] = (item.action, item.event.line)
    return out


def _later(group: _Group, recovery: tuple[str, int] | None, loads: list[int]
           ) -> tuple[str, str] | None:
    """(extra.later, words) for a fatal finding the capture shows something after (see the
    module docstring): `recovery_cleared` when its GPU's last Xid 154, after the finding's last
    event, sets the action to None (NVIDIA, GPU memory error management, recovery action flag:
    None = no recovery action is needed, a new process can use the GPU); else
    `driver_reloaded` for an NVIDIA driver load after it (not the banner of the load the fault
    happened in). None otherwise."""
    if group.first.class_ != names.CLASS_FATAL:
        return None
    if recovery and recovery[0] == names.ACTION_NONE and recovery[1] > group.last_line:
        return "recovery_cleared", (f"later in this capture (line {recovery[1]}) Xid 154 sets "
                                    "this GPU's recovery action back to None: validate the GPU "
                                    "before it returns to service")
    # The driver prints `NVRM: loading NVIDIA UNIX ... Kernel Module` once per load, after it
    # probed the GPUs (nv.c's init: a probe or BAR failure comes before the banner of its own
    # load; fresh11 1318). A fault with no load before it in the capture happened during the
    # first load after it, which is then no reload.
    after = [line for line in loads if line > group.last_line]
    if after and not any(line < group.first.event.line for line in loads):
        after = after[1:]
    load = after[0] if after else None
    if load is None:
        return None
    return "driver_reloaded", (f"later in this capture (line {load}) the NVIDIA driver loads "
                               "again (a reboot or reload): if that cleared it, validate the GPU "
                               "before it returns to service")


def _finding(group: _Group, recovery: dict[str | None, tuple[str, int]],
             loads: list[int]) -> Finding:
    item, event = group.first, group.first.event
    action = max(group.actions, key=names.ACTION_SEVERITY.__getitem__)
    if item.class_ == names.CLASS_FATAL and event.pci in recovery:
        action = max(action, recovery[event.pci][0], key=names.ACTION_SEVERITY.__getitem__)
    later = _later(group, recovery.get(event.pci), loads)
    reason = reason_of(item)
    message = event.kind in SIGNAL_KINDS
    return Finding(
        kind=KIND,
        class_=item.class_,
        xid=event.code if event.kind == "xid" else None,
        sxid=event.code if event.kind == "sxid" else None,
        signal=item.signal if message else None,
        pci=event.pci,
        uuid=event.uuid,
        device=event.device,
        action=action,
        reason=reason,
        layer=None if reason else layer_of_class(item.class_),
        events=group.events,
        caused_by=event.caused_by,
        message=event.message[:200] + (f"; {later[1]}" if later else ""),
        line=event.line,
        extra={
            **({"message_id": item.entry} if message else {}),
            **({"later": later[0]} if later else {}),
            **({"gpu_instance": event.gpu_instance} if event.gpu_instance is not None else {}),
            **_blast(item),
        },
    )


def _blast(item: Classified) -> dict[str, str]:
    """What an Xid's error reaches (NVIDIA, "GPU memory error management": a contained error, Xid
    94, loses one process's or one MIG instance's work — restart it; an uncontained one, Xid 95,
    and every fatal Xid, takes the whole GPU until it is reset)."""
    if item.event.kind != "xid":
        return {}
    if item.class_ == names.CLASS_CONTAINED:
        return {"scope": "gpu_instance" if item.event.gpu_instance is not None else "process"}
    return {"scope": "gpu"} if item.class_ == names.CLASS_FATAL else {}


def event_findings(classified: list[Classified], loads: list[int] | None = None
                   ) -> list[Finding]:
    """Grouped findings of classified Xid / SXid / fallen-off-the-bus events; `loads`: the
    lines of the capture's NVIDIA driver loads (`_later`)."""
    groups: dict[tuple, _Group] = {}
    for item in classified:
        group = groups.setdefault(_key(item), _Group(item))
        group.events += 1
        group.actions.append(item.action)
        group.last_line = max(group.last_line, item.event.line or 0)
    recovery = _recovery_actions(classified)
    return [_finding(group, recovery, sorted(loads or [])) for group in groups.values()]


def cited_cause_findings(
    classified: list[Classified], policy: XidPolicy, family: str | None
) -> list[Finding]:
    """A finding for each Xid that another Xid names as its cause (Xid 45's "caused by previous
    Xid N") when the log does not show that Xid on the same GPU: classed by the policy, or
    `unknown` when its class depends on a severity token the log does not show (the policy's
    `nvlink5` codes)."""
    seen = {(c.event.pci, c.event.code) for c in classified if c.event.kind == "xid"}
    cited: dict[tuple, list[KernelEvent]] = {}
    for item in classified:
        event = item.event
        if event.caused_by and (event.pci, event.caused_by) not in seen:
            cited.setdefault((event.pci, event.caused_by), []).append(event)
    findings = []
    for (pci, code), citing in cited.items():
        rule = policy.xid_rule(code, family)
        token_dependent = policy.is_token_dependent(code)
        class_ = names.CLASS_UNKNOWN if token_dependent else rule.class_
        reason = "no_data" if token_dependent else rule.reason
        findings.append(
            Finding(
                kind=KIND,
                class_=class_,
                xid=code,
                pci=pci,
                uuid=citing[0].uuid,
                action=rule.action,
                reason=reason,
                layer=None if reason else layer_of_class(class_),
                line=citing[0].line,
                message=f"Xid {code} cited as the cause of {len(citing)} Xid 45 event(s) but "
                "not in the log; its severity token is unknown"
                if token_dependent
                else f"Xid {code} cited as the cause of {len(citing)} Xid 45 event(s) but not in "
                "the log",
            )
        )
    return findings


def port_findings(events: list[KernelEvent], expected: int | tuple[str, ...] | None = None,
                  ) -> list[Finding]:
    """Per mlx5 device: a `port_state` finding with the last state seen, and a `port_down`
    finding when it went down: fatal when it is still down at the end of the log, unless it is
    a spare (`log_port_down_spare`: never up while another port is up, no devices expected)."""
    by_device: dict[str, list[KernelEvent]] = {}
    for event in events:
        if event.kind == "port_state" and event.device:
            by_device.setdefault(event.device, []).append(event)
    up = {device for device, seen in by_device.items()
          if (seen[-1].state or "").lower() in PORT_UP_STATES}
    findings = []
    for device, seen in by_device.items():
        last = seen[-1]
        state = (last.state or "").lower()
        findings.append(
            Finding(
                kind=KIND,
                class_=names.CLASS_OK if state in PORT_UP_STATES else names.CLASS_WARN,
                signal="port_state",
                device=device,
                pci=last.pci,
                state=state.capitalize(),
                events=len(seen),
                message=last.message[:200],
                line=last.line,
            )
        )
        downs = [e for e in seen if (e.state or "").lower() in PORT_DOWN_STATES]
        if downs:
            findings.append(down_finding(device, seen, downs, bool(up - {device}), expected))
    return findings


def down_finding(device: str, seen: list[KernelEvent], downs: list[KernelEvent],
                 others_up: bool, expected: int | tuple[str, ...] | None) -> Finding:
    """The `port_down` finding of one device (see `port_findings`)."""
    last = seen[-1]
    state = (last.state or "").lower()
    ever_up = any((e.state or "").lower() in PORT_UP_STATES for e in seen)
    still_down = state in PORT_DOWN_STATES
    spare = log_port_down_spare(device, ever_up, others_up, expected) if still_down else ""
    fatal = still_down and not spare
    message = downs[-1].message[:200] + (f"; {spare}" if spare else "")
    return Finding(
        kind=KIND,
        class_=names.CLASS_FATAL if fatal else names.CLASS_WARN,
        signal="port_down",
        device=device,
        pci=last.pci,
        state=state.capitalize(),
        reason="network_port_down" if fatal else None,
        layer=None if fatal else names.LAYER_NODE,
        events=len(downs),
        message=message,
        line=downs[0].line,
    )


def inspect_kernel_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for one kernel log (see the module docstring). Raises ParseError for binary
    data and ConfigError for a broken policy overlay."""
    whole, _, tail = text.rpartition("\n") if not text.endswith("\n") else (text, "", "")
    whole = f"{whole}\n" if tail and whole else whole
    scan = scan_kernel_log_text(whole, source)
    events = scan.finish()
    if not events and not kernel_records(text):
        return []
    notices = bandwidth_notices(enumerate(whole.splitlines(), 1))
    return settled_read(kernel_log_findings(events, scan.records, source, options, tail, notices))


def settled_read(findings: list[Finding]) -> list[Finding]:
    """`findings` with the `kernel_log_read` inventory class `unknown` (no reason: the read
    itself worked) when another finding of the log is fatal or unknown: an
    inventory never reads `ok` over lines that say the GPU or driver failed (fresh6 703: "No
    NVIDIA graphics adapter found!"; 708: "Reset required"). Pure; the verdict is unchanged
    (a fatal or unknown finding already decides it)."""
    bad = any(f.class_ in (names.CLASS_FATAL, names.CLASS_UNKNOWN) for f in findings
              if f.signal != "kernel_log_read")
    if not bad:
        return findings
    return [replace(f, class_=names.CLASS_UNKNOWN, message=f"{f.message}; not an all-clear: "
                    "the lines report faults") if f.signal == "kernel_log_read" else f
            for f in findings]


def inspect_kernel_log_file(path: str, options: InspectOptions) -> list[Finding]:
    """Findings for a kernel-log file of any size, streamed in chunks (the library scan,
    `scan_kernel_log_file`, read once; a large one in two halves at once, `halves`): the same
    findings `inspect_kernel_log` draws from its text, with the device-and-severity fallback's
    from the same pass. Raises ParseError when its first 64 KiB are not a kernel log, InputError
    when it cannot be read."""
    scan = scan_kernel_log_file(path, require_kernel_log=True, halves=True, **FILE_SCAN)
    tail = scan.unterminated.decode("utf-8", errors="replace")
    notices = bandwidth_notices(scan.extra_lines)
    findings = kernel_log_findings(scan.finish(), scan.records, path, options, tail, notices)
    lines = [(number, line) for number, line in scan.extra_lines if not claimed(line)]
    return settled_read(findings + fallback_findings(KIND, judge_lines(lines)))


def kernel_log_findings(
    events: list[KernelEvent], records: int, source: str, options: InspectOptions,
    unterminated: str = "", notices: Sequence[BandwidthNotice] = (),
) -> list[Finding]:
    """Findings for a kernel log's events (pure): the event, port, cited-cause and PCIe
    bandwidth-notice (`policy.pcie_notice`) findings in line order, then `kernel_log_read`
    (class ok, count = lines read); `unterminated` is a last line without its newline, not read
    (see the module docstring)."""
    policy = options.policy
    classified = classify_events(events, policy, options.gpu_family)
    loads = [e.line for e in events if e.kind == "driver_load" and e.line]
    findings = event_findings(classified, loads)
    findings += port_findings(events, options.expect_network_devices)
    findings += cited_cause_findings(classified, policy, options.gpu_family)
    findings += notice_findings(KIND, notices)
    findings.sort(key=lambda f: f.line or 0)
    message = f"{source}: {records} kernel-log lines read, {len(classified)} GPU events"
    if unterminated:
        message += f"; the last line (line {records + 1}) is incomplete (no newline), not read"
    if GPU_MARKER.search(unterminated):
        findings.append(Finding(
            kind=KIND, class_=names.CLASS_UNKNOWN, signal="incomplete_last_line",
            reason="parse_error", line=records + 1,
            message=f"{source}: the last line has no newline (cut off?) and may be a GPU event; "
                    f"not read: {unterminated[:160]}"))
    read = Finding(kind=KIND, class_=names.CLASS_OK, signal="kernel_log_read", count=records,
                   message=message)
    return [*findings, read]
