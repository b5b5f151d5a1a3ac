"""Slurm as an SLO source: node-state samples → schedulability and verdict intervals, and
slurmctld's job-completion log (`JobCompType=jobcomp/filetxt`, no slurmdbd) → job events.

`node_state_frames(intervals)`: intervals of `gpuslo_slurm_node_state == 1` (node, state,
reason_layer, reason, start, end; the Prometheus source merges samples into them) become
- a node-wide `verdicts` interval (uuid "") for gpuslo's own drains: `unhealthy` with the reason
  and its layer (node for `xid_fatal`...), or `unknown` for an observability reason — the node
  was drained because gpuslo found it so, and accounting ranks that above healthy;
- a `schedulability` interval for everyone else's: state `drained` (drains, DOWN) or
  `maintenance`, reason `slurm_drain`/`slurm_down`/`slurm_maintenance` — platform, exactly as a
  Kubernetes cordon.
`up` and `unknown` (scontrol did not answer) samples give no interval.

`parse_jobcomp(text, source)`: one `job_start` and one `job_end` per job-completion record, the
job_end status and layer from its JobState (`JOB_STATE_LAYER`): NODE_FAIL → node, PREEMPTED,
TIMEOUT, REQUEUED, DEADLINE → platform, FAILED, OUT_OF_MEMORY → training; anything but
COMPLETED/CANCELLED is a `failed` end, i.e. an interruption. Pure; `load_jobcomp(path)` reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from gpuslo import names
from gpuslo.errors import InputError, ParseError
from gpuslo.slo.frames import make_frame

STATE_SCHEDULABILITY = {"drained": "drained", "down": "drained", "maintenance": "maintenance"}
JOB_STATE_LAYER = {
    "NODE_FAIL": names.LAYER_NODE,
    "BOOT_FAIL": names.LAYER_NODE,
    "PREEMPTED": names.LAYER_PLATFORM,
    "TIMEOUT": names.LAYER_PLATFORM,
    "REQUEUED": names.LAYER_PLATFORM,
    "DEADLINE": names.LAYER_PLATFORM,
    "FAILED": names.LAYER_TRAINING,
    "OUT_OF_MEMORY": names.LAYER_TRAINING,
}
_END_STATUS = {"COMPLETED": "completed", "CANCELLED": "cancelled"}
_FIELD = re.compile(r"(?:^|\s)([A-Za-z]+)=(\S*)")
_COLUMNS = ["node", "time", "state", "reason_layer", "reason"]


def node_state_frames(intervals: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(verdicts, schedulability) frames from state intervals (columns node, state,
    reason_layer, reason, start, end; `prometheus.samples_to_intervals` merges samples into them)
    as the module docstring says. Pure; raises ParseError (via make_frame) for a reason outside
    names.REASONS."""
    iv = intervals.reindex(columns=[*_COLUMNS, "start", "end"])
    iv = iv[iv["state"].isin(list(STATE_SCHEDULABILITY))]
    theirs = iv["reason_layer"].fillna("").isin(["", names.LAYER_PLATFORM])
    own = iv[~theirs]
    verdict = own["reason_layer"].map(
        lambda layer: names.VERDICT_UNKNOWN
        if layer == names.LAYER_OBSERVABILITY
        else names.VERDICT_UNHEALTHY
    )
    verdicts = pd.DataFrame(
        {
            "node": own["node"], "uuid": "", "start": own["start"], "end": own["end"],
            "verdict": verdict, "reason": own["reason"], "layer": own["reason_layer"],
            "action": "",
        }
    )  # fmt: skip
    platform = iv[theirs]
    sched = pd.DataFrame(
        {
            "node": platform["node"], "start": platform["start"], "end": platform["end"],
            "state": platform["state"].map(STATE_SCHEDULABILITY), "reason": platform["reason"],
        }
    )  # fmt: skip
    return (
        make_frame("verdicts", verdicts, "gpuslo_slurm_node_state"),
        make_frame("schedulability", sched, "gpuslo_slurm_node_state"),
    )


def _record(line: str, number: int, source: str) -> list[dict]:
    fields = dict(_FIELD.findall(line))
    for key in ("JobId", "JobState", "StartTime", "EndTime"):
        if key not in fields:
            raise ParseError(source, f"job-completion record without {key}", line=number, field=key)
    state = fields["JobState"].upper()
    status = _END_STATUS.get(state, "failed")
    layer = "" if status != "failed" else JOB_STATE_LAYER.get(state, "")
    nodes = fields.get("NodeList", "")
    node = "" if nodes in ("", "(null)", "None") else nodes
    job = fields["JobId"]
    base = {"job": job, "node": node, "gpus": pd.NA, "step": pd.NA, "category": ""}
    return [
        {**base, "time": fields["StartTime"], "event": "job_start", "status": "", "layer": ""},
        {**base, "time": fields["EndTime"], "event": "job_end", "status": status, "layer": layer},
    ]


def parse_jobcomp(text: str, source: str = "jobcomp") -> pd.DataFrame:
    """`job_events` frame from jobcomp/filetxt text (one `JobId=... JobState=...` line per ended
    job; a requeued job appears once per run). Times are the controller's local time, read as UTC.
    Records that never started (StartTime Unknown/None) are skipped. Raises ParseError naming
    the line for a record without JobId, JobState, StartTime or EndTime."""
    rows: list[dict] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        rows += [r for r in _record(line, number, source) if r["time"] not in ("Unknown", "None")]
    frame = pd.DataFrame(rows, columns=["job", "node", "time", "event", "step", "category",
                                        "gpus", "status", "layer"])  # fmt: skip
    return make_frame("job_events", frame, source)


def load_jobcomp(path: str | Path) -> pd.DataFrame:
    """Read and parse a job-completion log; InputError when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(str(path), error.strerror or str(error)) from None
    return parse_jobcomp(text, str(path))
