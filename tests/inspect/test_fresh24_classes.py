"""One test per class of evidence the twenty-fourth fresh first-contact corpus batch (tests/data/
corpus/fresh24, scored 14/17 on 2026-12-08 at 1826a30, tests/data/first_contact/
corpus_fresh24_2026-12-08.txt) found misread: the real lines (the case files), variants, and
negatives that must not be read the same way.

- 2605 (pastebin: a chained `echo ... && ibv_devinfo && ibstatus && ...` prompt, an echoed banner,
  then `ibv_devinfo` with its indentation lost): the tool's shape is read at any indentation when
  a `state: PORT_<WORD>` line stands beside its `hca_id:` and `port:` lines; a field's first
  value is kept. Without `-v`, a port in PORT_INIT / PORT_ARMED has its physical link up (IBA
  vol. 1 §7.2): port_down, not a cabling fault; PORT_DOWN leaves it unknown.
- 2607 (pastebin: `journalctl -b0 | grep '0b:00.0'`, a `<server_hostname>` placeholder and `#`
  comment lines): the kernel's PCIe bandwidth notice `... available PCIe bandwidth, limited by
  8 GT/s x4 link at 0000:00:03.2 (capable of ... x16 link)` had no reader at all (the log itself
  was read: 13 lines, neither the placeholder nor the comments were the cause). Fewer lanes than
  the device's capability is `pcie_degraded` warn; lanes held at a lower speed is `pcie_link`
  ok; the unlimited driver form is not read.
- 2611 (an issue comment: ibstat, mlx5_0 Active, mlx5_1 Down/Disabled, same CA type, LID 0):
  a spare is a strict minority of the node's ports (`port_spares`); one of two down is not, and
  is `unknown` (no_data) rather than fatal: fresh2 322 (one port of a dual-port HCA down, read
  [healthy, unknown]) shows the same lines for an adapter port left uncabled.
"""

from __future__ import annotations

from gpuslo.exporter.evidence.fabric.ibv_devinfo import looks_like_ibv_devinfo, parse_ibv_devinfo
from gpuslo.exporter.evidence.kernel_log.pcie_notice import bandwidth_notices
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log, inspect_kernel_log_file
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.inspect.registry import detect_kinds
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

FLAT_DEVINFO = corpus_case("fresh24", 2605)
GREP_JOURNAL = corpus_case("fresh24", 2607)
IBSTAT_ONE_DOWN = corpus_case("fresh24", 2611)


def oks(findings) -> list:
    return [f for f in findings if f.class_ == "ok"]


# --- 2605: ibv_devinfo with its indentation lost -------------------------------------------------


def test_flat_devinfo_behind_a_chained_prompt_reads_both_ports_down():
    assert looks_like_ibv_devinfo(FLAT_DEVINFO)
    findings, verdict = inspect(FLAT_DEVINFO)
    assert verdict == "unhealthy"
    down = {f.message.split(" is ")[0]: f for f in of(findings, "port_down")}
    assert set(down) == {"mthca0 port 1", "mthca0 port 2"}
    assert all(f.device == "mthca0" and f.class_ == "fatal" for f in down.values())
    # PORT_INIT: the link trained, no subnet manager activated it: not a cabling fault
    assert down["mthca0 port 1"].state == "Initializing"
    assert down["mthca0 port 1"].physical_state == "LinkUp"
    assert down["mthca0 port 1"].action == "none"
    # PORT_DOWN without -v: the physical state is not shown
    assert down["mthca0 port 2"].physical_state == "unknown"
    assert down["mthca0 port 2"].action == "check_cabling"
    assert not oks(findings) and not [f for f in findings if f.class_ == "application"]


def test_flat_devinfo_reads_as_the_indented_output_does():
    lines = FLAT_DEVINFO.splitlines()[2:]  # from `hca_id:` on
    indented = "\n".join(
        line if line.startswith("hca_id") else ("\t\t" if not line.startswith("port:") else "\t")
        + line for line in lines)
    assert parse_ibv_devinfo("\n".join(lines)) == parse_ibv_devinfo(indented)


def test_unindented_port_lines_without_a_port_state_are_not_devinfo():
    config = "hca_id: mlx5_0\nport: 8080\nstate: running\nlink_layer: ethernet\n"
    assert not looks_like_ibv_devinfo(config)
    assert "ibv-devinfo" not in detect_kinds(config)


def test_a_later_commands_state_line_does_not_overwrite_the_ports():
    after = FLAT_DEVINFO + "Infiniband device 'mthca0' port 2 status:\nstate: 4: ACTIVE\n"
    ports = parse_ibv_devinfo(after)
    assert [(p.port, p.state) for p in ports] == [(1, "Initializing"), (2, "Down")]


def test_only_link_states_above_down_imply_the_physical_link_up():
    text = ("hca_id:\tmlx5_0\n\tport:\t1\n\t\tstate:\t\t\tPORT_ARMED (3)\n"
            "\tport:\t2\n\t\tstate:\t\t\tPORT_ACTIVE_DEFER (5)\n"
            "\tport:\t3\n\t\tstate:\t\t\tPORT_DOWN (1)\n")
    physical = [(p.state, p.physical_state) for p in parse_ibv_devinfo(text)]
    assert physical == [("Armed", "LinkUp"), ("ActiveDefer", ""), ("Down", "")]


