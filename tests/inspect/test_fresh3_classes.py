"""One test per class of evidence the third fresh first-contact batch (tests/data/corpus/fresh3,
scored 25/31 on 2026-12-05) found misread: the real excerpt (the case file itself), a hand-varied
variant that is not the case's text, and a negative that must not be read the same way."""

from __future__ import annotations

from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of


def case(number: int) -> str:
    return corpus_case("fresh3", number)


# --- (a) dcgmi diag: a deployment check of the node's set-up failing is not a GPU fault ---

DIAG_ENV = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
| NVML Library              | Pass                                           |
| CUDA Main Library         | Pass                                           |
| Permissions and OS Blocks | Pass                                           |
| Persistence Mode          | Pass                                           |
| Environment Variables     | Fail                                           |
| Error                     | Found CUDA performance-limiting environment va |
|                           | riable 'CUDA_LAUNCH_BLOCKING'.                 |
| Page Retirement/Row Remap | Pass                                           |
| Graphics Processes        | Pass                                           |
| Inforom                   | Pass                                           |
+---------------------------+------------------------------------------------+
"""


def test_deployment_setup_fail_is_not_a_gpu_fault():
    findings, verdict = inspect(case(405), "dcgmi")
    assert not fatal(findings) and verdict == "unknown"
    findings, verdict = inspect(DIAG_ENV, "dcgmi")
    assert not fatal(findings) and verdict == "unknown"
    (failed,) = [f for f in findings if f.extra.get("status") == "Fail"]
    assert (failed.class_, failed.reason) == ("unknown", "tool_error")


def test_deployment_gpu_check_fail_stays_fatal():
    # Page retirement and graphics processes are about the GPU itself: still a failed GPU.
    text = DIAG_ENV.replace("Environment Variables     | Fail", "Environment Variables     | Pass")
    text = text.replace("Page Retirement/Row Remap | Pass", "Page Retirement/Row Remap | Fail")
    findings, verdict = inspect(text, "dcgmi")
    assert [f.extra["test"] for f in fatal(findings)] == ["Page Retirement/Row Remap"]
    assert verdict == "unhealthy"


# --- (b) lspci: a GPU memory region left unassigned: the driver cannot map the GPU ---

LSPCI_UNASSIGNED = """\
0000:c1:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)
\tSubsystem: NVIDIA Corporation Device 1626
\tControl: I/O- Mem+ BusMaster- SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR+
\tRegion 0: Memory at e2000000 (32-bit, non-prefetchable) [size=16M]
\tRegion 1: Memory at <unassigned> (64-bit, prefetchable)
\tRegion 3: Memory at 23c0000000 (64-bit, prefetchable) [size=32M]
\tCapabilities: [78] Express (v2) Endpoint, MSI 00
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)
\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
"""

LSPCI_HARMLESS = """\
0000:c1:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)
\tRegion 0: Memory at e2000000 (32-bit, non-prefetchable) [size=16M]
\tRegion 1: Memory at 22000000000 (64-bit, prefetchable) [disabled] [size=128G]
\tRegion 3: Memory at 23c0000000 (64-bit, prefetchable) [size=32M]
\tRegion 5: I/O ports at <unassigned> [disabled]
\tExpansion ROM at <unassigned> [disabled]
\tCapabilities: [78] Express (v2) Endpoint, MSI 00
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported
\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)
0000:c2:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
\tRegion 0: Memory at <unassigned> (64-bit, prefetchable)
"""


def test_unassigned_gpu_memory_region_is_fatal():
    findings, verdict = inspect(case(410), "lspci")
    assert of(findings, "pcie_degraded") and verdict == "unhealthy"
    (bar,) = of(findings, "pcie_bar_unassigned")
    assert (bar.class_, bar.pci) == ("fatal", "00000002:21:00.0")
    findings, verdict = inspect(LSPCI_UNASSIGNED, "lspci")
    (bar,) = of(findings, "pcie_bar_unassigned")
    assert (bar.class_, bar.reason, bar.pci) == ("fatal", "gpu_init_failed", "00000000:C1:00.0")
    assert verdict == "unhealthy"


def test_unassigned_io_rom_or_other_device_is_not_judged():
    # An unassigned I/O port region or expansion ROM, a [disabled] region with an address, and
    # another vendor's unassigned BAR are no GPU fault.
    findings, verdict = inspect(LSPCI_HARMLESS, "lspci")
    assert not of(findings, "pcie_bar_unassigned") and not fatal(findings)
    assert verdict == "healthy"


# --- (c) dcgm-exporter: a bare non-zero `exit status` is the exporter dying ---

POD = "[pod/dcgm-exporter-q7k2p/nvidia-dcgm-exporter] "
EXPORTER_EXIT = (
    f'{POD}time=2026-03-09T08:01:12.004Z level=INFO msg="Starting dcgm-exporter" '
    "Version=4.5.2-4.8.1\n"
    f'{POD}time=2026-03-09T08:01:12.311Z level=INFO msg="Attempting to connect to remote '
    'hostengine at nv-hostengine:5555"\n'
    f"{POD}exit status 2\n"
)


def test_bare_exit_status_is_source_unavailable():
    for text in (case(419), EXPORTER_EXIT):
        findings, verdict = inspect(text, "dcgm-exporter-log")
        assert of(findings, "source_unavailable") and verdict == "unknown"
        assert not fatal(findings)


def test_exit_status_inside_a_message_or_zero_is_not_a_death():
    text = (
        'time=2026-03-09T08:01:12.004Z level=INFO msg="Starting dcgm-exporter"\n'
        'time=2026-03-09T08:01:12.200Z level=INFO msg="DCGM successfully initialized!"\n'
        'time=2026-03-09T08:01:12.400Z level=WARN msg="nvidia-smi probe: exit status 1" '
        "falling back to NVML\n"
        "exit status 0\n"
    )
    findings, _ = inspect(text, "dcgm-exporter-log")
    assert not of(findings, "source_unavailable")


# --- (d) fabric manager: a "GPU NVL Fatal error" record with its key : value lines ---

NVL_FATAL = """\
[Feb 02 2026 03:41:07] [INFO] [tid 3110] Received an inband message: Message header details
[Feb 02 2026 03:47:52] [ERROR] [tid 3127] Fabric Manager detected GPU NVL Fatal error on :
moduleId : 12
nodeId : 2
partitionId : 0
gpuGuid : 0x4B1C07D2E5A09F31
portNum : 17
portStatus : 1
errorCode : 0x03
errorSubcode : 0x01
portDownReasonCode : 0x05
isErrorFirst : 1
errorStatus : 0x00000020
"""


def test_gpu_nvl_fatal_record_is_one_fatal_event():
    for text in (case(425), NVL_FATAL):
        findings, verdict = inspect(text, "fabricmanager-log")
        (event,) = fatal(findings)
        assert (event.signal, event.events) == ("fabric_manager_error", 1)
        assert "gpuGuid=" in event.message and verdict == "unhealthy"
        assert not of(findings, "fabric_manager_not_applicable")
    (event,) = fatal(inspect(NVL_FATAL, "fabricmanager-log")[0])
    assert "0x4B1C07D2E5A09F31" in event.message and "portNum=17" in event.message


def test_gpu_nvl_non_fatal_record_is_not_fatal():
    text = NVL_FATAL.replace("GPU NVL Fatal error", "GPU NVL Non Fatal error")
    findings, verdict = inspect(text, "fabricmanager-log")
    assert not fatal(findings) and verdict == "healthy"
    (event,) = [f for f in findings if f.class_ == "warn"]
    assert event.events == 1


# --- (e) ibstatus: a disabled port beside active ones, no expectation: a spare, not fatal ---

IBSTATUS_SPARE = """\
Infiniband device 'mlx5_4' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:a088:c203:0041:7e10
\tbase lid:\t 0x21
\tsm lid:\t\t 0x1
\tstate:\t\t 4: ACTIVE
\tphys state:\t 5: LinkUp
\trate:\t\t 400 Gb/sec (4X NDR)
\tlink_layer:\t InfiniBand

