"""The exporter command: flags, --once, TLS with client certificates, restart safety."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from conftest import CORPUS
from exporter.test_collector_node import fixture_snapshot, samples, write_job

from gpuslo import names
from gpuslo.errors import ParseError, UsageError
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.exporter.server import Exporter, parse_listen
from gpuslo.exporter.state import CounterCarry, carry_counter, read_json_state, write_json_atomic
from gpuslo.goodput import compute_goodput, parse_journal

KERNEL_LOG = CORPUS / "cases" / "032_xid43-xid31-xid94-contained-dmesg-T-gpu-at-pci.txt"
# A fatal Xid 48 (double-bit ECC) with Xid 171/63/154, then an application Xid 31.
FATAL_AND_BENIGN = [
    CORPUS / "cases" / "026_xid48-xid171-xid63-xid154-drain-and-reset-journal.txt",
    CORPUS / "cases" / "011_xid31-mmu-fault-app-with-gpu-at-pci-uuid.txt",
]


def gpuslo(*args: str, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuslo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:9835", ("127.0.0.1", 9835)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:9835", ("::1", 9835)),
        ("[::]:1", ("::", 1)),
    ],
)
def test_listen_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", [":9835", "9835", "host:", "host:99999", "host:http"])
def test_listen_addresses_refused(text: str) -> None:
    with pytest.raises(UsageError):
        parse_listen(text)


@pytest.mark.parametrize(
    "args",
    [
        ["--tls-cert", "x.pem"],
        ["--tls-client-ca", "ca.pem"],
        ["--interval", "0"],
        ["--listen", ":9835"],
    ],
)
def test_bad_flags_are_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    done = gpuslo("exporter", "--once", "--state-dir", str(tmp_path), *args)
    assert done.returncode == 2
    assert done.stderr.startswith("gpuslo exporter: error:") and done.stderr.count("\n") == 1


def test_once_prints_a_valid_fail_closed_exposition(tmp_path: Path, promtool: str) -> None:
    """No GPU on the test machine: the exposition is complete, promtool-clean, and not usable."""
    write_job(tmp_path / "journals", "job-a")
    done = gpuslo(
        "exporter",
        "--once",
        "--state-dir",
        str(tmp_path / "state"),
        "--kernel-log",
        str(KERNEL_LOG),
        "--journal-dir",
        str(tmp_path / "journals"),
        "--path.sysfs",
        str(tmp_path / "nosys"),
    )
    assert done.returncode == 0, done.stderr
    s = samples(done.stdout)
    assert s[("gpuslo_node_usable", ())] == 0
    assert s[("gpuslo_job_gpu_seconds_total", (("category", "recovery"), ("job", "job-a")))] == 600
    lint = subprocess.run(
        [promtool, "check", "metrics"],
        input=done.stdout,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lint.returncode == 0 and lint.stdout == lint.stderr == "", lint


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(d: Path) -> None:
    """A CA, a server cert for 127.0.0.1 and a client cert, all signed by the CA."""
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=test-ca",
        cwd=d,
    )
    for name in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=d,
        )
        (d / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "1",
            "-extfile",
            f"{name}.ext",
            cwd=d,
        )


def test_tls_with_client_certificates(tmp_path: Path) -> None:
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    make_certs(tmp_path)
    from exporter.test_exporter_prometheus import free_port, wait_for

    port = free_port()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuslo",
            "exporter",
            "--listen",
            f"127.0.0.1:{port}",
            "--state-dir",
            str(tmp_path / "state"),
            "--path.sysfs",
            str(tmp_path / "nosys"),
            "--tls-cert",
            str(tmp_path / "server.pem"),
            "--tls-key",
            str(tmp_path / "server.key"),
            "--tls-client-ca",
            str(tmp_path / "ca.pem"),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    url, ca = f"https://127.0.0.1:{port}/metrics", str(tmp_path / "ca.pem")
    client = (str(tmp_path / "client.pem"), str(tmp_path / "client.key"))
    try:
        answer = wait_for(lambda: requests.get(url, verify=ca, cert=client, timeout=2), 30, "TLS")
        assert answer.status_code == 200 and "gpuslo_build_info" in answer.text
        with pytest.raises(requests.exceptions.RequestException):
            requests.get(url, verify=ca, timeout=2)  # no client certificate: refused
        with pytest.raises(requests.exceptions.RequestException):
            requests.get(f"http://127.0.0.1:{port}/metrics", timeout=2)  # plain HTTP refused
    finally:
        child.send_signal(signal.SIGTERM)
        assert child.wait(15) == 0
    assert "Traceback" not in child.stderr.read()


# --- restart safety --------------------------------------------------------------------------


def xid_samples(text: str) -> dict:
    return {k: v for k, v in samples(text).items() if k[0] == "gpuslo_xid_events_total"}


def test_kill_9_and_restart_neither_recounts_nor_loses_xids(tmp_path: Path) -> None:
    """Serve, kill -9 mid-run, start again: the Xid counters from the kernel log are the same
    totals, not doubled and not reset."""
    from exporter.test_exporter_prometheus import free_port

    log = tmp_path / "kern.log"
    log.write_bytes(b"".join(p.read_bytes() for p in FATAL_AND_BENIGN))
    flags = [
        "--state-dir",
        str(tmp_path / "state"),
        "--kernel-log",
        str(log),
        "--path.sysfs",
        str(tmp_path / "nosys"),
    ]
    before = xid_samples(gpuslo("exporter", "--once", *flags).stdout)
    assert (
        before[
            (
                "gpuslo_xid_events_total",
                (("class", "fatal"), ("pci_bus_id", "00000000:55:00.0"), ("xid", "48")),
            )
        ]
        == 2
    )
    assert any(dict(k[1])["class"] == "application" for k in before)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuslo",
            "exporter",
            "--interval",
            "0.2",
            "--listen",
            f"127.0.0.1:{free_port()}",
            *flags,
        ]
    )
    time.sleep(2)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert xid_samples(gpuslo("exporter", "--once", *flags).stdout) == before


def test_carry_counter_rules() -> None:
    assert carry_counter(10, 4, 7) == (13, 7)  # the source grew by 3
    assert carry_counter(13, 7, 2) == (15, 2)  # the source restarted its count: 2 are new
    assert carry_counter(15, 2, 2) == (15, 2)


def test_xid_counters_continue_across_an_exporter_restart(tmp_path: Path) -> None:
    """The xid check reports counts cumulative within a boot (its cursor persists them); the
    exporter's totals continue across its own restart and across a reboot of the node."""
    snap = fixture_snapshot()
    key = ("00000000:00:06.0", "79", "fatal")

    def cycle_with(count: int) -> Exporter:
        reading = dataclasses.replace(snap, xid_events={key: count})
        exporter = Exporter(lambda: reading, None, CounterCarry(tmp_path))  # a fresh process
        exporter.run_checks()
        return exporter

    first = Exporter(lambda: snap, None, CounterCarry(tmp_path))
    first.run_checks()  # the fixture reading: one event each of Xid 43, 31, 94, 79
    assert first.snapshot.xid_events[key] == 1
    assert cycle_with(2).snapshot.xid_events[key] == 2  # exporter restarted; one new event
    after_reboot = cycle_with(1).snapshot.xid_events  # the boot's count starts again at 1
    assert after_reboot[key] == 3
    assert after_reboot[("00000000:00:06.0", "43", "application")] == 1  # series never vanish


