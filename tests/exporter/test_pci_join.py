"""Regression (issue 10): every source writes one form of a PCI address, so an Xid counted from
the kernel log and the GPU's `gpuslo_gpu_info` carry the same `pci_bus_id` — also on a bus with
hex letters, which the golden files (bus 00:06.0) could not show."""

from __future__ import annotations

import json
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from gpuslo.cli import main
from gpuslo.exporter.evidence.pci import normalise_pci

REPLAY = Path(__file__).resolve().parents[2] / "gpuslo" / "data" / "nvml_replay"


def test_every_width_and_case_normalises_to_nvml_form():
    for text in ("0000:3b:00", "3b:00.0", "00000000:3B:00.0", "0000:3B:00.0", "3B:0.0"):
        assert normalise_pci(text) == "00000000:3B:00.0"
    assert normalise_pci("00000019:01:00.0") == "00000019:01:00.0"  # Grace domain
    assert normalise_pci("...") is None and normalise_pci(None) is None


def test_xid_and_gpu_info_join_on_a_bus_with_hex_letters(tmp_path, capsys, monkeypatch):
    node = json.loads((REPLAY / "h200x1.json").read_text())
    text = json.dumps(node).replace("00000000:00:06.0", "00000000:3B:00.0")
    assert "00000000:3B:00.0" in text
    (tmp_path / "node.json").write_text(text)
    log = tmp_path / "kern.log"
    log.write_text(
        "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"
    )
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(REPLAY))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(tmp_path / "node.json"))
    code = main(
        [
            "exporter",
            "--once",
            "--state-dir",
            str(tmp_path / "state"),
            "--kernel-log",
            str(log),
            "--path.sysfs",
            str(tmp_path),
            "--path.procfs",
            str(tmp_path),
        ]
    )
    assert code == 0
    families = {f.name: f for f in text_string_to_metric_families(capsys.readouterr().out)}
    info = {s.labels["pci_bus_id"] for s in families["gpuslo_gpu_info"].samples}
    xids = {s.labels["pci_bus_id"] for s in families["gpuslo_xid_events"].samples if s.value}
    assert info == {"00000000:3B:00.0"} and xids == info
