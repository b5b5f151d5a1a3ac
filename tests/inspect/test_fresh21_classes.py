"""One test per class of evidence the twenty-first fresh first-contact corpus batch (tests/data/
corpus/fresh21, scored 17/20 on 2026-12-07 at 4115221, tests/data/first_contact/
corpus_fresh21_2026-12-07.txt) found misread: the real lines (the case files), variants, and
negatives that must not be read the same way.

- 2320 (the shell-script dcgm-exporter of gpu-monitoring-tools: `Failed to start host engine
  server`, then `Collecting metrics at ...`): a DCGM host-engine start failure
  (`dcgmi.HOST_ENGINE_START_FAILED`, DCGM hostengine main.cpp and the 1.x engine's
  LwcmServer::run) leaves no DCGM data, whatever the exporter prints after it: source_unavailable
  from both the exporter-log and the host-engine-log readers, and no ok `log_read`; a start that
  a later start line follows (`Started host engine version ...`, `DCGM successfully
  initialized!`) was retried and is no failure.
- 2311 (a CI task log, `[task <stamp>] [train] [nvidia-smi(stdout)] Failed to initialize NVML:
  Driver/library version mismatch`): a tool's output behind a runner's, a container log's or a
  log shipper's line prefix (bracketed tags, an RFC 3339 stamp, a CRI `stdout F`, a compose
  `name |` column) is read without it when only then some reader recognises it
  (`inspect.prefixed`); a kernel log's `[  526.77]` stamps stay, and an NVML message quoted
  inside a sentence is no NVML error (`proc.quoted_in_prose`), prefixed or not.
- 2307 (three A100 rows under a zsh `% nvidia-smi` prompt, the third box cut after its first
  row): the inventory names every GPU shown, one `gpus_seen` (count 1, bus id from its own row)
  per GPU of a model shown more than once, beside the per-model count
  (`nvidia_smi_findings.each_gpu_seen`); a GPU with a problem finding gets no ok one.
"""

from __future__ import annotations

import pytest

from gpuslo.exporter.evidence.dcgm.dcgmi import HOST_ENGINE_START_FAILED
from gpuslo.exporter.evidence.nvidia_smi.proc import quoted_in_prose
from gpuslo.exporter.inspect.daemon_logs import inspect_hostengine_log
from gpuslo.exporter.inspect.exporter_log import inspect_exporter_log
from gpuslo.exporter.inspect.nvidia_smi_findings import is_each_gpu
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.inspect.prefixed import prefixed_blocks, unprefixed
from gpuslo.exporter.inspect.registry import detect_kinds
from gpuslo.exporter.policy.hostengine import packaged_hostengine_policy
from tests.inspect.corpus_classes import corpus_case, inspect, of, per_model

SCRIPT_EXPORTER = corpus_case("fresh21", 2320)
CI_TASK_MISMATCH = corpus_case("fresh21", 2311)
ZSH_TABLE = corpus_case("fresh21", 2307)
MISMATCH = "Failed to initialize NVML: Driver/library version mismatch"


def oks(findings) -> list:
    return [f for f in findings if f.class_ == "ok"]


# --- 2320: a host-engine start failure means no DCGM data -----------------------------------------


def test_script_exporter_whose_host_engine_failed_to_start_is_never_ok():
    findings, verdict = inspect(SCRIPT_EXPORTER)
    assert verdict == "unknown" and not oks(findings)
    assert of(findings, "source_unavailable")
    assert not [f for f in findings if f.class_ in ("application", "fatal")]


@pytest.mark.parametrize("reader", [inspect_exporter_log, inspect_hostengine_log])
def test_each_dcgm_log_reader_reads_the_start_failure(reader):
    findings = reader(SCRIPT_EXPORTER, InspectOptions(), "f")
    assert of(findings, "source_unavailable") and not oks(findings)
    assert 3 in {f.line for f in of(findings, "source_unavailable")}  # the failure's own line


