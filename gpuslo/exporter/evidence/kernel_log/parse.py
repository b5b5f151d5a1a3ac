"""Line recognisers and the event state machine behind `gpuslo.exporter.evidence.kernel_log.read`.

Each physical line is searched for an event marker (an NVRM Xid record, `SXid (`,
`NVRM: GPU at PCI:`, `fallen off the bus`, `NVRM: loading NVIDIA`, mlx5 `Link STATE`) wherever
it sits, so any prefix works: uptime `[  123.4]`, ctime `[Mon Aug  5 ...]`, ISO,
`kern  :err   :`, syslog and journal with or without host, localised month names, alert
wrappers, /dev/kmsg records, none.
The timestamp is taken from the prefix (kernel uptime preferred over wall clock). Lines that
belong to one event (Xid 13 Warp/Global/ESR, SXid Data/Fatal/Severity, a fallen-off-the-bus
block, Xid 79 followed by its `GPU ... fallen off the bus` line) are merged into one event.

Sources for the formats: NVIDIA open-gpu-kernel-modules (`nv_printf` Xid and SXid lines), the
kernel's Documentation/ABI/testing/dev-kmsg, shared/corpus/kernel_log_lines.txt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gpuslo.exporter.evidence.kernel_log.anchors import BARE_XID_HEAD, XID_HEAD

# --- event model --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelEvent:
    """One kernel-log event (a multi-line event is one KernelEvent).

    Attributes:
        kind: `xid`, `sxid`, `fallen_off_bus`, `driver_message`, `port_state`, `driver_load` or
            `kernel_splat` (an oops, WARNING, lockup or stall through an NVIDIA module:
            `kernel_log.splats`).
        code: the Xid or SXid number, None for the other kinds.
        pci: PCI address in NVML's `00000000:b3:00.0` form, None when absent or redacted.
        uuid: `GPU-...` from an `NVRM: GPU at PCI:` line for the same address, else None.
        device: `nvidia-nvswitchN` for SXids, `mlx5_N` (or the netdev) for port_state.
        token: severity token: `Fatal`/`Nonfatal` (Xid 144-150), `Fatal`/`Non-fatal` (SXid);
            a kernel splat's type (`oops`, `warning`, `hung_task`, ...: `kernel_log.splats`).
        timestamp: seconds on `clock_kind`'s clock, None when the line carries none.
        clock_kind: `uptime` (seconds since boot), `wall` (Unix seconds; syslog lines without a
            year use the year 2000) or "" (no timestamp).
        line: 1-based line number of the event's first line.
        lines: physical lines merged into this event.
        message: the first line's text from the marker on.
        caused_by: the Xid this Xid 45 follows (from `caused by previous Xid N`, else the
            previous other Xid on the same GPU), None otherwise.
        recovery: for Xid 154, the action text inside the last parentheses (`Drain and Reset`).
        state: for port_state, the link state as printed (`ACTIVE`, `INIT`, `DOWN`, `up`).
        sequence: /dev/kmsg sequence number when the line is a kmsg record, else None.
        gpu_instance: the MIG GPU instance an Xid names (`PCI:0000:01:00 GPU-I:05` -> 5), None
            when the Xid is for the whole GPU.
        module: for a kernel splat, the NVIDIA kernel module of its first NVIDIA frame
            (`nvidia`, `nvidia_uvm`, ...), else None.
    """

    kind: str
    code: int | None = None
    pci: str | None = None
    uuid: str | None = None
    device: str | None = None
    token: str | None = None
    timestamp: float | None = None
    clock_kind: str = ""
    line: int = 0
    lines: int = 1
    message: str = ""
    caused_by: int | None = None
    recovery: str | None = None
    state: str | None = None
    sequence: int | None = None
    gpu_instance: int | None = None
    module: str | None = None


# --- recognisers --------------------------------------------------------------------------------

# An Xid record. The driver prints `NVRM: Xid (PCI:%04x:%02x:%02x): %d, ...`
# (open-gpu-kernel-modules src/nvidia/src/kernel/gpu/rc/kernel_rc.c; on a MIG GPU
# ` GPU-I:%02u GPU-CI:%02u` inside the parentheses), older drivers the address without `PCI:`
# (`NVRM: Xid (0000:03:00): 14, ...`, shared/corpus/kernel_log_lines.txt). Consoles retyped by
# hand and pasted copies vary the spacing and punctuation around the same fields: no colon after
# NVRM, a space before the colon after the address (`NVRM Xid (PCI:0000:0b:00) : 32, ...`,
# corpus fresh22 2405), tabs, `XID`. What is read is the shape: the NVRM tag, an optional colon,
# `Xid`, the address in parentheses, an optional colon, the code. Every gap is bounded, as is the
# address (an NVML bus id is 16 characters): `[^)]*` rescanned the rest of a line for every
# `NVRM: Xid (` in it, quadratic on a hostile line. An NVRM line holding the word Xid that this
# does not read is still judged: the driver-message catalogue's `unreadable_records` makes it
# `unknown` (parse_error), naming the line.
XID_WORDS = ("Xid", "XID")
_XID_FIELDS = r"(?P<address>[^)\n]{0,64})\)[ \t]{0,8}:?[ \t]{0,8}(?P<code>\d+)\s*,?\s?(?P<rest>.*)"
_XID = re.compile(f"(?P<at>){XID_HEAD}(?:PCI[ \t]?:[ \t]?)?{_XID_FIELDS}")
# The same record with its NVRM tag stripped by a log tool (`kernel: Xid (PCI:0000:01:00): 79,
# ...`; corpus fresh17 1913, the journal's message column), where a message starts
# (`anchors.BARE_XID_HEAD`); without the tag the `PCI:` of the address is required.
_BARE_XID = re.compile(f"{BARE_XID_HEAD}PCI[ \t]?:[ \t]?{_XID_FIELDS}")
_BARE_XID_HEAD = re.compile(BARE_XID_HEAD)
_SXID = re.compile(r"(?:(nvidia-nvswitch\d*):\s*)?SXid \((?:PCI:)?([^)]*)\):\s*(\d+)\s*,?\s?(.*)")
_GPU_AT = re.compile(
    r"NVRM: GPU at PCI:([0-9a-fA-F]{1,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?):?"
    r"\s+(GPU-[0-9a-fA-F-]+)"
)
_THE_GPU = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4,8}:[0-9a-fA-F:.]+)")
_GPU_FALLEN = re.compile(
    r"NVRM: GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
)
_PORT = re.compile(
    r"mlx5_core\s+(\S+?):?\s+(\S+?):\s+(?:Port:?\s*(\d+)\s+)?Link\s+([A-Za-z_]+)", re.IGNORECASE
)
# The MIG suffix of an Xid's address: `0000:01:00 GPU-I:05` (GPU instance 5 of that GPU).
MIG_SUFFIX = re.compile(r"^(\S+)\s+GPU-I:\s?(\d{1,3})\b")
_CAUSED = re.compile(r"caused by previous Xid (\d+)")
_RECOVERY = re.compile(r"to 0x[0-9a-fA-F]+ \(([^)]*)\)")
_NVLINK_TOKEN = re.compile(r"\b(Fatal|Nonfatal|Non-fatal)\b")
_SXID_TOKEN = re.compile(r"^(Fatal|Non-fatal|Nonfatal)\b")
_PID = re.compile(r"pid=('?<unknown>'?|\d+)")

MONTHS: dict[str, int] = {}
for _number, _spellings in enumerate(
    (
        "jan janv ene gen jän led sty янв 1月 1월",
        "feb févr fev fév úno lut фев 2月 2월",
        "mar mär mars mrt bře мар 3月 3월",
        "apr avr abr dub kwi апр 4月 4월",
        "may mai mei mag kvě maj май мая 5月 5월",
        "jun juin giu čer cze июн 6月 6월",
        "jul juil lug čvc lip июл 7月 7월",
        "aug août ago srp sie авг 8月 8월",
        "sep sept set zář wrz сен 9月 9월",
        "oct okt out ott říj paź окт 10月 10월",
        "nov noi lis ноя 11月 11월",
        "dec déc dez dic pro gru дек 12月 12월",
    ),
    start=1,
):
    for _name in _spellings.split():
        MONTHS[_name] = _number

_KMSG = re.compile(r"^(\d+),(\d+),(\d+)(?:,[^;]*)?;")
# `[  123.456789]`, and `dmesg -d`'s `[  123.456789 <    0.000123>]` (the delta is ignored).
_UPTIME = re.compile(r"\[\s*(\d+\.\d+)(?:\s*<[^>\]]*>)?\]")
_CTIME = re.compile(r"\[\w{3} (\w{3})\s+(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]")
# `dmesg -H` / `-e` (`--time-format reltime`): `[Mar 6 21:34]` / `[Dec22 12:26]` when the minute
# changes (wall clock to the minute, no year), else `[  +0.000123]`, the time since the previous
# record, which the prefilter may not have read: no timestamp.
_RELTIME = re.compile(r"\[(\w{3}) ?(\d{1,2}) (\d\d):(\d\d)\]")
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?")
_SYSLOG = re.compile(r"(?:^|\s)(\S{2,6}?)\.?\s+(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?\s")


def _zone_seconds(zone: str | None) -> int:
    if not zone or zone == "Z":
        return 0
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


def parse_timestamp(prefix: str) -> tuple[float | None, str, int | None]:
    """(seconds, clock kind, kmsg sequence) from the text before a line's event marker.

    Kernel uptime (kmsg microseconds or `[  123.4]`, `dmesg -d`'s delta ignored) wins over a
    wall clock (`dmesg -H`/`-e` minutes, ctime, ISO as `--time-format iso` prints it, syslog
    with a localised month name); no timestamp (or only `dmesg -H`'s `[  +0.000123]`, relative
    to a record that may not have been read) gives (None, "", None). Only the first
    and last 256 characters of a long prefix are looked at (timestamps sit at either end).
    """
    if len(prefix) > 512:
        prefix = f"{prefix[:256]} {prefix[-256:]}"
    kmsg = _KMSG.match(prefix)
    if kmsg:
        return int(kmsg.group(3)) / 1e6, "uptime", int(kmsg.group(2))
    uptime = _UPTIME.findall(prefix)
    if uptime:
        return float(uptime[-1]), "uptime", None
    import calendar  # for wall clocks only, not with the module (~2.5 ms of `gpuslo inspect`)

    reltime = _RELTIME.search(prefix)
    if reltime and reltime.group(1).lower() in MONTHS:
        mon, day, hh, mm = reltime.groups()
        stamp = (2000, MONTHS[mon.lower()], int(day), int(hh), int(mm), 0)
        return float(calendar.timegm(stamp)), "wall", None
    ctime = _CTIME.search(prefix)
    if ctime and ctime.group(1).lower() in MONTHS:
        mon, day, hh, mm, ss, year = ctime.groups()
        stamp = (int(year), MONTHS[mon.lower()], int(day), int(hh), int(mm), int(ss))
        return float(calendar.timegm(stamp)), "wall", None
    iso = _ISO.search(prefix)
    if iso:
        year, mon, day, hh, mm, ss, frac, zone = iso.groups()
        seconds = calendar.timegm(tuple(int(v) for v in (year, mon, day, hh, mm, ss)))
        return seconds + float(f"0.{frac or 0}") - _zone_seconds(zone), "wall", None
    syslog = _SYSLOG.search(prefix)
    if syslog and syslog.group(1).lower().rstrip(".") in MONTHS:
        mon, day, hh, mm, ss, frac = syslog.groups()
        stamp = (2000, MONTHS[mon.lower().rstrip(".")], int(day), int(hh), int(mm), int(ss))
        return calendar.timegm(stamp) + float(f"0.{frac or 0}"), "wall", None
    return None, "", None


def xid13_part(rest: str) -> int | None:
    """Position of an Xid 13 line inside one exception report (ChID, Warp, Global, ESR)."""
    for rank, marker in enumerate(
        (
            "Graphics Exception: ChID",
            "Graphics SM Warp Exception",
            "Graphics SM Global Exception",
            "Graphics Exception: ESR",
        )
    ):
        if rest.startswith(marker) or f", {marker}" in rest or f" {marker}" in rest:
            return rank
    return None


def sxid_part(rest: str) -> str:
    """Which line of an SXid triplet `rest` is: `data`, `token`, `severity` or `other`."""
    if rest.startswith("Data {"):
        return "data"
    if _SXID_TOKEN.match(rest):
        return "token"
    if rest.startswith("Severity "):
        return "severity"
    return "other"


def with_uuids(events: list[KernelEvent], uuids: dict[str, str]) -> list[KernelEvent]:
    """Attach the `GPU at PCI` UUID map to every event on a mapped PCI address."""
    return [
        replace(e, uuid=uuids[e.pci]) if e.pci in uuids and e.uuid is None else e for e in events
    ]