# --- 2607: the kernel's PCIe bandwidth notice ---------------------------------------------------


def _degraded(findings) -> list:
    return of(findings, "pcie_degraded")


def test_grep_of_a_journal_gives_the_narrow_gpu_link_as_a_warning():
    findings, verdict = inspect(GREP_JOURNAL)
    (found,) = _degraded(findings)
    assert found.pci == "00000000:0B:00.0" and found.class_ == "warn" and found.line == 11
    assert "limited by the 8 GT/s x4 link at 0000:00:03.2" in found.message
    assert verdict in ("healthy", "unknown") and not fatal(findings)
    assert not of(findings, "fallen_off_bus")


def test_the_file_scan_reads_the_notice_as_the_text_path_does(tmp_path):
    path = tmp_path / "journal.txt"
    path.write_text(GREP_JOURNAL)
    streamed = _degraded(inspect_kernel_log_file(str(path), InspectOptions()))
    whole = _degraded(inspect_kernel_log(GREP_JOURNAL, InspectOptions(), "f"))
    assert [(f.pci, f.class_, f.line) for f in streamed] == [(f.pci, f.class_, f.line)
                                                              for f in whole] == [
        ("00000000:0B:00.0", "warn", 11)]


def test_the_newer_kernels_notice_with_pcie_in_the_speed_reads_the_same():
    # fresh13 1508's line (a Thunderbolt enclosure), as the kernel prints it, unwrapped
    line = ("[    1.217000] pci 0000:2f:00.0: 8.000 Gb/s available PCIe bandwidth, limited by "
            "2.5 GT/s PCIe x4 link at 0000:05:04.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe "
            "x16 link)")
    (notice,) = bandwidth_notices([(1, line)])
    assert (notice.pci, notice.width, notice.width_cap, notice.speed_cap) == (
        "00000000:2F:00.0", 4, 16, 16.0)
    assert notice.at == "0000:05:04.0" and notice.narrower
    (found,) = _degraded(inspect_kernel_log(line + "\n", InspectOptions(), "f"))
    assert found.class_ == "warn"


def test_the_unlimited_driver_form_is_not_a_notice():
    # fresh5 622 (mlx5_core at probe): nothing is limited
    line = ("[   10.643346] mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth "
            "(8.0 GT/s PCIe x8 link)")
    assert bandwidth_notices([(1, line)]) == []
    findings = inspect_kernel_log(line + "\n", InspectOptions(), "f")
    assert not _degraded(findings) and not of(findings, "pcie_link")


def test_lanes_held_at_a_lower_speed_is_no_degradation():
    line = ("[    0.912345] pci 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by "
            "2.5 GT/s PCIe x16 link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe "
            "x16 link)")
    findings = inspect_kernel_log(line + "\n", InspectOptions(), "f")
    assert not _degraded(findings)
    (noted,) = of(findings, "pcie_link")
    assert noted.class_ == "ok" and noted.pci == "00000000:41:00.0"


# --- 2611: half a node's ports down is no spare --------------------------------------------------


def test_one_of_two_ports_disabled_is_no_spare():
    findings, verdict = inspect(IBSTAT_ONE_DOWN)
    assert verdict == "unknown"
    (down,) = of(findings, "port_down")
    assert (down.device, down.class_, down.physical_state) == ("mlx5_1", "unknown", "Disabled")
    assert down.reason == "no_data" and "not a minority, so not a spare" in down.message
    assert not of(findings, "port_down")[1:] and not [f for f in findings if f.class_ == "warn"]
    # with the devices expected it is judged: a lost path
    findings, verdict = inspect(IBSTAT_ONE_DOWN, expect_network_devices=("mlx5_0", "mlx5_1"))
    assert verdict == "unhealthy" and of(findings, "port_down")[0].class_ == "fatal"


def test_most_of_a_nodes_ports_down_stay_fatal():
    second = IBSTAT_ONE_DOWN.split("CA 'mlx5_1'")[1].replace("...\n", "")
    text = IBSTAT_ONE_DOWN.replace("...\n", "") + "CA 'mlx5_2'" + second.replace("de222d",
                                                                                  "de222f")
    findings, _ = inspect(text)
    assert [(f.device, f.class_) for f in of(findings, "port_down")] == [
        ("mlx5_1", "fatal"), ("mlx5_2", "fatal")]


def test_a_disabled_port_beside_two_active_ones_stays_a_spare():
    block = IBSTAT_ONE_DOWN.split("CA 'mlx5_1'")[0].replace("/export/home/me/mscclpp# ibstat\n", "")
    third = block.replace("mlx5_0", "mlx5_2").replace("de222c", "de222e")
    text = IBSTAT_ONE_DOWN.replace("...\n", "") + third
    findings, _ = inspect(text)
    (down,) = of(findings, "port_down")
    assert (down.device, down.class_) == ("mlx5_1", "warn") and "spare port" in down.message
