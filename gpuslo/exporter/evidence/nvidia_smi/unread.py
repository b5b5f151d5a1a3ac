"""Fault-carrying nvidia-smi fields shown as `N/A` where the GPU does carry them (pure).

nvidia-smi(1) prints `N/A` for a field "not supported or not available". On a GPU without ECC
memory (GeForce, most workstation boards) or with ECC disabled that is the answer; on a GPU whose
ECC mode is `Enabled` it is not: its uncorrectable-ECC counters exist and `N/A` there means the
count was not read, so the faults they carry are unknown (newcomer6 finding 11: `DRAM
Uncorrectable : N/A` beside `ECC Mode / Current : Enabled` read healthy). `unread_faults(fields,
model)` names such fields, each with why:

- the uncorrectable DRAM (device memory) count: every such counter shown — `-q` and XML
  `DRAM Uncorrectable` (Ampere and later layouts), `Double Bit / Device Memory` and `Total`
  (earlier layouts), CSV `ecc.errors.uncorrected.<volatile|aggregate>.<total|dram|device_memory>`
  — reads `N/A`, while ECC is `Enabled`, or, where the output does not show the ECC mode (a CSV
  query without `ecc.mode.current`), the GPU is an HBM data-centre part (`ECC_ALWAYS_ON`: A100,
  H100, ...: ECC is on by default on them). Per-location counters (L1, CBU, texture) are `N/A`
  on ECC GPUs by design (corpus 218, a P100) and do not count. With MIG enabled, the 510 driver
  prints the volatile counters `N/A` (corpus fresh8 1015, an A100 in MIG mode): there only the
  aggregate ones are required.
- remapped rows (`remapped_rows.pending`/`failure`, `Remapped Rows / Pending`): `N/A` on Turing
  and earlier (no row remapper, corpus 601 T4) and in MIG mode (corpus 051, 625, 2007); counted
  only on an Ampere-or-later `ECC_ALWAYS_ON` GPU whose output shows MIG mode `Disabled`.
- retired pages (`retired_pages.pending`, `Pending Page Blacklist`): `N/A` from Ampere on, which
  retire rows instead of pages (NVIDIA A100/H100 memory error management: "row remapping"
  replaces dynamic page retirement; corpus 030, 1502); counted only on a Volta or Pascal
  `ECC_ALWAYS_ON` GPU with ECC not shown disabled.
ECC `Disabled`, `N/A` (no ECC) or unread (`Unknown Error`: already unknown as a read error)
counts nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpuslo.exporter.evidence.nvidia_smi.values import ERROR_VALUES, NOT_REPORTED

Fields = Mapping[str, tuple[str, int | None]]

# HBM data-centre GPUs: ECC memory, enabled by default (NVIDIA data-centre GPU datasheets).
ECC_ALWAYS_ON = re.compile(
    r"\b(A100|A800|A30|H100|H200|H800|H20|GH200|GB\d{3}|B\d{3}A?|V100S?|P100)\b", re.IGNORECASE)
_ECC_MODE = ("ecc_mode/current", "ecc_mode/current_ecc", "ecc.mode.current")
_MIG_MODE = ("mig_mode/current", "mig_mode/current_mig", "mig.mode.current")
_DRAM_UNC = re.compile(
    r"^(?:ecc_errors/(?P<s1>volatile|aggregate)/(?:dram_uncorrectable|double_bit/(?:device_memory"
    r"|total))|ecc\.errors\.uncorrected\.(?P<s2>volatile|aggregate)\.(?:total|dram|device_memory))$")
_REMAPPED = ("remapped_rows/pending", "remapped_rows/remapped_row_pending",
             "remapped_rows.pending", "remapped_rows.failure",
             "remapped_rows/remapping_failure_occurred", "remapped_rows/remapped_row_failure")
_RETIRED = ("retired_pages/pending_page_blacklist", "retired_pages/pending_retirement",
            "retired_pages/pending_blacklist", "retired_pages.pending")
_LATER = ("ampere", "hopper", "blackwell")


def _value(fields: Fields, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` shown, lower case and without brackets; None when none is."""
    for key in keys:
        if key in fields:
            return fields[key][0].strip().strip("[]").strip().lower()
    return None


def _na(value: str) -> bool:
    lowered = value.strip().lower()
    return lowered in NOT_REPORTED and lowered not in ERROR_VALUES


def unread_faults(fields: Fields, model: str | None, family: str | None
                  ) -> tuple[tuple[str, str], ...]:
    """(field, why) for each fault-carrying field the GPU carries but shows only as `N/A` (see
    the module docstring); () when none, or when ECC is shown disabled or absent."""
    mode = _value(fields, _ECC_MODE)
    hbm = bool(ECC_ALWAYS_ON.search(re.sub(r"[-_]", " ", model or "")))
    ecc_on = mode == "enabled" or (mode is None and hbm)
    if not ecc_on:
        return ()
    why = "ECC mode Enabled" if mode == "enabled" else f"{model}: ECC memory, on by default"
    mig = _value(fields, _MIG_MODE)
    out = []
    dram = [(m.group("s1") or m.group("s2"), value) for key, (value, _) in fields.items()
            if (m := _DRAM_UNC.match(key))]
    required = [value for section, value in dram if mig != "enabled" or section == "aggregate"]
    if required and all(_na(value) for value in required):
        out.append(("ecc_dbe_volatile" if any(s == "volatile" for s, _ in dram) else
                    "ecc_dbe_aggregate", f"uncorrectable DRAM ECC count N/A with {why}"))
    if hbm and (family or "") in _LATER and mig == "disabled":
        out += [(key, f"N/A with {why} and MIG disabled") for key in _REMAPPED
                if key in fields and _na(fields[key][0])]
    if hbm and (family or "") in ("volta", "pascal"):
        out += [(key, f"N/A with {why}") for key in _RETIRED
                if key in fields and _na(fields[key][0])]
    return tuple(out)
