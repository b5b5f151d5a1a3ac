"""Round-14 newcomer's node evidence (tests/data/newcomer4_node, real public excerpts: see its
SOURCES.md), each a general rule with a negative.

2. A `nvidia-smi -q` report CUT before its fault sections (the leading sections of the full report
   in NVIDIA's fixed order, then nothing) is unknown naming where it stops; a FILTERED one
   (`-q -d ECC`, `-q -d CLOCK`) or a whole one is judged on what it shows.
11. Every InfiniBand port state ibstat prints is read with the IBA spec's meaning, also when a
   paste lost the indentation: `State: Initializing` with `Physical state: LinkUp` is a port no
   subnet manager has configured (not usable), as the live sysfs check reads `2: INIT`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.network_links import NetworkLinksCheck
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "newcomer4_node"
H200_Q = ROOT.parent.parent / "shared" / "fixtures" / "h200" / "nvidia-smi-q.txt"
CORPUS = ROOT / "data" / "corpus"
SYSFS = ROOT / "fixtures" / "sysfs"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _inspect(text: str, name: str, **options):
    findings = inspect_text(text, name, InspectOptions(**options))
    return verdict_from_findings(findings), findings


def _of(findings, signal):
    return [f for f in findings if f.signal == signal]


# --- 2. nvidia-smi -q cut before the fault sections ----------------------------------------------


def test_q_report_cut_before_its_fault_sections_is_unknown_naming_where_it_stops():
    verdict, findings = _inspect(_read("n12_netdata4892_nvidia_smi_a_fragment.txt"), "q.txt")
    (cut,) = [f for f in findings if f.class_ == "unknown"]
    assert verdict == "unknown"
    assert cut.signal == "gpu_error" and cut.line == 32 and cut.pci == "00000000:01:00.0"
    assert "gpu operation mode / current" in cut.message and "ECC Errors" in cut.message
    assert not _of(findings, "health_fields_not_shown")


def test_q_report_cut_in_the_last_of_several_gpus_names_that_gpu():
    whole = H200_Q.read_text().splitlines()
    header = whole.index("GPU 00000000:00:06.0")
    stop = next(i for i, line in enumerate(whole) if line.startswith("    PCI"))
    text = "\n".join(whole[: stop + 3]) + "\n"  # stops three lines into the PCI section
    verdict, findings = _inspect(text, "q.txt")
    (cut,) = [f for f in findings if f.class_ == "unknown"]
    assert verdict == "unknown" and cut.line == stop + 3 and "pci / device" in cut.message
    assert header < stop


def test_whole_filtered_and_excerpted_q_outputs_are_judged_on_what_they_show():
    whole = H200_Q.read_text()
    assert _inspect(whole, "q.txt")[0] == "healthy"
    ecc = next((CORPUS / "fresh" / "cases").glob("234_nvidia-smi-q-d-ecc-*"))
    assert _inspect(ecc.read_text(), "q.txt")[0] == "healthy"
    # `-q -d CLOCK`: the header, then only the clock sections (the real lines of the H200 report)
    lines = whole.splitlines()
    start = lines.index("    Clocks")
    end = next(i for i, line in enumerate(lines) if line.startswith("    Fabric"))
    clock = "\n".join([*lines[: lines.index("GPU 00000000:00:06.0") + 1], *lines[start:end]])
    verdict, findings = _inspect(clock + "\n", "q.txt")
    assert verdict == "healthy" and _of(findings, "health_fields_not_shown")
    # line ranges a reader joined (identity fields skipped, then PCI .. Utilization): an excerpt
    joined = next((CORPUS / "fresh" / "cases").glob("210_nvidia-smi-q-*"))
    verdict, findings = _inspect(joined.read_text(), "q.txt")
    assert verdict == "healthy" and not [f for f in findings if f.class_ == "unknown"]


# --- 11. ibstat port states, flattened indentation ------------------------------------------------


def test_flattened_ibstat_initializing_port_is_down_with_its_meaning():
    verdict, findings = _inspect(_read("n11_azhpc59_ibstat_initializing.txt"), "ibstat.txt")
    (down,) = _of(findings, "port_down")
    assert verdict == "unhealthy" and down.device == "mlx5_ib0"
    assert down.class_ == "fatal" and down.action == "none"  # a link up: not a cabling fault
    assert "Initializing" in down.message and "no subnet manager has configured" in down.message
    assert "no state shown" not in " ".join(f.message for f in findings)
    (lost,) = _of(findings, "device_unreadable")  # the ibpanic line: mlx5_an0 not read
    assert lost.device == "mlx5_an0"


def test_flattened_ibstat_active_linkup_port_is_active():
    text = _read("n11_azhpc59_ibstat_initializing.txt").replace(
        "State: Initializing", "State: Active")
    findings = _inspect(text, "ibstat.txt")[1]
    (active,) = _of(findings, "port_active")
    assert active.device == "mlx5_ib0" and not _of(findings, "port_down")


def test_every_spec_state_reads_not_usable_with_its_meaning():
    text = _read("n11_azhpc59_ibstat_initializing.txt")
    for state, physical, said in (("Armed", "LinkUp", "not yet activated"),
                                  ("Down", "Polling", "no cable"),
                                  ("Down", "Disabled", "switched off"),
                                  ("Down", "LinkErrorRecovery", "recovering from link errors")):
        changed = text.replace("State: Initializing", f"State: {state}").replace(
            "Physical state: LinkUp", f"Physical state: {physical}")
        (down,) = _of(_inspect(changed, "ibstat.txt")[1], "port_down")
        assert said in down.message and down.message.endswith(
            ("not usable", "(not a cabling fault)")), down.message


def test_live_check_reads_sysfs_init_as_the_same_down_port(tmp_path):
    tree = tmp_path / "sysfs"
    shutil.copytree(SYSFS / "infiniband-healthy", tree, symlinks=True)
    port = tree / "class" / "infiniband" / "mlx5_2" / "ports" / "1"
    (port / "state").write_text("2: INIT\n")
    (port / "phys_state").write_text("5: LinkUp\n")
    ctx = CheckContext(sysfs=tree, state_dir=tmp_path, clock=lambda: 1_700_000_000.0)
    results = {r.scope: r for r in NetworkLinksCheck().run(ctx).results}
    bad = results["mlx5_2"]
    assert (bad.status, bad.reason, bad.action) == ("fail", "network_port_down", "none")
    assert "Initializing" in bad.message and "no subnet manager has configured" in bad.message
    assert results["mlx5_0"].status == "ok"
