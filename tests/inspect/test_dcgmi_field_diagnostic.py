"""`dcgmi diag` results whose text is DCGM's own next step "Run a field diagnostic on the GPU"
(dcgm_errors.h TRIAGE_RUN_FIELD_DIAG_MSG: a row-remap failure, a memory mismatch) call for
service (contact_support), not a reset: NVIDIA's memory-error-management guide says a row-remap
failure needs the GPU serviced, as gpuslo's own `row_remap_failure` says. A result printed for
all GPUs whose text names one GPU is that GPU's. From newcomer6 finding 1
(tests/fixtures/newcomer6/inspect: DCGM_FR_ROW_REMAP_FAILURE's and DCGM_FR_MEMORY_MISMATCH's
wording in the layout of DCGM#55's table, assembled by the newcomer): `where` was empty and the
action reset_gpu. The negatives: a text naming two GPUs stays for all GPUs, a Fail advising a
reset stays reset_gpu, a Fail with no advice stays reset_gpu. The field-diagnostic advice older
DCGM printed after an NVLink-down message (holdout case 133) is that code's current system triage
and a reset (dcgm_errors.h DCGM_FR_NVLINK_DOWN_NEXT = SYSTEM_TRIAGE_MSG), not service."""

from __future__ import annotations

from pathlib import Path

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.diag import DiagResult
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.diagnostics import diag_findings, named_gpu
from tests.inspect.corpus_classes import corpus_case

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


# --- holdout case 133: the advice an NVLink-down message carried in older DCGM ---------------


def _case_133_closed() -> str:
    """Holdout case 133's real rows (a PCIe `Fail - All` whose text is DCGM_FR_NVLINK_DOWN per
    link, each with `Run a field diagnostic on the GPU.`), its wrapped last row closed."""
    rows = corpus_case("holdout", 133).splitlines()[:10]
    last = "|" + " " * 27 + "| tly down Run a field diagnostic on the GPU." + " " * 4 + "|"
    return "\n".join([*rows, last, "+" + "-" * 27 + "+" + "-" * 48 + "+"]) + "\n"


def test_nvlink_down_is_triaged_and_reset_not_sent_for_service():
    # dcgm_errors.h: DCGM_FR_NVLINK_DOWN_NEXT is SYSTEM_TRIAGE_MSG ("... Reset GPU. Restart DCGM.
    # Rerun diagnostics."), severity TRIAGE; only older DCGM printed the field-diagnostic advice.
    findings = inspect_text(_case_133_closed(), "133", InspectOptions())
    (found,) = [f for f in findings if f.class_ == names.CLASS_FATAL]
    assert found.signal == "diagnostic_result" and found.action == names.ACTION_RESET_GPU
    assert _one(("GPU 0's NvLink link 4 is currently down Run a field diagnostic on the GPU.",)
                ).action == names.ACTION_RESET_GPU


def test_negative_field_diagnostic_of_other_codes_still_needs_service():
    # DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD_NEXT and DCGM_FR_ROW_REMAP_FAILURE_NEXT are the field
    # diagnostic: service, also when an NVLink-down message stands beside them.
    crc = "Detected 120 nvlink_crc_errors for GPU 1 which is above the threshold 100"
    assert _one((f"{crc} Run a field diagnostic on the GPU.",)).action == \
        names.ACTION_CONTACT_SUPPORT
    assert _one(("GPU 0's NvLink link 1 is currently down",
                 "GPU 0 had uncorrectable memory errors and row remapping failed. "
                 "Run a field diagnostic on the GPU.")).action == names.ACTION_CONTACT_SUPPORT
