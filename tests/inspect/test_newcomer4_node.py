"""Round-14 newcomer's node evidence (tests/data/newcomer4_node, real public excerpts: see its
SOURCES.md), each a general rule with a negative.

2. A `nvidia-smi -q` report CUT before its fault sections (the leading sections of the full report
   in NVIDIA's fixed order, then nothing) is unknown naming where it stops; a FILTERED one
   (`-q -d ECC`, `-q -d CLOCK`) or a whole one is judged on what it shows.
11. Every InfiniBand port state ibstat prints is read with the IBA spec's meaning, also when a
   paste lost the indentation: `State: Initializing` with `Physical state: LinkUp` is a port no
   subnet manager has configured (not usable), as the live sysfs check reads `2: INIT`.
13. A `dcgmi diag` Fail whose only text is CUDA finding the GPU "busy or unavailable" is a test
   that did not run (unknown, action none), in `inspect` and in the live `dcgm_diag` validator;
   a Fail with a defect in its text stays fatal.
12. A GPU far hotter than its peers of the same model while drawing no more power, past none of
   NVIDIA's documented limits (the table shows neither slowdown temperature nor clock-event
   reasons), is a note (`temperature_outlier`, class ok), never unhealthy; a GPU hotter because
   it works harder is none. The table's temperature and power are read with a fan of `N/A`.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.dcgm_diag import judge_gpu
from gpuslo.exporter.checks.network_links import NetworkLinksCheck
from gpuslo.exporter.evidence.dcgm.diag import parse_diag
from gpuslo.exporter.policy.diagnostics import diag_findings
from tests.inspect.corpus_classes import inspect, of

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "newcomer4_node"
H200_Q = ROOT.parent.parent / "shared" / "fixtures" / "h200" / "nvidia-smi-q.txt"
CORPUS = ROOT / "data" / "corpus"
SYSFS = ROOT / "fixtures" / "sysfs"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _inspect(text: str, name: str, **options):
    """(verdict, findings), the order these tests unpack (`name` only labels the excerpt)."""
    findings, verdict = inspect(text, **options)
    return verdict, findings


# --- 2. nvidia-smi -q cut before the fault sections ----------------------------------------------


def test_q_report_cut_before_its_fault_sections_is_unknown_naming_where_it_stops():
    verdict, findings = _inspect(_read("n12_netdata4892_nvidia_smi_a_fragment.txt"), "q.txt")
    (cut,) = [f for f in findings if f.class_ == "unknown"]
    assert verdict == "unknown"
    assert cut.signal == "gpu_error" and cut.line == 32 and cut.pci == "00000000:01:00.0"
    assert "gpu operation mode / current" in cut.message and "ECC Errors" in cut.message
    assert not of(findings, "health_fields_not_shown")
    # the same paste from the GPU's header on, without nvidia-smi's node header: still a cut
    text = _read("n12_netdata4892_nvidia_smi_a_fragment.txt")
    block = text[text.index("GPU 00000000:01:00.0"):]
    assert _inspect(block, "q.txt")[0] == "unknown"


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
    assert verdict == "healthy" and of(findings, "health_fields_not_shown")
    # line ranges a reader joined (identity fields skipped, then PCI .. Utilization): an excerpt
    joined = next((CORPUS / "fresh" / "cases").glob("210_nvidia-smi-q-*"))
    verdict, findings = _inspect(joined.read_text(), "q.txt")
    assert verdict == "healthy" and not [f for f in findings if f.class_ == "unknown"]


# --- 11. ibstat port states, flattened indentation ------------------------------------------------


def test_flattened_ibstat_initializing_port_is_down_with_its_meaning():
    verdict, findings = _inspect(_read("n11_azhpc59_ibstat_initializing.txt"), "ibstat.txt")
    (down,) = of(findings, "port_down")
    assert verdict == "unhealthy" and down.device == "mlx5_ib0"
    assert down.class_ == "fatal" and down.action == "none"  # a link up: not a cabling fault
    assert "Initializing" in down.message and "no subnet manager has configured" in down.message
    assert "no state shown" not in " ".join(f.message for f in findings)
    (lost,) = of(findings, "device_unreadable")  # the ibpanic line: mlx5_an0 not read
    assert lost.device == "mlx5_an0"


def test_flattened_ibstat_active_linkup_port_is_active():
    text = _read("n11_azhpc59_ibstat_initializing.txt").replace(
        "State: Initializing", "State: Active")
    findings = _inspect(text, "ibstat.txt")[1]
    (active,) = of(findings, "port_active")
    assert active.device == "mlx5_ib0" and not of(findings, "port_down")


def test_every_spec_state_reads_not_usable_with_its_meaning():
    text = _read("n11_azhpc59_ibstat_initializing.txt")
    for state, physical, said in (("Armed", "LinkUp", "not yet activated"),
                                  ("Down", "Polling", "no cable"),
                                  ("Down", "Disabled", "switched off"),
                                  ("Down", "LinkErrorRecovery", "recovering from link errors")):
        changed = text.replace("State: Initializing", f"State: {state}").replace(
            "Physical state: LinkUp", f"Physical state: {physical}")
        (down,) = of(_inspect(changed, "ibstat.txt")[1], "port_down")
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


# --- 13. dcgmi diag: a test that could not run on a busy GPU -------------------------------------

DIAG = "n09_godcgm52_diag_fragment.txt"


def test_diag_fail_that_is_only_a_busy_gpu_is_a_test_that_did_not_run():
    verdict, findings = _inspect(_read(DIAG), "diag.txt")
    memory = {f.gpu: f for f in of(findings, "diagnostic_result") if "GPU Memory" in f.message}
    assert verdict == "unknown"
    assert memory["0"].class_ == "unknown" and memory["0"].reason == "tool_error"
    assert memory["0"].action == "none" and "did not run" in memory["0"].message
    assert memory["1"].class_ == "ok"
    assert not [f for f in findings if f.class_ == "fatal"]


def test_live_diag_validator_reads_the_busy_gpu_the_same():
    results = parse_diag(_read(DIAG), "dcgmi diag -r 2")
    gpu0, gpu1 = (judge_gpu(i, f"GPU-{i}", results, "dcgmi") for i in ("0", "1"))
    assert (gpu0.status, gpu0.reason, gpu0.action) == ("unknown", "tool_error", "none")
    assert "did not run" in gpu0.message and gpu1.status == "ok"


def test_diag_fail_with_a_defect_beside_or_instead_of_the_busy_text_stays_fatal():
    results = parse_diag(_read(DIAG), "dcgmi diag -r 2")
    (fail,) = [r for r in results if r.status == "Fail"]
    (busy,) = fail.messages
    for messages in (
        (busy, "GPU 0 Memory test found 2 uncorrectable errors"),  # a defect beside it
        (busy.replace("busy or unavailable", "out of memory"),),  # another CUDA failure
        (busy + " The GPU has fallen off the bus.",),  # a fatal-class word in the same text
    ):
        changed = [replace(r, messages=messages) if r is fail else r for r in results]
        judged = judge_gpu("0", "GPU-0", changed, "dcgmi")
        assert (judged.status, judged.reason) == ("fail", "diagnostic_failed"), messages
        (finding,) = [f for f in diag_findings("dcgmi", changed) if f.class_ == "fatal"]
        assert finding.gpu == "0" and finding.action == "reset_gpu"


# --- 12. a thermal outlier in the table --------------------------------------------------------

TABLE = "n13_openfold_h100_smi_table_hot_gpu6.txt"
HOT_ROW = "| N/A   86C    P0            226W /  700W |"


def test_table_reads_temperature_and_power_when_the_fan_is_na():
    from gpuslo.exporter.evidence.nvidia_smi.table import parse_table

    gpus = parse_table(_read(TABLE), "t.txt").gpus
    assert [g.status.temperature_c for g in gpus] == [41, 37, 36, 38, 39, 36, 86, 37]
    assert [g.status.power_draw_w for g in gpus] == [362, 346, 330, 349, 334, 335, 226, 353]


def test_gpu_hotter_than_its_peers_with_less_power_is_a_note_not_a_fault():
    verdict, findings = _inspect(_read(TABLE), "smi.txt")
    (note,) = of(findings, "temperature_outlier")
    assert verdict == "healthy" and note.class_ == "ok"
    assert note.gpu == "6" and note.pci == "00000000:CB:00.0"
    assert "86 C" in note.message and "226 W" in note.message and "median 37 C" in note.message
    assert "no slowdown temperature or clock-event reason shown" in note.message


def test_gpu_hotter_because_it_draws_more_power_is_no_outlier():
    busy = _read(TABLE).replace(HOT_ROW, "| N/A   86C    P0            690W /  700W |")
    assert HOT_ROW in _read(TABLE) and not of(_inspect(busy, "smi.txt")[1], "temperature_outlier")
    # a cooler spread (GPU 6 at 55 C: 18 C over the median) is no outlier either
    mild = _read(TABLE).replace(HOT_ROW, "| N/A   55C    P0            226W /  700W |")
    assert not of(_inspect(mild, "smi.txt")[1], "temperature_outlier")
    # an idle GPU still warm (50 C, 22 W) beside idle (~30 C) and busy (74 C, 400+ W) ones of
    # its model: compared with those as busy or busier, it is no outlier (corpus fresh8 1002)
    mixed = next((CORPUS / "fresh8" / "cases").glob("1002_nvidia-smi-q-*")).read_text()
    assert not of(_inspect(mixed, "q.txt")[1], "temperature_outlier")


def test_outlier_past_its_slowdown_temperature_is_the_limit_finding_not_a_note():
    from gpuslo.exporter.evidence.gpu_status import GpuStatus
    from gpuslo.exporter.policy.gpu import evaluate_gpu
    from gpuslo.exporter.policy.temperature_peers import temperature_outliers

    peers = [GpuStatus(index=str(i), model="H100", temperature_c=37.0, power_draw_w=346.0)
             for i in (0, 1, 2, 3, 4, 5, 7)]
    hot = GpuStatus(index="6", model="H100", temperature_c=86.0, power_draw_w=226.0,
                    slowdown_temperature_c=85.0)
    assert not temperature_outliers("k", [*peers, hot], lambda s: {"gpu": s.index})
    (limit,) = [p for p in evaluate_gpu(hot)]
    assert limit.finding("k").class_ == "warn"  # at its slowdown threshold: NVIDIA's limit
    below = GpuStatus(index="6", model="H100", temperature_c=86.0, power_draw_w=226.0,
                      slowdown_temperature_c=90.0)
    (note,) = temperature_outliers("k", [*peers, below], lambda s: {"gpu": s.index})
    assert note.class_ == "ok" and "below its slowdown temperature 90 C" in note.message


def test_outlier_counts_each_gpu_once_and_only_within_one_node():
    from gpuslo.exporter.evidence.nvidia_smi.table import parse_table
    from gpuslo.exporter.policy.temperature_peers import MAX_GPUS, temperature_outliers

    statuses = [g.status for g in parse_table(_read(TABLE), "t.txt").gpus]
    where = lambda s: {"gpu": s.index}  # noqa: E731
    (note,) = temperature_outliers("k", statuses * 3, where)  # `nvidia-smi -l`: three samples
    assert note.gpu == "6" and "7 NVIDIA H100" in note.message
    many = [replace(s, pci_bus_id=f"{n:08X}:01:00.0", uuid=None) for n, s in
            enumerate(statuses * (MAX_GPUS // 8 + 1))]
    assert len(many) > MAX_GPUS and not temperature_outliers("k", many, where)
