"""Issue 25's attack on gpuslo, rerunnable by anyone: loopback only, every loop bounded.

    python bench/attack.py [--only trickle,slurm,prometheus,config,bad_files,training_clock]
                           [--clients 300] [--scrapes 10]

Scenarios and their targets (the issue's "Done when"):
- trickle: 300 clients send a request line and then a header line every 2 s to an exporter's
  web server (cap 256, head deadline 5 s; reconnecting 0.5 s after being closed), in plain
  HTTP, over TLS without a client certificate, and with basic auth; meanwhile 10 scrapes,
  one every 1.2 s: >= 9/10 answered within 3 s in each (before: 0/12 over 70 s).
- slurm: `check --format slurm --drain` and `exporter --once --slurm` against a fake scontrol
  printing a Latin-1 drain reason (the admin's drain is read and left, no traceback), one that
  prints a garbled document (drained with tool_error), and one that hangs with a child (killed
  with its process group at the deadline). The real-slurmctld versions are in tests/slurm.
- prometheus: `report --prometheus --timeout 2` against a server trickling a byte every 0.3 s
  in its status line, headers and body (exit 2 within 6 x 2 s), every malformed answer of
  tests/slo/test_prometheus_hostile.py (exit 2, one line), and a fuzz set of answers mutated at
  random (seeded): an InputError or an answer, never anything else.
- config: every option that names a config file x every bad file of tests/test_config_file.py
  (FIFO, directory, device, 10 MB, 100k-deep flow, deep block, alias bomb, NUL, binary, empty,
  only comments), and a fuzz set of the packaged policy and a spec with bytes mutated at random
  (seeded): exit 0 or 2, one line, never a traceback.
- bad_files: every other file option a command needs (tests/test_bad_files.py: inputs, TLS
  files, output directories) x a directory, an empty, a binary, a Latin-1 and a missing path:
  one line naming the path, exit 2.
- training_clock: issue 25 #5's reproducers (fixed by the training-log issue): a log whose
  clock goes back one day half-way accounts 98-100 % of its GPU-seconds with a note; one whose
  stamps run backwards does too, or says its goodput is unknown with a reason.

Prints one line per scenario with its figures; exits 1 when a target is missed or anything
raised (a traceback counts once per case). The scenarios on input files (config, bad_files,
training_clock) are in bench/attack_inputs.py; what every scenario shares (the in-process
`gpuslo` run, the one-line-error target) in bench/attack_common.py.

Latest, 2026-12-05 07:58 UTC (a39dfc0, all scenarios, defaults, load 4.6): every target met in
107 s; each scenario's figures: bench/HISTORY.md, "attack.py".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from attack_common import REPO, one_line_error, run_cli  # first: puts tests/ on sys.path
from attack_inputs import bad_files, config, training_clock
from hostile_peers import Tricklers, http_answer, scripted_server

SERVER = """
import sys, time
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.exporter.web.config import WebConfig, load_web_config
from gpuslo.exporter.web.server import MetricsServer
exporter = Exporter(lambda: NodeSnapshot(node="n", taken_at=time.time()), None)
exporter.run_checks()
config = load_web_config(sys.argv[1]) if sys.argv[1] else WebConfig()
server = MetricsServer(exporter.registry, "127.0.0.1", 0, config).start()
print(server.address[1], flush=True)
sys.stdin.read()
server.shutdown()
"""
XID79 = ("[  100.000000] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, "
         "GPU has fallen off the bus.\n")


# --- trickle ------------------------------------------------------------------------------------


def _web_config(kind: str, work: Path) -> str:
    if kind == "plain":
        return ""
    lines = []
    if kind in ("tls", "auth"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        str(work / "k.pem"), "-out", str(work / "c.pem"), "-days", "1", "-subj",
                        "/CN=127.0.0.1"], check=True, capture_output=True, timeout=60)
        lines += ["tls_server_config:", f"  cert_file: {work / 'c.pem'}",
                  f"  key_file: {work / 'k.pem'}"]
    if kind == "auth":
        import bcrypt

        hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
        lines += ["basic_auth_users:", f"  prom: '{hashed}'"]
    path = work / f"web-{kind}.yml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def trickle(kind: str, clients: int, scrapes: int, work: Path,
            server_repo: Path = REPO) -> tuple[bool, str]:
    """One web-server variant under `clients` tricklers: (target met, figures). The server runs
    the gpuslo of `server_repo` (another checkout measures a baseline)."""
    import requests
    import urllib3

    urllib3.disable_warnings()
    server = subprocess.Popen([sys.executable, "-c", SERVER, _web_config(kind, work)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(server_repo)},
                              cwd=server_repo)  # `-c` puts the working directory first
    try:
        port = int(server.stdout.readline())
        scheme = "http" if kind == "plain" else "https"
        auth = ("prom", "s3cret") if kind == "auth" else None
        took = []
        with Tricklers(port, clients, every_s=2.0, tls=kind != "plain", reconnect_s=0.5,
                       max_s=120) as tricklers:
            time.sleep(3.0)
            for _ in range(scrapes):
                began = time.monotonic()
                try:
                    answer = requests.get(f"{scheme}://127.0.0.1:{port}/metrics", timeout=3,
                                          verify=False, auth=auth)
                    ok = answer.status_code == 200 and "gpuslo_build_info" in answer.text
                except requests.RequestException:
                    ok = False
                took.append(time.monotonic() - began if ok else float("inf"))
                time.sleep(max(0.0, 1.2 - (time.monotonic() - began)))
            opened, closed = tricklers.opened, tricklers.closed
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    answered = sum(t < 3 for t in took)
    finite = sorted(t for t in took if t < float("inf")) or [float("nan")]
    figures = (f"{answered}/{scrapes} scrapes within 3 s (median {finite[len(finite) // 2]:.2f}"
               f" s, slowest answered {finite[-1]:.2f} s); tricklers opened {opened}, closed "
               f"by the server {closed}")
    return answered * 10 >= 9 * scrapes, figures


# --- slurm --------------------------------------------------------------------------------------


def _fake_scontrol(work: Path, name: str, show: bytes | None, hang: bool = False) -> str:
    """A scontrol that prints `show` for `show node` (no --json, as Slurm 22.05), records every
    `update` in `<name>.updates`, or (`hang`) starts a child and hangs."""
    (work / f"{name}.show").write_bytes(show or b"")
    body = (f"sleep 300 &\necho $! > {work / name}.child\nsleep 300\n" if hang else
            f'case "$1" in --json) echo "unrecognized option" >&2; exit 1;; '
            f'update) echo "$*" >> {work / name}.updates; exit 0;; esac\n'
            f"cat {work / name}.show\n")
    script = work / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def slurm(work: Path) -> tuple[bool, str]:
    log = work / "xid79.log"
    log.write_text(XID79)
    latin1 = _fake_scontrol(work, "latin1", b"NodeName=n State=IDLE+DRAIN "
                            b"Reason=L\xfcfter defekt [admin@2026-12-01T10:00:00]\n")
    garbled = _fake_scontrol(work, "garbled", b"NodeName=n Sta\xff\xfe\n")
    hung = _fake_scontrol(work, "hung", None, hang=True)
    base = ["check", "--format", "slurm", "--drain", "--check", "xid", "--kernel-log", str(log),
            "--node", "n", "--deadline", "20"]
    results = {}
    quick = work / "slurm-health.yaml"
    quick.write_text("scontrol_timeout_s: 1\n")  # each scontrol call's deadline
    for name, scontrol in (("latin1", latin1), ("garbled", garbled), ("hung", hung)):
        began = time.monotonic()
        code, out, err = run_cli([*base, "--state-dir", str(work / f"s-{name}"), "--scontrol",
                                  scontrol, "--slurm-config", str(quick)])
        results[name] = (code, out.strip(), err, time.monotonic() - began)
    updates = lambda n: (work / f"{n}.updates").read_text() if (work / f"{n}.updates").exists() \
        else ""  # noqa: E731
    child = int((work / "hung.child").read_text()) if (work / "hung.child").exists() else 0
    code, out, err = run_cli(["exporter", "--once", "--slurm", "--node", "n", "--scontrol",
                              latin1, "--kernel-log", str(log), "--state-dir", str(work / "e")])
    series = 'gpuslo_slurm_node_state{reason="slurm_drain",reason_layer="platform",' \
             'state="drained"} 1.0' in out
    checks = {
        "latin1 read, admin drain left": results["latin1"][:2] == (1, "gpuslo: xid "
                                         "fallen_off_bus pci:00000000:91:00.0")
        and updates("latin1") == "",
        "garbled drained with tool_error": results["garbled"][:2] == (1, "gpuslo: gpuslo "
                                           "tool_error node")
        and "reason=gpuslo: gpuslo tool_error node" in updates("garbled"),
        "hung scontrol's child killed": child > 0 and not _alive(child),
        "exporter --once keeps the series": code == 0 and series,
    }
    tracebacks = sum("Traceback" in r[2] for r in results.values()) + ("Traceback" in err)
    figures = "; ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items())
    return all(checks.values()) and not tracebacks, f"{figures}; tracebacks {tracebacks}"


# --- prometheus ---------------------------------------------------------------------------------


def _mutate(value: object, rng: random.Random, depth: int = 0) -> object:
    """`value` with one part replaced by a random JSON value (seeded)."""
    junk = [None, 1, -1.5, "x", "NaN", [], {}, [1, "2"], {"a": 1}, True, 1e308, "1" * 50]
    if depth > 6 or not isinstance(value, dict | list) or not value or rng.random() < 0.25:
        return rng.choice(junk)
    if isinstance(value, dict):
        key = rng.choice(sorted(value))
        return {**value, key: _mutate(value[key], rng, depth + 1)}
    i = rng.randrange(len(value))
    return [*value[:i], _mutate(value[i], rng, depth + 1), *value[i + 1:]]


def prometheus(work: Path, fuzz: int) -> tuple[bool, str]:
    from slo.test_prometheus_hostile import EMPTY, MALFORMED

    import gpuslo.cli.report  # noqa: F401 - imported before the clock starts
    import gpuslo.slo.report.pipeline  # noqa: F401
    from gpuslo.errors import InputError
    from gpuslo.slo.sources.query_api import QueryApi

    window = ["--start", "2026-11-23", "--end", "2026-11-24", "--out", str(work / "r")]
    slowest, trickle_ok = 0.0, True
    for cut in (9, EMPTY.index(b"\r\n") + 2, len(EMPTY) - 20):  # status line, headers, body
        with scripted_server(EMPTY, trickle_from=cut, every_s=0.3) as url:
            began = time.monotonic()
            code, _, err = run_cli(["report", "--prometheus", url, "--timeout", "2", *window])
            slowest = max(slowest, time.monotonic() - began)
            trickle_ok &= one_line_error(code, err)
    malformed_ok = 0
    for answer, _ in MALFORMED.values():
        with scripted_server(answer) as url:
            code, _, err = run_cli(["report", "--prometheus", url, "--timeout", "5", *window])
            malformed_ok += one_line_error(code, err)
    rng, valid = random.Random(25), {"status": "success", "data": {"resultType": "vector",
             "result": [{"metric": {"instance": "a", "uuid": "GPU-1"}, "value": [1.5, "1"]}]}}
    raised = 0
    for _ in range(fuzz):
        body = json.dumps(_mutate(valid, rng)).encode()
        with scripted_server(http_answer(body)) as url:
            try:
                QueryApi(url, timeout_s=5, retries=0).instant("up", _stamp())
            except InputError:
                pass
            except Exception:  # noqa: BLE001 - what the attack counts
                raised += 1
    figures = (f"trickling: exit 2 in one line, slowest {slowest:.1f} s for --timeout 2 "
               f"(target < 12 s); malformed answers: {malformed_ok}/{len(MALFORMED)} exit 2 in "
               f"one line; fuzz: {raised}/{fuzz} raised anything but InputError")
    return trickle_ok and slowest < 12 and malformed_ok == len(MALFORMED) and not raised, figures


def _stamp():
    import pandas as pd

    return pd.Timestamp("2026-11-23", tz="UTC")


SCENARIOS = ("trickle", "slurm", "prometheus", "config", "bad_files", "training_clock")


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--scrapes", type=int, default=10)
    parser.add_argument("--fuzz", type=int, default=40, help="fuzz cases per set (seeded)")
    parser.add_argument("--server-repo", type=Path, default=REPO,
                        help="gpuslo checkout the trickle scenario's web server runs (a "
                        "baseline: e.g. a worktree of an older commit)")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    began, missed = time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="gpuslo-attack-") as tmp:
        work = Path(tmp)
        runs = []
        if "trickle" in chosen:
            runs += [(f"trickle {kind}", lambda k=kind: trickle(k, args.clients, args.scrapes,
                                                                 work, args.server_repo))
                     for kind in ("plain", "tls", "auth")]
        runs += [(name, fn) for name, fn in (
            ("slurm", lambda: slurm(work)), ("prometheus", lambda: prometheus(work, args.fuzz)),
            ("config", lambda: config(work, args.fuzz)), ("bad_files", lambda: bad_files(work)),
            ("training_clock", lambda: training_clock(work))) if name in chosen]
        for name, fn in runs:
            started = time.monotonic()
            try:
                ok, figures = fn()
            except Exception:  # noqa: BLE001 - a scenario that raised is a miss, shown whole
                ok, figures = False, traceback.format_exc()
            print(f"{'ok  ' if ok else 'MISS'} {name} ({time.monotonic() - started:.1f} s): "
                  f"{figures}", flush=True)
            missed += [] if ok else [name]
    print(f"attack: {len(missed)} scenario(s) missed their target in "
          f"{time.monotonic() - began:.0f} s" + (f": {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main_())
