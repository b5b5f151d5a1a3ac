"""A logger's level is not a statement about a device (issue 24's device-and-severity fallback).

`level=fatal`, `FATA[0000]`, `[FATAL]`, a zap/slog `FATAL` column, `<3>` or a klog `F1205` prefix
say how a daemon logged a line; the fallback used to take `fatal` from `level=fatal` for a fatal
word about the GPU the message names (drain_and_reset on a GPU DCGM merely does not support).
The message's own words still fail closed, whatever level it was logged at; and a line the
dcgm-exporter-log reader reads (the exporter's death) is not judged again as an unknown message.

Real lines, each with its source:
- NVIDIA/DCGM#61 (2023-01-03, dcgm-exporter 3.1.3 on a V100 node, terminal form):
  `FATA[0000] Error adding GPU 1 to group: This GPU is not supported by DCGM`;
- NVIDIA/gpu-operator#107 (2020-11-24) and NVIDIA/gpu-monitoring-tools#141 (2020-12-15):
  dcgm-exporter's logrus key=value lines (`time="..." level=fatal msg="Error watching ..."`);
- NVIDIA/dcgm-exporter#148 (2023-08-01): `level=fatal msg="Failed to watch metrics: ... The
  third-party Profiling module returned an unrecoverable error"` (no device named);
- NVIDIA/gpu-operator#331 (2022-04-05, zap console) and NVIDIA/dcgm-exporter#473 (2025-04-02,
  dcgm-exporter 4.x slog text): the level-column forms;
- NVIDIA/k8s-device-plugin#231 (2021-03-05): `Unable to determine the device handle for GPU
  0000:C1:00.0: GPU is lost.  Reboot the system to recover this GPU` (nvidia-smi's words), and
  NVIDIA/NVSentinel#155 (2025-10-25): `NVRM: The NVIDIA GPU 0000:b3:00.0 ... has fallen off the
  bus` — real device-fatal messages, here put in a logrus line at level=error/fatal as a daemon
  that relays them writes them (the wrapping is ours, the messages are the reports').
"""

from __future__ import annotations

import pytest

from gpuslo.exporter.inspect.exporter_log import claims_line
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.severity_words import without_log_level
from gpuslo.exporter.policy.unrecognised import judge_line
from gpuslo.verdict import verdict_from_findings

DCGM61_TTY = "\n".join([
    "INFO[0000] Starting dcgm-exporter",
    "INFO[0000] DCGM successfully initialized!",
    "INFO[0000] Collecting DCP Metrics",
    "INFO[0000] No configmap data specified, falling back to metric file "
    "/etc/dcgm-exporter/default-counters.csv",
    "INFO[0000] Initializing system entities of type: GPU",
    "FATA[0000] Error adding GPU 1 to group: This GPU is not supported by DCGM",
]) + "\n"
# DCGM#61's message in logrus's key=value form (what dcgm-exporter writes off a terminal, as in
# gpu-operator#107's log, whose first two lines these are).
DCGM61_KV = "\n".join([
    'time="2020-11-24T10:54:00Z" level=info msg="Starting dcgm-exporter"',
    'time="2020-11-24T10:54:00Z" level=info msg="DCGM successfully initialized!"',
    'time="2023-03-01T10:00:00Z" level=fatal msg="Error adding GPU 1 to group: '
    'This GPU is not supported by DCGM"',
]) + "\n"
EXPORTER_148 = "\n".join([
    'time="2023-08-01T02:47:12Z" level=info msg="Starting dcgm-exporter"',
    'time="2023-08-01T02:47:13Z" level=info msg="DCGM successfully initialized!"',
    'time="2023-08-01T02:47:13Z" level=info msg="Initializing system entities of type: GPU"',
    'time="2023-08-01T02:47:46Z" level=fatal msg="Failed to watch metrics: Error watching '
    'fields: The third-party Profiling module returned an unrecoverable error"',
]) + "\n"
LOST = ("Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the "
        "system to recover this GPU")
FALLEN = "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) has fallen off the bus"


def inspect(text: str, kind: str | None = "dcgm-exporter-log"):
    findings = inspect_text(text, "f", InspectOptions(), kind)
    return findings, verdict_from_findings(findings)


@pytest.mark.parametrize("text", [DCGM61_TTY, DCGM61_KV], ids=["tty", "key=value"])
@pytest.mark.parametrize("kind", ["dcgm-exporter-log", None], ids=["--kind", "detected"])
def test_an_exporter_that_cannot_add_a_gpu_is_unavailable_not_a_fatal_gpu(text, kind):
    findings, verdict = inspect(text, kind)
    assert verdict == "unknown"
    assert [(f.signal, f.class_) for f in findings] == [("source_unavailable", "unknown")]


