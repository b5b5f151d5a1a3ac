"""`ibv_devinfo [-v]` output (rdma-core), parsed into `Port` records (evidence, no judging).

Shape (rdma-core `libibverbs/examples/devinfo.c`):

    hca_id:    mlx5_0
        transport:            InfiniBand (0)
        vendor_id:            0x02c9
        vendor_part_id:            4123
            port:    1
                state:            PORT_ACTIVE (4)
                active_width:        4X (2)          (-v)
                active_speed:        50.0 Gbps (64)  (-v)
                phys_state:        LINK_UP (5)     (-v)
                link_layer:        InfiniBand

Indentation is not relied on: a paste that lost it (fresh24 case 2605, a pastebin of a chained
`echo ... && ibv_devinfo && ibstatus && ...` command) leaves every line at column 0, and the
field names alone say which is which; that flat shape is taken as the tool's only with a
`state: PORT_<WORD>` line beside its `hca_id:` and `port:` lines (`looks_like_ibv_devinfo`). The
tool prints each field once per port, so the first value of a field is kept: a later command's
unindented `state:` (ibstatus) cannot overwrite it.

EFA devices print `hca_id: efa_0`, `vendor_id: 0x1d0f` (Amazon) and `link_layer: Unspecified`.
Without `-v` the physical state is not printed. The IBA link states above Down need the physical
link up (IBA vol. 1 §7.2 link states: LinkInitialize, LinkArm and LinkActive are entered only
from a trained physical link, which PortPhysicalState LinkUp reports; a link that loses it falls
back to LinkDown): a port in PORT_INIT, PORT_ARMED or PORT_ACTIVE has its physical link up. A
PORT_DOWN (or PORT_ACTIVE_DEFER, a link recovering from errors) port's physical state stays
unknown.
The adapter model is `vendor_part_id` (4123 = ConnectX-6, the `MT4123` of ibstat).

The tool's own failures (`devinfo_failures`), from the same source's `main` and `print_hca_cap`
and from libibverbs (`libibverbs/init.c`, `ibv_get_device_list(3)`):
- `Failed to get IB devices list: <strerror>` (`perror` after `ibv_get_device_list` returned
  NULL: ENOSYS "no kernel support for RDMA", EPERM, ENOMEM): the tool read nothing;
- `No IB devices found`: the list was empty, the tool ran and answered 0 devices;
- `IB device 'mlx5_3' wasn't found` (with `-d`): that device is not in the list;
- `Failed to open device`, `Failed to query device props`, `Failed to query port N props`,
  `Invalid port requested for device` (one line per device it could not read, printed before its
  `hca_id:`, so unnamed), and a library's `ibv_open_device(mlx5_0) failed: ...`;
- `libibverbs: Warning: no userspace device-specific driver found for
  /sys/class/infiniband_verbs/uverbs0`: a kernel RDMA device no provider library claims, so the
  tool cannot list it (named by its uverbs node); `couldn't stat '/sys/class/infiniband/mlx5_17'`
  names the device it could not read. Other warnings (`couldn't load driver 'rxe'`, `couldn't open
  config directory`) name no device: a provider for other hardware is missing, not a fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.fabric.ports import (
    PHYSICAL_LINK_UP,
    Port,
    normalise_physical_state,
    normalise_state,
)

AMAZON_VENDOR = "0x1d0f"
_HCA = re.compile(r"^hca_id:\s*(\S{1,64})\s*$")
_FIELD = re.compile(r"^[ \t]*([a-z_]{2,32}):\s*(.{0,200}?)\s*$")
_PORT = re.compile(r"^[ \t]*port:\s*(\d{1,3})\s*$")
# The port state line as the tool prints it (`state:  PORT_ACTIVE (4)`), at any indentation.
_STATE_LINE = re.compile(r"^[ \t]*state:[ \t]*PORT_[A-Z_]{2,16}\b", re.M)
# The port states whose physical link is up (module docstring, IBA vol. 1 §7.2).
_LINK_UP_STATES = frozenset({"Initializing", "Armed", "Active"})
_STATE_WORD = re.compile(r"^(?:PORT_)?([A-Z_]+)")
_WIDTH = re.compile(r"(\d{1,2})X")
_SPEED = re.compile(r"([\d.]+)\s*Gbps")
_LIST_FAILED = re.compile(r"^[ \t]*(Failed to get IB devices list\b[^\n]{0,200})$", re.M)
_NO_DEVICES = re.compile(r"^[ \t]*No IB devices found[ \t]*$", re.M)
_NOT_FOUND = re.compile(r"^[ \t]*IB device '([^'\n]{1,64})' wasn't found[ \t]*$", re.M)
_DEVICE_FAILED = re.compile(
    r"^[ \t]*(Failed to (?:open device|query device props|query port \d{1,3} props)"
    r"|Invalid port requested for device)[ \t]*$",
    re.M,
)
# A library's own line (UCX: `ibv_open_device(mlx5_0) failed: ...`; libfabric: `ibv_open_device
# failed! errno: 2`), naming the device when it prints one.
_OPEN_FAILED = re.compile(r"ibv_open_device(?:\(([\w.-]{1,64})\))?[^\n]{0,40}?\bfailed\b")
_VERBS_WARNING = re.compile(r"^[ \t]*libibverbs: Warning: ([^\n]{1,300}?)[ \t]*$", re.M)
# The device a libibverbs warning names: the uverbs node no provider claims, the sysfs entry it
# could not stat.
_WARNED_DEVICE = re.compile(
    r"no userspace device-specific driver found for \S*/(uverbs\d{1,4})"
    r"|couldn't stat '\S*/infiniband/([\w.-]{1,64})'"
)
# A prompt or command line naming the tool, pasted above its output.
_COMMAND = re.compile(r"(?:^|[\s/$#>])ibv_devinfo(?:\s|$)")


@dataclass(frozen=True)
class DevinfoFailures:
    """What `ibv_devinfo` said instead of (or beside) its device blocks (see the module
    docstring): `list_failed` the `Failed to get IB devices list` line ("" when none);
    `no_devices` True for `No IB devices found`; `not_found` devices `-d` named and the list
    lacked; `unreadable` one line per device it could not open or query (unnamed unless a
    library named it: `named`); `warned` kernel devices libibverbs could not use (`uverbs0`,
    `mlx5_17`); `warnings` every `libibverbs: Warning:` text."""

    list_failed: str = ""
    no_devices: bool = False
    not_found: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()
    named: tuple[str, ...] = ()
    warned: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        """True when the tool reported a failure of its own (warnings alone are not one)."""
        return bool(self.list_failed or self.no_devices or self.not_found or self.unreadable
                    or self.warned)


def devinfo_failures(text: str) -> DevinfoFailures:
    """The failure lines `ibv_devinfo` printed in `text` (first 200 000 characters). Pure."""
    head = text[:200_000]
    listed = _LIST_FAILED.search(head)
    failed = [(m.group(1).strip(), "") for m in _DEVICE_FAILED.finditer(head)]
    failed += [(_line_of(head, m.start()), m.group(1) or "") for m in _OPEN_FAILED.finditer(head)]
    warnings = _VERBS_WARNING.findall(head)
    warned = [m.group(1) or m.group(2) for w in warnings if (m := _WARNED_DEVICE.search(w))]
    return DevinfoFailures(
        list_failed=listed.group(1).strip() if listed else "",
        no_devices=_NO_DEVICES.search(head) is not None,
        not_found=tuple(_NOT_FOUND.findall(head)),
        unreadable=tuple(line for line, _ in failed),
        named=tuple(dict.fromkeys(name for _, name in failed if name)),
        warned=tuple(dict.fromkeys(warned)),
        warnings=tuple(warnings),
    )


def _line_of(text: str, at: int) -> str:
    """The line of `text` holding offset `at`, stripped."""
    return text[text.rfind("\n", 0, at) + 1: (text.find("\n", at) + 1 or len(text) + 1) - 1].strip()


# Literals one of which every failure line holds: text with none is not looked at further
# (detection asks this of every file and part).
_LITERALS = ("IB devices", "Failed to", "IB device '", "Invalid port", "ibv_open_device",
             "libibverbs: ")


def _failure_only(head: str) -> bool:
    """True when every non-blank line of `head` is one of the tool's failure or warning lines or
    a command line naming it, and at least one is a failure."""
    if not (_known_lines(head[:4096]) and _known_lines(head)):  # most texts fail at line 1
        return False
    return devinfo_failures(head).any


def _known_lines(text: str) -> bool:
    """True when every non-blank line of `text` (the last one may be cut) is a failure or
    warning line of the tool, or a command line naming it."""
    if not any(literal in text for literal in _LITERALS):
        return False
    known = (_LIST_FAILED, _NO_DEVICES, _NOT_FOUND, _DEVICE_FAILED, _VERBS_WARNING)
    lines = text.splitlines()
    return all(
        not line.strip() or _COMMAND.search(line) or any(p.match(line) for p in known)
        or _OPEN_FAILED.search(line) or number == len(lines) - 1 and len(text) == 4096
        for number, line in enumerate(lines)
    )


def looks_like_ibv_devinfo(text: str) -> bool:
    """True for `ibv_devinfo` output: an `hca_id:` line and an indented `port:` line (or, with the
    indentation lost, a `port:` line and a `state: PORT_<WORD>` line), or only the tool's own
    failure lines (`devinfo_failures`) and warnings, with the command line that ran it."""
    head = text[:200_000]
    if re.search(r"^hca_id:\s*\S", head, re.M):
        if re.search(r"^[ \t]+port:[ \t]*\d", head, re.M):
            return True
        if re.search(r"^port:[ \t]*\d", head, re.M) and _STATE_LINE.search(head):
            return True
    return _failure_only(head)


def _port(device: str, number: int, fields: dict[str, str], device_fields: dict[str, str]) -> Port:
    state = normalise_state(_STATE_WORD.match(fields.get("state", "") or "?").group(1)
                            if fields.get("state") else "")
    physical = fields.get("phys_state", "")
    physical = normalise_physical_state(physical.split("(")[0].replace("_", " ").title())
    if not physical and state in _LINK_UP_STATES:
        physical = PHYSICAL_LINK_UP
    width, speed = _WIDTH.search(fields.get("active_width", "")), _SPEED.search(
        fields.get("active_speed", "")
    )
    rate = int(width.group(1)) * float(speed.group(1)) if width and speed else None
    vendor = device_fields.get("vendor_id", "").lower()
    return Port(
        device=device,
        port=number,
        state=state,
        physical_state=physical,
        rate_gbps=rate,
        link_layer=fields.get("link_layer", ""),
        driver="efa" if vendor == AMAZON_VENDOR or device.startswith("efa") else "",
        model=device_fields.get("vendor_part_id", ""),
    )


def parse_ibv_devinfo(text: str) -> list[Port]:
    """Every port of every device `ibv_devinfo` lists, in order. Never raises."""
    ports: list[Port] = []
    device, number = "", 0
    device_fields: dict[str, str] = {}
    fields: dict[str, str] = {}

    def flush() -> None:
        if device and number:
            ports.append(_port(device, number, fields, device_fields))

    for line in text.splitlines():
        if match := _HCA.match(line):
            flush()
            device, number, device_fields, fields = match.group(1), 0, {}, {}
        elif device and (match := _PORT.match(line)):
            flush()
            number, fields = int(match.group(1)), {}
        elif device and (match := _FIELD.match(line)):
            (fields if number else device_fields).setdefault(match.group(1), match.group(2))
    flush()
    return ports
