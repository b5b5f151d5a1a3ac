"""Property tests: every nvidia-smi parser returns a reading or raises gpuslo's ParseError — on
arbitrary text, on bytes decoded as `inspect` decodes them, and on the real outputs cut and
spliced — and no detector or inspector lets anything else escape."""

from __future__ import annotations

import functools

import pytest
from conftest import CORPUS, FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.nvidia_smi.values import SmiReading
from gpuslo.exporter.inspect import nvidia_smi
from gpuslo.exporter.inspect.kinds import KINDS, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions

PARSERS = {
    "query": nvidia_smi.parse_query,
    "xml": nvidia_smi.parse_xml,
    "csv": nvidia_smi.parse_csv,
    "csv_columns": lambda text, source: nvidia_smi.parse_csv(
        text, source, ("index", "gpu_recovery_action")
    ),
    "table": nvidia_smi.parse_table,
    "nvlink": nvidia_smi.parse_nvlink,
    "proc": nvidia_smi.parse_proc_driver,
    "nvml": nvidia_smi.parse_nvml_errors,
}
MY_KINDS = [
    kind
    for kind, (_, inspector) in KINDS.items()
    if inspector.__module__ == "gpuslo.exporter.inspect.nvidia_smi"
]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def real_texts() -> tuple[str, ...]:
    names = [
        "nvidia-smi-q.txt",
        "nvidia-smi-q.xml",
        "nvidia-smi-query-gpu.csv",
        "nvidia-smi.txt",
        "proc-driver-nvidia-gpus-information.txt",
    ]
    cases = sorted((CORPUS / "cases").glob("0[0-3]*nvidia*")) + sorted(
        (CORPUS / "cases").glob("005*")
    )
    return tuple(
        [(FIXTURES / "h200" / n).read_text() for n in names] + [p.read_text() for p in cases]
    )


def parse_or_parse_error(parser, text: str) -> None:
    try:
        result = parser(text, "prop")
    except ParseError as error:
        assert error.source == "prop"
        return
    assert isinstance(result, SmiReading | list)


TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=400) | st.text(
    alphabet=st.sampled_from(list("GPU Link 0123456789:.,|x-/<>[]ERR!N/A\n\t ")), max_size=400
)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(text=TEXT)
def test_parser_on_arbitrary_text(name, text):
    parse_or_parse_error(PARSERS[name], text)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(data=st.binary(max_size=300))
def test_parser_on_arbitrary_bytes(name, data):
    parse_or_parse_error(PARSERS[name], data.decode("utf-8", errors="replace"))


@FAST
@given(index=st.integers(0, 100), cut=st.floats(0, 1), splice=st.floats(0, 1), junk=TEXT)
def test_real_outputs_cut_and_spliced(index, cut, splice, junk):
    texts = real_texts()
    text = texts[index % len(texts)]
    at, to = sorted((int(cut * len(text)), int(splice * len(text))))
    mangled = text[:at] + junk + text[to:]
    for parser in PARSERS.values():
        parse_or_parse_error(parser, mangled)
    for kind in MY_KINDS:
        for finding in inspect_text(mangled, "prop", InspectOptions(), kind):
            assert finding.to_dict()["kind"]


@FAST
@given(text=TEXT)
def test_detectors_answer_yes_or_no(text):
    for kind in MY_KINDS:
        detector, _ = KINDS[kind]
        assert detector(text) in (True, False)


def test_a_50_megabyte_line_is_not_a_gpu():
    line = "x" * (50 * 1024 * 1024)
    for kind in MY_KINDS:
        findings = inspect_text(line, "big", InspectOptions(), kind)
        assert all(f.class_ == "unknown" for f in findings)
