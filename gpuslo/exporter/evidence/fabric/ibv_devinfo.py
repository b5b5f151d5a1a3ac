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

EFA devices print `hca_id: efa_0`, `vendor_id: 0x1d0f` (Amazon) and `link_layer: Unspecified`.
Without `-v` the physical state is not printed: a port the SM made ACTIVE has its physical link up
(IBA: PortState Active requires PortPhysicalState LinkUp), any other state leaves it unknown.
The adapter model is `vendor_part_id` (4123 = ConnectX-6, the `MT4123` of ibstat).
"""

from __future__ import annotations

import re

from gpuslo.exporter.evidence.fabric.ports import (
    PHYSICAL_LINK_UP,
    Port,
    normalise_physical_state,
    normalise_state,
)

AMAZON_VENDOR = "0x1d0f"
_HCA = re.compile(r"^hca_id:\s*(\S{1,64})\s*$")
_FIELD = re.compile(r"^\s+([a-z_]{2,32}):\s*(.{0,200}?)\s*$")
_PORT = re.compile(r"^\s+port:\s*(\d{1,3})\s*$")
_STATE_WORD = re.compile(r"^(?:PORT_)?([A-Z_]+)")
_WIDTH = re.compile(r"(\d{1,2})X")
_SPEED = re.compile(r"([\d.]+)\s*Gbps")


def looks_like_ibv_devinfo(text: str) -> bool:
    """True for `ibv_devinfo` output: an `hca_id:` line and a `port:` line."""
    head = text[:200_000]
    hca = re.search(r"^hca_id:\s*\S", head, re.M)
    return bool(hca and re.search(r"^\s+port:\s*\d", head, re.M))


def _port(device: str, number: int, fields: dict[str, str], device_fields: dict[str, str]) -> Port:
    state = normalise_state(_STATE_WORD.match(fields.get("state", "") or "?").group(1)
                            if fields.get("state") else "")
    physical = fields.get("phys_state", "")
    physical = normalise_physical_state(physical.split("(")[0].replace("_", " ").title())
    if not physical and state == "Active":
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
            (fields if number else device_fields)[match.group(1)] = match.group(2)
    flush()
    return ports
