"""`gpuslo check --format slurm --drain` against a real slurmctld/slurmd on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from slurm_cluster import HEALTHY, XID79, wait_for

from gpuslo.cli import main

pytestmark = pytest.mark.slurm

OWN_REASON = "gpuslo: xid fallen_off_bus pci:00000000:91:00.0"


def reason_of(text: str) -> str:
    for line in text.splitlines():
        if line.strip().startswith("Reason="):
            return line.strip()[len("Reason="):].rsplit(" [", 1)[0]
    return ""


def state_of(text: str) -> str:
    return text.split("State=", 1)[1].split()[0]


def run_check(capsys, cluster, log: Path, state_dir: Path, *extra: str) -> tuple[int, str]:
    code = main(["check", "--format", "slurm", "--drain", "--check", "xid", "--kernel-log",
                 str(log), "--state-dir", str(state_dir), "--node", cluster.node, *extra])
    return code, capsys.readouterr().out


def test_fatal_xid_drains_the_node_and_healthy_again_resumes_it(cluster, tmp_path, capsys):
    bad, good = tmp_path / "bad.log", tmp_path / "good.log"
    bad.write_text(XID79)
    good.write_text(HEALTHY)
    code, out = run_check(capsys, cluster, bad, tmp_path / "s1")
    assert (code, out) == (1, OWN_REASON + "\n")
    shown = cluster.show()
    assert "DRAIN" in state_of(shown) and reason_of(shown) == OWN_REASON
    code, out = run_check(capsys, cluster, bad, tmp_path / "s1")  # still bad: nothing changes
    assert code == 1 and reason_of(cluster.show()) == OWN_REASON
    code, out = run_check(capsys, cluster, good, tmp_path / "s2")  # repaired (new boot)
    assert (code, out) == (0, "gpuslo: ok\n")
    assert reason_of(cluster.show()) == "" and "DRAIN" not in state_of(cluster.show())
    # slurmctld pings a resumed node: NOT_RESPONDING for a moment, then IDLE
    wait_for(lambda: state_of(cluster.show()) == "IDLE", 10)


def test_an_administrators_drain_is_left_alone(cluster, tmp_path, capsys):
    cluster.scontrol_run("update", f"nodename={cluster.node}", "state=drain",
                         "reason=disk replacement INC-42")
    bad, good = tmp_path / "bad.log", tmp_path / "good.log"
    bad.write_text(XID79)
    good.write_text(HEALTHY)
    assert run_check(capsys, cluster, good, tmp_path / "s1")[0] == 0
    shown = cluster.show()
    assert "DRAIN" in state_of(shown) and reason_of(shown) == "disk replacement INC-42"
    assert run_check(capsys, cluster, bad, tmp_path / "s2")[0] == 1
    assert reason_of(cluster.show()) == "disk replacement INC-42"


def test_a_hanging_check_drains_with_check_timeout(cluster, tmp_path, capsys):
    """The kernel log is a FIFO nobody writes: opening it blocks the xid check for ever."""
    fifo = tmp_path / "kmsg.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    code, out = run_check(capsys, cluster, fifo, tmp_path / "s", "--check-timeout", "1")
    assert time.monotonic() - started < 10
    assert (code, out) == (1, "gpuslo: xid check_timeout node\n")
    assert reason_of(cluster.show()) == "gpuslo: xid check_timeout node"


def test_its_own_deadline_drains_with_check_timeout_and_exits_at_once(cluster, tmp_path):
    """A check deadline longer than gpuslo's own: the whole-run deadline answers, in a child
    process (the run ends with os._exit), configured through $GPUSLO_SLURM_CONFIG as slurmd
    would run the wrapper: no arguments."""
    fifo = tmp_path / "kmsg.fifo"
    os.mkfifo(fifo)
    config = tmp_path / "slurm-health.yaml"
    config.write_text(f"drain: true\nnode: {cluster.node}\nscontrol: {cluster.scontrol}\n"
                      f"deadline_s: 2\ncheck_timeout_s: 30\nchecks: [xid]\n"
                      f"kernel_log: {fifo}\nstate_dir: {tmp_path / 's'}\n")  # fmt: skip
    env = {**cluster.env, "GPUSLO_SLURM_CONFIG": str(config),
           "GPUSLO": f"{sys.executable} -m gpuslo"}  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(["sh", str(REPO / "deploy" / "slurm" / "gpuslo-slurm-health")],
                          env=env, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert time.monotonic() - started < 15
    assert (done.returncode, done.stdout) == (1, "gpuslo: gpuslo check_timeout node\n")
    assert reason_of(cluster.show()) == "gpuslo: gpuslo check_timeout node"


def test_scontrol_missing_is_reported_and_the_answer_still_printed(cluster, tmp_path, capsys):
    bad = tmp_path / "bad.log"
    bad.write_text(XID79)
    code, out = run_check(capsys, cluster, bad, tmp_path / "s", "--scontrol",
                          str(tmp_path / "no-scontrol"))
    assert (code, out) == (1, OWN_REASON + "\n")
    assert "Reason=" not in cluster.show()


@pytest.mark.parametrize("reason", [b"L\xfcfter defekt", b"fan \xff\xfe\x80 cut \xe2\x82"],
                         ids=["latin1", "invalid-utf8"])
def test_an_undecodable_reason_never_crashes_the_health_check(cluster, tmp_path, capsys,
                                                               reason):
    """Issue 25 #2: an admin's tool drained the node with a Latin-1 reason (`Lüfter defekt`);
    scontrol prints those bytes as they are. The HealthCheckProgram raised UnicodeDecodeError;
    now it reads the reason (U+FFFD for the byte), leaves the administrator's drain alone and
    answers with the fatal Xid, with no traceback."""
    subprocess.run([cluster.scontrol, "update", f"nodename={cluster.node}", "state=drain",
                    b"reason=" + reason], env=cluster.env, check=True, timeout=15)
    bad = tmp_path / "bad.log"
    bad.write_text(XID79)
    code = main(["check", "--format", "slurm", "--drain", "--check", "xid", "--kernel-log",
                 str(bad), "--state-dir", str(tmp_path / "s"), "--node", cluster.node])
    out, err = capsys.readouterr()
    assert (code, out, err) == (1, OWN_REASON + "\n", "")
    shown = subprocess.run([cluster.scontrol, "show", "node", cluster.node], env=cluster.env,
                           capture_output=True, timeout=15).stdout
    assert b"Reason=" + reason in shown and b"DRAIN" in shown


def test_a_drain_path_that_fails_drains_with_tool_error(cluster, tmp_path, capsys):
    """Issue 25 #2: any error in the drain path (here scontrol shows a node document gpuslo
    cannot parse) drains the node with gpuslo's tool_error reason, one line on stderr, even on
    a healthy node: gpuslo could not tell what the drain would have overwritten."""
    wrapper = tmp_path / "scontrol"
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" show "*) echo "{{garbled"; exit 0;; esac\n'
                       f'exec {cluster.scontrol} "$@"\n')
    wrapper.chmod(0o755)
    good = tmp_path / "good.log"
    good.write_text(HEALTHY)
    code = main(["check", "--format", "slurm", "--drain", "--check", "xid", "--kernel-log",
                 str(good), "--state-dir", str(tmp_path / "s"), "--node", cluster.node,
                 "--scontrol", str(wrapper)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "gpuslo: gpuslo tool_error node\n")
    assert "Traceback" not in err and "the drain path failed (parse_error" in err
    shown = cluster.show()
    assert "DRAIN" in state_of(shown) and reason_of(shown) == "gpuslo: gpuslo tool_error node"


@pytest.mark.parametrize("reason", [b"L\xfcfter defekt", b"fan \xff\xfe\x80 cut \xe2\x82"],
                         ids=["latin1", "invalid-utf8"])
def test_exporter_once_keeps_its_slurm_series_with_an_undecodable_reason(cluster, tmp_path,
                                                                         reason):
    """Issue 25 #2: `exporter --once --slurm` exited 1 with no output (and the server logged a
    traceback every cycle, its Slurm series gone) when the node's reason was Latin-1. Also
    bytes no encoding decodes (a lone continuation byte, a cut multi-byte character), on a node
    with a fatal Xid: exit 0, nothing on stderr, the node drained by its administrator in
    exactly one series at 1, and the Xid's fail beside it."""
    subprocess.run([cluster.scontrol, "update", f"nodename={cluster.node}", "state=drain",
                    b"reason=" + reason], env=cluster.env, check=True, timeout=15)
    shown = subprocess.run([cluster.scontrol, "show", "node", cluster.node], env=cluster.env,
                           capture_output=True, timeout=15).stdout
    assert b"Reason=" + reason in shown  # slurmctld keeps the bytes as they are
    bad = tmp_path / "bad.log"
    bad.write_text(XID79)
    done = subprocess.run([sys.executable, "-m", "gpuslo", "exporter", "--once", "--slurm",
                           "--node", cluster.node, "--scontrol", cluster.scontrol,
                           "--kernel-log", str(bad), "--state-dir", str(tmp_path / "s")],
                          env=cluster.env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    states = [line for line in done.stdout.splitlines()
              if line.startswith("gpuslo_slurm_node_state{") and line.endswith(" 1.0")]
    assert states == ['gpuslo_slurm_node_state{reason="slurm_drain",reason_layer="platform",'
                      'state="drained"} 1.0']
    assert 'gpuslo_check_status{check="xid",status="fail"} 1.0' in done.stdout
