"""Fabric-link evidence: `ibstat`, `ibstatus`, `fi_info -p efa` and `ibdev2netdev` outputs.

Pure `parse_*` functions turn tool output into `Port` records (or device counts) and
`looks_like_*` detect each output; the findings are `gpuslo.exporter.inspect.fabric`. Reading
InfiniBand/EFA state from sysfs lives in `gpuslo.exporter.evidence.fabric.sysfs`.

Port states follow the InfiniBand Architecture Specification's PortState and PortPhysicalState
(`ibstat` spells them `Active`, `Down`, `Initializing`, `Armed`; sysfs and `ibstatus` print
`4: ACTIVE`, `5: LinkUp`). A port is usable only when its state is Active and its physical state
LinkUp: `State: Down` with `Physical state: LinkUp` (the subnet manager has not brought it up) is
as unusable as `Polling` (no cable or peer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.fabric.diag_errors import (
    is_diag_line,
    parse_diag_messages,
    tool_failed_only,
)
from gpuslo.exporter.evidence.fabric.ports import (
    Port,
    normalise_physical_state,
    normalise_state,
    parse_lid,
    parse_rate,
)

__all__ = ["Port", "parse_ibstat", "parse_ibstatus", "parse_fi_info", "parse_ibdev2netdev"]

# ------------------------------------------------------------------------------------------------
# ibstat
# ------------------------------------------------------------------------------------------------

# Indentation is not relied on: a web page or a chat client that flattens the tab indentation
# (fresh16 case 1803, a vendor knowledge-base page) or re-indents the whole block leaves the
# header, port and field lines at any depth, and the field names alone say which is which. A
# header may carry a reader's note after the quoted name, after a space or a dash (a blog's
# `CA 'mlx4_0' ——>>>>note`, its stray second quote `CA 'mlx4_1''`: fresh25 case 2705).
_CA_HEADER = r"^[ \t]*+CA '([^'\s]+)''?(?:[ \t\r\u2014\u2013-].*)?$"
_CA = re.compile(_CA_HEADER)
_PORT = re.compile(r"^\s*Port (\d+):\s*$")
# Linear-time field patterns: possessive whitespace and a greedy value stripped in code (the old
# `(.*?)\s*$` was quadratic: 40k spaces took 10.7 s).
_FIELD = re.compile(r"^\s*+([A-Za-z][A-Za-z ]*?):[ \t]*+(.*)$")
_IBSTAT_FIELDS = {
    "State": "state",
    "Physical state": "physical_state",
    "Rate": "rate",
    "Link layer": "link_layer",
    "Base lid": "base_lid",
}


@dataclass(frozen=True)
class IbstatReport:
    """Parsed `ibstat`: the ports seen, the CA names seen, the devices the tool said it could
    not read (its fatal `ibpanic` / `iberror` lines, `diag_errors`; "" when the line names no
    device) and those lines themselves (`failures`; `ibwarn` warnings are not failures)."""

    ports: tuple[Port, ...]
    devices: tuple[str, ...]
    unreadable: tuple[str, ...]
    failures: tuple[str, ...] = ()


def _port_from_fields(device: str, number: int, fields: dict[str, str], model: str = "") -> Port:
    return Port(
        device=device,
        port=number,
        state=normalise_state(fields.get("state", "")),
        physical_state=normalise_physical_state(fields.get("physical_state", "")),
        rate_gbps=parse_rate(fields.get("rate", "")),
        link_layer=fields.get("link_layer", ""),
        model=model,
        rate_text=fields.get("rate", ""),
        base_lid=parse_lid(fields.get("base_lid", "")),
    )


def parse_ibstat(text: str) -> IbstatReport:
    """Parse `ibstat` output (one or more `CA '<name>'` blocks, tab- or space-indented).

    Returns every port with its state, physical state, rate (Gb/s) and link layer, the device
    names seen, and devices named by `ibpanic` lines (partial output). `ibstat <ca> <port>` prints
    one port's fields without a header: that port has device "" and number 0. Lines it does not
    know are skipped; never raises on arbitrary text.
    """
    ports: list[Port] = []
    devices: list[str] = []
    unreadable: list[str] = []
    device, number, fields, model = "", 0, {}, ""

    def flush() -> None:
        if device and number:
            ports.append(_port_from_fields(device, number, fields, model))

    for line in text.splitlines():
        if match := _CA.match(line):
            flush()
            device, number, fields, model = match.group(1), 0, {}, ""
            devices.append(device)
        elif device and not number and (match := _FIELD.match(line)):
            if match.group(1) == "CA type":
                model = match.group(2).strip()
        elif is_diag_line(line):
            continue  # the tool's own messages: `diag_errors`, below
        elif device and (match := _PORT.match(line)):
            flush()
            number, fields = int(match.group(1)), {}
        elif number and (match := _FIELD.match(line)) and match.group(1) in _IBSTAT_FIELDS:
            fields[_IBSTAT_FIELDS[match.group(1)]] = match.group(2).strip()
    flush()
    if not devices:
        ports += _bare_port(text)
    failed = [m for m in parse_diag_messages(text) if m.fatal and m.tool in ("", "ibstat")]
    unreadable += [m.device for m in failed]
    return IbstatReport(
        tuple(ports), tuple(devices), tuple(unreadable), tuple(m.line for m in failed)
    )


_BARE_FIELD = re.compile(r"^(State|Physical state|Rate|Link layer):[ \t]*+(.*)$", re.M)


def _bare_port(text: str) -> list[Port]:
    fields = {_IBSTAT_FIELDS[key]: value.strip() for key, value in _BARE_FIELD.findall(text)}
    return [_port_from_fields("", 0, fields)] if "state" in fields else []


def looks_like_ibstat(text: str) -> bool:
    """True for `ibstat` output: a `CA '<name>'` header with port blocks or an ibpanic line, the
    header-less fields of `ibstat <ca> <port>`, or only the tool's own failure
    (`diag_errors.tool_failed_only`: `ibpanic:` / `ibstat: iberror:` lines, its command line)."""
    head = text[:200_000]
    has_ca = re.search(_CA_HEADER, head, re.M) is not None
    if has_ca:
        return "Port " in head or "ibpanic:" in head
    if tool_failed_only(head, "ibstat"):
        return True
    bare = re.search(r"^State: \w+", head, re.M) and re.search(r"^Physical state: \w+", head, re.M)
    return bool(bare)


# ------------------------------------------------------------------------------------------------
# ibstatus (sysfs strings)
# ------------------------------------------------------------------------------------------------

# As for ibstat, the indentation may be lost or changed (the field names say what each line is).
_IBSTATUS_HEAD = re.compile(r"^[ \t]*+Infiniband device '([^']+)' port (\d+) status:\s*$")
_IBSTATUS_FIELD = re.compile(r"^\s*+([a-z_ ]++):[ \t]*+(.*)$")
_IBSTATUS_FIELDS = {
    "state": "state",
    "phys state": "physical_state",
    "rate": "rate",
    "link_layer": "link_layer",
    "base lid": "base_lid",
}


def parse_ibstatus(text: str) -> list[Port]:
    """Parse `ibstatus` output (`Infiniband device 'mlx5_0' port 1 status:` blocks with sysfs
    strings such as `4: ACTIVE`, `5: LinkUp`, `100 Gb/sec (4X EDR)`). Never raises."""
    ports: list[Port] = []
    head: tuple[str, int] | None = None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if match := _IBSTATUS_HEAD.match(line):
            if head is not None:
                ports.append(_port_from_fields(head[0], head[1], fields))
            head, fields = (match.group(1), int(match.group(2))), {}
        elif head and (match := _IBSTATUS_FIELD.match(line)) and match.group(1) in _IBSTATUS_FIELDS:
            fields[_IBSTATUS_FIELDS[match.group(1)]] = match.group(2).strip()
    if head is not None:
        ports.append(_port_from_fields(head[0], head[1], fields))
    return ports


# ibstatus's own failure: rdma-core infiniband-diags/scripts/ibstatus, `fatal()` (`echo "Fatal
# error: " $*`), "device 'X': sys files not found (/sys/class/infiniband/X/ports)" (X `*`: the
# glob matched no device) or "No devices" (no /sys/class/infiniband): the kernel has no such
# InfiniBand device registered, so the tool read nothing of it.
IBSTATUS_FATAL = re.compile(
    r"^Fatal error:[ \t]+(?:device '([^'\n]{0,256})': sys files not found\b[^\n]{0,1024}"
    r"|No devices[ \t]*)$",
    re.M,
)


def ibstatus_failures(text: str) -> list[str]:
    """The devices `ibstatus` said it could not read (`IBSTATUS_FATAL`), in order: the device
    name, or "" when the line names none (`*`, "No devices")."""
    return [
        "" if name in ("", "*") else name for name in IBSTATUS_FATAL.findall(text[:200_000])
    ]


def looks_like_ibstatus(text: str) -> bool:
    """True for `ibstatus` output, or its own fatal error (`IBSTATUS_FATAL`)."""
    head = text[:200_000]
    return (
        re.search(r"^[ \t]*Infiniband device '[^']+' port \d+ status:", head, re.M) is not None
        or IBSTATUS_FATAL.search(head) is not None
    )


# ------------------------------------------------------------------------------------------------
# fi_info -p efa
# ------------------------------------------------------------------------------------------------

_FI_KEY = re.compile(r"^\s*+(provider|fabric|domain|type):\s*+(\S++(?:\s++\S++)*+)\s*$")
# libfabric's answer when no provider matches: `fi_getinfo: -61 (No data available)` (-FI_ENODATA),
# also indented under a prompt, or another negative code (`-38 (ENOSYS)`, `-2`).
FI_ERROR = re.compile(
    r"^[ \t]*fi_getinfo(?:\(\))?:?[ \t]*(?:failed:?[ \t]*)?(-\d{1,5})"
    r"(?:[ \t]*\(([^)\n]{0,80})\))?",
    re.M,
)


def parse_fi_info(text: str) -> tuple[str, ...]:
    """EFA devices in `fi_info -p efa` output: the distinct `*-rdm` domains whose provider is
    exactly `efa` (not a layered `efa;ofi_rxd`). Each EFA device exposes one `-rdm` and one
    `-dgrm` domain (libfabric efa provider). Returns device names (`efa_0`), sorted."""
    devices: set[str] = set()
    provider = ""
    for line in text.splitlines():
        match = _FI_KEY.match(line)
        if not match:
            continue
        key, value = match.groups()
        if key == "provider":
            provider = value
        elif key == "domain" and provider == "efa" and value.endswith("-rdm"):
            devices.add(value.removesuffix("-rdm"))
    return tuple(sorted(devices))


def looks_like_fi_info(text: str) -> bool:
    """True for `fi_info` output: provider/domain blocks or a `fi_getinfo: -61` error line."""
    head = text[:200_000]
    blocks = re.search(r"^provider: \S+", head, re.M) and re.search(r"^[ \t]+domain: ", head, re.M)
    return bool(blocks) or FI_ERROR.search(head) is not None


def fi_info_errors(text: str) -> list[str]:
    """The libfabric error codes `fi_info` printed instead of providers (`-61 (No data
    available)`), in order."""
    return [
        f"{code} ({why})" if why else code for code, why in FI_ERROR.findall(text[:200_000])
    ]


# ------------------------------------------------------------------------------------------------
# ibdev2netdev
# ------------------------------------------------------------------------------------------------

_IBDEV2NETDEV = re.compile(r"^(\S+) port (\d+) ==> (\S+) \((Up|Down)\)\s*$")


def parse_ibdev2netdev(text: str) -> list[Port]:
    """`mlx5_0 port 1 ==> ib0 (Up)` lines -> ports with `netdev` and `carrier` set. `(Up)`/`(Down)`
    is the netdev (IPoIB or RoCE interface) state, not the InfiniBand link: `state` stays ""."""
    ports = []
    for line in text.splitlines():
        if match := _IBDEV2NETDEV.match(line.strip()):
            device, number, netdev, updown = match.groups()
            ports.append(
                Port(device=device, port=int(number), netdev=netdev, carrier=updown == "Up")
            )
    return ports


def looks_like_ibdev2netdev(text: str) -> bool:
    """True for `ibdev2netdev` output."""
    return re.search(r"^\S+ port \d+ ==> \S+ \((?:Up|Down)\)", text[:200_000], re.M) is not None
