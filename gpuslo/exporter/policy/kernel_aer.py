"""The kernel's PCIe AER reports of *corrected* errors, read from the fallback's lines (pure).

The kernel's AER driver (drivers/pci/pcie/aer.c) prints one block per error it handles:
`AER: Corrected error received: 0000:18:00.0` (`Multiple Corrected ...`; since Linux 6.10
`AER: Correctable error message received from 0000:18:00.0`), then
`PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)` (`severity=Correctable`),
`  device [10de:2330] error status/mask=00000001/0000e000` and one `   [ 0] RxErr` line per
status bit. Documentation/PCI/pcieaer-howto.rst: correctable errors "are recovered by hardware"
with no loss of data or function, so such a block is no device fault: it is a `pcie_aer_corrected`
finding, class warn, layer node, its lines counted (as lspci's CESta bits are,
`policy.pcie.aer_findings`), never the fallback's `unrecognised_message` (unknown).

Only a block whose severity is corrected is taken: `Uncorrected (Non-Fatal)` and
`Uncorrected (Fatal)` lines (and the status and bit lines under them) stay with the fallback,
which judges them as before. Each line in `split_corrected` is an `Unrecognised` item the
fallback already found (it names a device and holds an error word); a status or bit line is
taken only when its device's last severity line was corrected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuslo import names
from gpuslo.exporter.evidence.devices import DeviceRef
from gpuslo.exporter.policy.unrecognised import Unrecognised, unrecognised_findings
from gpuslo.verdict import Finding

_CORRECT = r"(?:Corrected|Correctable)"
# a severity line of any class: the `received` line or the `PCIe Bus Error: severity=` line
_SEVERITY = re.compile(r"AER: (?:Multiple )?(?P<a>\w+)(?: \([\w-]+\))? error(?: message)? received"
                       r"|PCIe Bus Error: severity=(?P<b>\w+)")
_CORRECTED = re.compile(_CORRECT + r"$")
_DETAIL = re.compile(r"error status/mask=[0-9a-fA-F]+/[0-9a-fA-F]+|\s\[\s*\d{1,2}\]\s+[A-Z]\w*")


def split_corrected(items: Iterable[Unrecognised]) -> tuple[list[Unrecognised], list[Unrecognised]]:
    """(corrected-AER lines, the rest) of the fallback's lines, in their order (see the module
    docstring)."""
    corrected: list[Unrecognised] = []
    rest: list[Unrecognised] = []
    state: dict[DeviceRef, bool] = {}  # device -> its last severity line was corrected
    for item in items:
        found = _SEVERITY.search(item.text)
        if found is not None:
            state[item.device] = bool(_CORRECTED.match(found.group("a") or found.group("b")))
            taken = state[item.device]
        else:
            taken = state.get(item.device, False) and _DETAIL.search(item.text) is not None
        (corrected if taken and not item.fatal else rest).append(item)
    return corrected, rest


def corrected_findings(kind: str, items: list[Unrecognised]) -> list[Finding]:
    """One `pcie_aer_corrected` finding (warn, layer node) per device that prints the lines (a
    root port that received the error message, or the GPU whose error it was): `events` its
    lines, `line` and `message` the first."""
    groups: dict[DeviceRef, list[Unrecognised]] = {}
    for item in items:
        groups.setdefault(item.device, []).append(item)
    return [Finding(kind=kind, class_=names.CLASS_WARN, signal="pcie_aer_corrected",
                    layer=names.LAYER_NODE, events=len(members), line=members[0].line,
                    message=(f"{len(members)} kernel AER line(s) of corrected PCIe errors "
                             f"(recovered by hardware): {members[0].text}")[:300],
                    **device.finding_keys())
            for device, members in groups.items()]


def fallback_findings(kind: str, items: Iterable[Unrecognised]) -> list[Finding]:
    """The fallback's findings (`unrecognised.unrecognised_findings`) for `items`, its
    corrected-AER lines read as `pcie_aer_corrected` (warn) instead."""
    corrected, rest = split_corrected(items)
    return corrected_findings(kind, corrected) + unrecognised_findings(kind, rest)
