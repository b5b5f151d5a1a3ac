"""Serving replicas from their engine logs, where only logs exist (issue 29, item 3).

`markers` reads a log (through the training-log reader's record pipeline) into serving markers
by kind — ready, loading, crash, shutdown, throughput — from the wording families in
gpuslo/data/serving_log_markers.yaml; `timeline` turns them into the replica's state intervals
and accounts them with `gpuslo.slo.serving`. `serving_log(path, gpus)` is the one call.
"""

from __future__ import annotations

from gpuslo.slo.serving_logs.markers import load_wording
from gpuslo.slo.serving_logs.timeline import serving_log, states_from_markers

__all__ = ["load_wording", "serving_log", "states_from_markers"]
