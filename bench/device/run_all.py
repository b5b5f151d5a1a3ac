"""One command for the next GPU machine (issue 26): every live check gpuslo needs from a real
node, written to one JSON summary.

    sudo python3 bench/device/run_all.py --out bench/device/results/<host>.json   # a GPU node
    python3 bench/device/run_all.py --replay --out bench/device/results/cpu-replay.json

Sections (each with `applicable`, and `why` when it is not):
1. `check`: `gpuslo check --format json` on the real NVML and kernel log (seconds, verdict);
2. `check_active_idle`: `gpuslo check --active --check gpu_probe`, every GPU idle (seconds, per
   GPU bf16 TFLOP/s and copy TB/s as the probe reports them);
3. `check_active_loaded`: the same while a PyTorch training loop (`training_load.py`) runs on
   GPU 0: GPU 0 must read "busy: speed not judged", never fail;
4. `exporter_once`: `gpuslo exporter --once` (seconds, series, GPU verdicts);
5. `xid_latency`: the exporter serving with its kernel-log watcher on /dev/kmsg; 20 Xid 79 lines
   written to /dev/kmsg (marked `name=gpuslo-injected-test`), each timed until
   `gpuslo_xid_events_total` counts it (p50, p99, max in seconds). Needs root; it leaves the
   injected lines in the kernel log: run it only on a machine that is given back;
6. `gate`: the return-to-service gate on GPU 0 with the real probe (and dcgmi where DCGM is
   installed): an Xid 79 in a kernel-log file → unhealthy; a reboot (a new boot id in a procfs
   overlay) → validating → the validators → healthy, with the `gpuslo_gpu_validation_*` series.
With `--replay` (or when no GPU answers `nvidia-smi -L`) the GPU sections say not applicable and
carry what the same commands give on the NVML replay and the probe replay
(gpuslo/data/nvml_replay, gpuslo/data/probe_replay) under `replay`, so the script itself is
exercised on CPU; the Xid latency is not run there (it writes to the host's kernel log).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NVML_REPLAY = REPO / "gpuslo" / "data" / "nvml_replay"
PROBE_REPLAY = REPO / "gpuslo" / "data" / "probe_replay" / "h200.json"
HEALTHY_LOG = REPO / "gpuslo" / "data" / "demo" / "h200" / "dmesg.txt"
GPUSLO = [sys.executable, "-m", "gpuslo"]
FIGURES = re.compile(r"bf16 (\d+) TFLOPS, copy ([\d.]+) TB/s")
KERNEL_LOG: list[str] = []  # --kernel-log for the replayed node (its log is not this host's)


def run(argv: list[str], env: dict[str, str], timeout_s: float = 300) -> dict:
    """Run a gpuslo command: exit code, seconds, stdout (JSON when it parses), stderr tail."""
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s,
                          cwd=REPO, check=False)
    out: dict = {"argv": argv[2:], "rc": done.returncode,
                 "seconds": round(time.monotonic() - started, 3), "stderr": done.stderr[-500:]}
    try:
        out["json"] = json.loads(done.stdout)
    except ValueError:
        out["stdout"] = done.stdout  # callers keep what they need of it
    return out


def probe_figures(report: dict) -> list[dict]:
    """Per GPU: status, reason and the probe's words (bf16 TFLOP/s, copy TB/s when measured)."""
    rows = []
    for r in report.get("results", []):
        if r["check"] != "gpu_probe":
            continue
        match = FIGURES.search(r["message"])
        rows.append({"gpu": r["gpu"], "status": r["status"], "reason": r["reason"],
                     "bf16_tflops": float(match.group(1)) if match else None,
                     "copy_tbps": float(match.group(2)) if match else None,
                     "message": r["message"]})
    return rows


def section(real: bool, why: str, body) -> dict:
    """A GPU section: run `body` for real, or on the replays with `applicable: false`."""
    if real:
        return {"applicable": True, **body()}
    return {"applicable": False, "why": why, "replay": body()}


