"""Liveness of the exporter's own loop: who watches the watcher (probe: `gpuslo.cli.liveness`).

The exporter touches `<state dir>/exporter.heartbeat` on every turn of its check loop (at least
every 5 s). An HTTP probe of /metrics would pass while that loop is stuck and every check result
is going stale; this probe fails then, so Kubernetes restarts the exporter:

    python -m gpuslo.cli.liveness --heartbeat /var/lib/gpuslo/exporter.heartbeat --max-age 120

Exit 0 when the heartbeat is younger than `--max-age` seconds, 1 otherwise (missing file included:
fail closed), with one line saying why.
"""

from __future__ import annotations

import os


def heartbeat_age(path: str, now: float) -> float | None:
    """Seconds since `path` was last touched at `now`, None when it does not exist."""
    try:
        return now - os.stat(path).st_mtime
    except FileNotFoundError:
        return None

