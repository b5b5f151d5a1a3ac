"""Pure parts of the Slurm support: scontrol parsing, the drain rule, state labels, the HPC
job-mapping directory and its prolog/epilog scripts, the config file, the jobcomp log."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

from gpuslo.cli import main
from gpuslo.errors import ConfigError
from gpuslo.exporter.evidence.hpc_jobs import read_hpc_job_mapping
from gpuslo.exporter.evidence.slurm import (
    Completed,
    SlurmNode,
    SlurmUnavailable,
    parse_node_json,
    parse_node_text,
    read_node,
    split_state,
)
from gpuslo.exporter.jobs.hpc import HpcJobAllocations, hpc_job_allocations
from gpuslo.exporter.slurm.config import parse_slurm_config
from gpuslo.exporter.slurm.drain import DRAIN, NOTHING, RESUME, decide, own_reason_word, reason_line
from gpuslo.exporter.slurm.state import node_state_labels
from gpuslo.exporter.snapshot import GpuAllocation, GpuInfo
from gpuslo.slo.sources.slurm import parse_jobcomp

# `scontrol show node vm` of Debian 12's Slurm 22.05.8, drained by gpuslo
SHOW_NODE = """NodeName=vm Arch=x86_64 CoresPerSocket=1
   CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=0.63
   OS=Linux 6.18.44 #1 SMP PREEMPT_DYNAMIC @0
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=debug
   Reason=gpuslo: xid xid_fatal gpu0 [root@2026-12-01T19:28:55]
