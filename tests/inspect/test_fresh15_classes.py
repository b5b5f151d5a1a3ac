"""One test per class of evidence the fifteenth fresh first-contact corpus batch (tests/data/
corpus/fresh15, scored 16/20 on 2026-12-07 at 7f29b36, tests/data/first_contact/
corpus_fresh15_2026-12-07.txt) found misread: the real lines (the case file itself), variants in
the other forms of the class, and negatives that must not be read the same way.

- 1720 (nvidia-smi nvlink -s, two bridged H100 PCIe): the link slots a bridged PCIe board leaves
  unconnected by design are no fault (`policy.nvlink_links`), and the links under the first
  `GPU N:` header of a several-GPU output are that GPU's (`inspect.split._links_of_header`:
  GPU 0's links were cut off as no GPU's and never judged).
- 1715 (fabricmanager.log): FM's driver-interface version mismatch is FM failed
  (`fabric_manager.yaml` `version_mismatch`).
- 1717 (`nvidia-smi -q | grep -A2 Fabric`): grep's `--` group separator restarts the section
  nesting, and a field repeated after it is the next GPU's (`evidence.nvidia_smi.query`).
- 1706 (lspci -vvv of a RAID controller): a non-NVIDIA endpoint's narrowed link is a warn noted
  as that device's, never a GPU's fault (`policy.pcie.other_link_findings`).
"""

from __future__ import annotations

import time

import pytest

from gpuslo.exporter.checks import fabricmanager as fm_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.nvlink import NvlinkCheck
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.exporter.policy.nvlink_links import bridged_board, nvlink_state_problems
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

H100_PCIE_PAIR = corpus_case("fresh15", 1720)
FM_VERSION = corpus_case("fresh15", 1715)
FABRIC_GREP = corpus_case("fresh15", 1717)
RAID_LSPCI = corpus_case("fresh15", 1706)
BY_DESIGN = (4, 5, 10, 11, 16, 17)  # 1720: the six slots no bridge reaches, on both GPUs


def h100_pcie_states(down=BY_DESIGN) -> dict[int, bool]:
    return {link: link not in down for link in range(18)}


# --- 1720: a bridged PCIe board's unconnected link slots ---------------------------------------

def test_the_bridged_h100_pcie_pair_is_healthy_and_both_gpus_links_are_read():
    findings, verdict = inspect(H100_PCIE_PAIR)
    assert verdict == "healthy"
    assert not of(findings, "nvlink_inactive") and not fatal(findings)
    active = {f.gpu: f.links for f in of(findings, "nvlink_active")}
    up = [n for n in range(18) if n not in BY_DESIGN]
    assert active == {"0": up, "1": up}  # GPU 0's links are read as GPU 0's too


def test_a_link_down_on_the_first_gpu_of_the_pair_is_fatal():
    # Negative: GPU 0's block is the first under the prompt; a link of a bridge down there (11 up,
    # no whole number of 4-link bridges) must fail, as it did not before (its lines were no GPU's).
    text = H100_PCIE_PAIR.replace("Link 0: 26.562 GB/s", "Link 0: <inactive>", 1)
    findings, verdict = inspect(text)
    assert verdict == "unhealthy"
    (down,) = of(findings, "nvlink_inactive")
    assert (down.gpu, down.class_, down.links) == ("0", "fatal", [0, *BY_DESIGN])


@pytest.mark.parametrize(
    ("model", "listed", "down", "expected"),
    [
        ("NVIDIA H100 PCIe", 18, BY_DESIGN, None),  # 12 of 18: three bridges, rest unconnected
        ("NVIDIA H100 NVL", 18, BY_DESIGN, None),
        ("NVIDIA H100 PCIe", 18, (*BY_DESIGN, 0, 1, 2, 3), "warn"),  # 8 up: a bridge absent
        ("NVIDIA H100 PCIe", 18, tuple(range(18)), "warn"),  # no bridge fitted, or all down
        ("NVIDIA H100 PCIe", 18, (*BY_DESIGN, 7), "fatal"),  # 11 up: a bridge with a link down
        ("NVIDIA A100-PCIE-40GB", 12, (0, 1, 2, 3), "warn"),  # 8 of 12: one of three bridges
        ("NVIDIA A100 80GB PCIe", 12, (5,), "fatal"),
        ("NVIDIA RTX A6000", 4, (2,), "fatal"),  # 3 of the one bridge's 4 links
        # Negatives: SXM / HGX boards, and a GPU whose model is not shown, keep every listed link
        ("NVIDIA H100 80GB HBM3", 18, BY_DESIGN, "fatal"),
        ("Tesla V100-SXM2-32GB", 6, (3, 5), "fatal"),
        (None, 18, BY_DESIGN, "fatal"),
    ],
)
def test_inactive_links_against_the_boards_bridges(model, listed, down, expected):
    states = {link: link not in down for link in range(listed)}
    problems = nvlink_state_problems(model, states)
    assert [p.class_ for p in problems] == ([expected] if expected else [])
    assert all(p.signal == "nvlink_inactive" for p in problems)


def test_only_bridged_pcie_boards_are_in_the_table():
    assert bridged_board("NVIDIA H100 PCIe").links == 12
    assert bridged_board("NVIDIA A40").links == 4
    for model in ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
                  "NVIDIA GH200 480GB", "NVIDIA A4000", None):
        assert bridged_board(model) is None, model


