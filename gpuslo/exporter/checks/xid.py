"""`xid`: Xid / SXid / fallen-off-the-bus events from the kernel log, classified by the Xid policy.

Evidence, first that answers: `context.kernel_log` (a file, when set: read whole every run, in
one pass, `checks.xid_file`; a file whose first 64 KiB are not a kernel log is
`unknown`/`parse_error`; the output's `resume` says where the scan stopped, so the exporter judges
appended records in process, `gpuslo.exporter.xid_fast`);
`/dev/kmsg` (`context.kmsg_path`) from a cursor; `journalctl -k -b -o short-monotonic`; `dmesg`
(both `checks.xid_commands`).
None readable → `DependencyMissing` (the runner reports `unknown`/`dependency_missing`).

The /dev/kmsg cursor (`xid_kmsg_state.json` in `context.state_dir`, written atomically) holds the
boot id (`<procfs>/sys/kernel/random/boot_id`), the last sequence read, the cumulative event
counts and records lost, the active fatal problems per GPU, the driver-load time (boot-noise
window), recent warn events (escalation) and the last records read, parsed again before the next
read's so a kernel splat split between two reads is one event, judged once (`checks.xid_carry`).
A restart continues after the last sequence: it neither recounts nor loses an event. A new boot
id starts over at sequence 0.

Classification is `gpuslo.exporter.policy.classify` with the Xid policy and the driver-message
catalogue, so an NVRM line such as `RmInitAdapter failed!` is judged here as in `inspect`.

Results: one per GPU scope with events or an active problem (scope = GPU UUID from the
`NVRM: GPU at PCI:` map, else `pci:<bus id>`; an NVSwitch's scope is its device name; an event
with a redacted address, or a driver message naming no GPU, is `node`): `fail` for a fatal class
with the policy's reason (`xid_fatal`, `fallen_off_bus`, `sxid_fatal`, `recovery_action`,
`gpu_init_failed`, ...) and action; `unknown` (`unrecognised_driver_message`) for an NVRM line
that reads as an error and matches no catalogue entry (`inspect`'s reading; here a `warn`, see
below); `warn` for warn; `ok` otherwise; plus one `node` result saying what was read. A fatal or
unknown problem stays until the next boot, a driver reload (`NVRM: loading NVIDIA` after it: every
GPU re-initialised), or, for a fatal one, an event the policy marks `clears` (an Xid 154 back to
None) on that GPU; then the return-to-service gate (`gpuslo.exporter.gate`) validates the GPU
before it counts.
Lines no reader claims and NVRM lines no catalogue entry knows go to the device-and-severity
fallback (`checks.xid_fallback`): `warn` naming the line (fail with a fatal-class word), counted
in the fact `unrecognised_messages` {"xid": lines}; the PCI core's bandwidth notice of a path
narrower than its device is a `warn` for that device, as `inspect` reads it (`xid_fallback`).
Records lost between two reads make the node result `unknown` (`no_data`) for that run; records
gone before the first read of a boot are reported as `warn`.

Counters for the runner: `run` returns a `CheckOutput` whose `facts` (`base.KernelLogFacts`) hold
`xid_events` {(pci_bus_id, xid, class): count}, `sxid_events` {(nvswitch, sxid, class): count}
(cumulative within a boot for /dev/kmsg; totals of the source otherwise; `count_events` is the
pure function) and `kernel_log_records_lost` (int); the exporter folds them into counters that
never go down (`gpuslo.exporter.state.CounterCarry`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from pathlib import Path

from gpuslo import names
from gpuslo.errors import DependencyMissing, InputError, ParseError
from gpuslo.exporter.checks import xid_carry, xid_file
from gpuslo.exporter.checks import xid_fallback as fallback
from gpuslo.exporter.checks.base import (
    DEFAULT_INTERVAL_S,
    CheckContext,
    CheckOutput,
    KernelLogFacts,
    UnrecognisedFacts,
)
from gpuslo.exporter.checks.xid_commands import check_command_output, read_command_text
from gpuslo.exporter.checks.xid_cursor import STATE_FILE, load_cursor, save_cursor
from gpuslo.exporter.checks.xid_file import scan_file
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.kernel_log.kmsg import read_boot_id, read_kmsg
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent, with_uuids
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log
from gpuslo.exporter.evidence.nvidia_smi.proc import read_gpu_information
from gpuslo.exporter.policy.classify import Classified, classify_events, reason_of
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.exporter.state import locked
from gpuslo.verdict import NODE_SCOPE, CheckResult

NAME = "xid"
UNKNOWN_PCI = "unknown"


def scope_of(event: KernelEvent) -> str:
    """Result scope of an event: GPU UUID, `pci:<bus id>`, NVSwitch device, or `node`."""
    if event.kind == "sxid":
        return event.device or (f"pci:{event.pci}" if event.pci else NODE_SCOPE)
    if event.uuid:
        return event.uuid
    return f"pci:{event.pci}" if event.pci else NODE_SCOPE


def count_events(classified: list[Classified]) -> tuple[dict, dict]:
    """({(pci_bus_id, xid, class): count}, {(nvswitch, sxid, class): count}) of classified
    events, label values as strings (pure). A driver message counts as the Xid its catalogue
    entry names (a fallen-off-the-bus block without an Xid as Xid 79), else not at all. A
    missing address is `unknown`."""
    xids: Counter = Counter()
    sxids: Counter = Counter()
    for item in classified:
        event = item.event
        if event.kind == "sxid":
            sxids[(event.device or event.pci or UNKNOWN_PCI, str(event.code), item.class_)] += 1
        elif item.xid is not None:
            xids[(event.pci or UNKNOWN_PCI, str(item.xid), item.class_)] += 1
    return dict(xids), dict(sxids)


def _worst(items: list[Classified]) -> Classified:
    rank = {names.CLASS_FATAL: 0, names.CLASS_WARN: 1}
    return min(items, key=lambda c: (rank.get(c.class_, 2), -names.ACTION_SEVERITY[c.action]))


def fold_problem(problem: dict | None, item: Classified) -> dict | None:
    """A GPU's active problem after one more event, in time order (pure): the first fatal event
    gives the reason and message (the root cause), the most severe action of the fatal events
    wins (an Xid 154 sets it), an event the policy marks `clears` (Xid 154 back to `None`)
    clears the problem, and an unrecognised driver message makes an `unknown` problem unless a
    fatal one is active. `problem["status"]` is `fail` or `unknown`."""
    if item.clears:
        return None
    if item.class_ not in (names.CLASS_FATAL, names.CLASS_UNKNOWN):
        return problem
    status = names.STATUS_FAIL if item.class_ == names.CLASS_FATAL else names.STATUS_UNKNOWN
    current = problem.get("status", names.STATUS_FAIL) if problem else None
    if problem is None or (current == names.STATUS_UNKNOWN and status == names.STATUS_FAIL):
        message = f"{_label(item)}: {item.event.message}"
        return {
            "reason": reason_of(item),
            "action": item.action,
            "message": message[:160],
            "status": status,
        }
    if status == names.STATUS_UNKNOWN:
        return problem
    action = max(problem["action"], item.action, key=names.ACTION_SEVERITY.__getitem__)
    return {**problem, "action": action}


def evaluate_events(
    classified: list[Classified],
    problems: dict[str, dict],
    source: str,
    now: float,
    reload_line: int | None = None,
) -> tuple[list[CheckResult], dict[str, dict]]:
    """Per-scope results for new events plus still-active `problems` (pure).

    `problems` maps scope → {reason, action, message, status}; `reload_line`: the line of the
    last NVIDIA driver load (`NVRM: loading NVIDIA`) among the new records, None when there is
    none. A driver reload re-initialises every GPU, so it ends the problems raised before it,
    fatal ones included (the return-to-service gate then validates the GPUs, policy
    `driver_reload`); the events before it are still reported and counted.
    Returns the results and the updated problems (`fold_problem` over the events in order).
    """
    if reload_line is not None:
        problems = {}
    by_scope: dict[str, list[Classified]] = {}
    for item in classified:
        scope = scope_of(item.event)
        by_scope.setdefault(scope, []).append(item)
        if reload_line is not None and item.event.line < reload_line:
            continue  # before the reload: recorded, no longer a problem
        problem = fold_problem(problems.get(scope), item)
        if problem is None:
            problems.pop(scope, None)
        else:
            problems[scope] = problem
    results = []
    for scope in sorted(set(by_scope) | set(problems)):
        results.append(_result(scope, by_scope.get(scope, []), problems.get(scope), source, now))
    return results, problems


def last_reload(events: list[KernelEvent]) -> int | None:
    """The line of the last NVIDIA driver load among `events` (None: none). Pure."""
    return max((e.line for e in events if e.kind == "driver_load"), default=None)


def _result(
    scope: str, items: list[Classified], problem: dict | None, source: str, now: float
) -> CheckResult:
    common = {"check": NAME, "scope": scope, "source": source, "observed_at": now}
    if problem:
        return CheckResult(
            status=problem.get("status", names.STATUS_FAIL),
            reason=problem["reason"],
            action=problem["action"],
            message=problem["message"],
            **common,
        )
    # No active problem: warn events, and fatal ones a later Xid 154 cleared, are recorded.
    summary = ", ".join(f"{n} x {k}" for k, n in sorted(Counter(_label(i) for i in items).items()))
    warned = [i for i in items if i.class_ == names.CLASS_WARN]
    if any(i.class_ in (names.CLASS_FATAL, names.CLASS_WARN) for i in items):
        action = _worst(warned).action if warned else names.ACTION_NONE
        return CheckResult(status=names.STATUS_WARN, action=action, message=summary[:160], **common)
    return CheckResult(status=names.STATUS_OK, message=summary[:160], **common)


def _label(item: Classified) -> str:
    event = item.event
    if event.kind == "sxid":
        code = f"SXid {event.code}"
    elif event.kind == "xid":
        code = f"Xid {event.code}"
    elif event.kind == "kernel_splat":
        code = f"kernel {event.token} in {event.module}"
    elif item.entry == fallback.UNRECOGNISED:
        code = f"unrecognised line {event.line}: {event.message[:100]}"  # the line itself
    else:
        code = f"driver message {item.entry}"
    return f"{code} ({item.class_})"


def judge(
    events: list[KernelEvent],
    records: int,
    unclaimed: list,
    source: str,
    policy,
    family: str | None,
    now: float,
    notices: list | tuple = (),
) -> CheckOutput:
    """Results and facts of a whole read of a kernel log (a file, journalctl or dmesg): its
    `events`, `records` (lines), `unclaimed` fallback lines and PCIe bandwidth `notices`,
    judged with `policy` for GPU `family` (pure). Raises ParseError when it holds no record."""
    if records == 0:
        raise ParseError(source, "no kernel-log record in it: nothing to judge the GPUs by")
    classified = fallback.live_classes(classify_events(events, policy, family))
    results, _ = evaluate_events(classified, {}, source, now, last_reload(events))
    results = fallback.merged(results, unclaimed, source, now, notices)
    xids, sxids = count_events(classified)
    results.append(_node_result(source, records, len(classified), 0, False, now))
    unrecognised = {NAME: fallback.unrecognised_lines(classified, unclaimed)}
    facts = KernelLogFacts(xids, sxids, kernel_log_records_lost=0)
    return CheckOutput(results, (facts, UnrecognisedFacts(unrecognised)))


def judge_scan(scan, source: str, policy, family: str | None, now: float) -> CheckOutput:
    """`judge` of a kernel-log file's scan (`xid_file`): the whole-file run and the exporter's
    resumed scan of the same bytes give the same answer."""
    return judge(scan.finish(), scan.records, fallback.unclaimed(scan.extra_lines), source,
                 policy, family, now, fallback.notices(scan.extra_lines))


class XidCheck:
    """The `xid` check (see the module docstring)."""

    name = NAME
    interval_s = DEFAULT_INTERVAL_S
    dependencies = ("/dev/kmsg", "journalctl", "dmesg")

    def run(self, context: CheckContext) -> CheckOutput:
        """Read, classify and judge; see the module docstring for sources, state and errors."""
        now = (context.clock or time.time)()
        policy = load_policy(context.policy_path)
        if context.gpu_family is None:
            context = dataclasses.replace(context, gpu_family=read_gpu_family(Path(context.procfs)))
        if context.kernel_log is None and Path(context.kmsg_path).exists():
            try:
                return self._run_kmsg(context, policy, now)
            except DependencyMissing:
                pass  # an unreadable /dev/kmsg falls back to journalctl and dmesg
        if context.kernel_log is not None:
            return self._run_file(context, policy, now)
        source, text = read_command_text(context)
        events = parse_kernel_log(text, source)
        records = check_command_output(text, events, source)
        unclaimed = fallback.unclaimed_in_text(text)
        return judge(events, records, unclaimed, source, policy, context.gpu_family, now,
                     fallback.notices_in_text(text))

    def _run_file(self, context: CheckContext, policy, now: float) -> CheckOutput:
        """Read the `--kernel-log` file whole (`xid_file.scan_file`). One read as a kernel log
        before and empty now (rotated or truncated, `xid_file.emptied_since_read`) is no record
        since: ok, not a parse error, and the faults already judged are held by the gate."""
        path = context.kernel_log
        try:
            scan, resume = scan_file(path, now)
        except ParseError:
            if not xid_file.emptied_since_read(context.state_dir, path):
                raise
            message = ("0 kernel-log records: the log is empty since it was rotated or truncated "
                       "(its earlier records were read)")
            return CheckOutput(
                [CheckResult(check=NAME, scope=NODE_SCOPE, source=str(path), observed_at=now,
                             status=names.STATUS_OK, message=message)],
                (KernelLogFacts({}, {}, kernel_log_records_lost=0), UnrecognisedFacts({NAME: 0})))
        if resume is not None:
            xid_file.remember_read(context.state_dir, path, resume.inode)
        output = judge_scan(scan, str(path), policy, context.gpu_family, now)
        resume = resume and dataclasses.replace(resume, family=context.gpu_family)
        return dataclasses.replace(output, resume=resume)

    def _run_kmsg(self, context: CheckContext, policy, now: float) -> CheckOutput:
        """Read /dev/kmsg from the cursor, under the cursor's lock (`state.locked`): `gpuslo
        check` and the exporter share it, and must not both count the same records."""
        Path(context.state_dir).mkdir(parents=True, exist_ok=True)
        with locked(Path(context.state_dir) / STATE_FILE, context.timeout_s * 0.5):
            return self._run_kmsg_locked(context, policy, now)

    def _run_kmsg_locked(self, context: CheckContext, policy, now: float) -> CheckOutput:
        boot_id = read_boot_id(context.procfs)
        cursor = load_cursor(Path(context.state_dir), boot_id)
        try:
            read = read_kmsg(context.kmsg_path, cursor.sequence)
        except InputError as error:
            raise DependencyMissing(str(error)) from None
        own = [record.as_line() for record in read.records]
        lines = [*cursor.carry, *own]  # a splat split between two reads: `xid_carry`
        events = parse_kernel_log("\n".join(lines), str(context.kmsg_path))
        events = xid_carry.fresh_events(events, len(cursor.carry), cursor.judged_splats)
        text = "\n".join(own)
        events = with_uuids(events, {**cursor.uuids, **{e.pci: e.uuid for e in events if e.uuid}})
        history = cursor.history_events()
        classified = classify_events(history + events, policy, context.gpu_family)
        classified = [c for c in classified if c.event.line > 0]  # drop the replayed history
        classified = fallback.live_classes(classified)
        unclaimed = fallback.unclaimed_in_text(text)
        problems = fallback.fatal_problems(cursor.problems, unclaimed)
        results, problems = evaluate_events(
            classified, problems, str(context.kmsg_path), now, last_reload(events)
        )
        results = fallback.merged(results, unclaimed, str(context.kmsg_path), now,
                                  fallback.notices_in_text(text))
        first_read = cursor.sequence < 0
        unread = fallback.unrecognised_lines(classified, unclaimed)
        carry = xid_carry.next_carry(lines, events, cursor.judged_splats)
        updated = cursor.advance(read, events, count_events(classified), problems, policy,
                                 unrecognised=unread, carry=carry)
        save_cursor(Path(context.state_dir), updated)
        results.append(
            _node_result(
                str(context.kmsg_path),
                len(read.records),
                len(classified),
                read.lost,
                not first_read,
                now,
            )
        )
        return CheckOutput(
            results,
            (KernelLogFacts(updated.xid_events, updated.sxid_events, updated.lost),
             UnrecognisedFacts({NAME: updated.unrecognised})),
        )


def gpu_family_of(models: list[str]) -> str | None:
    """The node's GPU family from its GPUs' model names (pure): the family when every GPU has the
    same known one, else None (the policy's default section applies)."""
    families = {family_of(model) for model in models}
    return families.pop() if len(families) == 1 and "unknown" not in families else None


def read_gpu_family(procfs: Path) -> str | None:
    """The GPU family from `<procfs>/driver/nvidia/gpus/*/information` (the driver's own
    inventory, readable without NVML, so the per-family Xid policy applies); None when absent."""
    models = []
    for _, text in read_gpu_information(procfs):
        match = re.search(r"^Model:[ \t]*(.*\S)", text, re.MULTILINE)
        if match:
            models.append(match.group(1))
    return gpu_family_of(models)


def _node_result(
    source: str, records: int, events: int, lost: int, overrun: bool, now: float
) -> CheckResult:
    message = f"{records} kernel-log records read, {events} GPU events"
    common = {"check": NAME, "scope": NODE_SCOPE, "source": source, "observed_at": now}
    if lost and overrun:
        return CheckResult(
            status=names.STATUS_UNKNOWN,
            reason="no_data",
            message=f"{lost} records lost to a ring-buffer overrun; " + message,
            **common,
        )
    if lost:
        message = f"{lost} records of this boot gone before the first read; " + message
        return CheckResult(status=names.STATUS_WARN, message=message, **common)
    return CheckResult(status=names.STATUS_OK, message=message, **common)


__all__ = [
    "XidCheck",
    "count_events",
    "evaluate_events",
    "fold_problem",
    "judge",
    "judge_scan",
    "read_command_text",
    "scope_of",
]
