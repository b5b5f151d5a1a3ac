"""`gpuslo inspect` streams a kernel log of any size through the library scan (no size limit,
no "split it"): through the CLI the findings are the library scan's and the text parser's, and
the exit code is 1 for the fatal events in it. The benchmark (bench/kernel_log_scan.py) times
the same path on 1 GiB against grep."""

from __future__ import annotations

import json

from gpuslo.cli import main
from gpuslo.exporter.evidence.kernel_log import halves
from gpuslo.exporter.inspect import kinds
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log_file
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from tests.conftest import FIXTURES

EVENTS = [
    "[ 9000.000001] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
    "[ 9000.000002] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5",
    "[ 9000.500000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=python, Graphics Exception: x",
    "[ 9001.000000] NVRM: GPU5 kbifFooBar_GH100: failed to frobnicate the widget",
]


def big_log(path, megabytes: int = 9) -> str:
    noise = (FIXTURES / "h200" / "dmesg.txt").read_text()
    with path.open("w") as handle:
        written = 0
        while written < megabytes * 1024 * 1024:
            handle.write(noise)
            written += len(noise)
        handle.write("\n".join(EVENTS) + "\n")  # last: no driver reload after them
    return path.read_text()


def test_a_large_kernel_log_streams_with_the_library_findings(tmp_path, capsys):
    path = tmp_path / "kern.log"
    text = big_log(path)
    assert path.stat().st_size > kinds.STREAM_BYTES
    assert kinds.streams_as_kernel_log(str(path), None)
    code = main(["inspect", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    cli = [{k: v for k, v in f.items() if k != "file"} for f in report["findings"]]
    library = [f.to_dict() for f in inspect_kernel_log_file(str(path), InspectOptions())]
    assert cli == json.loads(json.dumps(library))
    whole = [f.to_dict() for f in inspect_text(text, str(path), InspectOptions())]
    assert cli == json.loads(json.dumps(whole))
    assert code == 1 and report["verdict"] == "unhealthy"
    signals = {(f.get("signal"), f["class"]) for f in cli}
    assert ("driver_message", "fatal") in signals
    assert ("unrecognised_driver_message", "unknown") in signals


def test_a_small_file_and_a_large_file_that_is_no_log_are_read_whole(tmp_path):
    small = tmp_path / "small.log"
    small.write_text("\n".join(EVENTS) + "\n")
    assert not kinds.streams_as_kernel_log(str(small), None)
    table = tmp_path / "table.txt"
    table.write_text((FIXTURES / "h200" / "nvidia-smi.txt").read_text() * 30_000)
    assert table.stat().st_size > kinds.STREAM_BYTES
    assert not kinds.streams_as_kernel_log(str(table), None)


def test_the_cli_scans_a_large_log_in_halves_started_before_its_imports(tmp_path, capsys,
                                                                        monkeypatch):
    """`gpuslo inspect` forks the scan of the log's larger second part before it imports the
    inspectors (`cli.inspect_early`, `halves.prestart`): the findings are the whole text's."""
    path = tmp_path / "kern.log"
    text = big_log(path)
    # halved from 1 MiB up, whatever CPUs and threads the test run has
    monkeypatch.setattr(halves, "can_halve", lambda size: size >= 1024 * 1024)
    middles = []
    received = halves._received
    monkeypatch.setattr(halves, "_received", lambda child: middles.append(child.middle)
                        or received(child))
    code = main(["inspect", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert len(middles) == 1 and middles[0] < path.stat().st_size // 2  # the early child's
    cli = [{k: v for k, v in f.items() if k != "file"} for f in report["findings"]]
    whole = [f.to_dict() for f in inspect_text(text, str(path), InspectOptions())]
    assert cli == json.loads(json.dumps(whole)) and code == 1
    # a large file that is no kernel log: the early child is stopped, the file read whole
    table = tmp_path / "table.txt"
    table.write_text((FIXTURES / "h200" / "nvidia-smi.txt").read_text() * 30_000)
    main(["inspect", str(table), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["files"][0]["kind"] == "nvidia-smi-table"
    assert len(middles) == 1 and not halves._early
