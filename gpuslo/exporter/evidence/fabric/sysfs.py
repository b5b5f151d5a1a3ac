"""RDMA ports from sysfs (InfiniBand, RoCE and EFA), read under a root that tests point at a
fixture tree (node_exporter's `--path.sysfs`).

Layout read (Linux `drivers/infiniband/core/sysfs.c`):
`class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer,lid}`,
`class/infiniband/<dev>/device/driver` (a link whose name is the kernel driver: `efa`,
`mlx5_core`), `class/infiniband/<dev>/device/net/<if>` (the netdev of the PCI function) and
`class/net/<if>/carrier`.

The EFA driver reports every port `ACTIVE` whatever the link does (`efa_query_port` in the Linux
`drivers/infiniband/hw/efa/efa_verbs.c` hard-codes IB_PORT_ACTIVE), so for EFA the device count
against the expected count, and the netdev carrier where there is a netdev, are what count.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from gpuslo.errors import InputError
from gpuslo.exporter.evidence.fabric.ports import (
    Port,
    normalise_physical_state,
    normalise_state,
    parse_lid,
    parse_rate,
)

EFA_DRIVER = "efa"

# EFA devices (network cards with EFA) per EC2 instance type. Source: AWS EC2 User Guide,
# "Maximize network bandwidth on Amazon EC2 instances with multiple network cards"
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html) and the
# accelerated-computing instance specifications it links; P5/P5e take 32 EFA devices.
EFA_DEVICES_BY_INSTANCE_TYPE: dict[str, int] = {
    "p4d.24xlarge": 4,
    "p4de.24xlarge": 4,
    "p5.48xlarge": 32,
    "p5e.48xlarge": 32,
    "p5en.48xlarge": 16,
    "p6-b200.48xlarge": 8,
}


def expected_efa_devices(instance_type: str, configured: int | None = None) -> int | None:
    """The EFA device count to expect: the configured number when given, else the count for a
    known instance type, else None (unknown: the check must then say `unknown`, never `ok`)."""
    if configured is not None:
        return configured
    return EFA_DEVICES_BY_INSTANCE_TYPE.get(instance_type.strip())


class NotSysfs(InputError):
    """The sysfs root does not exist or has no `class/` directory: not a sysfs, so nothing can be
    said about the node's RDMA devices (never "none here")."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return ""
    except OSError as error:
        raise InputError(str(path), error.strerror or str(error)) from None


# A sysfs port state is `<number>: <WORD>` (`4: ACTIVE`, `5: LinkUp`, `7: Phy Test`).
_STATE_TEXT = re.compile(r"(?:\d{1,2}:[ \t]*)?[A-Za-z][A-Za-z _-]{0,31}")


def _state_text(text: str) -> str:
    """`text` when it reads as a port state, else "" (binary or garbage: unreadable, which the
    port judgement reports as unknown — never as a port that is down)."""
    return text if _STATE_TEXT.fullmatch(text) else ""


def _carrier(sysfs: Path, netdev: str) -> bool | None:
    """`class/net/<if>/carrier`: True (1), False (0, or EINVAL: the interface is down), None when
    there is no such file."""
    try:
        return (sysfs / "class" / "net" / netdev / "carrier").read_text().strip() == "1"
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.EINVAL:  # reading carrier of an administratively down interface
            return False
        raise InputError(str(sysfs / "class" / "net" / netdev), error.strerror or "") from None


def _driver(device_dir: Path) -> str:
    try:
        return os.path.basename(os.readlink(device_dir / "device" / "driver"))
    except OSError:
        return ""


def _netdev(device_dir: Path) -> str:
    net = device_dir / "device" / "net"
    try:
        names = sorted(entry.name for entry in net.iterdir())
    except OSError:
        return ""
    return names[0] if names else ""


def read_infiniband_sysfs(sysfs_root: str | Path) -> list[Port]:
    """Every RDMA port under `<sysfs_root>/class/infiniband`, sorted by device and port.

    Returns [] when the node has no RDMA devices (a sysfs with `class/` but no
    `class/infiniband`). A port whose state file is absent has `state` "" (the check reports it
    unreadable, never active). `rate_gbps` is in Gb/s. Raises NotSysfs naming the root when it
    has no `class/` directory (missing, or not a sysfs), InputError naming the file when a file
    exists but cannot be read.
    """
    sysfs = Path(sysfs_root)
    if not (sysfs / "class").is_dir():
        what = "no such directory" if not sysfs.exists() else "no class/ directory in it"
        raise NotSysfs(str(sysfs), f"not a sysfs root ({what})")
    root = sysfs / "class" / "infiniband"
    if not root.is_dir():
        return []
    ports = []
    for device_dir in sorted(root.iterdir()):
        driver, netdev = _driver(device_dir), _netdev(device_dir)
        carrier = _carrier(sysfs, netdev) if netdev else None
        port_dirs = sorted((device_dir / "ports").glob("*"), key=lambda p: p.name)
        for port_dir in port_dirs or [device_dir / "ports" / "1"]:
            if not (port_dir.name.isascii() and port_dir.name.isdigit()):
                continue
            ports.append(
                Port(
                    device=device_dir.name,
                    port=int(port_dir.name),
                    state=normalise_state(_state_text(_read(port_dir / "state"))),
                    physical_state=normalise_physical_state(
                        _state_text(_read(port_dir / "phys_state"))
                    ),
                    rate_gbps=parse_rate(rate := _read(port_dir / "rate")),
                    rate_text=rate,
                    model=_read(device_dir / "hca_type"),
                    link_layer=_read(port_dir / "link_layer"),
                    base_lid=parse_lid(_read(port_dir / "lid")),
                    driver=driver,
                    netdev=netdev,
                    carrier=carrier,
                )
            )
    return ports
