"""One test per class of evidence the twelfth fresh first-contact batch (tests/data/corpus/fresh12,
scored 17/22 on 2026-12-07 at 0e68f6c, tests/data/first_contact/corpus_fresh12_2026-12-07.txt)
found misread: the real lines (the case file itself), a variant, and negatives that must not be
read the same way.

- 1409 / 1422 (ibstat): which down ports are an unused spare (`policy.port_spares`): never an
  enabled port that is Polling (no link partner), never a whole adapter model with none active,
  never most of the node's ports.
- 1417 (--query-gpu CSV): the device-handle error that names a GPU by index *and* PCI address
  (`for GPU3: 0000:04:00.0:`), read in every nvidia-smi output kind that prints it; headerless
  rows of identity columns name themselves, and a person's `#` comment line is no row.
- 1418 (lspci -vvv | egrep, no device header): a link that kept fewer than half its lanes is
  fatal (`policy.pcie_width`), with no PCI id.
- 1421 (systemctl status through a pager): the pager's `lines 1-22/22 (END)` is the terminal's.
"""

from __future__ import annotations

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.pcie import PcieCheck
from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.csv_output import identity_columns, is_annotation
from gpuslo.exporter.evidence.nvidia_smi.values import handle_error
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.exporter.inspect.split import without_pager_lines
from gpuslo.exporter.policy.pcie_width import narrow_class
from gpuslo.exporter.policy.port_spares import spare_ports
from gpuslo.exporter.policy.ports import port_finding
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

POLLING_SPARE = corpus_case("fresh12", 1409)
B300_IBSTAT = corpus_case("fresh12", 1422)
CSV_HANDLE = corpus_case("fresh12", 1417)
LSPCI_X4 = corpus_case("fresh12", 1418)
FM_PAGER = corpus_case("fresh12", 1421)


def _downs(findings, device=None):
    return [f for f in of(findings, "port_down") if device is None or f.device == device]


# --- 1409: an enabled port Polling beside an active sibling is a lost link, not a spare -------

def test_a_polling_port_beside_an_active_sibling_is_no_spare():
    findings, verdict = inspect(POLLING_SPARE, "ibstat")
    assert verdict == "unhealthy"
    (down,) = _downs(findings, "mlx4_0")
    assert (down.class_, down.physical_state, down.action) == ("fatal", "Polling", "check_cabling")
    assert "no link partner" in down.message
    assert not [f for f in _downs(findings) if f.physical_state == "LinkUp"]


def test_the_same_port_switched_off_is_no_lost_link():
    # Negative: Disabled (switched off) on the same dual-port HCA, no LID: not a lost link; one
    # of the node's two ports is no minority, so no spare either (fresh24 2611): unknown.
    disabled = POLLING_SPARE.replace("Physical state: Polling", "Physical state: Disabled")
    findings, verdict = inspect(disabled, "ibstat")
    assert verdict == "unknown"
    assert [(f.class_, f.reason) for f in _downs(findings)] == [("unknown", "no_data")]


# --- 1422: a whole adapter model down, and most of a node's ports down, are no spares ---------

def test_a_whole_adapter_model_disabled_is_not_spare_ports():
    findings, verdict = inspect(B300_IBSTAT, "ibstat")
    assert verdict == "unhealthy"
    downs = _downs(findings)
    assert sorted(f.device for f in downs) == [f"mlx5_{n}" for n in (0, 1, 10, 6, 7, 8, 9)]
    assert {(f.class_, f.physical_state) for f in downs} == {("fatal", "Disabled")}
    assert all("no MT4131 port of the node is active" in f.message for f in downs)
    (active,) = of(findings, "ports_active")
    assert active.count == 4
    assert not _downs(findings, "mlx5_2") and not fatal(of(findings, "port_active"))


def _port(device, model, up, lid=None):
    state, physical = ("Active", "LinkUp") if up else ("Down", "Disabled")
    return Port(device=device, port=1, state=state, physical_state=physical, model=model,
                link_layer="InfiniBand", base_lid=lid)


def _classes(ports):
    return [f.class_ for f in spare_ports([port_finding("ibstat", p) for p in ports], ports)]


def test_one_disabled_port_of_a_model_in_use_stays_a_spare():
    # Negative (the fresh9 1101 shape): one disabled port of a model that has active ports, a
    # minority of the node: a spare.
    ports = [_port(f"mlx5_{n}", "MT4129", True) for n in range(4)]
    ports += [_port("mlx5_4", "MT4129", False, lid=65535)]
    assert _classes(ports) == ["ok"] * 4 + ["warn"]