"""
OWN = "gpuslo: xid xid_fatal gpu0"


def test_plain_text_state_flags_and_reason_without_slurms_suffix():
    node = parse_node_text(SHOW_NODE, "vm")
    assert node == SlurmNode("vm", "IDLE", ("DRAIN",), OWN, "root") and node.drained
    one_line = " ".join(line.strip() for line in SHOW_NODE.splitlines())
    assert parse_node_text(one_line, "vm").reason == OWN
    with pytest.raises(SlurmUnavailable) as error:
        parse_node_text(SHOW_NODE, "other")
    assert error.value.reason == "parse_error"


def test_json_of_new_and_old_data_parsers():
    new = {"nodes": [{"name": "vm", "state": ["IDLE", "DRAIN"], "reason": OWN,
                      "reason_set_by_user": "root"}]}  # fmt: skip
    old = {"nodes": [{"name": "vm", "state": "down", "state_flags": ["NOT_RESPONDING"]}]}
    drained = SlurmNode("vm", "IDLE", ("DRAIN",), OWN, "root")
    assert parse_node_json(json.dumps(new), "vm") == drained
    assert parse_node_json(json.dumps(old), "vm").down
    assert split_state("DOWN*") == ("DOWN", ("NOT_RESPONDING",))


def test_read_node_falls_back_to_text_when_scontrol_has_no_json():
    calls = []

    def run(argv, timeout_s):
        calls.append(list(argv))
        if "--json" in argv:
            return Completed(1, "", "scontrol: unrecognized option '--json'\n")
        return Completed(0, SHOW_NODE, "")

    assert read_node("vm", "/opt/scontrol", run, 2.0).reason == OWN
    assert calls == [["/opt/scontrol", "--json", "show", "node", "vm"],
                     ["/opt/scontrol", "show", "node", "vm"]]  # fmt: skip
    with pytest.raises(SlurmUnavailable) as error:
        read_node("vm", "/opt/scontrol", lambda a, t: Completed(1, "", "Invalid node name"), 2.0)
    assert error.value.reason == "tool_error"


@pytest.mark.parametrize(("node", "code", "action"), [
    (SlurmNode("n", "IDLE"), 1, DRAIN),
    (SlurmNode("n", "IDLE", ("DRAIN",), OWN), 1, NOTHING),  # same reason already
    (SlurmNode("n", "IDLE", ("DRAIN",), "gpuslo: xid check_timeout node"), 1, DRAIN),  # new reason
    (SlurmNode("n", "IDLE", ("DRAIN",), "INC-42 disk"), 1, NOTHING),  # an administrator's
    (SlurmNode("n", "DOWN", (), "Not responding"), 1, NOTHING),
    (SlurmNode("n", "IDLE", ("DRAIN",), OWN), 0, RESUME),
    (SlurmNode("n", "IDLE", ("DRAIN",), "INC-42 disk"), 0, NOTHING),  # never theirs
    (SlurmNode("n", "MIXED"), 0, NOTHING),
])  # fmt: skip
def test_the_drain_rule(node, code, action):
    assert decide(node, code, OWN).action == action


def test_reason_line_is_one_bounded_line_without_quotes():
    line = reason_line('x"id', "xid_fatal", "gpu[0]\nmore" + "x" * 200)
    assert line.startswith("gpuslo: xid xid_fatal gpu(0) more") and len(line.encode()) <= 80
    assert '"' not in line and "\n" not in line
    assert own_reason_word(OWN) == "xid_fatal" and own_reason_word("INC-42") is None


@pytest.mark.parametrize(("node", "labels"), [
    (SlurmNode("n", "IDLE"), ("up", "", "")),
    (SlurmNode("n", "IDLE", ("DRAIN",), OWN), ("drained", "node", "xid_fatal")),
    (SlurmNode("n", "IDLE", ("DRAIN",), "gpuslo: gpuslo check_timeout node"),
     ("drained", "observability", "check_timeout")),
    (SlurmNode("n", "ALLOCATED", ("DRAIN",), "rack work"), ("drained", "platform", "slurm_drain")),
    (SlurmNode("n", "DOWN"), ("down", "platform", "slurm_down")),
    (SlurmNode("n", "IDLE", ("MAINT",)), ("maintenance", "platform", "slurm_maintenance")),
])  # fmt: skip
def test_node_state_labels_stay_bounded(node, labels):
    assert node_state_labels(node) == labels


def test_prolog_and_epilog_keep_the_job_mapping_directory(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "GPUSLO_HPC_JOB_MAPPING_DIR": str(tmp_path / "map")}

    def script(name, job, gpus):
        subprocess.run(["sh", str(REPO / "deploy" / "slurm" / name)], check=True, timeout=10,
                       env={**env, "SLURM_JOB_ID": job, "SLURM_JOB_GPUS": gpus})  # fmt: skip

    script("prolog-gpuslo-job-mapping.sh", "101", "0,1")
    script("prolog-gpuslo-job-mapping.sh", "102", "1")
    assert read_hpc_job_mapping(tmp_path / "map") == {"0": ["101"], "1": ["101", "102"]}
    script("epilog-gpuslo-job-mapping.sh", "101", "0,1")
    assert read_hpc_job_mapping(tmp_path / "map") == {"1": ["102"]}
    assert sorted(p.name for p in (tmp_path / "map").iterdir()) == ["1"]
    assert read_hpc_job_mapping(tmp_path / "absent") == {}
    gpus = (GpuInfo("1", "GPU-b", "", "", ""),)
    assert hpc_job_allocations({"1": ["102"]}, gpus) == [GpuAllocation("1", "GPU-b", hpc_job="102")]
    source = HpcJobAllocations(tmp_path / "map", lambda: gpus)
    source.sample()
    assert source.allocations() == [GpuAllocation("1", "GPU-b", hpc_job="102")]
    assert (source.state().status, source.state().reason) == ("ok", "")
    (tmp_path / "notadir").write_text("x")
    broken = HpcJobAllocations(tmp_path / "notadir", lambda: gpus)
    broken.sample()  # a mapping "directory" that cannot be listed: unknown, never empty-and-ok
    assert (broken.state().status, broken.state().reason) == ("unknown", "tool_error")
    assert broken.allocations() == []


def test_config_file_names_every_bad_field():
    config = parse_slurm_config("drain: true\ndeadline_s: 20\nchecks: [xid]\n", "f.yaml")
    assert (config.drain, config.deadline_s, config.checks) == (True, 20.0, ("xid",))
    with pytest.raises(ConfigError) as error:
        parse_slurm_config("drain: yes please\ndeadline_s: 90\nchekcs: [xid]\n", "f.yaml")
    assert all(word in str(error.value) for word in ("drain", "deadline_s", "chekcs"))


def test_jobcomp_states_become_interruptions_by_layer():
    line = ("JobId={job} UserId=root(0) GroupId=root(0) Name=wrap JobState={state} Partition=debug "
            "TimeLimit=1 StartTime=2026-01-05T00:00:00 EndTime=2026-01-05T01:00:00 NodeList=n1 "
            "NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1 Account= QOS= WcKey= "
            "Cluster=unknown ExitCode=0:0")  # fmt: skip
    states = ["COMPLETED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "FAILED", "CANCELLED"]
    text = "\n".join(line.format(job=i, state=s) for i, s in enumerate(states)) + "\n"
    ends = parse_jobcomp(text).query("event == 'job_end'")
    assert list(zip(ends["status"], ends["layer"], strict=True)) == [
        ("completed", ""), ("failed", "node"), ("failed", "platform"), ("failed", "platform"),
        ("failed", "training"), ("cancelled", ""),
    ]  # fmt: skip


@pytest.mark.skipif(Path("/proc/driver/nvidia").exists(), reason="this machine has a GPU driver")
def test_without_gpus_the_slurm_format_answers_one_line_and_non_zero(tmp_path, capsys, monkeypatch):
    """This machine as it is (no NVIDIA driver): every default check, one reason line, exit 1."""
    monkeypatch.delenv("GPUSLO_NVML_PATH", raising=False)
    code = main(["check", "--format", "slurm", "--state-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and out.count("\n") == 1
    assert out.startswith("gpuslo: ") and " dependency_missing " in out
