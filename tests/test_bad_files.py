"""Issue 25 #3, the bad-file set: every file option of every command, given a directory, an
empty file, a binary file, a non-UTF-8 (Latin-1) file or a missing path, through the real
command line. Never a traceback, and never silence:

- a file the command itself needs (a config, a spec, an input, a TLS file) that is unusable is
  one stderr line naming it, exit 2 (`ERRORS`; an empty config is an error too: a file named on
  purpose must set something);
- an output directory: missing is created, a directory is used, a file is exit 2 (`OUTPUTS`);
- evidence a command judges (a log to `inspect` or `goodput`) that holds nothing readable is
  that command's answer, `unknown` naming the file, exit 1 (`ANSWERED`);
- a node check's evidence (kernel log, fabric-manager and host-engine logs, sysfs) is the
  check's answer `unknown` with the file named, exit 1 — not 2, which node-problem-detector
  reads as "no change" (shared/DESIGN.md) — and in the exporter an `unknown` series.
`tests/test_config_file.py` holds the FIFOs, devices, huge and deep files of the config options.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORPUS

from gpuslo.cli import main
from gpuslo.config_file import BINARY_DATA, EMPTY_DATA

KINDS = ("directory", "empty", "binary", "latin1", "missing")
KERNEL_LOG = CORPUS / "cases" / "002_xid45-secondary-to-xid149-xid145.txt"
TRAINING_LOG = Path(__file__).parent / "goodput" / "data" / "torchtitan_crash_restart.log"
HEALTHY = "[    0.000000] Linux version 6.1.0-18-amd64\n"


def bad_input(root: Path, kind: str) -> Path:
    """A fresh path of `kind` (one of KINDS) under `root`; `missing` does not exist."""
    path = root / f"bad-{kind}"
    if kind == "directory":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 64)
    elif kind == "latin1":  # an admin's tool writing Latin-1: `Lüfter defekt: café`
        path.write_bytes("L\xfcfter defekt: caf\xe9\nname: x\n".encode("latin-1"))
    return path


def _state(tmp: Path) -> list[str]:
    return ["--state-dir", str(tmp / "state")]


# option -> the command line with FILE in place of the path (each command's cheapest run)
ERRORS = {
    "check --config": ["check", "--check", "xid", "--kernel-log", str(KERNEL_LOG), "--config",
                       "FILE"],
    "check --policy": ["check", "--check", "xid", "--kernel-log", str(KERNEL_LOG), "--policy",
                       "FILE"],
    "check --slurm-config": ["check", "--check", "xid", "--kernel-log", str(KERNEL_LOG),
                             "--format", "slurm", "--slurm-config", "FILE"],
    "exporter --config": ["exporter", "--once", "--config", "FILE"],
    "exporter --policy": ["exporter", "--once", "--policy", "FILE"],
    "exporter --slo": ["exporter", "--once", "--slo", "FILE"],
    "exporter --web.config.file": ["exporter", "--once", "--web.config.file", "FILE"],
    "exporter --tls-cert": ["exporter", "--once", "--tls-cert", "FILE", "--tls-key", "KEY"],
    "exporter --tls-key": ["exporter", "--once", "--tls-cert", "CERT", "--tls-key", "FILE"],
    "exporter --tls-client-ca": ["exporter", "--once", "--tls-cert", "CERT", "--tls-key", "KEY",
                                 "--tls-client-ca", "FILE"],
    "inspect --policy": ["inspect", str(KERNEL_LOG), "--policy", "FILE"],
    "report --data": ["report", "--data", "FILE", "--out", "OUT"],
    "report --trace stepfun": ["report", "--trace", "FILE", "--trace-format", "stepfun",
                               "--nodes", "2", "--gpus-per-node", "8", "--out", "OUT"],
    "report --trace titan": ["report", "--trace", "FILE", "--trace-format", "titan", "--out",
                             "OUT"],  # an empty file was pandas' EmptyDataError, a traceback
    "report --journals": ["report", "--journals", "FILE", "--out", "OUT"],
    "report --training-log": ["report", "--training-log", "FILE", "--gpus", "8", "--out", "OUT"],
    "report --slo": ["report", "--training-log", str(TRAINING_LOG), "--gpus", "8", "--slo",
                     "FILE", "--out", "OUT"],
    "goodput --profiles": ["goodput", str(TRAINING_LOG), "--profiles", "FILE"],
    "goodput --checkpoint-dir": ["goodput", str(TRAINING_LOG), "--checkpoint-dir", "FILE"],
    "rules --slo": ["rules", "--slo", "FILE", "--out", "OUT"],
    "dashboards --slo": ["dashboards", "--slo", "FILE", "--out", "OUT"],
}
# output directories: (command line, kinds that are valid: exit 0, kinds that are valid but
# slow — the exporter's check cycle, the whole demo — and tested elsewhere)
SLOW = ("directory", "missing")
OUTPUTS = {
    "check --state-dir": (["check", "--check", "xid", "--kernel-log", str(KERNEL_LOG),
                           "--state-dir", "FILE"], SLOW, ()),
    "exporter --state-dir": (["exporter", "--once", "--state-dir", "FILE"], (), SLOW),
    "exporter --journal-dir": (["exporter", "--once", "--journal-dir", "FILE"], (),
                               ("directory",)),
    "report --out": (["report", "--training-log", str(TRAINING_LOG), "--gpus", "8", "--out",
                      "FILE"], SLOW, ()),
    "rules --out": (["rules", "--out", "FILE"], SLOW, ()),
    "dashboards --out": (["dashboards", "--out", "FILE"], SLOW, ()),
    "simulate --out": (["simulate", "--nodes", "1", "--days", "0.05", "--out", "FILE"], SLOW,
                       ()),
    "demo --out": (["demo", "--out", "FILE"], (), SLOW),
}
# evidence a command judges: (command line, what its answer says for readable-but-empty input)
ANSWERED = {
    "inspect FILE": ["inspect", "FILE"],
    "inspect --kind kernel-log FILE": ["inspect", "--kind", "kernel-log", "FILE"],
    "goodput LOG": ["goodput", "FILE", "--gpus", "8"],
}


def _argv(template: list[str], path: Path, tmp: Path, tls: tuple[Path, Path] | None) -> list:
    names = {"FILE": str(path), "OUT": str(tmp / "out")}
    if tls:
        names |= {"CERT": str(tls[0]), "KEY": str(tls[1])}
    argv = [names.get(a, a) for a in template]
    needs_state = argv[0] in ("check", "exporter") and "--state-dir" not in argv
    return argv + (_state(tmp) if needs_state else [])


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    began = time.monotonic()
    code = main(argv)
    out, err = capsys.readouterr()
    assert time.monotonic() - began < 30, argv
    assert "Traceback" not in err, err
    return code, out, err


def _one_line_naming(code: int, err: str, path: Path) -> bool:
    return code == 2 and err.count("\n") == 1 and err.endswith("\n") and str(path) in err


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate and its key (PEM)."""
    root = tmp_path_factory.mktemp("tls")
    cert, key = root / "c.pem", root / "k.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.parametrize("option", sorted(ERRORS))
