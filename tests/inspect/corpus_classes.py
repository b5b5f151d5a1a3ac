"""Helpers of the per-batch class tests (test_fresh*_classes.py): a corpus case's text, and
`gpuslo inspect`'s findings and verdict for a text, as the CLI reads it."""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.nvidia_smi_findings import is_each_gpu
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"


def corpus_case(batch: str, number: int) -> str:
    """The text of case `number` of tests/data/corpus/<batch>/cases (exactly one file)."""
    (path,) = (CORPUS / batch / "cases").glob(f"{number}_*")
    return path.read_text()


def inspect(text: str, kind: str | None = None, **options):
    """(findings, verdict) of `text` read as `kind` (None: detected), with InspectOptions."""
    findings = inspect_text(text, "f", InspectOptions(**options), kind)
    return findings, verdict_from_findings(findings)


def of(findings, signal: str) -> list:
    return [f for f in findings if f.signal == signal]


def per_model(findings) -> list:
    """The `gpus_seen` findings that count GPUs per model or in total: not the per-GPU ones
    (`nvidia_smi_findings.is_each_gpu`)."""
    return [f for f in findings if f.signal == "gpus_seen" and not is_each_gpu(f)]


def fatal(findings) -> list:
    return [f for f in findings if f.class_ == "fatal"]
