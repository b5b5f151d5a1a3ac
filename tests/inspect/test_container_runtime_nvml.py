"""NVML's message passed on by a container runtime's error (fresh22 case 2404, docker compose on a
node whose driver was upgraded under a running library: moby/compose, see tests/data/corpus/
SOURCES.md "fresh22"): the runtime's report around it is context, the NVML line is the finding."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.nvidia_smi.proc import parse_nvml_errors
from gpuslo.exporter.inspect.detectors import looks_like_nvml_error

CASES = Path(__file__).resolve().parents[1] / "data" / "corpus" / "fresh22" / "cases"
# fresh22 2404, verbatim (the author's wrap and its trailing spaces kept).
COMPOSE_HOOK_FAILURE = next(CASES.glob("2404_*.txt")).read_text()


def test_the_nvml_message_inside_a_runtime_error_is_the_finding():
    errors = parse_nvml_errors(COMPOSE_HOOK_FAILURE, "2404")
    assert [(e.signal, e.line) for e in errors] == [("driver_mismatch", 4)]
    assert looks_like_nvml_error(COMPOSE_HOOK_FAILURE)


def test_a_runtime_error_without_an_nvml_message_is_not_one():
    # negative: the toolkit failing to load the library says nothing NVML itself answered
    text = (
        "docker: Error response from daemon: failed to create shim: OCI runtime create failed: "
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
        "cannot open shared object file: no such file or directory: unknown.\n"
    )
    with pytest.raises(ParseError, match="container runtime"):
        parse_nvml_errors(text, "negative")
    assert not looks_like_nvml_error(text)


def test_prose_quoting_the_runtime_and_the_message_is_still_prose():
    # negative: a sentence about the error is no report of it
    text = 'After the upgrade docker said "nvml error: driver/library version mismatch" again.\n'
    with pytest.raises(ParseError):
        parse_nvml_errors(text, "prose")