def test_a_file_the_command_needs_is_one_line_naming_it(option, tmp_path, capsys, tls):
    for kind in KINDS:
        (tmp_path / kind).mkdir()
        path = bad_input(tmp_path / kind, kind)
        code, _, err = _run(capsys, _argv(ERRORS[option], path, tmp_path / kind, tls))
        assert _one_line_naming(code, err, path), (kind, code, err)


@pytest.mark.parametrize("option", sorted(OUTPUTS))
def test_an_output_directory_is_made_used_or_refused_in_one_line(option, tmp_path, capsys):
    template, valid, slow = OUTPUTS[option]
    for kind in (k for k in KINDS if k not in slow):
        (tmp_path / kind).mkdir()
        path = bad_input(tmp_path / kind, kind)
        code, _, err = _run(capsys, _argv(template, path, tmp_path / kind, None))
        if kind in valid:  # (`check --check xid` has no state to write: no directory made)
            assert code == 0 and err == "", (kind, code, err)
        else:
            assert _one_line_naming(code, err, path), (kind, code, err)
            assert kind == "missing" or "not a directory" in err, err


@pytest.mark.parametrize("option", sorted(ANSWERED))
def test_evidence_a_command_judges_is_its_answer_unknown_or_one_line(option, tmp_path, capsys):
    for kind in KINDS:
        (tmp_path / kind).mkdir()
        path = bad_input(tmp_path / kind, kind)
        code, out, err = _run(capsys, _argv(ANSWERED[option], path, tmp_path / kind, None))
        if kind in ("directory", "missing"):
            assert _one_line_naming(code, err, path), (kind, code, err)
        else:  # read, and nothing in it to judge by: never healthy, never ok
            assert code == 1 and "unknown" in out and err == "", (kind, code, out, err)