def check(env: dict, state: Path) -> dict:
    out = run([*GPUSLO, "check", "--format", "json", "--state-dir", str(state), *KERNEL_LOG], env)
    report = out.pop("json", {})
    return {**out, "verdict": report.get("verdict"),
            "gpus": [(g["gpu"], g["model"], g["verdict"]) for g in report.get("gpus", [])]}


def check_active(env: dict, state: Path) -> dict:
    out = run([*GPUSLO, "check", "--active", "--check", "gpu_probe", "--format", "json",
               "--state-dir", str(state), *KERNEL_LOG], env)
    return {**out, "gpus": probe_figures(out.pop("json", {}))}


def check_loaded(env: dict, state: Path, real: bool) -> dict:
    """`check --active` beside a training loop on GPU 0 (the NVML replay's busy mode on CPU)."""
    if not real:
        return check_active({**env, "GPUSLO_FAKE_NVML_MODE": "busy", "GPUSLO_FAKE_NVML_BUSY": "0",
                             "GPUSLO_PROBE_REPLAY_MODE": "loaded",
                             "GPUSLO_PROBE_REPLAY_GPUS": "0"}, state)
    load = subprocess.Popen([sys.executable, str(REPO / "bench/device/training_load.py"), "60"],
                            env={**env, "CUDA_VISIBLE_DEVICES": "0"})
    try:
        time.sleep(15)  # past PyTorch's start-up: the job is computing
        return check_active(env, state)
    finally:
        load.terminate()
        load.wait(30)


def exporter_once(env: dict, state: Path) -> dict:
    out = run([*GPUSLO, "exporter", "--once", "--state-dir", str(state), *KERNEL_LOG], env)
    text = out.pop("stdout", "")
    verdicts = re.findall(r'gpuslo_gpu_verdict\{gpu="(\d+)",uuid="[^"]+",verdict="(\w+)"\} 1', text)
    validation = [line for line in text.splitlines() if line.startswith("gpuslo_gpu_validation")]
    return {**out, "series": sum(1 for line in text.splitlines() if line and line[0] != "#"),
            "gpu_verdicts": verdicts, "validation_series": validation[:12]}


def gate(env: dict, root: Path, real: bool) -> dict:
    """Xid 79 → reboot (procfs overlay with a new boot id) → validating → validators → healthy.
    On the replay the first try after the reboot measures GPU 0 slow (the probe replay's
    `loaded` figures), so the validating state shows before the pass."""
    proc = root / "proc"
    (proc / "sys/kernel/random").mkdir(parents=True)
    log = root / "kern.log"
    bus = _first_bus(env)
    line = (f"[  100.000000] NVRM: Xid (PCI:{bus}): 79, pid=0, name=gpuslo-injected-test, "
            "GPU has fallen off the bus.\n")
    steps = []
    slow = {} if real else {"GPUSLO_PROBE_REPLAY_MODE": "loaded", "GPUSLO_PROBE_REPLAY_GPUS": "0"}
    for name, boot, text, extra in (("xid", "boot-1", HEALTHY_LOG.read_text() + line, {}),
                                    ("rebooted", "boot-2", HEALTHY_LOG.read_text(), slow),
                                    ("next", "boot-2", HEALTHY_LOG.read_text(), {})):
        (proc / "sys/kernel/random/boot_id").write_text(boot + "\n")
        log.write_text(text)
        out = run([*GPUSLO, "check", "--format", "json", "--state-dir", str(root / "state"),
                   "--kernel-log", str(log), "--path.procfs", str(proc)], {**env, **extra}, 900)
        report = out.pop("json", {})
        gated = [r["message"] for r in report.get("results", []) if r["check"] == "validation"]
        steps.append({"step": name, "rc": out["rc"], "seconds": out["seconds"],
                      "gpu0": report.get("gpus", [{}])[0].get("verdict"), "gate": gated})
    saved = json.loads((root / "state" / "return_to_service.json").read_text())
    return {"steps": steps, "gates_total": saved["totals"]}