def test_state_files_survive_kill_9_mid_write(tmp_path: Path) -> None:
    """A child rewrites the state file as fast as it can; kill -9 at random moments never leaves
    a half-written file."""
    target = tmp_path / "state.json"
    code = (
        "import sys, itertools\nfrom gpuslo.exporter.state import write_json_atomic\n"
        "for i in itertools.count():\n"
        "    write_json_atomic(sys.argv[1], {'i': i, 'pad': 'x' * 200000})\n"
    )
    for delay in (0.05, 0.13, 0.21, 0.3):
        child = subprocess.Popen([sys.executable, "-c", code, str(target)])
        time.sleep(0.4 + delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        value = read_json_state(target, None)
        assert value is not None and len(value["pad"]) == 200000
    assert not [
        p for p in tmp_path.iterdir() if p.name != "state.json" and not p.name.startswith(".")
    ]


def test_broken_state_file_is_refused_not_reset(tmp_path: Path) -> None:
    (tmp_path / CounterCarry.FILE).write_text("{not json")
    with pytest.raises(ParseError, match="exporter_counters.json"):
        CounterCarry(tmp_path)
    write_json_atomic(tmp_path / "x.json", {"b": 1, "a": [1]})
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": [1], "b": 1}


def test_job_counters_equal_a_recomputation_after_restart(tmp_path: Path) -> None:
    write_job(tmp_path, "job-r")
    journal = tmp_path / "job-r.jsonl"
    whole = journal.read_bytes()
    journal.write_bytes(whole[: len(whole) // 2 + 7])  # the tailer sees half, mid-line
    live = JournalTailer(tmp_path)
    live.poll()
    journal.write_bytes(whole)
    live.poll()
    restarted = JournalTailer(tmp_path)
    restarted.poll()
    recomputed = compute_goodput(parse_journal(whole.decode(), str(journal))[0])
    assert live.jobs(5)[0][1] == restarted.jobs(5)[0][1] == recomputed


def test_journal_problems_are_reported_once_across_polls(tmp_path: Path) -> None:
    reported: list[ParseError] = []
    (tmp_path / "bad name.jsonl").write_text("")
    journal = tmp_path / "j.jsonl"
    journal.write_text(
        '{"v":1,"t":1,"event":"job_start","job":"j","node":"n","gpus":1}\n'
        '{"v":9,"t":2,"event":"steps","step":1}\n'
    )
    tailer = JournalTailer(tmp_path, report=reported.append)
    for _ in range(3):
        tailer.poll()
    with open(journal, "a") as f:
        f.write('{"v":9,"t":3,"event":"steps","step":2}\n')
    tailer.poll()
    assert sorted((Path(p.source).name, p.line) for p in reported) == [
        ("bad name.jsonl", None),
        ("j.jsonl", 2),
    ]
    assert [job for job, _ in tailer.jobs(5)] == ["j"]
    assert set(names.JOB_CATEGORIES) == set(tailer.jobs(5)[0][1].gpu_seconds)
