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
"""

from __future__ import annotations

import pytest

from gpuslo.exporter.evidence.dcgm.dcgmi import HOST_ENGINE_START_FAILED
from gpuslo.exporter.inspect.daemon_logs import inspect_hostengine_log
from gpuslo.exporter.inspect.exporter_log import inspect_exporter_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.hostengine import packaged_hostengine_policy
from tests.inspect.corpus_classes import corpus_case, inspect, of

SCRIPT_EXPORTER = corpus_case("fresh21", 2320)


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
