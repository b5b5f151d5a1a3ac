"""dcgm-exporter `/metrics` pages: parsed with `prometheus_client.parser`, folded per GPU UUID.

Facts this module relies on (shared/corpus/dcgm-exporter/SOURCES.md):
- Label spellings changed across versions: `UUID` (current) or `uuid` (old `dcgm_*` namespace),
  `Hostname` (before dcgm-exporter d5e5f51) or `hostname`, `pci_bus_id` (absent on old
  versions), `gpu` (the index), `modelName`. Old-namespace names are lower case (`dcgm_fi_...`);
  names are upper-cased here.
- MIG: one series per GPU instance (`GPU_I_ID`, `GPU_I_PROFILE`) under the parent GPU's UUID
  (a series carrying the MIG device's own `MIG-` UUID folds under its GPU by the `gpu` index);
  they fold into one record per UUID, taking the largest value of each field (the worst: a
  non-zero Xid on any instance, the highest temperature, the largest error count).
- DCGM blank sentinels (dcgm_fields.h): int64 values >= 0x7ffffffffffffff0, int32 values
  0x7ffffff0..0x7fffffff and fp64 values 2^47..2^47+3 mean "blank / not found / not supported /
  not permissioned" (DCGM_FT_INT64_BLANK, DCGM_FT_INT64_NOT_FOUND, DCGM_FT_INT64_NOT_SUPPORTED,
  DCGM_FT_INT64_NOT_PERMISSIONED = 0x7ffffffffffffff0..3, the DCGM_FT_INT32_* and
  DCGM_FT_FP64_* friends likewise; DCGM_INT64_IS_BLANK(v) is v >= DCGM_FT_INT64_BLANK): no
  data, never a value. dcgm-exporter skips them itself, but a page from another exporter, a
  relabelling proxy or an old version may carry them.
- The fault-carrying fields (`HEALTH_FIELDS`: Xid, ECC counts, row remapping, retired pages,
  recovery action, clocks-event mask) hold non-negative whole numbers. Such a field shown only
  as a sentinel, NaN, +-Inf, a negative or a fractional number is `DcgmGpu.unusable`: the
  faults it carries are unknown for that GPU (never "no problem", never "Xid -1").
- `DCGM_FI_DEV_XID_ERRORS` is the value of the LAST Xid the GPU raised (0 = none since the
  exporter started), not a count.
- A family missing from a page is unknown, never zero: `DcgmPage.families` lists what the page
  had so callers can tell.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.clock_events import reasons_of_mask
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.pci import normalise_pci

INT64_BLANK = 0x7FFFFFFFFFFFFFF0
INT32_BLANK, INT32_MAX = 0x7FFFFFF0, 0x7FFFFFFF
FP64_BLANK = 2.0**47
XID_LAST = "DCGM_FI_DEV_XID_ERRORS"
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"  # mJ since driver load (counter)
POWER = "DCGM_FI_DEV_POWER_USAGE"  # W
# DCGM clocks-event (throttle) reason bits (dcgm_fields.h DCGM_CLOCKS_EVENT_REASON_*).
CLOCKS_HW_SLOWDOWN, CLOCKS_HW_THERMAL = 0x8, 0x40
CLOCKS_SW_POWER_CAP, CLOCKS_SW_THERMAL = 0x4, 0x20
# NVML nvmlGpuRecoveryAction_t: NONE, GPU_RESET, NODE_REBOOT, DRAIN_P2P, DRAIN_AND_RESET.
RECOVERY_ACTIONS = {0: "None", 1: "Reset", 2: "Reboot", 3: "Drain_P2P", 4: "Drain_and_Reset"}
_UUID_LABELS = ("UUID", "uuid", "Uuid")
_HOST_LABELS = ("Hostname", "hostname")
_PCI_LABELS = ("pci_bus_id", "PCI_BUS_ID", "pciBusID", "pci_bus")
_MODEL_LABELS = ("modelName", "modelname", "model_name")
# The fields whose value says whether the GPU has a fault (read by `gpu_status` and the Xid rule
# of `policy.dcgm.gpu_findings`): counts, 0/1 flags, an Xid code or a reason bit mask.
HEALTH_FIELDS = frozenset({
    XID_LAST, "DCGM_EXP_XID_ERRORS_COUNT",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "DCGM_FI_DEV_RETIRED_PENDING",
    "DCGM_FI_DEV_ROW_REMAP_PENDING", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_GPU_RECOVERY_ACTION", "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
})
_SENTINEL_NAMES = ("BLANK", "NOT_FOUND", "NOT_SUPPORTED", "NOT_PERMISSIONED")


def is_blank(value: float) -> bool:
    """True when `value` is a DCGM blank / not-found / not-supported / not-permissioned sentinel,
    or not a finite number (NaN, ±Inf, or a sample beyond ±1.8e308, which parses as infinity):
    no data, never a count (int() of it raised in `inspect`)."""
    if not math.isfinite(value) or value >= INT64_BLANK:
        return True
    return INT32_BLANK <= value <= INT32_MAX or FP64_BLANK <= value <= FP64_BLANK + 3


def unusable_value(name: str, value: float) -> str | None:
    """Why `value` cannot be a value of field `name` (upper case), or None when it can: a DCGM
    blank sentinel (named as dcgm_fields.h names it where the float still tells them apart),
    NaN or +-Inf (any field), or, for `HEALTH_FIELDS`, a negative or fractional number."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value >= INT64_BLANK:  # a float cannot tell 0x7ff...f0 from ...f3 apart
        return "a DCGM int64 blank sentinel (DCGM_FT_INT64_BLANK..NOT_PERMISSIONED)"
    for base, kind in ((INT32_BLANK, "INT32"), (FP64_BLANK, "FP64")):
        if base <= value <= (INT32_MAX if kind == "INT32" else base + 3):
            offset = int(value - base)
            word = _SENTINEL_NAMES[offset] if offset < 4 else "BLANK range"
            return f"the DCGM sentinel DCGM_FT_{kind}_{word}"
    if name in HEALTH_FIELDS and (value < 0 or not value.is_integer()):
        return f"{value:g} ({'negative' if value < 0 else 'not a whole number'})"
    return None