def _first_bus(env: dict) -> str:
    """GPU 0's PCI bus id in the kernel log's form (0000:00:06), from gpuslo's own inventory."""
    out = run([*GPUSLO, "check", "--check", "gpu_inventory", "--format", "json", "--state-dir",
               tempfile.mkdtemp()], env)
    bus = out.get("json", {}).get("gpus", [{}])[0].get("pci_bus_id", "00000000:00:06.0")
    return bus[4:].rsplit(".", 1)[0]


def xid_latency(env: dict, state: Path, injections: int = 20) -> dict:
    """The exporter watching /dev/kmsg; time from each written Xid line to the counter."""
    port = 19836
    exporter = subprocess.Popen([*GPUSLO, "exporter", "--listen", f"127.0.0.1:{port}",
                                 "--state-dir", str(state)], env=env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(lambda: _xids(port) is not None, 120)
        bus, seconds = _first_bus(env), []
        for _ in range(injections):
            before = _xids(port) or 0
            started = time.monotonic()
            with open("/dev/kmsg", "w") as kmsg:
                kmsg.write(f"NVRM: Xid (PCI:{bus}): 79, pid=0, name=gpuslo-injected-test, "
                           "GPU has fallen off the bus.\n")
            _wait(lambda b=before: (_xids(port) or 0) > b, 30, step_s=0.005)
            seconds.append(time.monotonic() - started)
            time.sleep(0.5)
    finally:
        exporter.terminate()
        exporter.wait(30)
    seconds.sort()
    pick = lambda q: round(seconds[min(len(seconds) - 1, int(q * len(seconds)))], 4)  # noqa: E731
    return {"injections": len(seconds), "p50_s": pick(0.5), "p99_s": pick(0.99),
            "max_s": round(seconds[-1], 4), "seconds": [round(s, 4) for s in seconds]}


def _xids(port: int) -> float | None:
    import urllib.request
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
    except OSError:
        return None
    counts = re.findall(rb'^gpuslo_xid_events_total\{[^}]*xid="79"[^}]*\} ([\d.e+]+)', text, re.M)
    return sum(float(c) for c in counts)


def _wait(predicate, timeout_s: float, step_s: float = 0.25) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s} s")
        time.sleep(step_s)


def gpu_present() -> bool:
    """True when nvidia-smi lists a GPU."""
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and "GPU " in done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the JSON summary to write")
    parser.add_argument("--replay", action="store_true", help="NVML and probe replays (CPU)")
    args = parser.parse_args()
    real = gpu_present() and not args.replay
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    why = "no GPU machine: NVML replay of the recorded H200 and the probe replay"
    if not real:
        env.update(GPUSLO_NVML_PATH=str(NVML_REPLAY), GPUSLO_PROBE_REPLAY=str(PROBE_REPLAY),
                   GPUSLO_FAKE_NVML=str(NVML_REPLAY / "h200x8.json"))
    root = Path(tempfile.mkdtemp(prefix="gpuslo-device-"))
    summary = {
        "label": "real GPU run" if real else "CPU run: " + why,
        "host": platform.node(), "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                 text=True).stdout.strip(),
        "nvidia_smi": shutil.which("nvidia-smi") is not None,
        "dcgmi": shutil.which("dcgmi") is not None,
    }
    if not real:  # the replayed node's kernel log: the demo's healthy H200 boot, not this host's
        KERNEL_LOG[:] = ["--kernel-log", str(HEALTHY_LOG)]
    summary["check"] = section(real, why, lambda: check(env, root / "check"))
    summary["check_active_idle"] = section(real, why, lambda: check_active(env, root / "idle"))
    summary["check_active_loaded"] = section(real, why,
                                             lambda: check_loaded(env, root / "loaded", real))
    summary["exporter_once"] = section(real, why, lambda: exporter_once(env, root / "once"))
    summary["xid_latency"] = (
        {"applicable": True, **xid_latency(env, root / "kmsg")} if real else
        {"applicable": False, "why": "no GPU machine lent: injecting into this host's /dev/kmsg "
         "would write to a shared kernel log (and needs root)"})
    summary["gate"] = section(real, why, lambda: gate(env, root / "gate", real))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    print(f"wrote {args.out}: {summary['label']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
