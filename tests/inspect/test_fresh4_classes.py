"""One test per class of evidence the fourth fresh first-contact batch (tests/data/corpus/fresh4,
scored 21/32 on 2026-12-06 at 0dba1ce) found misread: the real excerpt (the case file itself), a
hand-varied variant that is not the case's text, and a negative that must not be read the same
way."""

from __future__ import annotations

from gpuslo.exporter.evidence.slurm import gres_shortfall, parse_nodes_text
from gpuslo.exporter.inspect.split import without_prompt
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of, per_model

UUID = "GPU-1b2c3d4e-0001-4e5f-8a9b-00000000a001"


def case(number: int) -> str:
    return corpus_case("fresh4", number)


# --- (a) driver/library mismatch in every framing: one signal, driver_mismatch ---

NVML_MISMATCH = "Failed to initialize NVML: Driver/library version mismatch"


def test_nvml_mismatch_under_a_prompt_then_another_command():
    findings, verdict = inspect(case(512))
    (mismatch,) = of(findings, "driver_mismatch")
    assert mismatch.line == 2 and verdict == "unhealthy"
    assert of(findings, "nothing_recognised")  # the squeue table is named, not dropped
    text = f"user@n1:~$ nvidia-smi -q\n{NVML_MISMATCH}\nuser@n1:~$ uptime\n 10:00:01 up 3 days\n"
    findings, verdict = inspect(text)
    assert of(findings, "driver_mismatch") and verdict == "unhealthy"


def test_nvml_mismatch_under_the_command_without_a_prompt():
    findings, verdict = inspect(case(521))
    (mismatch,) = of(findings, "driver_mismatch")
    assert mismatch.extra["nvml_version"] == "570.124" and verdict == "unhealthy"
    findings, _ = inspect(f"/usr/bin/nvidia-smi --query-gpu=index --format=csv\n{NVML_MISMATCH}\n")
    assert of(findings, "driver_mismatch")


def test_kernel_api_mismatch_is_driver_mismatch_in_every_framing():
    for number, events in ((517, 1), (518, 3), (522, 1)):
        findings, verdict = inspect(case(number))
        (mismatch,) = of(findings, "driver_mismatch")
        assert mismatch.events == events and mismatch.class_ == "fatal", number
        assert verdict == "unhealthy"
    text = (
        "2025-01-02T03:04:05.000000+00:00 node-01 kernel: NVRM: API mismatch: the client has "
        "the version 550.54.15, but\n"
        "2025-01-02T03:04:05.000000+00:00 node-01 kernel: NVRM: this kernel module has the "
        "version 550.54.14.  Please\n"
    )
    findings, _ = inspect(text)
    assert len(of(findings, "driver_mismatch")) == 1


def test_other_driver_messages_are_not_a_mismatch():
    text = "[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n"
    findings, verdict = inspect(text)
    assert not of(findings, "driver_mismatch") and verdict == "unhealthy"


# --- (b) a tool that itself failed: source_unavailable, never a GPU or port verdict ---


def test_ibstatus_fatal_error_is_the_tool_failing():
    findings, verdict = inspect(case(506))
    (failed,) = of(findings, "source_unavailable")
    assert failed.kind == "ibstatus" and verdict == "unknown" and not of(findings, "ports_active")
    text = (
        "Fatal error:  device 'mlx5_3': sys files not found "
        "(/sys/class/infiniband/mlx5_3/ports)\n"
    )
    findings, verdict = inspect(text, expect_network_devices=("mlx5_3",))
    assert of(findings, "source_unavailable") and verdict == "unknown"
    assert of(findings, "device_unreadable")[0].device == "mlx5_3"
    findings, verdict = inspect("Fatal error:  No devices\n", expect_network_devices=2)
    assert of(findings, "network_devices_missing") and verdict == "unhealthy"


def test_ibstatus_ports_are_not_a_tool_failure():
    text = (
        "Infiniband device 'mlx5_0' port 1 status:\n\tstate:\t\t 4: ACTIVE\n"
        "\tphys state:\t 5: LinkUp\n\trate:\t\t 200 Gb/sec (4X HDR)\n\tlink_layer:\t InfiniBand\n"
    )
    findings, verdict = inspect(text)
    assert not of(findings, "source_unavailable") and verdict == "healthy"


def test_script_exporter_whose_host_engine_failed_is_source_unavailable():
    findings, verdict = inspect(case(516))
    (failed,) = of(findings, "source_unavailable")
    assert failed.kind == "dcgm-exporter-log" and verdict == "unknown" and not fatal(findings)
    text = (
        "Starting NVIDIA host engine...\nErr: Failed to start DCGM Server: -7\n"
        "Collecting metrics at /run/prometheus/dcgm.prom every 1000ms...\n"
    )
    findings, _ = inspect(text)
    assert of(findings, "source_unavailable")


