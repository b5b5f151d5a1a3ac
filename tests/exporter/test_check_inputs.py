"""`gpuslo check` / `gpuslo exporter --once` fed inputs that are not what they claim to be: a file
that is not a kernel log, a sysfs root that is not a sysfs, a policy overlay or node config
that cannot be used. Each must be `unknown` or one line naming the file (exit 2), never
`healthy` and never a traceback."""

from __future__ import annotations

import json
import os
import threading

import pytest

from gpuslo.cli import main
from gpuslo.errors import ParseError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck

XID48 = "[ 1200.000001] NVRM: Xid (PCI:0000:91:00): 48, pid=1, name=python, DBE (0x1)\n"
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def check(capsys, *args):
    code = main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def xid_node_result(capsys, tmp_path, kernel_log) -> tuple[int, dict]:
    code, out, _ = check(
        capsys,
        "--format",
        "json",
        "--check",
        "xid",
        "--state-dir",
        str(tmp_path / "state"),
        "--kernel-log",
        str(kernel_log),
    )
    (node,) = [r for r in json.loads(out)["results"] if r["scope"] == "node"]
    return code, node


@pytest.mark.parametrize(
    "content",
    [
        PASSWD.encode(),  # /etc/passwd
        bytes(range(256)) * 400,  # random-looking bytes
        b"a" * (3 * 1024 * 1024) + b"\n",  # one long line
        b"",  # empty
        b"\n\n\n",  # blank lines
    ],
    ids=["passwd", "binary", "one-long-line", "empty", "blank"],
)
def test_a_file_that_is_not_a_kernel_log_is_unknown_not_healthy(tmp_path, capsys, content):
    path = tmp_path / "not-kern.log"
    path.write_bytes(content)
    code, node = xid_node_result(capsys, tmp_path, path)
    assert code == 1
    assert (node["status"], node["reason"]) == ("unknown", "parse_error")
    assert str(path) in node["message"]


def test_a_kernel_log_after_a_long_non_kernel_head_is_judged_by_its_head(tmp_path):
    """The kind is told by the first 64 KiB: a fatal Xid after 1 MiB of other text is not read."""
    path = tmp_path / "mixed.log"
    path.write_text("hello world\n" * 100_000 + XID48)
    with pytest.raises(ParseError, match="not a kernel log"):
        XidCheck().run(CheckContext(kernel_log=path, state_dir=tmp_path))


def test_a_real_kernel_log_still_reads(tmp_path, capsys):
    path = tmp_path / "kern.log"
    path.write_text("[    0.000000] Linux version 6.8.0\n" + XID48)
    code, out, _ = check(
        capsys,
        "--format",
        "json",
        "--check",
        "xid",
        "--state-dir",
        str(tmp_path / "state"),
        "--kernel-log",
        str(path),
    )
    statuses = {r["scope"]: (r["status"], r["reason"]) for r in json.loads(out)["results"]}
    assert statuses["pci:00000000:91:00.0"] == ("fail", "xid_fatal") and statuses["node"] == (
        "ok",
        "",
    )
    assert code == 1


def test_the_kernel_log_is_read_once(tmp_path):
    """A FIFO can be read only once: the check must judge and scan it in one pass."""
    fifo = tmp_path / "kern.fifo"
    os.mkfifo(fifo)
    text = ("[    0.000000] Linux version 6.8.0\n" * 5000 + XID48).encode()

    def write():
        with open(fifo, "wb") as handle:
            handle.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    output = XidCheck().run(CheckContext(kernel_log=fifo, state_dir=tmp_path))
    writer.join()
    statuses = {r.scope: r.status for r in output.results}
    assert statuses == {"pci:00000000:91:00.0": "fail", "node": "ok"}


def test_a_sysfs_root_that_does_not_exist_is_unknown(tmp_path, capsys):
    code, out, _ = check(
        capsys,
        "--format",
        "json",
        "--check",
        "network_links",
        "--state-dir",
        str(tmp_path / "state"),
        "--path.sysfs",
        str(tmp_path / "nonexistent"),
    )
    (result,) = json.loads(out)["results"]
    assert code == 1 and result["status"] == "unknown"
    assert (
        result["reason"] == "dependency_missing"
        and str(tmp_path / "nonexistent") in result["message"]
    )


