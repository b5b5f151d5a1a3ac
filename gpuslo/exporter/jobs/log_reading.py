"""What a job's log lines are and what they say, for the job-log tailer (`logs.JobLogTailer`):
pure functions over paths, raw lines and decoded lines, with no file, state or clock. The tailer
does the reading, the spool and the cursor; `recompute` is what it must equal.

Jobs. A kubelet container log (`/var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log`, the
CRI format of `goodput.logs.cri_log`) is the job `<namespace>:<pod>:<container>`; all the files of
that directory are one job, read in order (`file_order`): restart n before n+1, a rotated
`<n>.log.<date>` before the live `<n>.log`. A folder of that shape whose last part is not a UUID
is read the same way (`pod_of`). Any other file is a job named after the path parts the glob
varies over (`varying`; the file name, `job_id_for`, for `DIR/*.log`), its lines plain text or
CRI records, whichever each line is (`cri_log.decode`, shared with `gpuslo goodput`). A
message's own timestamp wins; the CRI time is used for lines that carry none (Megatron iteration
lines), so every event is dated. A message the runtime split into `P` pieces is joined, and each
of its physical lines (a tqdm bar redrawn with `\\r` inside one message) takes the time of the
piece it ends in (`cri_log.timed_lines`).

Restarts. The kubelet starts `<n+1>.log` when the container restarts; the tailer puts
`restart_line(n+1, time)` before its first line, which the profiles' common `init` rule reads
as a (re)start.

Goodput. The decoded lines are read by the same reader as `gpuslo goodput`
(`gpuslo.goodput.logs.reader.LogReader`), and `read_log` / `goodput_from` turn what it parsed
into the `gpuslo goodput` document and the job's goodput, with the same rules.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from gpuslo.goodput.calculator import JobGoodput, compute_goodput
from gpuslo.goodput.logs import job_id_for, load_profiles, year_note
from gpuslo.goodput.logs.assemble import LogGoodput, assemble
from gpuslo.goodput.logs.cri_log import Line, PodLogIdentity, pod_log_identity
from gpuslo.goodput.logs.profiles import Profiles
from gpuslo.goodput.logs.read import binary_start
from gpuslo.goodput.logs.reader import LogReader, ParsedLog
from gpuslo.goodput.slowdown import SlowdownRule

# A container's log file: `<restart count>.log`, rotated `<n>.log.<suffix>`.
ROTATED = re.compile(r"(?P<n>\d+)\.log(?:\.(?P<suffix>[^/]+))?")
# The restart count `file_order` gives a file that is not a container's `<n>.log`.
NOT_A_RESTART = 1 << 30
# A pod folder of the kubelet's shape whose last part need not be a UUID (`pod_of`).
_POD_FOLDER = re.compile(
    r"(?P<namespace>[a-z0-9-]{1,63})_(?P<pod>[a-z0-9.-]{1,253})_(?P<uid>[A-Za-z0-9-]+)")


def _clean(job: str) -> str:
    return re.sub(r"[^A-Za-z0-9._:@+=-]", "_", job).lstrip("._:@+=-")[:128] or "log"


def pod_of(path: str | os.PathLike[str]) -> PodLogIdentity | None:
    """The pod identity of a kubelet container log path (`pod_log_identity`), or of a path of
    its shape whose pod folder's last part is not a UUID (`<namespace>_<pod>_<id>/<container>/
    <n>.log[.<suffix>]`: a copied or renamed pod folder, newcomer3 #1), else None. Pure."""
    identity = pod_log_identity(path)
    parts = PurePath(path).parts
    if identity is not None or len(parts) < 3 or not ROTATED.fullmatch(parts[-1]):
        return identity
    found = _POD_FOLDER.fullmatch(parts[-3])
    if found is None:
        return None
    return PodLogIdentity(found["namespace"], found["pod"], found["uid"], parts[-2])


def job_of(path: str | os.PathLike[str], pattern: str | None = None
           ) -> tuple[str, PodLogIdentity | None]:
    """(job id, pod identity or None) of a log path (see the module docstring) that `pattern`
    (the glob) matched. A non-container file's job is named after the path parts the glob
    varies over (`varying`): `/runs/*/train.log` gives `jobA` for `/runs/jobA/train.log`, so
    two jobs whose logs share a file name are two jobs (newcomer3 #1). Pure."""
    identity = pod_of(path)
    if identity is None:
        return varying(path, pattern), None
    return _clean(f"{identity.namespace}:{identity.pod}:{identity.container}"), identity


def varying(path: str | os.PathLike[str], pattern: str | None) -> str:
    """The job id of `path` from the parts of it that `pattern`'s wildcard parts matched,
    joined with `:` (a file name's log suffix dropped, as `job_id_for`); `job_id_for(path)`
    (its file name) without a pattern, or where the glob has no wildcard or another depth. Pure.
    """
    parts, globbed = PurePath(path).parts, PurePath(pattern or "").parts
    if pattern is None or len(parts) != len(globbed):
        return job_id_for(path)
    picked = [i for i, part in enumerate(globbed) if glob.has_magic(part)]
    if not picked:
        return job_id_for(path)
    last = len(parts) - 1
    return _clean(":".join(job_id_for(parts[i]) if i == last else parts[i] for i in picked))


def jobs_of(matches: Iterable[tuple[str, str]]
            ) -> tuple[dict[str, tuple[PodLogIdentity | None, list[str]]], list[str]]:
    """The jobs of (glob, path) matches: {job: (identity, paths)} and a message for each job
    name two different non-container files would share (two globs, or `a.log` beside `a.out`):
    each such file is then a job named after its whole path, never one merged job. Pure."""
    named: dict[str, tuple[PodLogIdentity | None, list[str]]] = {}
    for pattern, path in matches:
        job, identity = job_of(path, pattern)
        paths = named.setdefault(job, (identity, []))[1]
        if path not in paths:
            paths.append(path)
    groups: dict[str, tuple[PodLogIdentity | None, list[str]]] = {}
    clashes: list[str] = []
    for job, (identity, paths) in named.items():
        if identity is not None or len(paths) == 1:
            groups.setdefault(job, (identity, []))[1].extend(paths)
            continue
        clashes.append(f"job name {job!r} would join {len(paths)} different files "
                       f"({', '.join(map(repr, paths[:3]))}): each read as a job named "
                       "after its path")
        for path in paths:
            whole = _clean(":".join(PurePath(path).parts[1:]))
            groups.setdefault(whole, (None, []))[1].append(path)
    return groups, clashes


@dataclass(frozen=True)
class Chunk:
    """What one read of a job-log file gives (`complete_lines`): `end`, the bytes it consumes
    from the read's offset; `data`, the complete lines among them to decode; `skipping`, True
    while inside a line longer than a read (its rest is skipped when it comes); `problem`,
    "" or the `names.JOURNAL_ERROR_REASONS` word to count: `line_too_long` once per such line,
    `parse_error` for a file whose start is binary (nothing consumed: not read)."""

    end: int
    data: bytes
    skipping: bool = False
    problem: str = ""


def complete_lines(data: bytes, offset: int, skipping: bool, full: bool) -> Chunk:
    """The complete lines of `data`, read at `offset` of a file (pure). A file whose first
    bytes are binary as `gpuslo goodput` judges them (`read.binary_start`) is not read (newcomer
    7 F1); a read that is `full` (the reader's whole chunk) with no line break starts a line too
    long to read: skipped, counted once (newcomer 7 F9), and its rest, up to its line break in a
    later read, skipped too (`skipping`). A last line without its break waits for it."""
    if offset == 0 and not skipping and binary_start(data):
        return Chunk(0, b"", problem="parse_error")
    start = 0
    if skipping:
        start = data.find(b"\n") + 1
        if start == 0:
            return Chunk(len(data), b"", skipping=True)
    end = data.rfind(b"\n") + 1
    if end == 0 and full:
        return Chunk(len(data), b"", skipping=True, problem="line_too_long")
    return Chunk(max(end, start), data[start:end] if end > start else b"")


def restart_line(count: int, ts: float | None) -> Line:
    """The line that stands for the container's restart number `count` (its `<count>.log`
    began at `ts`), as the profiles' common `init` rule reads it. Pure."""
    return (ts, f"gpuslo: container restarted (restart count {count})")


def restart_marker(pod_log: bool, before: int | None, name: str,
                   decoded: list[Line]) -> tuple[list[Line], int | None]:
    """([restart_line] when `decoded` are the first lines of a container's new restart count —
    its `<n>.log` (`name`) with n above `before`, the highest read so far — else [], and the
    highest count read with these lines). Only a kubelet pod log (`pod_log`) has restart
    counts. Pure."""
    count = file_order(name)[0]
    if not pod_log or not decoded or count >= NOT_A_RESTART:
        return [], before
    if before is None or count <= before:
        return [], count if before is None else before
    return [restart_line(count, decoded[0][0])], count


def read_log(parsed: ParsedLog, job: str, gpus: int, profiles: Profiles,
             said: str | None = None) -> LogGoodput:
    """The facts (the `gpuslo goodput` document) and journal events of what the log said so
    far: `assemble`, as `analyse_log` does for a file, with its note on a year assumed for
    year-less stamps (`said`: the reference's words, `last_written`). Pure."""
    result = assemble(parsed, job=job, gpus=gpus, checkpoint_step=profiles.checkpoint_step,
                      saves_silently=profiles.saves_silently(parsed.framework))
    if said is not None:
        result.document["notes"] += year_note(parsed, said)
    return result


@dataclass
class LogJobGoodput(JobGoodput):
    """A log job's `JobGoodput` whose goodput the log cannot give: `goodput_unknown` says why
    (a `names.JOB_GOODPUT_UNKNOWN_REASONS` word). Its progress (last step, last progress time,
    step compute time) and interruptions are published; its GPU-seconds and committed step
    are not (never a made-up 0.0)."""

    goodput_unknown: str = "other"


UNKNOWN_WORDS = (("no commit evidence", "no_commit_evidence"), ("no clock", "no_clock"),
                 ("the clock goes back", "clock_unreliable"),
                 ("does not say the step it resumed from", "restart_step_unknown"))


def goodput_unknown_reason(document: dict) -> str:
    """Why a log's goodput is unknown, as a `names.JOB_GOODPUT_UNKNOWN_REASONS` word from the
    document's `goodput.reason` words (pure); "" when its goodput is known or it has none
    (no progress read: nothing to publish)."""
    goodput = document.get("goodput") or {}
    if document["status"] == "ok" or not goodput:
        return ""
    why = str(goodput.get("reason") or "")
    return next((word for text, word in UNKNOWN_WORDS if text in why), "other")


def goodput_from(result: LogGoodput, job: str, until: float | None = None,
                 rule: SlowdownRule | None = None) -> JobGoodput | None:
    """The job's goodput from `read_log`'s result (events after `until` not counted); `rule`
    is the sustained-slowdown rule (default `SlowdownRule()`). Pure.

    None when the log shows no progress yet. Where it shows progress but its goodput is
    unknown (no commit evidence: Lightning saving silently; no clock; the rule of `gpuslo
    goodput`'s exit status and `report --training-log`), a `LogJobGoodput` naming why: its
    progress is still published, its goodput never made up.

    A log that dates nothing (`LogGoodput.dated` False: no stamp, no CRI time) has no time of
    day for its last progress or event: both are 0.0 (none), never its own clock's seconds
    since its start read as Unix seconds (newcomer5 #11: fairseq's `train_wall` 5026 exported
    as 1970); the tailer gives them the time it saw the step count change."""
    reason = goodput_unknown_reason(result.document)
    if result.document["status"] != "ok" and not reason:
        return None
    goodput = compute_goodput(result.events, until=until, rule=rule)
    goodput.job = job
    if not result.dated:
        goodput.last_progress_t = goodput.last_event_t = 0.0
    if not reason:
        return goodput
    if goodput.last_step < 0:
        return None
    fields = {f.name: getattr(goodput, f.name) for f in dataclasses.fields(JobGoodput)}
    return LogJobGoodput(**fields, goodput_unknown=reason)


def goodput_of(parsed: ParsedLog, job: str, gpus: int, profiles: Profiles,
               until: float | None = None, rule: SlowdownRule | None = None) -> JobGoodput | None:
    """`goodput_from(read_log(...))`. Pure."""
    return goodput_from(read_log(parsed, job, gpus, profiles), job, until, rule)


def recompute(lines: Iterable[Line], job: str, gpus: int, profiles: Profiles | None = None,
              until: float | None = None, rule: SlowdownRule | None = None,
              reference: float | None = None) -> JobGoodput | None:
    """`goodput_of` for a whole list of decoded lines at once (what the tailer must equal);
    `reference`: when the log was last written (Unix seconds), for year-less stamps."""
    profiles = profiles or load_profiles()
    reader = LogReader(profiles, reference=reference)
    for ts, text in lines:
        reader.feed(text, ts)
    return goodput_of(reader.parsed(), job, gpus, profiles, until, rule)


def file_order(name: str) -> tuple[int, int, str]:
    """Reading order of the files of one container: restart count, rotated before live."""
    found = ROTATED.fullmatch(name)
    if found is None:
        return (NOT_A_RESTART, 0, name)
    return (int(found["n"]), 0 if found["suffix"] else 1, found["suffix"] or "")
