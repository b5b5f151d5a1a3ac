"""`ibv_devinfo`'s own failures are answers, never healthy (issue 24): a device list it could not
get is `source_unavailable`, `No IB devices found` is 0 devices (fatal when devices are expected),
a device it could not open is `device_unreadable`. The outputs are real
(tests/fixtures/ibv_devinfo/README.md names each source); the negatives are a real libibverbs
warning beside a readable device, and another program's log line that says `No IB devices found`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo import names
from gpuslo.exporter.evidence.fabric.ibv_devinfo import devinfo_failures, looks_like_ibv_devinfo
from gpuslo.exporter.inspect.fabric import inspect_ibv_devinfo
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ibv_devinfo"
LIST_FAILED = (FIXTURES / "list-failed-lite5.txt").read_text()
NO_DEVICES = (FIXTURES / "no-devices-pib2.txt").read_text()
VFS = (FIXTURES / "open-failed-vfs-rdma-plugin8.txt").read_text()
OPEN_FAILED = (FIXTURES / "open-failed-ntb-cxl90.txt").read_text()
# NVIDIA/nccl#1044 (2023-10-30): a provider library for other hardware is missing.
LOAD_WARNING = ("libibverbs: Warning: couldn't load driver 'libipathverbs-rdmav25.so': "
                "libipathverbs-rdmav25.so: cannot open shared object file: No such file or "
                "directory\n")
READABLE = "".join(line + "\n" for line in VFS.splitlines() if line != "Failed to open device")


def found(text: str, **options) -> list:
    """(class, signal, device) of each finding `inspect` gives the text, detected as a new user
    would meet it (no --kind)."""
    return [(f.class_, f.signal, f.device)
            for f in inspect_text(text, "ibv_devinfo.txt", InspectOptions(**options), None)]


@pytest.mark.parametrize("text", [LIST_FAILED, NO_DEVICES, VFS, OPEN_FAILED],
                         ids=["list-failed", "no-devices", "vfs", "open-failed"])
def test_every_failure_form_is_read_as_ibv_devinfo_and_never_healthy(text):
    assert looks_like_ibv_devinfo(text)
    findings = inspect_ibv_devinfo(text, InspectOptions(), "x")
    assert findings and any(f.class_ == names.CLASS_UNKNOWN for f in findings)


def test_a_device_list_it_could_not_get_is_the_tool_failing_and_expected_devices_missing():
    assert found(LIST_FAILED) == [(names.CLASS_UNKNOWN, "source_unavailable", None)]
    assert found(LIST_FAILED, expect_network_devices=8) == [
        (names.CLASS_UNKNOWN, "source_unavailable", None),
        (names.CLASS_FATAL, "network_devices_missing", None)]
    assert found(LIST_FAILED, expect_efa_devices=4)[1] == (
        names.CLASS_FATAL, "network_devices_missing", None)


def test_no_ib_devices_found_is_zero_devices_named_by_the_warnings_that_explain_it():
    assert found(NO_DEVICES) == [
        (names.CLASS_UNKNOWN, "network_devices", None),
        (names.CLASS_UNKNOWN, "device_unreadable", "uverbs0"),
        (names.CLASS_UNKNOWN, "device_unreadable", "uverbs1")]
    expected = found(NO_DEVICES, expect_network_devices=2)
    assert (names.CLASS_FATAL, "network_devices_missing", None) in expected
    assert devinfo_failures(NO_DEVICES).warned == ("uverbs1", "uverbs0")


def test_devices_it_could_not_open_are_unreadable_beside_the_one_it_read():
    findings = inspect_ibv_devinfo(VFS, InspectOptions(), "x")
    (unread,) = [f for f in findings if f.signal == "device_unreadable"]
    assert (unread.class_, unread.reason, unread.events) == (
        names.CLASS_UNKNOWN, "tool_error", 8)
    assert {f.signal for f in findings if f.class_ == names.CLASS_OK} == {
        "port_active", "ports_active"}
    assert found(OPEN_FAILED) == [(names.CLASS_UNKNOWN, "device_unreadable", None)]


def test_a_device_named_with_d_that_was_not_found_is_missing():
    text = "# ibv_devinfo -d mlx5_3\nIB device 'mlx5_3' wasn't found\n"
    assert found(text) == [(names.CLASS_FATAL, "network_devices_missing", "mlx5_3")]


def test_a_provider_warning_beside_a_readable_device_stays_healthy():
    """The negative: a `couldn't load driver` warning names no device and is no failure."""
    text = LOAD_WARNING + READABLE
    assert not devinfo_failures(text).any
    assert {c for c, _, _ in found(text)} == {names.CLASS_OK}


def test_another_programs_no_ib_devices_line_is_not_ibv_devinfo():
    """The negative: Mooncake's log (kvcache-ai/Mooncake#105, 2025-02-15) says it with a glog
    prefix; a warning alone is no failure either."""
    assert not looks_like_ibv_devinfo(
        "W0214 16:46:52.014591 171152 topology.cpp:53] No IB devices found\n"
        "I0214 16:46:53.058771 171152 transfer_engine_bench.cpp:346] numa node num: 2\n")
    assert not looks_like_ibv_devinfo(LOAD_WARNING)