def test_the_live_check_judges_the_pair_as_inspect_and_fails_below_expect_nvlinks():
    status = GpuStatus(index="0", uuid="GPU-6968dfc2", model="NVIDIA H100 PCIe",
                       nvlink_states=h100_pcie_states())
    check, node = NvlinkCheck(), NvmlNode("", "", 1, (), {})
    check._baseline, check._seen = {}, {}
    result = check.evaluate(status, node, CheckContext())
    assert (result.status, result.message) == ("ok", "12 NVLink links active")
    fewer = GpuStatus(index="0", uuid="GPU-6968dfc2", model="NVIDIA H100 PCIe",
                      nvlink_states=h100_pcie_states((*BY_DESIGN, 0, 1, 2, 3)))
    assert check.evaluate(fewer, node, CheckContext()).status == "warn"
    expecting = CheckContext(config={"expect_nvlinks": 12})
    result = check.evaluate(fewer, node, expecting)
    assert (result.status, result.reason) == ("fail", "nvlink_down")
    broken = GpuStatus(index="0", uuid="GPU-6968dfc2", model="NVIDIA H100 PCIe",
                       nvlink_states=h100_pcie_states((*BY_DESIGN, 7)))
    assert check.evaluate(broken, node, CheckContext()).status == "fail"


# --- 1715: FM's driver version mismatch --------------------------------------------------------

def test_the_driver_interface_version_mismatch_is_fm_failed():
    findings, verdict = inspect(FM_VERSION)
    assert verdict == "unhealthy"
    (failed,) = of(findings, "fabric_manager_failed")
    assert (failed.class_, failed.reason) == ("fatal", "fabric_unhealthy")
    assert not of(findings, "fabric_manager_running")


def test_a_matching_version_line_is_no_failure():
    # Negative: FM's own version banner and a line that says the versions match.
    text = (
        "[Apr 02 2025 15:45:50] [INFO] [tid 11713] Fabric Manager version 535.216.01 is running\n"
        "[Apr 02 2025 15:45:50] [INFO] [tid 11713] driver interface version 535.216.01 matches "
        "driver version 535.216.01\n"
    )
    findings, _ = inspect(text)
    assert not of(findings, "fabric_manager_failed") and not fatal(findings)


def test_the_live_fabric_manager_check_fails_on_the_mismatch(tmp_path):
    path = tmp_path / "fabricmanager.log"
    path.write_text(FM_VERSION)
    context = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
                           fabricmanager_log=path)
    output = fm_check.FabricManagerCheck().run(context)
    assert [r.status for r in output.results if r.status == "fail"] == ["fail"]


# --- 1717: a grep -A excerpt of nvidia-smi -q ------------------------------------------------

def test_each_grep_group_of_the_fabric_section_is_a_gpu_not_registered():
    findings, verdict = inspect(FABRIC_GREP)
    assert verdict == "unhealthy"
    fabric = of(findings, "fabric_unhealthy")
    assert [f.class_ for f in fabric] == ["fatal"] * 3
    assert "In Progress" in fabric[0].message
    assert of(findings, "gpus_seen")[0].count == 3


def test_a_completed_gpu_beside_a_stuck_one_keeps_the_stuck_one():
    # Negative for overwriting: the later group's Completed must not hide the earlier In Progress.
    text = FABRIC_GREP.replace("In Progress", "Completed", 2).replace("N/A", "Success", 2)
    findings, _ = inspect(text)
    assert len(of(findings, "fabric_unhealthy")) == 1
    # and every group Completed/Success is no fabric finding at all
    healthy = FABRIC_GREP.replace("In Progress", "Completed").replace("N/A", "Success")
    findings, verdict = inspect(healthy)
    assert verdict == "healthy" and not of(findings, "fabric_unhealthy")


def test_groups_of_one_gpu_with_distinct_fields_stay_one_gpu():
    # Negative: a grep of one GPU's sections, different fields in each group, is one GPU.
    text = (
        "    Fabric\n        State                             : Completed\n"
        "        Status                            : Success\n--\n"
        "    GPU Recovery Action                   : None\n"
    )
    findings, verdict = inspect(text, "nvidia-smi-q")
    assert verdict == "healthy"
    assert of(findings, "gpus_seen")[0].count == 1


# --- 1706: a non-GPU device's narrowed link -----------------------------------------------------

def test_a_raid_controller_at_x1_of_x2_is_a_warn_on_that_device():
    findings, verdict = inspect(RAID_LSPCI)
    assert verdict == "healthy"
    (narrow,) = of(findings, "pcie_degraded")
    assert (narrow.class_, narrow.pci) == ("warn", "00000000:11:00.0")
    assert "not a GPU" in narrow.message and narrow.gpu is None


def test_a_port_or_a_full_width_device_is_not_noted():
    # Negatives: a root port trained to the width of what is plugged in, and a device at full
    # width, are nothing; an NVIDIA GPU at x1 of x16 is still the GPU's fatal.
    port = (
        "00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] GPP Bridge\n"
        "        Capabilities: [58] Express (v2) Root Port (Slot+), MSI 00\n"
        "                LnkCap: Port #1, Speed 16GT/s, Width x16, ASPM L1\n"
        "                LnkSta: Speed 16GT/s, Width x4 (downgraded)\n"
    )
    assert not of(inspect(port)[0], "pcie_degraded")
    full = RAID_LSPCI.replace("Width x1 (downgraded)", "Width x2")
    assert not of(inspect(full)[0], "pcie_degraded")
    gpu = (
        "41:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
        "        Capabilities: [68] Express (v2) Endpoint, MSI 00\n"
        "                LnkCap: Port #0, Speed 32GT/s, Width x16, ASPM not supported\n"
        "                LnkSta: Speed 32GT/s, Width x1 (downgraded)\n"
    )
    findings, verdict = inspect(gpu)
    assert verdict == "unhealthy" and of(findings, "pcie_degraded")[0].class_ == "fatal"