def test_most_of_a_nodes_ports_down_are_no_spares_even_of_a_model_in_use():
    ports = [_port("mlx5_0", "MT4129", True)]
    ports += [_port(f"mlx5_{n}", "MT4129", False) for n in (1, 2)]
    assert _classes(ports) == ["ok", "fatal", "fatal"]
    # half down is not most, nor a minority: one of two is no spare and no lost path shown
    # (fresh24 2611, fresh2 322): unknown
    assert _classes(ports[:2]) == ["ok", "unknown"]


def test_the_rule_runs_the_same_with_the_model_unknown():
    # ibstatus shows no CA type: only the count decides.
    ports = [_port("mlx5_0", "", True), _port("mlx5_1", "", False)]
    assert _classes(ports) == ["ok", "unknown"]
    assert _classes([_port("mlx5_9", "", True), *ports]) == ["ok", "ok", "warn"]
    ports.append(_port("mlx5_2", "", False))
    assert _classes(ports) == ["ok", "fatal", "fatal"]


# --- 1417: the device-handle error naming index and PCI address, in every nvidia-smi kind ----

HANDLE = "Unable to determine the device handle for GPU3: 0000:04:00.0: Unknown Error"


def test_the_device_handle_error_names_index_and_pci():
    assert (handle_error(HANDLE).index, handle_error(HANDLE).pci) == ("3", "00000000:04:00.0")
    pci_only = handle_error("Unable to determine the device handle for GPU0000:3B:00.0: "
                            "Unknown Error")
    assert (pci_only.index, pci_only.pci) == (None, "00000000:3B:00.0")
    index_only = handle_error("Unable to determine the device handle for GPU 2: Unknown Error")
    assert (index_only.index, index_only.pci) == ("2", None)
    # Negative: a CSV row naming a PCI address is no handle error.
    assert handle_error("3, 00000000:04:00.0, NVIDIA GeForce RTX 3080") is None


def test_the_real_csv_capture_names_the_gpu_at_04_00():
    # Headerless `index, pci.bus_id, name` rows name their own columns (identity_columns), and
    # the author's `#  Missing :04:00.0` line is a comment: the whole capture is one CSV.
    findings, verdict = inspect(CSV_HANDLE)
    assert verdict == "unhealthy"
    (gone,) = of(findings, "gpu_inaccessible")
    assert (gone.pci, gone.gpu, gone.class_, gone.kind) == ("00000000:04:00.0", "3", "fatal",
                                                           "smi-csv")
    assert not [f for f in fatal(findings) if f.pci == "00000000:05:00.0"]
    # GPU 3 is shown by its handle error, so the node total (8, first) stands beside the 7
    # RTX 3080 rows whose model is shown (a GPU that cannot be read is still a GPU shown); each
    # RTX 3080 read is also named on its own (fresh21 case 2307), GPU 3 only by its fault.
    seen = of(findings, "gpus_seen")
    assert [f.count for f in seen if f.count != 1] == [8, 7]
    each = {f.pci for f in seen if f.count == 1}
    assert len(each) == 7 and "00000000:04:00.0" not in each
    assert not of(findings, "nothing_recognised")


def test_only_identity_columns_name_themselves():
    assert identity_columns(CSV_HANDLE) == ["index", "pci.bus_id", "name"]
    uuid = "GPU-11111111-2222-3333-4444-555555555555"
    assert identity_columns(f"{uuid}, NVIDIA H100 80GB HBM3\n") == ["uuid", "name"]
    # Negatives: a health column (a temperature, a count) has no shape of its own; a number is
    # an index only in the first column; a header row wins.
    assert identity_columns("0, 00000000:01:00.0, 45\n1, 00000000:02:00.0, 50\n") is None
    assert identity_columns("00000000:01:00.0, 45\n") is None
    assert identity_columns("index, name\n0, NVIDIA H100 80GB HBM3\n") is None
    findings, verdict = inspect("0, 00000000:01:00.0, 45\n1, 00000000:02:00.0, 50\n")
    assert verdict == "unknown" and of(findings, "nothing_recognised")


def test_a_comment_line_is_no_row_but_a_root_prompt_is_the_command():
    assert is_annotation("#  Missing :04:00.0")
    assert not is_annotation("# nvidia-smi --query-gpu=index,name --format=csv,noheader")
    assert not is_annotation("0, 00000000:01:00.0, NVIDIA GeForce RTX 3080")