def test_script_exporter_collecting_is_no_failure():
    text = (
        "Starting NVIDIA host engine...\n"
        "Collecting metrics at /run/prometheus/dcgm.prom every 1000ms...\n"
    )
    findings, verdict = inspect(text)
    assert not of(findings, "source_unavailable") and verdict == "unknown"


# --- (c) the Kubernetes device plugin withdrawing a GPU on a critical Xid ---


def test_device_plugin_xid_and_unhealthy_device():
    findings, verdict = inspect(case(505))
    (xid,) = [f for f in findings if f.xid == 69]
    assert xid.uuid == "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8"
    assert xid.kind == "device-plugin-log"
    (withdrawn,) = of(findings, "device_plugin_unhealthy")
    assert withdrawn.events == 2 and verdict == "unknown"
    text = (
        f"I0101 10:00:00.000000       1 health.go:160] XidCriticalError: Xid=79 on Device={UUID}; "
        "marking device as unhealthy.\n"
    )
    findings, verdict = inspect(text)
    assert [f.xid for f in fatal(findings)] == [79] and verdict == "unhealthy"


def test_device_plugin_start_up_log_withdraws_nothing():
    text = (
        "2020/08/10 19:00:00 Loading NVML\n2020/08/10 19:00:00 Starting FS watcher.\n"
        "2020/08/10 19:00:00 Registered device plugin with Kubelet\n"
    )
    findings, verdict = inspect(text)
    assert not [f for f in findings if f.xid] and verdict == "unknown"


# --- (d) Slurm: slurmd found fewer GPUs than slurm.conf gives the node ---


def test_slurm_gres_gpu_shortfall_is_gpu_missing():
    findings, verdict = inspect(case(507))
    (missing,) = of(findings, "gpu_missing")
    assert missing.count == 1 and missing.extra["node"] == "node-01" and verdict == "unhealthy"
    text = (
        "NodeName=gpu07 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:8 "
        "State=DOWN+DRAIN+INVALID_REG Reason=gres/gpu count reported lower than configured "
        "(6 < 8) [slurm@2026-01-01T00:00:00]\n"
    )
    findings, _ = inspect(text)
    assert of(findings, "gpu_missing")[0].count == 2


def test_slurm_other_reasons_are_no_gpu_missing():
    text = (
        "NodeName=gpu07 Arch=x86_64 CPUAlloc=0 CPUTot=64 State=IDLE+DRAIN "
        "Reason=Kill task failed [root@2026-01-01T00:00:00]\n"
        "NodeName=gpu08 Arch=x86_64 CPUAlloc=0 CPUTot=64 State=IDLE+DRAIN "
        "Reason=gres/mps count reported lower than configured (0 < 100)\n"
    )
    assert [node.name for node in parse_nodes_text(text)] == ["gpu07", "gpu08"]
    findings, verdict = inspect(text)
    assert not of(findings, "gpu_missing") and verdict == "unknown"
    assert gres_shortfall("gres/gpu:a100 count too low (0 < 4)") == ("gpu", 0, 4)


# --- (e) nvidia-smi -L: MIG devices are instances of the GPU above them, not GPUs ---


def test_gpu_list_with_mig_devices_under_a_bare_command():
    findings, verdict = inspect(case(519))
    assert [f.count for f in per_model(findings)] == [4] and verdict == "healthy"
    text = (
        f"$ nvidia-smi -L\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: {UUID})\n"
        "  MIG 3g.40gb     Device  0: (UUID: MIG-5a1b2c3d-0001-4e5f-8a9b-00000000b001)\n"
        "  MIG 3g.40gb     Device  1: (UUID: MIG-5a1b2c3d-0001-4e5f-8a9b-00000000b002)\n"
    )
    findings, verdict = inspect(text)
    assert [f.count for f in of(findings, "gpus_seen")] == [1] and verdict == "healthy"


def test_a_bare_command_is_skipped_but_other_first_lines_are_not():
    assert without_prompt("nvidia-smi -L\nGPU 0: X\n") == "\nGPU 0: X\n"
    assert without_prompt("nvidia-smi: command not found\n") is None
    assert without_prompt("GPU 0: X\n") is None


# --- (f) `--query-gpu` CSV without a header: the pasted command names the columns ---


def test_headerless_csv_read_by_the_command_above_it():
    findings, verdict = inspect(case(528))
    (seen,) = of(findings, "gpus_seen")
    assert seen.extra["model"] == "Tesla PG500-216" and verdict == "healthy"
    text = (
        "# nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total "
        "--format=csv,noheader\n0, 0\n1, 12\n"
    )
    findings, verdict = inspect(text)
    assert [f.gpu for f in of(findings, "ecc_uncorrectable")] == ["1"] and verdict == "unhealthy"


def test_headerless_csv_without_the_command_stays_unread():
    findings, verdict = inspect("Tesla PG500-216, 32768 MiB, 0x1DF010DE\n")
    assert not of(findings, "gpus_seen") and verdict == "unknown"
