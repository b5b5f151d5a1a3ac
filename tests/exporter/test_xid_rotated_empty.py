"""A `--kernel-log` file that was read as a kernel log and is then rotated (moved away, a new
empty file in its place: logrotate's `create`) or truncated is "no record since", not "not a
kernel log": every GPU read unknown until the kernel next wrote (newcomer6 finding 10: an
exporter on a two-line boot log went `check="xid",status="unknown"`, `gpuslo_gpu_usable 0` on
every GPU 12 s after `mv kern.log kern.log.1; : > kern.log`; the newcomer's two boot lines were
not kept, these are lines of the same kind). A fault judged before the rotation is still held by
the gate. The negatives: an empty file never read as a kernel log, and a rotated file that now
holds something else, stay `unknown`/`parse_error`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.cli import main

NVML = Path(__file__).resolve().parents[2] / "gpuslo" / "data" / "nvml_replay"
BOOT = ("[    0.000000] Linux version 6.5.0-35-generic (buildd@lcy02-amd64-079) #35-Ubuntu\n"
        "[    6.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n")
XID_79 = ("[ 1843.308000] NVRM: Xid (PCI:0000:00:06): 79, pid=1234, name=python, "
          "GPU has fallen off the bus.\n")


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(NVML / "h200x8.json"))
    (tmp_path / "proc/sys/kernel/random").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/random/boot_id").write_text("boot-1\n")
    return tmp_path


def _xid(node: Path, capsys, state: str = "state") -> tuple[int, str]:
    code = main(["check", "--format", "npd", "--check", "xid", "--kernel-log",
                 str(node / "kern.log"), "--state-dir", str(node / state),
                 "--path.procfs", str(node / "proc")])
    return code, capsys.readouterr().out


def _rotate(node: Path, text: str = "") -> None:
    (node / "kern.log").rename(node / "kern.log.1")
    (node / "kern.log").write_text(text)


def test_a_read_log_rotated_to_an_empty_file_is_no_record_since(node, capsys):
    (node / "kern.log").write_text(BOOT)
    assert _xid(node, capsys) == (0, "ok: xid\n")
    _rotate(node)
    assert _xid(node, capsys) == (0, "ok: xid\n")
    (node / "kern.log").write_bytes(b"")  # truncated in place (copytruncate) reads the same
    assert _xid(node, capsys) == (0, "ok: xid\n")


def test_a_fault_judged_before_the_rotation_is_still_held(node, capsys):
    (node / "kern.log").write_text(BOOT + XID_79)
    code, out = _xid(node, capsys)
    assert code == 1 and out.startswith("xid fail fallen_off_bus")
    _rotate(node)
    code, out = _xid(node, capsys)
    assert code == 1 and out.startswith("validation fail fallen_off_bus"), out


def test_negative_an_empty_log_never_read_is_unknown(node, capsys):
    (node / "kern.log").write_text("")
    code, out = _xid(node, capsys)
    assert code == 1 and out.startswith("xid unknown parse_error"), out
    (node / "kern.log").write_text(BOOT)  # read under another state dir: not this one's record
    _xid(node, capsys, state="other")
    (node / "kern.log").write_text("")
    assert _xid(node, capsys)[1].startswith("xid unknown parse_error")


def test_negative_a_rotated_log_that_holds_other_text_is_unknown(node, capsys):
    (node / "kern.log").write_text(BOOT)
    assert _xid(node, capsys)[0] == 0
    _rotate(node, "hello from an application\n")
    code, out = _xid(node, capsys)
    assert code == 1 and out.startswith("xid unknown parse_error"), out
