"""The `xid` check's /dev/kmsg cursor: what must survive an exporter restart within one boot.

Stored as JSON (`xid_kmsg_state.json` in the state directory) with `gpuslo.exporter.state`'s
atomic write (temp + fsync + rename), so a kill at any moment leaves the old or the new cursor.
A cursor saved under another boot id is ignored: the new boot starts at sequence 0 with no
problems and zero counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.kernel_log.kmsg import KmsgRead
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent
from gpuslo.exporter.evidence.pci import normalise_pci
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.exporter.state import locked, read_json_state, write_json_atomic

STATE_FILE = "xid_kmsg_state.json"
VERSION = 1
FORGET_LOCK_S = 5.0


@dataclass(frozen=True)
class KmsgCursor:
    """State of the kmsg reader within one boot.

    Attributes:
        boot_id: `/proc/sys/kernel/random/boot_id` when saved ("" when unreadable).
        sequence: last /dev/kmsg sequence read (-1: nothing read yet this boot).
        lost: records lost so far this boot (sequence gaps, overruns).
        xid_events: cumulative {(pci_bus_id, xid, class): count} this boot.
        sxid_events: cumulative {(nvswitch, sxid, class): count} this boot.
        problems: active fatal problems, scope → {reason, action, message}.
        driver_load: uptime (seconds) of the last `NVRM: loading NVIDIA` record, None if unseen.
        recent: (pci, xid, uptime seconds) of recent events of escalation codes.
        uuids: PCI address → GPU UUID from `NVRM: GPU at PCI:` lines seen this boot (keeps a
            GPU's scope stable when a later run does not repeat the line).
        unrecognised: lines the device-and-severity fallback read this boot (cumulative).
        carry: the last records read, as lines, parsed again before the next read's
            (`checks.xid_carry`: a splat split between two reads is one event).
        judged_splats: (first, last) sequence of each splat judged whose records are carried.
    """

    boot_id: str
    sequence: int = -1
    lost: int = 0
    xid_events: dict[tuple[str, str, str], int] = field(default_factory=dict)
    sxid_events: dict[tuple[str, str, str], int] = field(default_factory=dict)
    problems: dict[str, dict] = field(default_factory=dict)
    driver_load: float | None = None
    recent: tuple[tuple[str | None, int, float], ...] = ()
    uuids: dict[str, str] = field(default_factory=dict)
    unrecognised: int = 0
    carry: tuple[str, ...] = ()
    judged_splats: tuple[tuple[int, int], ...] = ()

    def history_events(self) -> list[KernelEvent]:
        """Synthetic events (line 0) that replay the driver load and the recent escalation
        events before this run's events, so boot noise and escalation span runs."""
        history = []
        if self.driver_load is not None:
            history.append(
                KernelEvent("driver_load", timestamp=self.driver_load, clock_kind="uptime")
            )
        for pci, code, stamp in self.recent:
            history.append(
                KernelEvent("xid", code=code, pci=pci, timestamp=stamp, clock_kind="uptime")
            )
        return history

    def advance(
        self,
        read: KmsgRead,
        events: list[KernelEvent],
        counts: tuple[dict, dict],
        problems: dict[str, dict],
        policy: XidPolicy,
        unrecognised: int = 0,
        carry: tuple[tuple[str, ...], tuple[tuple[int, int], ...]] | None = None,
    ) -> KmsgCursor:
        """The cursor after one read: new sequence, lost and counts added, problems replaced,
        `carry` (lines, judged splats) kept (None: unchanged)."""
        xids, sxids = dict(self.xid_events), dict(self.sxid_events)
        for key, value in counts[0].items():
            xids[key] = xids.get(key, 0) + value
        for key, value in counts[1].items():
            sxids[key] = sxids.get(key, 0) + value
        loads = [e.timestamp for e in events if e.kind == "driver_load" and e.timestamp is not None]
        return replace(
            self,
            sequence=read.last_sequence,
            lost=self.lost + read.lost,
            xid_events=xids,
            sxid_events=sxids,
            problems=problems,
            driver_load=loads[-1] if loads else self.driver_load,
            recent=_recent(self.recent, events, policy),
            uuids={**self.uuids, **{e.pci: e.uuid for e in events if e.pci and e.uuid}},
            unrecognised=self.unrecognised + unrecognised,
            carry=self.carry if carry is None else carry[0],
            judged_splats=self.judged_splats if carry is None else carry[1],
        )


def _recent(previous: tuple, events: list[KernelEvent], policy: XidPolicy) -> tuple:
    codes = set().union(*(e.codes for e in policy.escalations)) if policy.escalations else set()
    window = max((e.window_s for e in policy.escalations), default=0.0)
    recent = list(previous) + [
        (e.pci, e.code, e.timestamp)
        for e in events
        if e.kind == "xid" and e.code in codes and e.timestamp is not None
    ]
    if not recent:
        return ()
    latest = max(stamp for _, _, stamp in recent)
    return tuple(item for item in recent if latest - item[2] <= window)


def _to_json(cursor: KmsgCursor) -> dict:
    return {
        "version": VERSION,
        "boot_id": cursor.boot_id,
        "sequence": cursor.sequence,
        "lost": cursor.lost,
        "problems": cursor.problems,
        "driver_load": cursor.driver_load,
        "xid_events": sorted([*key, n] for key, n in cursor.xid_events.items()),
        "sxid_events": sorted([*key, n] for key, n in cursor.sxid_events.items()),
        "recent": [list(item) for item in cursor.recent],
        "uuids": cursor.uuids,
        "unrecognised": cursor.unrecognised,
        "carry": list(cursor.carry),
        "judged_splats": [list(span) for span in cursor.judged_splats],
    }


def _pci(text: object) -> str:
    """A saved PCI address in today's form (cursors written before one normaliser held lower-case
    addresses); a value that is no address (the unknown-bus placeholder) is kept as it is."""
    return normalise_pci(str(text)) or str(text)


def _summed(items) -> dict:
    """{key: count} summing the counts of keys that normalise to the same key."""
    out: dict = {}
    for key, count in items:
        out[key] = out.get(key, 0) + count
    return out


def load_cursor(state_dir: Path, boot_id: str) -> KmsgCursor:
    """The saved cursor for `boot_id`, or a fresh one (no file, or saved under another boot).

    Raises ParseError naming the file when it exists but has the wrong shape.
    """
    path = Path(state_dir) / STATE_FILE
    raw = read_json_state(path, None)
    if raw is None or not isinstance(raw, dict) or raw.get("boot_id") != boot_id:
        if raw is not None and not isinstance(raw, dict):
            raise ParseError(str(path), "state file is not a JSON object")
        return KmsgCursor(boot_id)
    try:
        return KmsgCursor(
            boot_id=boot_id,
            sequence=int(raw["sequence"]),
            lost=int(raw["lost"]),
            xid_events=_summed(
                ((_pci(p), str(x), str(c)), int(n)) for p, x, c, n in raw["xid_events"]
            ),
            sxid_events={(str(d), str(s), str(c)): int(n) for d, s, c, n in raw["sxid_events"]},
            problems={str(k): dict(v) for k, v in raw["problems"].items()},
            driver_load=None if raw["driver_load"] is None else float(raw["driver_load"]),
            recent=tuple((_pci(p), int(x), float(t)) for p, x, t in raw["recent"]),
            uuids={_pci(k): str(v) for k, v in raw.get("uuids", {}).items()},
            unrecognised=int(raw.get("unrecognised", 0)),
            carry=tuple(str(line) for line in raw.get("carry", ())),
            judged_splats=tuple((int(a), int(b)) for a, b in raw.get("judged_splats", ())),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ParseError(str(path), f"state file has an unexpected shape ({error})") from None


def save_cursor(state_dir: Path, cursor: KmsgCursor) -> None:
    """Write the cursor atomically (raises OSError when the state directory is not writable)."""
    write_json_atomic(Path(state_dir) / STATE_FILE, _to_json(cursor))


def forget_problems(state_dir: Path, boot_id: str) -> list[str]:
    """Drop every active kernel-log problem from this boot's cursor, under its lock, and return
    the scopes dropped: an administrator resumed the node gpuslo had drained, vouching for the
    repair (the return-to-service gate then validates the GPUs; a new event raises a problem
    again). No cursor for this boot: []. Raises what `load_cursor` and `save_cursor` raise,
    DeadlineExceeded when the lock is held too long."""
    path = Path(state_dir) / STATE_FILE
    if not path.exists():
        return []
    with locked(path, FORGET_LOCK_S):
        cursor = load_cursor(Path(state_dir), boot_id)
        dropped = sorted(cursor.problems)
        if dropped:
            save_cursor(Path(state_dir), replace(cursor, problems={}))
    return dropped
