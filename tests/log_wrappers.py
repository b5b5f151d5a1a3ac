"""The wrappers a training log meets between the trainer and gpuslo, as pure functions (tests).

An operator rarely reads a trainer's stdout raw: a launcher tags each line with its rank, a
collector stamps it, a terminal or a syslog daemon writes control bytes out, a paste leaves
Markdown around it. Each wrapper here takes the raw log's text and returns it as that launcher or
collector would hand it on; `tests/goodput/test_wrapped_logs.py` requires gpuslo to judge the
same facts on both (a metamorphic test: gpuslo's own answers, raw against wrapped).

The forms are the tools' own (documented or printed by them):
- `srun --label`: `0: ` (Slurm srun(1), `--label`: "Prepend task number to lines of stdout/err");
- `mpirun --tag-output`: `[1,0]<stdout>:` (Open MPI mpirun(1)); SageMaker's MPI launcher adds
  the rank's name and host, `[1,mpirank:0,algo-1]<stdout>:`;
- torchrun / torch.distributed.elastic `--tee`/`local_ranks_filter`: `[rank0]:`, `[default0]:`;
- DeepSpeed's pdsh launcher: `worker-0: `;
- `kubectl logs --timestamps` and `docker logs -t`: an RFC 3339 time with nanoseconds (kubectl
  prints the CRI time as written, docker trims trailing zeros: RFC3339Nano) and one blank;
- journald / syslog (`journalctl -o short`): `Dec 07 06:54:01 host python[1234]: `;
- Kubernetes CRI files (`/var/log/pods/...`): `<RFC 3339 time> stdout F ` and, for a line longer
  than the runtime's buffer, `P` records that are joined (containerd splits at 16 KiB; here at
  `CRI_SPLIT` characters so that real lines are split);
- `ts` (moreutils) with its default format `%b %d %H:%M:%S`;
- ANSI colour around each line (a coloured logger or `rich` forced to a terminal);
- control bytes written out: `^M` (`cat -v`) and rsyslog's `#015` for a carriage return;
- CRLF line ends (a log saved on Windows);
- a pasted log's Markdown: a code fence around it.

The collector stamps count from `BASE` (UTC; the RFC 3339 ones `OFFSET_NS` past it) by `STEP_S`
a line: a valid clock where the log has none (then timing facts may appear that the raw log
lacked), and never the trainer's own clock.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable

BASE = calendar.timegm((2026, 12, 7, 6, 54, 1))
STEP_S = 1.25
# the collectors' stamps carry nanoseconds (a line is never written on a whole second): this
# offset ends in two zeros, which docker trims (`.1234567`)
OFFSET_NS = 123_456_700
CRI_SPLIT = 200


def _lines(text: str) -> list[str]:
    """The log's lines without their `\\n` (a `\\r` inside stays: a bar's redraws)."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _prefixed(text: str, prefix: Callable[[int], str]) -> str:
    return "".join(f"{prefix(i)}{line}\n" for i, line in enumerate(_lines(text)))


def _rfc3339(i: int, trim: bool) -> str:
    seconds, rest = divmod(OFFSET_NS + i * round(STEP_S * 1e9), 1_000_000_000)
    nanos = f"{rest:09d}"
    if trim:
        nanos = nanos.rstrip("0")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(BASE + seconds))
    return f"{stamp}.{nanos}Z" if nanos else f"{stamp}Z"


def _syslog(i: int) -> str:
    return time.strftime("%b %d %H:%M:%S", time.gmtime(int(BASE + i * STEP_S)))


def srun_label(text: str) -> str:
    return _prefixed(text, lambda i: "0: ")


def mpirun_tag(text: str) -> str:
    return _prefixed(text, lambda i: "[1,0]<stdout>:")


def mpirun_sagemaker(text: str) -> str:
    return _prefixed(text, lambda i: "[1,mpirank:0,algo-1]<stdout>:")


def torchrun_rank(text: str) -> str:
    return _prefixed(text, lambda i: "[rank0]:")


def torchrun_default(text: str) -> str:
    return _prefixed(text, lambda i: "[default0]:")


def deepspeed_worker(text: str) -> str:
    return _prefixed(text, lambda i: "worker-0: ")


def kubectl_timestamps(text: str) -> str:
    return _prefixed(text, lambda i: _rfc3339(i, trim=False) + " ")


def docker_timestamps(text: str) -> str:
    return _prefixed(text, lambda i: _rfc3339(i, trim=True) + " ")


def journald(text: str) -> str:
    return _prefixed(text, lambda i: f"{_syslog(i)} gpu-node-3 python[48211]: ")


def moreutils_ts(text: str) -> str:
    return _prefixed(text, lambda i: _syslog(i) + " ")


def cri_file(text: str) -> str:
    """Each line as CRI records: `P` pieces of `CRI_SPLIT` characters, then the `F` rest."""
    out = []
    for i, line in enumerate(_lines(text)):
        stamp = _rfc3339(i, trim=False)
        while len(line) > CRI_SPLIT:
            out.append(f"{stamp} stdout P {line[:CRI_SPLIT]}\n")
            line = line[CRI_SPLIT:]
        out.append(f"{stamp} stdout F {line}\n")
    return "".join(out)


def ansi_colour(text: str) -> str:
    return "".join(f"\x1b[32m{line}\x1b[0m\n" if line else "\n" for line in _lines(text))


def caret_m(text: str) -> str:
    """Carriage returns written out as `cat -v` does."""
    return text.replace("\r\n", "\n").replace("\r", "^M")


def octal_015(text: str) -> str:
    """Carriage returns written out as rsyslog does (`#015`)."""
    return text.replace("\r\n", "\n").replace("\r", "#015")


def crlf(text: str) -> str:
    return "\r\n".join(_lines(text)) + "\r\n"


def markdown_fence(text: str) -> str:
    return "```text\n" + text + ("" if text.endswith("\n") else "\n") + "```\n"


WRAPPERS: dict[str, Callable[[str], str]] = {
    "srun_label": srun_label,
    "mpirun_tag": mpirun_tag,
    "mpirun_sagemaker": mpirun_sagemaker,
    "torchrun_rank": torchrun_rank,
    "torchrun_default": torchrun_default,
    "deepspeed_worker": deepspeed_worker,
    "kubectl_timestamps": kubectl_timestamps,
    "docker_timestamps": docker_timestamps,
    "journald": journald,
    "moreutils_ts": moreutils_ts,
    "cri_file": cri_file,
    "ansi_colour": ansi_colour,
    "caret_m": caret_m,
    "octal_015": octal_015,
    "crlf": crlf,
    "markdown_fence": markdown_fence,
}
COLLECTOR_CLOCKS = {"kubectl_timestamps", "docker_timestamps", "journald", "moreutils_ts",
                    "cri_file"}
