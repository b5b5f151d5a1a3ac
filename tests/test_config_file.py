"""One config reader for every file option (issue 25 #6, #8): a FIFO, a directory, a device,
a file over the size cap, YAML nested past the limit (a RecursionError in PyYAML's Python
loader, a segmentation fault in its C loader), an alias bomb, binary bytes, a NUL or a file
that sets nothing (empty, only comments) are each one line naming the file, exit 2, in well
under a second of reading — for every option that names a config file, through the real
command line. tests/test_bad_files.py holds every other file option of every command."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import CORPUS

from gpuslo.cli import main
from gpuslo.config_file import MAX_CONFIG_BYTES, MAX_DEPTH, load_yaml, parse_yaml
from gpuslo.errors import ConfigError

KERNEL_LOG = CORPUS / "cases" / "002_xid45-secondary-to-xid149-xid145.txt"
TRAINING_LOG = Path(__file__).parent / "goodput" / "data" / "torchtitan_crash_restart.log"


def bad_files(root: Path) -> dict[str, tuple[Path, str]]:
    """name -> (a hostile file, what its one-line error says)."""
    root.mkdir(parents=True, exist_ok=True)
    fifo = root / "fifo.yaml"
    os.mkfifo(fifo)
    files = {
        "a FIFO": (fifo, "a FIFO, not a regular file"),
        "a directory": (root, "a directory"),
        "a device": (Path("/dev/zero"), "a device, not a regular file"),
        "missing": (root / "missing.yaml", "No such file or directory"),
    }
    texts = {
        "10 MB": ("a:\n" + "  k: 1\n" * (10 * 1024 * 1024 // 7), "larger than 1,048,576 bytes"),
        "100k-deep flow": ("a: " + "[" * 100_000 + "]" * 100_000, "nest"),
        "deep block": ("- " * 5_000 + "x\n", f"nested deeper than {MAX_DEPTH} levels"),
        "deep indent": ("".join(" " * i + f"k{i}:\n" for i in range(500)), "nested deeper"),
        "alias bomb": ("a: &a [1, 1]\nb: &b [*a, *a]\nc: [*b, *b]\n", "YAML alias *a"),
        "self alias": ("a: &a [*a]\n", "YAML alias *a"),
        "NUL": ("a: 1\nb: \x00\n", ":2: not valid YAML"),
        "empty": ("", "(no field set)"),  # never "the defaults": leaving the option out is
        "only comments": ("# drain: true\n", "(no field set)"),
    }
    for name, (text, says) in texts.items():
        path = root / f"{name.replace(' ', '_')}.yaml"
        path.write_text(text)
        files[name] = (path, says)
    binary = root / "binary.yaml"
    binary.write_bytes(b"a: 1\n" + bytes(range(128, 256)))
    files["binary"] = (binary, ":2: not UTF-8 text")
    return files


def options(tmp: Path) -> dict[str, list[str]]:
    """option -> the command line with FILE in place of the file (each command's cheapest run)."""
    state = str(tmp / "state")
    check = ["check", "--check", "xid", "--kernel-log", str(KERNEL_LOG), "--state-dir", state]
    exporter = ["exporter", "--once", "--kernel-log", str(KERNEL_LOG),
                "--state-dir", state]
    return {
        "check --config": [*check, "--config", "FILE"],
        "check --policy": [*check, "--policy", "FILE"],
        "check --slurm-config": [*check, "--format", "slurm", "--slurm-config", "FILE"],
        "exporter --config": [*exporter, "--config", "FILE"],
        "exporter --policy": [*exporter, "--policy", "FILE"],
        "exporter --slo": [*exporter, "--slo", "FILE"],
        "exporter --web.config.file": [*exporter, "--web.config.file", "FILE"],
        "inspect --policy": ["inspect", str(KERNEL_LOG), "--policy", "FILE"],
        "report --slo": ["report", "--training-log", str(TRAINING_LOG), "--gpus", "8", "--slo",
                         "FILE", "--out", str(tmp / "report")],
        "rules --slo": ["rules", "--slo", "FILE", "--out", str(tmp / "rules")],
        "dashboards --slo": ["dashboards", "--slo", "FILE", "--out", str(tmp / "boards")],
        "goodput --profiles": ["goodput", str(TRAINING_LOG), "--profiles", "FILE"],
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    return bad_files(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize("option", sorted(options(Path("/x"))))
def test_every_config_option_refuses_every_bad_file_in_one_line(option, hostile, tmp_path,
                                                                capsys):
    for name, (path, says) in hostile.items():
        argv = [str(path) if a == "FILE" else a for a in options(tmp_path)[option]]
        began = time.monotonic()
        code = main(argv)
        elapsed = time.monotonic() - began
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert code == 2, (name, code, err)
        assert len(lines) == 1 and str(path) in lines[0] and says in lines[0], (name, err)
        assert elapsed < 5, (name, elapsed)


def test_the_reader_keeps_good_files_whole(tmp_path):
    good = tmp_path / "g.yaml"
    good.write_text("a: {b: [1, 2.5, x]}\nc: null\n")
    assert load_yaml(good, "test") == {"a": {"b": [1, 2.5, "x"]}, "c": None}
    at_limit = "x" + ": {x" * (MAX_DEPTH - 1) + ": 1" + "}" * (MAX_DEPTH - 1)
    assert parse_yaml(at_limit, "t") is not None
    with pytest.raises(ConfigError, match="nested deeper"):
        parse_yaml("[" + at_limit + "]", "t")
    full = tmp_path / "full.yaml"
    full.write_text("#" * (MAX_CONFIG_BYTES - 8) + "\na: 1\n")
    assert load_yaml(full, "test") == {"a": 1}


def test_tls_files_a_web_config_names_are_regular_files(tmp_path, capsys):
    """`ssl` would wait for ever on a FIFO named as cert_file in the web config."""
    fifo = tmp_path / "cert.pem"
    os.mkfifo(fifo)
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {fifo}\n  key_file: {fifo}\n")
    began = time.monotonic()
    code = main(["exporter", "--once", "--kernel-log", str(KERNEL_LOG), "--state-dir",
                 str(tmp_path / "s"), "--web.config.file", str(web)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and time.monotonic() - began < 5, err
    assert f"{fifo}: cannot read TLS file: a FIFO, not a regular file" in err
