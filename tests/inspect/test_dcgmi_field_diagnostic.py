"""`dcgmi diag` results whose text is DCGM's own next step "Run a field diagnostic on the GPU"
(dcgm_errors.h TRIAGE_RUN_FIELD_DIAG_MSG: a row-remap failure, a memory mismatch) call for
service (contact_support), not a reset: NVIDIA's memory-error-management guide says a row-remap
failure needs the GPU serviced, as gpuslo's own `row_remap_failure` says. A result printed for
all GPUs whose text names one GPU is that GPU's. From newcomer6 finding 1
(tests/fixtures/newcomer6/inspect: DCGM_FR_ROW_REMAP_FAILURE's and DCGM_FR_MEMORY_MISMATCH's
wording in the layout of DCGM#55's table, assembled by the newcomer): `where` was empty and the
action reset_gpu. The negatives: a text naming two GPUs stays for all GPUs, a Fail advising a
reset stays reset_gpu, a Fail with no advice stays reset_gpu."""

from __future__ import annotations

from pathlib import Path

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.diag import DiagResult
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.diagnostics import diag_findings, named_gpu

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer6" / "inspect"


def _failed(name: str):
    findings = inspect_text((DATA / name).read_text(), name, InspectOptions())
    return [f for f in findings if f.class_ == names.CLASS_FATAL]


def test_a_row_remap_failure_is_the_named_gpus_and_needs_service():
    (found,) = _failed("k_dcgmi_pageretire.txt")
    assert found.gpu == "3" and found.action == names.ACTION_CONTACT_SUPPORT


def test_a_memory_mismatch_needs_service():
    (found,) = _failed("j_dcgmi_memfail.txt")
    assert found.gpu == "0" and found.action == names.ACTION_CONTACT_SUPPORT


def _one(messages: tuple[str, ...]):
    result = DiagResult(category="Hardware", test="GPU Memory", gpu=None, status="Fail",
                        messages=messages, line=3)
    (finding,) = diag_findings("dcgmi", [result])
    return finding


def test_negative_a_text_naming_two_gpus_stays_for_all_gpus():
    finding = _one(("GPU 0 and GPU 1 failed the memory test. Reset GPU.",))
    assert finding.gpu is None and finding.action == names.ACTION_RESET_GPU
    assert named_gpu(("no GPU named here",)) is None


def test_negative_other_advice_keeps_its_action():
    assert _one(("GPU 2 failed. Reset GPU and rerun.",)).action == names.ACTION_RESET_GPU
    assert _one(("GPU 2 failed.",)).action == names.ACTION_RESET_GPU
