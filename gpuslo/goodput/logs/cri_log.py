"""Container logs as the kubelet keeps them (the CRI logging format), evidence for job goodput.

Each line a container runtime (containerd, CRI-O) writes under
`/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log` is

    2024-01-01T00:00:00.123456789Z stdout F step 10 loss 2.1
    <RFC 3339 time, nanoseconds> <stream> <tags> <message>

(Kubernetes `pkg/kubelet/kuberuntime/logs`, `parseCRILog`): stream `stdout` or `stderr`; tags
separated by `:`, the first `F` (full: the line ends here) or `P` (partial: the runtime split a
long line, the message continues in the next `P`/`F` record of the same stream); the message
without its newline. The kubelet rotates `0.log` to `0.log.<YYYYMMDD-hhmmss>` (and later gzips
older ones) and a container restart writes `<restart+1>.log`.

Pure: `parse_cri_line(line)`, `CriJoiner` (partials joined per stream), `decode(raw, joiner)`
(the dated physical lines of one raw line), `pod_log_identity(path)`. `decode` is the one CRI
reading of both paths: the exporter's `--job-log` tailer feeds it each raw line of a pod log, and
`gpuslo goodput` on a CRI file (`envelope.Envelope`) feeds it each record with the redraws that
`read` split off it rejoined, so the two give the same lines and times.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import PurePath

from gpuslo.goodput.logs.read import physical_lines

_CRI = re.compile(
    r"(?P<Y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)T(?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)(?:\.(?P<f>\d{1,9}))?"
    r"(?P<tz>Z|[+-]\d\d:\d\d) (?P<stream>stdout|stderr) (?P<tags>[A-Z](?::[^ ]*)?) ?"
)
_BREAK = re.compile(r"\r\n|\r|\n")  # where `physical_lines` splits a message
Line = tuple[float | None, str]  # (CRI time or None, physical line)
MAX_JOINED = 1 << 20  # characters one unbroken line of joined pieces may reach; the rest is dropped
_POD_DIR = re.compile(
    r"(?P<namespace>[a-z0-9-]{1,63})_(?P<pod>[a-z0-9.-]{1,253})_(?P<uid>[0-9a-f-]+)")


@dataclass(frozen=True)
class CriRecord:
    """One CRI log line: `t` Unix seconds (UTC), `stream` stdout/stderr, `partial` True for a
    `P` record, `message` the text after the tags (may be empty)."""

    t: float
    stream: str
    partial: bool
    message: str


def parse_cri_line(line: str) -> CriRecord | None:
    """The record of one CRI log line (no newline), None when it is not one. Pure."""
    found = _CRI.match(line)
    if found is None:
        return None
    g = found.groupdict()
    try:
        t = float(calendar.timegm((int(g["Y"]), int(g["m"]), int(g["d"]),
                                   int(g["H"]), int(g["M"]), int(g["S"]))))  # fmt: skip
    except (ValueError, OverflowError):
        return None
    if g["f"]:
        t += float("0." + g["f"])
    if g["tz"] != "Z":
        sign = 1 if g["tz"][0] == "+" else -1
        t -= sign * (int(g["tz"][1:3]) * 3600 + int(g["tz"][4:6]) * 60)
    return CriRecord(t, g["stream"], g["tags"][0] == "P", line[found.end():])


class CriJoiner:
    """Joins `P` records with the `F` that ends them, per stream (stdout and stderr interleave).
    `feed(record)` returns the completed (pieces, text) or None: `pieces` the [end, time] of
    each record joined (the text's characters before `end` had been written at `time`), so a
    progress bar redrawn with `\\r` inside one long message dates each redraw by the piece that
    ended it. A `P` record whose joined text holds a line break gives the text up to its last
    break at once (those lines are complete), and only the unfinished rest waits: a bar redrawn
    for hours without a newline (tqdm without a terminal: megabytes in 16 KiB pieces) is read
    in full, never cut at `MAX_JOINED`, which bounds only one unbroken line.

    The unfinished text waits as the list of its parts, joined once when a line of it is
    complete or its `F` comes (`_Pending`): a run of `P` records costs their length, not their
    length times their number. `pending` ({stream: [time, text, pieces]}, joined per call) is
    what a cursor keeps, and what `CriJoiner(pending)` takes back; an entry without its pieces
    (an older cursor) is read as one piece. `drain()` gives what waits at the end of a log."""

    def __init__(self, pending: dict[str, list] | None = None) -> None:
        self._open = {stream: _Pending.kept(entry) for stream, entry in (pending or {}).items()}

    @property
    def pending(self) -> dict[str, list]:
        """The unfinished text per stream as a cursor keeps it: [time, text, pieces]."""
        return {stream: [p.t, "".join(p.parts), p.pieces] for stream, p in self._open.items()}

    def drain(self) -> list[tuple[list[list], str]]:
        """The (pieces, text) of every stream's unfinished text, none left waiting."""
        out = [(p.pieces, "".join(p.parts)) for p in self._open.values()]
        self._open.clear()
        return out

    def feed(self, record: CriRecord) -> tuple[list[list], str] | None:
        """Add one record; the completed text and its pieces, if any."""
        piece = self._open.get(record.stream)
        if piece is None:
            if not record.partial:
                return [[len(record.message), record.t]], record.message
            piece = self._open[record.stream] = _Pending(record.t)
            piece.add(record.message, record.t, first=True)
            return self._complete(record.stream, piece)
        piece.add(record.message, record.t)
        if record.partial:
            return self._complete(record.stream, piece)
        del self._open[record.stream]
        return piece.pieces, "".join(piece.parts)

    def _complete(self, stream: str, piece: _Pending) -> tuple[list[list], str] | None:
        """The text of `piece` (a stream's unfinished text) up to its last line break and the
        pieces it spans, the rest left pending; None when it holds no break. A `\\r` that ends
        the text waits (a `\\n` may follow it in the next piece: one break)."""
        cut, pieces = piece.cut, piece.pieces
        if cut <= 0:
            return None
        text = "".join(piece.parts)
        at = bisect_left([end for end, _ in pieces], cut)
        done = [*pieces[:at], [cut, pieces[at][1]]]
        rest = [[end - cut, t] for end, t in pieces[at:] if end > cut]
        if rest:
            self._open[stream] = _Pending.kept([rest[0][1], text[cut:], rest])
        else:
            del self._open[stream]
        return done, text[:cut]


class _Pending:
    """One stream's unfinished text: `parts` (joined, the text), `pieces` ([end, time] per
    record, `CriJoiner`), `t` the time it began waiting, and where its breaks are, kept as the
    parts come so that no part is read twice: `size` its length, `line` where its unfinished
    line begins (after its last `\\r` or `\\n`), `cut` where its complete lines end (after its
    last `\\n`, or its last `\\r` but one that ends the text; 0: none)."""

    def __init__(self, t: float) -> None:
        self.t = t
        self.parts: list[str] = []
        self.pieces: list[list] = []
        self.size = self.line = self.cut = 0
        self._last_r = self._last_n = -1

    @classmethod
    def kept(cls, entry: list) -> _Pending:
        """The pending text of a cursor's entry [time, text, pieces] (or [time, text]);
        ValueError for anything else (a broken cursor: the caller reads the log again)."""
        if not isinstance(entry, list) or len(entry) not in (2, 3) or not isinstance(
                entry[1], str):
            raise ValueError(f"a pending CRI text is [time, text, pieces], not {entry!r:.60}")
        piece = cls(entry[0])
        piece._extend(entry[1])
        piece.pieces = list(entry[2]) if len(entry) > 2 else [[len(entry[1]), entry[0]]]
        return piece

    def add(self, message: str, t: float, first: bool = False) -> None:
        """`message` after the text, the line the text ends in cut at `MAX_JOINED` characters:
        what follows a line break in `message` is a new line and is kept (a bar's `\\r` redraws
        after one unbroken line past the limit). A record that adds nothing adds no piece,
        except the first."""
        found = _BREAK.search(message)
        head = len(message) if found is None else found.start()
        room = max(0, MAX_JOINED - (self.size - self.line))
        added = message[:min(head, room)] + message[head:]
        self._extend(added)
        if added or first:
            self.pieces.append([self.size, t])

    def _extend(self, added: str) -> None:
        if not added:
            return
        at, self.size = self.size, self.size + len(added)
        before_end = added.rfind("\r", 0, len(added) - 1)  # its last `\r` not ending the text
        r_kept = at + before_end if before_end >= 0 else self._last_r
        r, n = added.rfind("\r"), added.rfind("\n")
        self._last_r = at + r if r >= 0 else self._last_r
        self._last_n = at + n if n >= 0 else self._last_n
        self.line = max(self._last_r, self._last_n) + 1
        self.cut = max(r_kept, self._last_n) + 1
        self.parts.append(added)


def decode(raw: str, joiner: CriJoiner) -> list[Line]:
    """The physical lines one raw log line (no newline) gives: a CRI record (partials joined per
    stream in `joiner`: nothing until a line of it is complete) or a plain line, dated None.
    Each line of a joined message is dated by the record its last character came in
    (`timed_lines`). Pure apart from `joiner`."""
    record = parse_cri_line(raw)
    if record is None:
        return [(None, text) for text in physical_lines(raw)]
    done = joiner.feed(record)
    if done is None:
        return []
    return timed_lines(*done)


def timed_lines(pieces: list[list], message: str) -> list[Line]:
    """The physical lines of a message joined from CRI records (`physical_lines`), each dated
    by the piece ([end, time]) it ends in: a bar redrawn with `\\r` thousands of times inside
    one message (tqdm without a terminal) gets the times the runtime saw, not one. Pure."""
    texts = physical_lines(message)
    if len(pieces) == 1 or not texts:
        return [(pieces[0][1], text) for text in texts]
    ends = [found.start() for found in _BREAK.finditer(message)] + [len(message)]
    cuts = [end for end, _ in pieces]
    last = len(pieces) - 1
    return [(pieces[min(bisect_left(cuts, max(end, 1)), last)][1], text)
            for end, text in zip(ends, texts, strict=False)]  # a trailing break: no line


@dataclass(frozen=True)
class PodLogIdentity:
    """Where a container log comes from (`/var/log/pods/<namespace>_<pod>_<uid>/<container>/`)."""

    namespace: str
    pod: str
    uid: str
    container: str


def pod_log_identity(path: str | PurePath) -> PodLogIdentity | None:
    """The pod and container of a kubelet log path, None for any other path. Pure."""
    parts = PurePath(path).parts
    if len(parts) < 3:
        return None
    found = _POD_DIR.fullmatch(parts[-3])
    if found is None:
        return None
    return PodLogIdentity(found["namespace"], found["pod"], found["uid"], parts[-2])