def test_an_unrecoverable_profiling_module_is_no_device_fault():
    findings, verdict = inspect(EXPORTER_148)
    assert verdict == "unknown"
    assert {f.signal for f in findings} == {"source_unavailable"}


@pytest.mark.parametrize("level", ["error", "fatal"])
def test_a_device_fatal_message_at_an_error_level_still_fails_closed(level):
    line = f'time="2023-03-01T10:00:01Z" level={level} msg="{FALLEN}"'
    text = f'time="2023-03-01T10:00:00Z" level=info msg="Starting dcgm-exporter"\n{line}\n'
    findings, verdict = inspect(text)
    assert verdict == "unhealthy"
    (device,) = [f for f in findings if f.signal == "unrecognised_message"]
    assert (device.pci, device.class_, device.action) == (
        "00000000:B3:00.0", "fatal", "drain_and_reset")
    assert judge_line(2, line).fatal  # the live checks' reading: fail


def test_a_lost_gpu_at_level_error_is_unknown_for_its_gpu_and_at_fatal_the_exporters_death():
    # "lost" is an error word, not a fatal-class one: unknown, never healthy, either way
    start = 'time="2023-03-01T10:00:00Z" level=info msg="Starting dcgm-exporter"\n'
    findings, verdict = inspect(f'{start}time="x" level=error msg="{LOST}"\n')
    assert verdict == "unknown"
    (device,) = [f for f in findings if f.signal == "unrecognised_message"]
    assert (device.pci, device.class_) == ("00000000:C1:00.0", "unknown")
    findings, verdict = inspect(f'{start}time="x" level=fatal msg="{LOST}"\n')
    assert verdict == "unknown"  # the exporter exited: source_unavailable, its line claimed
    assert [f.signal for f in findings] == ["source_unavailable"]


def test_the_exporter_reader_claims_its_own_lines_only():
    assert claims_line(DCGM61_TTY.splitlines()[-1])
    assert claims_line(DCGM61_KV.splitlines()[-1])
    assert not claims_line(f'time="x" level=fatal msg="{FALLEN}"')  # device-fatal: the fallback's
    assert not claims_line(f'time="x" level=error msg="{LOST}"')  # not the exporter's death
    assert claims_line(f'time="x" level=fatal msg="{LOST}"')  # its death; no fatal-class word


@pytest.mark.parametrize("line", [
    'time="2023-03-01T10:00:00Z" level=fatal msg="Error adding GPU 1 to group"',
    'time="2023-03-01T10:00:00Z" level="fatal" msg="Error adding GPU 1 to group"',
    '{"level":"fatal","ts":1611596227.72,"msg":"Error adding GPU 1 to group"}',
    '{"severity":"FATAL","message":"Error adding GPU 1 to group"}',
    "FATA[0000] Error adding GPU 1 to group",
    "\x1b[31mFATA\x1b[0m[0000] Error adding GPU 1 to group",
    "2022-04-05T14:09:40.020Z\tFATAL\tcontrollers.ClusterPolicy\tError adding GPU 1 to group",
    "2025/04/02 21:28:12 FATAL Error adding GPU 1 to group",
    "[Mar 01 2023 10:00:00] [FATAL] [tid 12] Error adding GPU 1 to group",
    "<2>FATAL: Error adding GPU 1 to group",
    "F1205 10:00:00.123456       1 main.go:12] Error adding GPU 1 to group",
    "FATAL:root:Error adding GPU 1 to group",
])
def test_a_fatal_log_level_alone_is_an_error_line_not_a_fatal_one(line):
    item = judge_line(1, line)
    assert item is not None and item.device.name == "1" and not item.fatal
    assert "GPU 1" in without_log_level(line)


@pytest.mark.parametrize("line", [
    "GPU 1: FATAL error",  # the message's own word, not a level column
    'time="x" level=info msg="GPU 0000:3b:00.0: fatal error on the device"',
    "pcieport 0000:00:01.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction",
    "[Mar 01 2023 10:00:00] [ERROR] [tid 12] GPU 0000:3b:00.0 reset required",
    "<3>NVRM: GPU 0000:3b:00.0: uncorrectable ECC error",
    f'time="x" level=warning msg="{FALLEN}"',
])
def test_the_messages_own_fatal_words_still_fail_closed(line):
    item = judge_line(1, line)
    assert item is not None and item.fatal