def test_a_sysfs_root_with_class_but_no_infiniband_is_not_applicable(tmp_path, capsys):
    (tmp_path / "sys" / "class" / "net").mkdir(parents=True)
    code, out, _ = check(
        capsys,
        "--format",
        "json",
        "--check",
        "network_links",
        "--state-dir",
        str(tmp_path / "state"),
        "--path.sysfs",
        str(tmp_path / "sys"),
    )
    (result,) = json.loads(out)["results"]
    assert code == 0 and (result["status"], result["applicable"]) == ("ok", False)


@pytest.mark.parametrize("command", [["check", "--check", "xid"], ["exporter", "--once"]])
def test_an_unusable_policy_is_a_one_line_config_error_at_start(tmp_path, capsys, command):
    for text in ("zzz: 1\n", "xid: {families: {hoppr: {}}}\n"):
        policy = tmp_path / "p.yaml"
        policy.write_text(text)
        code = main([*command, "--state-dir", str(tmp_path / "state"), "--policy", str(policy)])
        err = capsys.readouterr().err
        assert code == 2 and str(policy) in err and len(err.strip().splitlines()) == 1
    code = main(
        [*command, "--state-dir", str(tmp_path / "state"), "--policy", str(tmp_path / "none.yaml")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "none.yaml" in err and len(err.strip().splitlines()) == 1


def test_a_policy_from_the_config_file_is_checked_at_start(tmp_path, capsys):
    policy = tmp_path / "p.yaml"
    policy.write_text("xid: {families: {hoppr: {}}}\n")
    config = tmp_path / "node.yaml"
    config.write_text(f"policy: {policy}\n")
    code, _, err = check(capsys, "--config", str(config), "--state-dir", str(tmp_path / "state"))
    assert code == 2 and "hoppr" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["check"], ["exporter", "--once"]])
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (bytes(range(256)) * 20, "not UTF-8"),
        (b"expect_gpus: 8\nchecks: [\n", "node.yaml:3"),
        (b"\0\0\0\0", "node.yaml"),
    ],
    ids=["binary", "yaml-error", "nul"],
)
def test_an_unusable_node_config_is_one_line_naming_the_file(
    tmp_path, capsys, command, content, expected
):
    config = tmp_path / "node.yaml"
    config.write_bytes(content)
    code = main([*command, "--config", str(config), "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--check-timeout", "nan"],
        ["--check-timeout", "inf"],
        ["--check-timeout", "0"],
        ["--check-timeout", "-1"],
        ["--expect-gpus", "-1"],
        ["--expect-gpus", "0"],
    ],
)
def test_zero_negative_or_not_finite_flags_are_one_line_errors(tmp_path, capsys, args):
    try:
        code = main(["check", "--check", "pcie", "--state-dir", str(tmp_path), *args])
    except SystemExit as stop:  # argparse's own usage error
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and args[0] in err and "Traceback" not in err and "Error:" not in err


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("expect_gpus: 0", "expect_gpus"),
        ("expect_gpus: -2", "expect_gpus"),
        ("expect_nvlinks: 0", "expect_nvlinks"),
        ("check_timeout_s: 0", "check_timeout_s"),
        ("check_timeout_s: -1", "check_timeout_s"),
        ("check_timeout_s: .nan", "check_timeout_s"),
        ("interval_s: -30", "interval_s"),
        ("checks: {xid: {timeout_s: 0}}", "checks.xid.timeout_s"),
        ("expect_network_devices: {efa: -1}", "expect_network_devices.efa"),
    ],
)
def test_zero_or_negative_counts_and_timeouts_in_the_config_are_one_line_errors(
    tmp_path, capsys, line, field
):
    config = tmp_path / "node.yaml"
    config.write_text(line + "\n")
    code, _, err = check(capsys, "--config", str(config), "--state-dir", str(tmp_path))
    assert code == 2 and field in err and str(config) in err and len(err.strip().splitlines()) == 1