@pytest.mark.parametrize("kind", KINDS)
def test_node_check_evidence_is_unknown_naming_the_file(kind, tmp_path, capsys):
    """Exit 1 and every check unknown with the file in its message (pcie reads sysfs only after
    NVML, absent here; network_links and port_errors read it first)."""
    path = bad_input(tmp_path, kind)
    checks = ("xid", "fabricmanager", "hostengine", "network_links", "port_errors")
    argv = ["check", *[a for c in checks for a in ("--check", c)], "--format", "json",
            "--kernel-log", str(path), "--fabricmanager-log", str(path), "--hostengine-log",
            str(path), "--path.sysfs", str(path), "--expect-network-devices", "2",
            *_state(tmp_path)]
    code, out, err = _run(capsys, argv)
    results = json.loads(out)["results"]
    assert code == 1 and err == "" and {r["check"] for r in results} == set(checks)
    for result in results:
        assert result["status"] == "unknown" and str(path) in result["message"], result


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_scontrol_is_one_line_and_the_answer_still_given(kind, tmp_path, capsys):
    """A scontrol that cannot run (a directory, not executable, ENOEXEC for an empty or binary
    file marked executable, missing): the health check still answers, one stderr line says why
    nothing was drained or resumed."""
    path = bad_input(tmp_path, kind)
    if kind in ("empty", "binary"):
        path.chmod(0o755)
    log = tmp_path / "kern.log"
    log.write_text(HEALTHY)
    code, out, err = _run(capsys, ["check", "--format", "slurm", "--drain", "--check", "xid",
                                   "--kernel-log", str(log), "--node", "n", "--scontrol",
                                   str(path), *_state(tmp_path)])
    assert (code, out) == (0, "gpuslo: ok\n")
    assert err.count("\n") == 1 and f"cannot resume n: {path}: " in err, err
    assert "Errno" not in err, err


def test_the_exporter_fails_closed_on_every_bad_source_at_once(tmp_path):
    """Each runtime source named with a different bad path: exit 0 (the exporter serves what it
    can), its checks and sources `unknown`, a log line per unreadable source, no traceback."""
    bad = {kind: bad_input(tmp_path, kind) for kind in KINDS}
    bad["binary"].chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", *_state(tmp_path),
         "--kernel-log", str(bad["directory"]), "--fabricmanager-log", str(bad["binary"]),
         "--hostengine-log", str(bad["empty"]), "--path.sysfs", str(bad["latin1"]),
         "--expect-network-devices", "2", "--slurm", "--node", "n", "--scontrol",
         str(bad["binary"]), "--job-log", str(bad["directory"]),
         "--pod-resources-kubelet-socket", str(bad["empty"]),
         "--hpc-job-mapping-dir", str(bad["latin1"])],  # missing: no job yet, by design
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    for check in ("xid", "fabricmanager", "hostengine", "network_links", "port_errors"):
        assert f'gpuslo_check_status{{check="{check}",status="unknown"}} 1.0' in done.stdout
        errors = [float(line.rsplit(" ", 1)[1]) for line in done.stdout.splitlines()
                  if line.startswith(f'gpuslo_check_errors_total{{check="{check}",')]
        assert sum(errors) == 1.0, (check, errors)  # one cycle, one error: none lost or doubled
    assert ('gpuslo_slurm_node_state{reason="dependency_missing",reason_layer="observability",'
            'state="unknown"} 1.0') in done.stdout
    for source in ("hpc_job_mapping", "kubelet"):
        assert (f'gpuslo_gpu_allocation_source{{reason="tool_error",source="{source}",'
                'status="unknown"} 1.0') in done.stdout
    logged = done.stderr.strip().splitlines()
    assert len(logged) == 2 and str(bad["directory"]) in logged[0] and str(bad["empty"]) in \
        logged[1], logged