def _printable(text: str) -> str:
    """`text` with control characters written as escapes (a label value holding a newline must
    not break the table it is printed in)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


@dataclass
class DcgmGpu:
    """One GPU of a dcgm-exporter page (MIG instances folded in).

    Attributes:
        uuid: `GPU-...` (or `gpu:<index>` when the page has no UUID label).
        index: the `gpu` label ("0"); pci_bus_id: `00000000:B1:00.0` or "" on old versions.
        model: `modelName`; hostname: `Hostname`/`hostname`.
        values: upper-cased field name -> value (the largest over MIG instances).
        blank: fields the page carried only as DCGM sentinels or values they cannot hold
            (`unusable_value`): no data.
        unusable: of those, the `HEALTH_FIELDS`, each with why its value was not used: the
            faults they carry are unknown for this GPU.
        mig_instances: distinct `GPU_I_ID` values seen.
        xid_active: every non-zero Xid the page shows for the GPU: the last Xid of each MIG
            instance and the `xid` label of windowed counts (DCGM_EXP_XID_ERRORS_COUNT).
    """

    uuid: str
    index: str = ""
    pci_bus_id: str = ""
    model: str = ""
    hostname: str = ""
    values: dict[str, float] = field(default_factory=dict)
    blank: set[str] = field(default_factory=set)
    unusable: dict[str, str] = field(default_factory=dict)
    mig_instances: set[str] = field(default_factory=set)
    xid_active: set[int] = field(default_factory=set)

    @property
    def last_xid(self) -> int | None:
        """The last Xid (`DCGM_FI_DEV_XID_ERRORS`): 0 none, None when not reported."""
        value = self.values.get(XID_LAST)
        return None if value is None else int(value)

    @property
    def family(self) -> str:
        """GPU family of `model` (`gpuslo.exporter.evidence.families.family_of`)."""
        return family_of(self.model)


@dataclass(frozen=True)
class DcgmPage:
    """A parsed page: `gpus` by UUID (sorted by index), the DCGM `families` present (names upper
    case, including those whose every value was blank)."""

    gpus: dict[str, DcgmGpu]
    families: frozenset[str]


# A line that is only an elision mark: `...`, `…`, or the editorial bracketed ellipsis
# (`[...]`, `[… 40 more series …]`) with which a page pasted into an issue is cut.
_ELISION = re.compile(r"(?:\.\.\.|…)?|\[\s*(?:\.\.\.|…)[^\]]*\]")


def _is_elision(line: str) -> bool:
    return len(line) < 512 and _ELISION.fullmatch(line.strip()) is not None


# A page fetched with curl (or wget) and pasted with what the terminal showed around it: the
# command alone on the first line, with or without a prompt (`curl -L http://host:9400/metrics`,
# the dcgm-exporter documentation's `$ curl localhost:9400/metrics`), and curl's note that it kept
# the connection open, which it prints only once the whole response was received
# (`* Connection #0 to host 192.168.1.16 left intact`; fresh9 case 1108). Anything else curl
# prints (`curl: (18) transfer closed with outstanding read data remaining`, other `*` notes)
# is left in, so a cut or failed fetch is not exposition format.
_FETCH_COMMAND = re.compile(
    r"\s*(?:\S{0,64}[$#%>]\s+)?(?:sudo\s+)?(?:\S{0,256}/)?(?:curl|wget)\s+\S.*"
)
_FETCH_DONE = re.compile(r"\*\s+Connection #\d+ to host \S+ left intact\s*")


def _clean(text: str) -> str:
    """Drop elision marks (`_ELISION`) and blank lines that hand-made captures carry, and the
    fetch command above the page and curl's completion note below it (`_FETCH_COMMAND`,
    `_FETCH_DONE`): the page is read for the series it shows."""
    lines = [line for line in text.splitlines() if not _is_elision(line)]
    if lines and len(lines[0]) < 4096 and _FETCH_COMMAND.fullmatch(lines[0]):
        lines = lines[1:]
    lines = [line for line in lines if len(line) > 512 or not _FETCH_DONE.fullmatch(line)]
    return "\n".join(lines) + "\n"


def _families(text: str, source: str) -> list:
    # Imported here, not at the top: prometheus_client costs `gpuslo inspect` a fifth of its
    # start-up, and most evidence is not a dcgm-exporter page.
    from prometheus_client.parser import text_string_to_metric_families

    try:
        families = list(text_string_to_metric_families(_clean(text)))
    except (ValueError, KeyError, IndexError, TypeError) as error:
        detail = str(error)[:160] or type(error).__name__
        raise ParseError(
            source, f"not Prometheus exposition format ({detail})", line=_first_bad_line(text)
        ) from None
    declared = {family.name for family in families if family.type != "unknown"}
    for before, after in zip(families, families[1:], strict=False):
        if (
            before.type != "unknown"
            and not before.samples
            and after.type == "unknown"
            and after.name not in declared
        ):
            raise ParseError(
                source,
                f"samples named {after.name} follow # TYPE {before.name}",
                line=_line_of(text, after.name),
                field=after.name,
            )
    return families


def _first_bad_line(text: str) -> int | None:
    """1-based number of the first sample line the exposition parser rejects on its own (only
    run after the whole page failed, so its cost is paid for broken pages alone)."""
    from prometheus_client.parser import text_string_to_metric_families  # see _families

    for number, line in enumerate(text.splitlines(), start=1):
        comment = line.lstrip().startswith("#") and not re.match(r"\s*#\s*(?:TYPE|HELP)\b", line)
        if comment or _is_elision(line):
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except (ValueError, KeyError, IndexError, TypeError):
            return number
    return None


def _line_of(text: str, name: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(name):
            return number
    return None


def _decimal(text: str) -> bool:
    """True for ASCII digits only (`str.isdigit` also accepts `²`, which `int` rejects)."""
    return text.isascii() and text.isdigit()


def _gpu_for(gpus: dict[str, DcgmGpu], labels: dict[str, str]) -> DcgmGpu | None:
    uuid = _printable(next((labels[key] for key in _UUID_LABELS if labels.get(key)), ""))
    index = _printable(labels.get("gpu", ""))
    if uuid.upper().startswith("MIG-") and index:
        uuid = ""  # a MIG device's own UUID: the instance folds under its GPU, by index
    if not uuid and not index:
        return None  # not a GPU entity (NVSwitch, CPU, link): not ours to fold
    key = uuid or f"gpu:{index}"
    gpu = gpus.setdefault(key, DcgmGpu(uuid=key, index=index))
    pci = next((labels[key] for key in _PCI_LABELS if labels.get(key)), None)
    gpu.pci_bus_id = gpu.pci_bus_id or normalise_pci(pci) or ""
    model = next((labels[k] for k in _MODEL_LABELS if labels.get(k)), "")
    gpu.model = gpu.model or _printable(model)
    host = next((labels[k] for k in _HOST_LABELS if labels.get(k)), "")
    gpu.hostname = gpu.hostname or _printable(host)
    if labels.get("GPU_I_ID"):
        gpu.mig_instances.add(labels["GPU_I_ID"])
    return gpu


def _add(gpu: DcgmGpu, name: str, labels: dict[str, str], value: float) -> None:
    why = unusable_value(name, value)
    if why is not None:
        if name not in gpu.values:
            gpu.blank.add(name)
            if name in HEALTH_FIELDS:
                gpu.unusable.setdefault(name, why)
        return
    gpu.blank.discard(name)
    gpu.unusable.pop(name, None)
    if _decimal(labels.get("xid", "")) and value > 0:
        gpu.xid_active.add(int(labels["xid"]))
    if name == XID_LAST and value > 0:  # MIG instances may each hold a different last Xid
        gpu.xid_active.add(int(value))
    gpu.values[name] = max(value, gpu.values.get(name, value))


def _fold_index_keys(gpus: dict[str, DcgmGpu]) -> dict[str, DcgmGpu]:
    """Records keyed `gpu:<index>` (series without a GPU UUID: MIG instances labelled with their
    own `MIG-` UUID) folded into the one UUID record of the same index and host, so one physical
    GPU counts once; kept as they are when no such record exists."""
    by_index: dict[tuple[str, str], list[DcgmGpu]] = {}
    for gpu in gpus.values():
        if not gpu.uuid.startswith("gpu:"):
            by_index.setdefault((gpu.index, gpu.hostname), []).append(gpu)
    out = {}
    for key, gpu in gpus.items():
        owners = by_index.get((gpu.index, gpu.hostname), []) if key.startswith("gpu:") else []
        if len(owners) != 1:
            out[key] = gpu
            continue
        owner = owners[0]
        for name, value in gpu.values.items():
            owner.values[name] = max(value, owner.values.get(name, value))
            owner.unusable.pop(name, None)
        owner.blank |= {name for name in gpu.blank if name not in owner.values}
        for name, why in gpu.unusable.items():
            if name not in owner.values:
                owner.unusable.setdefault(name, why)
        owner.mig_instances |= gpu.mig_instances
        owner.xid_active |= gpu.xid_active
        owner.pci_bus_id = owner.pci_bus_id or gpu.pci_bus_id
        owner.model = owner.model or gpu.model
    return out


def parse_dcgm_page(text: str, source: str = "<dcgm-exporter>") -> DcgmPage:
    """Parse a dcgm-exporter page into per-GPU records keyed by UUID.

    Only `DCGM_*` families (any case) are read; others (go_*, process_*) are ignored. Raises
    ParseError (naming `source`) for text that is not exposition format, or whose samples do not
    belong to the family their `# TYPE` line declares (the dcgm-exporter PR 239 example).
    """
    gpus: dict[str, DcgmGpu] = {}
    seen: set[str] = set()
    for family in _families(text, source):
        name = family.name.upper()
        if not name.startswith("DCGM_"):
            continue
        for sample in family.samples:
            seen.add(name)
            gpu = _gpu_for(gpus, sample.labels)
            if gpu is not None:
                _add(gpu, name, sample.labels, float(sample.value))
    ordered = sorted(
        _fold_index_keys(gpus).values(),
        key=lambda g: (int(g.index) if _decimal(g.index) else 1 << 30, g.uuid),
    )
    return DcgmPage(gpus={gpu.uuid: gpu for gpu in ordered}, families=frozenset(seen))


def looks_like_dcgm_page(text: str) -> bool:
    """True when the text has exposition lines of DCGM fields (`DCGM_FI_...{` or `dcgm_fi_...{`)."""
    return re.search(r"^(?:DCGM|dcgm)_[A-Za-z0-9_]+\{", text[:200_000], re.M) is not None


def _int(gpu: DcgmGpu, *fields: str) -> int | None:
    for name in fields:
        if name in gpu.values:
            return int(gpu.values[name])
    return None


def _flag(gpu: DcgmGpu, name: str) -> bool | None:
    value = _int(gpu, name)
    return None if value is None else value != 0


def gpu_status(gpu: DcgmGpu) -> GpuStatus:
    """The normalised `GpuStatus` of one page GPU; fields the page lacks (or left blank) are None.

    Fields read: ECC `DCGM_FI_DEV_ECC_{SBE,DBE}_VOL_TOTAL`, `DCGM_FI_DEV_ECC_DBE_AGG_TOTAL`; row
    remapping `DCGM_FI_DEV_ROW_REMAP_{PENDING,FAILURE}`, `DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`;
    `DCGM_FI_DEV_RETIRED_PENDING`; the recovery action `DCGM_FI_DEV_GPU_RECOVERY_ACTION` (or its
    deprecated name `..._GET_GPU_RECOVERY_ACTION`); clocks-event reasons (hardware thermal 0x40,
    hardware slowdown 0x8, software thermal 0x20, software power cap 0x4); temperatures and PCIe
    link generation/width.
    """
    reasons = _int(gpu, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
    action = _int(gpu, "DCGM_FI_DEV_GPU_RECOVERY_ACTION", "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION")
    return GpuStatus(
        index=gpu.index or None,
        uuid=gpu.uuid,
        pci_bus_id=gpu.pci_bus_id or None,
        model=gpu.model or None,
        family=gpu.family,
        ecc_sbe_volatile=_int(gpu, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"),
        ecc_dbe_volatile=_int(gpu, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"),
        ecc_dbe_aggregate=_int(gpu, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"),
        retired_pages_pending=_flag(gpu, "DCGM_FI_DEV_RETIRED_PENDING"),
        remapped_rows_pending=_flag(gpu, "DCGM_FI_DEV_ROW_REMAP_PENDING"),
        remapped_rows_failure=_flag(gpu, "DCGM_FI_DEV_ROW_REMAP_FAILURE"),
        remapped_rows_uncorrectable=_int(gpu, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
        recovery_action=None if action is None else RECOVERY_ACTIONS.get(action, str(action)),
        hw_thermal_slowdown=None if reasons is None else bool(reasons & CLOCKS_HW_THERMAL),
        hw_slowdown=None if reasons is None else bool(reasons & CLOCKS_HW_SLOWDOWN),
        sw_thermal_slowdown=None if reasons is None else bool(reasons & CLOCKS_SW_THERMAL),
        sw_power_cap=None if reasons is None else bool(reasons & CLOCKS_SW_POWER_CAP),
        clock_events=None if reasons is None else reasons_of_mask(reasons),
        temperature_c=gpu.values.get("DCGM_FI_DEV_GPU_TEMP"),
        slowdown_temperature_c=gpu.values.get("DCGM_FI_DEV_SLOWDOWN_TEMP"),
        pcie_gen_current=_int(gpu, "DCGM_FI_DEV_PCIE_LINK_GEN"),
        pcie_gen_max=_int(gpu, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN"),
        pcie_width_current=_int(gpu, "DCGM_FI_DEV_PCIE_LINK_WIDTH"),
        pcie_width_max=_int(gpu, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH"),
    )