Infiniband device 'mlx5_5' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:5e25:73ff:fe3a:11c2
\tbase lid:\t 0x0
\tsm lid:\t\t 0x0
\tstate:\t\t 1: DOWN
\tphys state:\t 3: Disabled
\trate:\t\t 40 Gb/sec (4X QDR)
\tlink_layer:\t Ethernet
"""


def test_disabled_port_beside_active_ones_is_a_spare():
    findings, verdict = inspect(case(427), "ibstatus")
    assert not fatal(findings) and verdict == "healthy"
    (down,) = of(findings, "port_down")
    assert down.class_ == "warn"
    # one of two ports down is no minority (fresh24 2611): no spare, no lost path shown
    findings, verdict = inspect(IBSTATUS_SPARE, "ibstatus")
    assert not fatal(findings) and verdict == "unknown"
    (down,) = of(findings, "port_down")
    assert (down.class_, down.reason) == ("unknown", "no_data")


def test_disabled_port_stays_fatal_when_expected_or_alone_or_polling():
    # Named in the expectation: judged; the only port, or none active: a lost path; Polling on
    # a one-port device: a link that tries to train (cabling), not a switched-off spare.
    findings, verdict = inspect(IBSTATUS_SPARE, "ibstatus",
                                expect_network_devices=("mlx5_4", "mlx5_5"))
    assert verdict == "unhealthy"
    alone = IBSTATUS_SPARE.split("\n\n")[1]
    assert inspect(alone, "ibstatus")[1] == "unhealthy"
    polling = IBSTATUS_SPARE.replace("3: Disabled", "2: Polling")
    findings, verdict = inspect(polling, "ibstatus")
    assert verdict == "unhealthy" and of(findings, "port_down")[0].class_ == "fatal"