@pytest.mark.timeout(60)  # before the fix it waited for ever on the FIFO
def test_a_fifo_nobody_writes_or_a_device_given_as_data_never_waits(tmp_path, capsys):
    """Evidence, training logs and traces may be pipes (`inspect <(journalctl -k)`), so an
    anonymous pipe is read; a FIFO made with `mkfifo` is refused, never waited on (it waited for
    ever; then `inspect` read it as an empty file, exit 1, and missed a late writer: newcomer4
    finding 10), and a device (`/dev/zero` never ends: inspect read it into memory for ever) is
    one line, exit 2."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    trace = ["report", "--trace", "FILE", "--trace-format", "stepfun", "--nodes", "1",
             "--gpus-per-node", "8", "--out", str(tmp_path / "out")]
    logs = ["report", "--training-log", "FILE", "--gpus", "8", "--out", str(tmp_path / "out")]
    # every data file names a FIFO made with mkfifo as not a regular file (newcomer12,
    # newcomer4; an anonymous pipe, `<(cmd)`, is still read: below, and
    # tests/exporter/test_job_log_not_regular.py)
    for template in (["inspect", "FILE"], ["goodput", "FILE"], trace, logs):
        code, out, err = _run(capsys, [str(fifo) if a == "FILE" else a for a in template])
        assert _one_line_naming(code, err, fifo) and "(a FIFO)" in err, (template, code, err)
        code, _, err = _run(capsys, ["/dev/zero" if a == "FILE" else a for a in template])
        assert _one_line_naming(code, err, Path("/dev/zero")) and "a device" in err, err
    read, write = os.pipe()  # a pipe with its data: read as ever
    os.write(write, (CORPUS / "cases" / "001_fallen-off-bus-no-xid-multiline.txt").read_bytes())
    os.close(write)
    try:
        code, out, _ = _run(capsys, ["inspect", f"/dev/fd/{read}"])
    finally:
        os.close(read)
    assert code == 1 and "unhealthy" in out, out


def _deny(path, *_, **__):
    raise PermissionError(13, "Permission denied", str(path))


@pytest.mark.parametrize("kind", [*KINDS, "unreadable"])
def test_goodput_and_inspect_say_the_same_of_the_same_bad_file(kind, tmp_path, capsys,
                                                               monkeypatch):
    """A newcomer's report: `gpuslo goodput` said `cannot read: No such file or directory`,
    `gpuslo inspect` `no such file`; a binary file was `the file is binary` to one and `no
    parser recognises this evidence` to the other. One helper now words both
    (`config_file.unreadable_data`, `EMPTY_DATA`, `BINARY_DATA`): a file that cannot be read is
    the same one line naming it (exit 2); one read with nothing in it the same reason (exit 1)."""
    if kind == "unreadable":  # root reads a mode-000 file: refuse the open instead
        path = bad_input(tmp_path, "latin1")
        monkeypatch.setattr("gpuslo.goodput.logs.read.open_data_file", _deny)
        monkeypatch.setattr("gpuslo.exporter.inspect.kinds.open_data_file", _deny)
    else:
        path = bad_input(tmp_path, kind)
    said = {}
    for command in ("goodput", "inspect"):
        code, out, err = _run(capsys, [command, str(path)])
        said[command] = (code, err.removeprefix(f"gpuslo {command}: error: "), out)
    (g_code, g_err, g_out), (i_code, i_err, i_out) = said["goodput"], said["inspect"]
    assert g_code == i_code, said
    if kind in ("missing", "directory", "unreadable"):
        assert _one_line_naming(g_code, g_err, path) and g_err == i_err, said
        assert ("permission denied" in g_err) == (kind == "unreadable"), said
    elif kind in ("empty", "binary"):
        reason = {"empty": EMPTY_DATA, "binary": BINARY_DATA}[kind]
        assert g_code == 1 and reason in g_out and f"{path}: {reason}" in i_out, said