@pytest.mark.parametrize("line", [
    "Failed to start host engine server",  # DCGM 1.x LwcmServer::run (2320)
    "Err: Failed to start DCGM Server: -7",  # hostengine/src/main.cpp, the server cannot listen
    "Error: DCGM engine failed to initialize",  # main.cpp, dcgmInit to syslog
    "Error: DCGM failed to start embedded engine",  # main.cpp, dcgmStartEmbedded to syslog
    "Host engine failed to write to pid file /var/run/nvhostengine.pid",
])
def test_start_failure_family_is_one_for_both_readers(line):
    assert HOST_ENGINE_START_FAILED.search(line)
    matched = packaged_hostengine_policy().message(line)
    assert matched is not None and matched[1]["signal"] == "source_unavailable"


def test_a_start_retried_successfully_is_no_failure():
    # Negative: the same failure, then the engine's own start line (main.cpp) after a retry.
    text = ("Starting NVIDIA host engine...\nFailed to start host engine server\n"
            "Started host engine version 1.7.2 using port number: 5555\n")
    for reader in (inspect_exporter_log, inspect_hostengine_log):
        assert not of(reader(text, InspectOptions(), "f"), "source_unavailable"), reader
    go = ('Failed to start host engine server\n'
          'time="2020-01-01T00:00:00Z" level=info msg="DCGM successfully initialized!"\n'
          'time="2020-01-01T00:00:01Z" level=info msg="Starting webserver"\n')
    (read,) = inspect_exporter_log(go, InspectOptions(), "f")
    assert (read.signal, read.class_) == ("log_read", "ok")


def test_a_failure_after_the_start_line_still_counts():
    # The order matters: a start line before the failure retried nothing.
    text = ("Started host engine version 1.7.2 using port number: 5555\n"
            "Failed to start host engine server\n")
    for reader in (inspect_exporter_log, inspect_hostengine_log):
        assert of(reader(text, InspectOptions(), "f"), "source_unavailable"), reader


def test_prose_naming_a_start_is_no_start_line():
    # Negative: "started host engine" inside a sentence is not the engine's own start line.
    text = ("Failed to start host engine server\n"
            "I then started host engine version 1.7.2 using port number: 5555 by hand\n")
    assert of(inspect_exporter_log(text, InspectOptions(), "f"), "source_unavailable")


# --- 2311: a tool's output behind a runner's or shipper's line prefix -----------------------------


def test_ci_task_log_shows_the_driver_library_mismatch():
    findings, verdict = inspect(CI_TASK_MISMATCH)
    (mismatch,) = of(findings, "driver_mismatch")
    assert mismatch.line == 2 and verdict == "unhealthy"
    assert not of(findings, "gpus_seen")
    assert not [f for f in findings if f.class_ == "application"]


def _bare(text: str) -> str:
    """2311's lines with the task prefix taken off by hand."""
    return "\n".join(line.split("] ")[-1] for line in text.split("\n"))


@pytest.mark.parametrize("prefix", [
    "[pod/train-0/trainer] ",  # kubectl logs --prefix
    "2025-07-01T05:06:30.004813Z stdout F ",  # CRI log format under /var/log/pods
    "2025-07-01T05:06:30.0040000Z ",  # a CI runner's stamp
    "trainer-1  | ",  # a compose service column
    "[2025-07-01 05:06:30,004] [INFO] ",  # a Python logger's stamp and level in brackets
])
def test_the_same_output_behind_other_line_prefixes(prefix):
    text = "\n".join(prefix + line for line in _bare(CI_TASK_MISMATCH).split("\n") if line)
    findings, verdict = inspect(text)
    assert of(findings, "driver_mismatch") and verdict == "unhealthy", prefix
    assert not of(findings, "gpus_seen")


def test_prefix_is_taken_off_each_line_with_line_numbers_kept():
    bare = unprefixed(CI_TASK_MISMATCH, detect_kinds).split("\n")
    assert bare[1] == MISMATCH and bare[0] == "nvidia-smi failed with return code 18"
    assert prefixed_blocks(CI_TASK_MISMATCH.split("\n")) == [(0, 3)]