def test_each_nvidia_smi_kind_reads_the_line_as_its_own():
    csv = f"index, pci.bus_id, name\n0, 00000000:01:00.0, NVIDIA GeForce RTX 3080\n{HANDLE}\n" \
        "4, 00000000:05:00.0, NVIDIA GeForce RTX 3080\n"
    listing = f"{HANDLE}\nGPU 0: NVIDIA GeForce RTX 3080 (UUID: GPU-11111111-2222-3333-4444-" \
        "555555555555)\n"
    table = HANDLE + "\n" + corpus_case("fresh12", 1405)
    query = HANDLE + "\n" + corpus_case("fresh12", 1406)
    for text, kind in ((csv, "smi-csv"), (listing, "nvml-error"), (table, "nvidia-smi-table"),
                       (query, "nvidia-smi-q")):
        findings, verdict = inspect(text)
        (gone,) = of(findings, "gpu_inaccessible")
        assert (gone.kind, gone.pci, gone.gpu) == (kind, "00000000:04:00.0", "3"), kind
        assert {f.kind for f in findings} == {kind}, kind  # one output, not a -q of its own
        assert verdict == "unhealthy"
    # Negative: the line alone is nvidia-smi's whole output for that GPU (read as -q).
    findings, _ = inspect(HANDLE + "\n")
    assert [f.kind for f in of(findings, "gpu_inaccessible")] == ["nvidia-smi-q"]


def test_a_listing_counts_the_inaccessible_gpu_as_present():
    listing = f"{HANDLE}\nGPU 0: NVIDIA GeForce RTX 3080 (UUID: GPU-11111111-2222-3333-4444-" \
        "555555555555)\n"
    findings, _ = inspect(listing, expect_gpus=2)
    assert not of(findings, "gpu_missing")  # two present, one of them inaccessible
    assert of(inspect(listing, expect_gpus=3)[0], "gpu_missing")


# --- 1418: lanes lost (x4 of x16) are fatal, with no device header no PCI id --------------------

def test_a_link_that_kept_a_quarter_of_its_lanes_is_fatal_without_a_header():
    findings, verdict = inspect(LSPCI_X4)
    assert verdict == "unhealthy"
    (degraded,) = of(findings, "pcie_degraded")
    assert (degraded.class_, degraded.pci, degraded.kind) == ("fatal", None, "lspci")
    assert "x4" in degraded.message and "x16" in degraded.message


def test_half_width_is_never_fatal_alone_and_speed_alone_is_no_width_fault():
    # Negatives: x8 of x16 may be a x8-wired slot, which this excerpt (no port above the GPU)
    # cannot show: unknown, never fatal (policy.pcie_width.lspci_narrow; fresh20 2215); a speed
    # drop with the width held is idle power saving (never fatal).
    half = LSPCI_X4.replace("Width x4 (downgraded)", "Width x8 (downgraded)")
    findings, verdict = inspect(half)
    assert [f.class_ for f in of(findings, "pcie_degraded")] == ["unknown"]
    assert verdict == "unknown"
    idle = LSPCI_X4.replace("Width x4 (downgraded)", "Width x16 (ok)")
    assert not fatal(inspect(idle)[0])
    assert [narrow_class(w, 16) for w in (16, 8, 7, 4, 1)] == [None, "warn", "fatal", "fatal",
                                                                "fatal"]
    assert narrow_class(None, 16) is None and narrow_class(4, None) is None


# --- 1421: the pager's status line is the terminal's, not evidence ------------------------------

def test_the_pager_line_under_systemctl_status_is_not_evidence():
    findings, verdict = inspect(FM_PAGER)
    assert verdict == "healthy"
    assert of(findings, "fabric_manager_running")
    assert not of(findings, "nothing_recognised")


def test_pager_lines_blanked_and_lookalikes_kept():
    text = "a\nlines 1-22/22 (END)\n(END)\n--More--(42%)\nlines 23-45\nb\n"
    assert without_pager_lines(text) == "a\n\n\n\n\nb\n"
    # Negatives: words around it make it a line of evidence, not the pager's.
    for kept in ("dropped lines 1-22/22 (END)", "lines 1-22 of the log were lost", "(END) of dump"):
        assert without_pager_lines(kept + "\n") == kept + "\n"


def test_the_live_pcie_check_judges_lanes_as_inspect_does():
    # The same rule for NVML (policy.gpu, the live `pcie` check): x4 of x16 fails, x8 warns.
    def status_of(width: int) -> str:
        gpu = GpuStatus(index="0", uuid="GPU-x", model="NVIDIA GeForce RTX 3080",
                        pcie_gen_current=1, pcie_gen_max=4, pcie_width_current=width,
                        pcie_width_max=16, accessible=True)
        return PcieCheck().evaluate(gpu, NvmlNode("", "", 1, (), {}), CheckContext()).status

    assert [status_of(w) for w in (16, 8, 4)] == ["ok", "warn", "fail"]
