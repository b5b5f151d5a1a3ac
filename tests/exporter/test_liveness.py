"""The liveness probe fails closed and the exporter loop beats."""

import os
import threading

from gpuslo.cli.liveness import main
from gpuslo.exporter.server import Exporter


def test_probe_fails_on_missing_and_stale_heartbeat(tmp_path):
    beat = tmp_path / "exporter.heartbeat"
    assert main(["--heartbeat", str(beat)]) == 1
    beat.touch()
    os.utime(beat, (1000.0, 1000.0))
    assert main(["--heartbeat", str(beat), "--max-age", "60"], clock=lambda: 1059.0) == 0
    assert main(["--heartbeat", str(beat), "--max-age", "60"], clock=lambda: 1061.0) == 1


def test_loop_touches_heartbeat_even_when_a_cycle_fails(tmp_path):
    beat = tmp_path / "exporter.heartbeat"
    calls = []

    def cycle():
        calls.append(1)
        raise RuntimeError("a broken cycle must not stop the heartbeat of a live loop")

    exporter = Exporter(cycle, None, heartbeat=beat)
    stop = threading.Event()
    worker = threading.Thread(target=exporter.loop, args=(stop, 0.01))
    worker.start()
    while not calls or not beat.exists():
        pass
    stop.set()
    worker.join(timeout=5)
    assert beat.exists() and exporter.snapshot is None


def test_exporter_takes_node_name_and_config_intervals(tmp_path):
    """The exporter builds its runner like `gpuslo check` does: --node wins over the host name."""
    import argparse

    from gpuslo.cli import exporter as server

    parser = argparse.ArgumentParser()
    server.configure(parser)
    args = parser.parse_args(
        [
            "--node",
            "gpu-node-17",
            "--state-dir",
            str(tmp_path),
            "--interval",
            "7",
            "--path.sysfs",
            str(tmp_path),
            "--path.procfs",
            str(tmp_path),
        ]
    )
    exporter, runner = server.build_exporter(args)
    try:
        assert runner.node == "gpu-node-17"
        assert set(runner.intervals.values()) == {7.0}
    finally:
        runner.close()