def test_prose_quoting_the_message_behind_the_prefix_is_not_read_as_a_mismatch():
    # Negative: the same words, quoted inside a sentence a step printed, are not nvidia-smi's.
    said = f'[task 2025-07-01T05:06:31.000+00:00] [train] The runbook says "{MISMATCH}" = reboot'
    for text in (said, said.split("] ", 2)[-1]):
        findings, _ = inspect(text)
        assert not of(findings, "driver_mismatch"), text
    assert quoted_in_prose(f'if you see "{MISMATCH}"', 12)
    assert not quoted_in_prose(f'level=error msg="{MISMATCH}"', 17)  # a logger's value


def test_kernel_log_stamps_are_no_prefix_to_take_off():
    # Negative: dmesg's bracketed stamps look like a tag, but the log already reads as it is.
    text = ("[  526.773174] NVRM: Xid (PCI:0000:03:00): 62, pid=3074, 0cb5(2d50) 00000000\n"
            "[  527.000001] NVRM: GPU at PCI:0000:03:00: GPU-5a1b2c3d\n")
    assert unprefixed(text, detect_kinds) == text
    findings, _ = inspect(text)
    assert any(f.xid == 62 for f in findings)


# --- 2307: every GPU row's bus id, under a prompt, with the last box cut --------------------------


def _each(findings) -> dict:
    return {f.pci: f for f in of(findings, "gpus_seen") if is_each_gpu(f)}


def test_zsh_prompt_table_names_each_gpu_by_its_own_bus_id():
    findings, verdict = inspect(ZSH_TABLE)
    assert verdict in ("healthy", "unknown") and not [f for f in findings if f.class_ == "fatal"]
    assert [f.count for f in per_model(findings)] == [3]
    assert all(f.count == 1 for f in _each(findings).values())
    each = _each(findings)
    assert {"00000000:17:00.0", "00000000:65:00.0"} <= set(each)
    assert (each["00000000:17:00.0"].gpu, each["00000000:65:00.0"].gpu) == ("0", "1")
    assert not of(findings, "gpu_inaccessible")


def test_the_same_table_without_the_prompt_or_the_cut_reads_the_same_gpus():
    bare = ZSH_TABLE.split("\n", 1)[1]
    whole = bare.rstrip("\n") + (
        "\n| N/A   29C    P0    43W / 300W |      0MiB / 81920MiB |     N/A      Default |"
        "\n|                               |                      |              Enabled |"
        "\n+-------------------------------+----------------------+----------------------+\n")
    for text in (bare, whole):
        assert set(_each(inspect(text)[0])) == set(_each(inspect(ZSH_TABLE)[0])), text[-80:]


def test_a_gpu_with_a_problem_gets_no_ok_inventory_finding():
    # Negative: the same table with GPU 1's uncorrectable ECC count at 2: that GPU is named by
    # its fault, never ok; GPU 0 stays in the inventory.
    faulty = ZSH_TABLE.replace(
        "| 00000000:65:00.0 Off |                    0 |",
        "| 00000000:65:00.0 Off |                    2 |")
    assert faulty != ZSH_TABLE
    findings, verdict = inspect(faulty)
    assert verdict == "unhealthy"
    each = _each(findings)
    assert "00000000:17:00.0" in each and "00000000:65:00.0" not in each
    assert [f for f in findings if f.pci == "00000000:65:00.0" and f.class_ != "ok"]


def test_a_lone_gpu_keeps_its_single_inventory_finding():
    # Negative: one GPU is named in the per-model finding already; no second finding for it.
    one = "\n".join(ZSH_TABLE.split("\n")[:13]) + "\n"
    seen = of(inspect(one)[0], "gpus_seen")
    assert [(f.count, f.pci) for f in seen] == [(1, "00000000:17:00.0")]
