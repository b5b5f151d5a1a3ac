"""`gpuslo inspect`'s arguments, apart from the work (`gpuslo.cli.inspect`): `gpuslo inspect
--help` and a usage error import this module, `names` and argparse only; the `--kind` choices are
the static `kind_names.INSPECT_KINDS`, not the inspectors' registry."""

from __future__ import annotations

import argparse

from gpuslo import names
from gpuslo.exporter.inspect.kind_names import INSPECT_KINDS


def _network_devices(value: str) -> int | tuple[str, ...]:
    if value.isdigit():
        return int(value)
    devices = tuple(part.strip() for part in value.split(",") if part.strip())
    if not devices:
        raise argparse.ArgumentTypeError("give a count or device names separated by commas")
    return devices


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `gpuslo inspect`'s arguments."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="evidence files (- for stdin)")
    parser.add_argument(
        "--kind", choices=sorted(INSPECT_KINDS), help="evidence kind (detected if omitted)"
    )
    parser.add_argument(
        "--gpu-family", choices=names.GPU_FAMILIES, help="GPU family for the Xid policy"
    )
    parser.add_argument("--expect-gpus", type=int, metavar="N", help="GPUs the node should have")
    parser.add_argument(
        "--expect-network-devices",
        type=_network_devices,
        metavar="N|NAME,...",
        help="InfiniBand/EFA devices expected: a count or names",
    )
    parser.add_argument("--expect-efa-devices", type=int, metavar="N", help="EFA devices expected")
    parser.add_argument(
        "--csv-columns",
        metavar="NAME,...",
        help="columns of headerless nvidia-smi --query-gpu output",
    )
    parser.add_argument("--policy", metavar="FILE", help="operator Xid policy overlay (YAML)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
