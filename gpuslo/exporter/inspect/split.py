"""Cut one evidence file that holds several kinds of output into parts (pure).

An on-call engineer pastes `dmesg` and `nvidia-smi -q` (or `ibstat`, a CSV, ...) into one file.
`split_evidence` finds the parts: the system-log lines form one part wherever they are (a log
read with a paste in the middle is still one log), and the other lines are cut into paragraphs
at blank lines, at the first line of a tool's output (`STARTS`) and where a differently shaped
line starts another recognised kind (`cut_paragraph`). Each paragraph is detected; paragraphs of
the same kinds join (unless one starts a new capture: `CAPTURE_STARTS`), and a paragraph nothing
recognises joins the output it sits inside (a `-q` header block) or the output after it when it
is a prompt line. Other lines nothing recognises stay a part with no kind, so the caller can say
so instead of dropping them.

`gpuslo.exporter.inspect.kinds` inspects each part when the file holds more than one kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuslo.exporter.evidence.kernel_log.read import KERNEL_PREFIX_PATTERN
from gpuslo.exporter.evidence.nvidia_smi.nvlink import headerless_links, match_gpu_header
from gpuslo.exporter.evidence.nvidia_smi.values import handle_error

# A line of a system log: a kernel-log prefix (`kernel_log.looks_like_kernel_log`'s), a syslog
# or journal line of any unit, a journal marker (`-- Boot ... --`) or a /dev/kmsg dictionary
# line (` SUBSYSTEM=pci`).
LOG_LINE = re.compile(
    r"(?:"
    + KERNEL_PREFIX_PATTERN
    + r"|\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ [^\s:]+: |\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* \S+ [^\s:]+: "
    r"|-- .* --\s*$| [A-Z][A-Z0-9_]*=)"
)
# A non-blank line that is not a log line.
FOREIGN = re.compile(r"^(?!" + LOG_LINE.pattern + r")[^\n]*\S", re.MULTILINE)
# First lines of a tool's output other than a log: `nvidia-smi -q` banner, XML prolog, `ibstat`
# CA, `ibstatus` port, `dcgmi dmon` header, `fi_info` provider, /proc/driver/nvidia/version,
# `ibdev2netdev`, the `nvidia-smi` table's date line.
STARTS = re.compile(
    r"(?:=+NVSMI LOG=+\s*$|<\?xml\b|CA '[^']+'\s*$|Infiniband device '[^']+' port \d+ status:"
    r"|# ?Entity\s|provider: \S|NVRM version:|\S+ port \d+ ==> \S"
    r"|\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*$)"
)
# Of those, the first lines of a whole capture: a second capture of the same kind is a new part
# (two `nvidia-smi -q` outputs are two readings, not one).
CAPTURE_STARTS = re.compile(
    r"(?:=+NVSMI LOG=+\s*$|<\?xml\b|NVRM version:|\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*$)"
)
# The line with which nvidia-smi ends when NVML cannot start or sees no GPU (nvidia-smi(1), NVML
# nvmlErrorString): it prints that one line (and, from the 5xx drivers, "NVML library version: X"
# after a version mismatch) and exits, so what follows is another command's output (fresh16 case
# 1804: `ubuntu-drivers devices` pasted under it with no blank line). It ends its paragraph.
NVML_LAST = re.compile(
    r"^[ \t]*(?:Failed to initialize NVML: [^\n]{1,200}|NVIDIA-SMI has failed because [^\n]{1,400}"
    r"|No devices were found)[ \t]*$"
)
NVML_VERSION = re.compile(r"^[ \t]*NVML library version:[ \t]*\S+[ \t]*$")
# A table's rule line: only `+`, `-`, `=`, `|` and spaces.
RULE_LINE = re.compile(r"^[\s+=|-]*[+=-][\s+=|-]*$")
# The line that closes a document (`</nvidia_smi_log>`, unindented): it ends a paragraph and is
# part of the part before it.
CLOSING = re.compile(r"^</[^>\s]+>\s*$")
# A shell prompt and the command it ran, pasted above the output.
PROMPT = re.compile(r"^\s*\S*[$#%>]\s+\S+")
# The tools `inspect` reads, as a command names them (with an optional path).
TOOLS = (r"(?:[\w./-]{0,256}/)?(?:nvidia-smi|dcgmi|nv-hostengine|ibstat|ibstatus|ibv_devinfo"
         r"|ibdev2netdev|fi_info|lspci|dmesg|journalctl)")
# A prompt that cannot be a comment or a quote, where a shell transcript starts a new command
# (`transcript`): `$ cmd`, `user@host:~$ cmd`, `root@host:/# cmd`, `[root@node ~]# cmd`, and a
# bare root prompt `# ` when the command is a tool `inspect` reads or `cat` of a file under
# /proc/driver or /sys (`# nvidia-smi`, `# cat /proc/driver/nvidia/version`): a comment does not
# start with a command line.
COMMAND_PROMPT = re.compile(
    r"^\s*(?:\$|[\w.-]{1,64}@[\w.-]{1,64}:[^\s$#]{0,256}[$#]|\[[^\]\s]{1,64}@[^\]]{1,256}\][$#]"
    r"|#(?=[ \t]+(?:sudo\s+)?(?:" + TOOLS + r"(?:[ \t]|$)|cat\s+/(?:proc|sys)/)))"
    r"\s+\S"
)
# A prompt of any theme ending in a prompt glyph, then a tool `inspect` reads or `cat` of a file
# under /proc or /sys: zsh agnoster / powerline segments copied as text (`alex@exi > ~/Downloads >
# nvidia-smi`, fresh14 case 1606), oh-my-zsh's `➜  ~ nvidia-smi` (the arrow, the directory and
# an optional `git:(main) ✗` before the command), starship's `❯ dmesg`, fish's
# `user@host ~> nvidia-smi`, PowerShell's `PS C:\Users\me> nvidia-smi`. The command after the
# glyph is what makes it a prompt: `temperature > 85`, `run nvidia-smi > out.txt` are no prompt.
PROMPTED_TOOL = re.compile(
    r"^(?:[^\n]{0,256}?[$#%>\u276f\u00bb\ue0b0\ue0b1]"
    r"|[ \t]*\u279c[ \t]+\S{1,256}(?:[ \t]+\S{1,64}){0,2}?)[ \t]{1,4}(?:sudo\s+)?(?:"
    + TOOLS + r"(?:[ \t]|$)|cat\s+/(?:proc|sys)/)"
)
# A command pasted without its prompt: a tool `inspect` reads, alone on the line with its
# options (`nvidia-smi -L`, `nvidia-smi `, `ibstat mlx5_0`). No such tool's output opens with
# its own name (`nvidia-smi: command not found` is the shell's, and has the colon).
BARE_COMMAND = re.compile(
    r"^\s*(?:sudo\s+)?" + TOOLS + r"(?:[ \t]+[^\s:][^\s]{0,256}){0,32}[ \t]*$"
)
# A prompt line in a wider sense, for `without_prompt`: up to three words before the prompt
# character (`L40S sh-5.1# curl ...`, `[root@node-01 ~]# dcgmi diag`, `# nvidia-smi --query-gpu`).
PROMPT_LINE = re.compile(r"^\s*(?:[^\s$#%>]{1,64}(?: [^\s$#%>]{1,64}){0,2})?[$#%>] {1,4}[\w./~\[-]")
# Paragraphs beyond this are not detected one by one: the run stays one part.
# A `Link N:` line of `nvidia-smi nvlink -s`/`-e`, and the kinds that read such lines.
_LINK_LINE = re.compile(r"^\s*+Link\s++\d+\s*+:")
NVLINK_KINDS = frozenset({"nvlink-status", "nvlink-errors"})
MAX_PARAGRAPHS = 2000
# A paragraph longer than this, or cut points beyond this many, are not tried (`cut_paragraph`).
MAX_CUT_LINES = 2000
MAX_CUTS = 200
# In a paragraph this short every line is a possible cut, not only where the shape changes.
SHORT_PARAGRAPH = 64
# Files with more lines outside the log than this are cut at blank lines and `STARTS` only.
MAX_CUT_TOTAL = 5_000


@dataclass(frozen=True)
class Part:
    """One part of an evidence file: the kinds whose detectors accept it (empty: nothing
    recognises it) and its lines, with the 1-based file line number of each (`numbers`)."""

    kinds: tuple[str, ...]
    lines: Sequence[str]
    numbers: Sequence[int]

    @property
    def text(self) -> str:
        """The part's lines as one text."""
        return "\n".join(self.lines) + "\n"

    def join(self, other: Part, kinds: tuple[str, ...]) -> Part:
        """This part followed by `other`, of `kinds`."""
        return Part(kinds, (*self.lines, *other.lines), (*self.numbers, *other.numbers))


Detect = Callable[[str], tuple[str, ...]]


def runs(
    lines: Sequence[str], transcript: bool = False
) -> tuple[list[int], list[list[list[int]]]]:
    """(indexes of the system-log lines, the runs of other lines between log lines, each cut
    into paragraphs at blank lines, at `STARTS` and after `CLOSING`; with `transcript`, a
    `COMMAND_PROMPT` line is a paragraph of its own: each command's output is a paragraph; an
    `NVML_LAST` line, with the `NVML_VERSION` line right after it, ends its paragraph)."""
    log: list[int] = []
    out: list[list[list[int]]] = []
    in_run = gap = nvml_end = False
    for index, line in enumerate(lines):
        if LOG_LINE.match(line):
            log.append(index)
            in_run = False
        elif line.strip():
            short = len(line) <= 4096
            prompt = transcript and short and is_command_prompt(line)
            if not in_run:
                out.append([])
            version = nvml_end and short and NVML_VERSION.match(line) is not None
            if not in_run or (gap and not version) or prompt or STARTS.match(line):
                out[-1].append([])
            out[-1][-1].append(index)
            nvml_end = short and NVML_LAST.match(line) is not None
            in_run = True
            gap = prompt or nvml_end or version or CLOSING.match(line) is not None
        else:
            gap, nvml_end = True, False
    return log, out


def _part(lines: Sequence[str], indexes: Sequence[int], detect: Detect) -> Part:
    chosen = tuple(lines[i] for i in indexes)
    return Part(detect("\n".join(chosen)), chosen, tuple(i + 1 for i in indexes))


def _shape(line: str) -> tuple[bool, str]:
    """(indented, class of the first character): where it changes, another tool may start."""
    first = line.lstrip()[:1]
    cls = "a" if first.isalpha() else "0" if first.isdigit() else first
    return line[:1].isspace(), cls


def _rule_lines_to_tail(
    lines: Sequence[str], paragraph: list[int], n: int, tail: Part, detect: Detect
) -> tuple[int, Part]:
    """Move the cut before rule lines (`+----+`, `|====|`) that end the head when the
    tail keeps its kinds with them: they open the tail's output (a table), not end the head's."""
    while n > 1 and RULE_LINE.match(lines[paragraph[n - 1]]):
        longer = _part(lines, paragraph[n - 1 :], detect)
        if longer.kinds != tail.kinds:
            break
        n, tail = n - 1, longer
    return n, tail


def _in_place_of_data(side: Part, other: Part, whole: Part) -> bool:
    """True when `side` is only device-handle error lines, the line every nvidia-smi output
    kind (the table, `-q`, `-L`, `--query-gpu` CSV) prints in place of a GPU it cannot open, and
    the `other` side's kinds read the whole paragraph: the line belongs to that output (its
    reader counts the GPU as present and inaccessible), not to a `-q` of its own."""
    return (
        bool(other.kinds)
        and set(other.kinds) <= set(whole.kinds)
        and all(handle_error(line) for line in side.lines)
    )


def _links_of_header(head: Part, tail: Part) -> bool:
    """True when `head` ends with a `GPU N: <name>` line and `tail` goes on with that GPU's
    `Link N:` lines: one `nvidia-smi nvlink -s`/`-e` output, not a headerless fragment after a
    `-L` list (fresh3 case 430). The tail may be those links alone (`headerless_links`) or those
    links and the next GPUs' blocks (fresh15 case 1720: cut after `GPU 0:`, GPU 0's links were
    read as no GPU's and a link down on it was never judged)."""
    if not head.lines or match_gpu_header(head.lines[-1].strip()[:4096]) is None:
        return False
    if headerless_links(tail.text):
        return True
    return bool(tail.lines) and _LINK_LINE.match(tail.lines[0][:4096]) is not None \
        and bool(set(tail.kinds) & NVLINK_KINDS)


def cut_paragraph(lines: Sequence[str], paragraph: list[int], detect: Detect) -> list[Part]:
    """`paragraph` as parts: cut where the line shape changes and the lines before and the lines
    from there on are each recognised, by no kind in common (`cat a b`, no blank line between: a
    table after `dcgmi health`, a `-q` fragment after a table; a paragraph nothing recognises
    as a whole is not tried). The last such cut is taken (a
    loose detector still accepts a tail that starts too early, an `ibpanic` line before a
    table, but not a head that ends too late), then each side is cut again. Otherwise one part."""
    whole = _part(lines, paragraph, detect)
    if len(paragraph) > MAX_CUT_LINES or not whole.kinds:
        return [whole]
    changes = [
        n
        for n in range(1, len(paragraph))
        if len(paragraph) <= SHORT_PARAGRAPH
        or _shape(lines[paragraph[n]]) != _shape(lines[paragraph[n - 1]])
    ][-MAX_CUTS:]
    for n in reversed(changes):
        tail = _part(lines, paragraph[n:], detect)
        if not tail.kinds:
            continue
        n, tail = _rule_lines_to_tail(lines, paragraph, n, tail, detect)
        head = _part(lines, paragraph[:n], detect)
        if _in_place_of_data(head, tail, whole) or _in_place_of_data(tail, head, whole) \
                or _links_of_header(head, tail):
            continue
        if head.kinds and not set(head.kinds) & set(tail.kinds):
            return [
                *cut_paragraph(lines, paragraph[:n], detect),
                *cut_paragraph(lines, paragraph[n:], detect),
            ]
    return [whole]


def _joins(part: Part, last: Part | None) -> bool:
    """Whether `part` continues `last`: the same kinds and not the start of a new capture."""
    return last is not None and part.kinds == last.kinds and not CAPTURE_STARTS.match(part.lines[0])


def parts_of_run(
    lines: Sequence[str], run: list[list[int]], detect: Detect, cut: bool = True
) -> list[Part]:
    """The parts of one run of non-log lines. Adjacent paragraphs of the same kinds join (unless
    one starts a new capture). A paragraph nothing recognises joins the output around it when
    it sits between two paragraphs of one part (the `-q` header block) or only closes the part
    before it (`</nvidia_smi_log>`), or the output after it when it is one prompt line
    (`$ nvidia-smi -q`); otherwise it is a part without kinds."""
    if len(run) > MAX_PARAGRAPHS:
        return [_part(lines, [i for paragraph in run for i in paragraph], detect)]
    pieces = [
        part
        for paragraph in run
        for part in (
            cut_paragraph(lines, paragraph, detect) if cut else [_part(lines, paragraph, detect)]
        )
    ]
    out: list[Part] = []
    for index, part in enumerate(pieces):
        last = out[-1] if out else None
        if part.kinds:
            if _joins(part, last) or last is not None and not last.kinds and _is_prompt(last):
                out[-1] = last.join(part, part.kinds)
            else:
                out.append(part)
            continue
        after = next((later for later in pieces[index + 1 :] if later.kinds), None)
        closes = all(CLOSING.match(line) for line in part.lines)
        if (
            last is not None
            and last.kinds
            and (closes or (after is not None and _joins(after, last)) or _box_after(part, last))
        ):
            out[-1] = last.join(part, last.kinds)
        elif last is not None and not last.kinds:
            out[-1] = last.join(part, ())
        else:
            out.append(part)
    return out


def _box_after(part: Part, last: Part) -> bool:
    """True when `part` is a box drawn in text (every line a rule line or framed by `|`: the
    `nvidia-smi` table's own Processes box, printed after a blank line) right after an output
    that ends in a box: the same output's next box, not a part nothing recognises (newcomer6
    finding 9: `nvidia-smi; dmesg` in one file read `unknown`). A box after an output that ends
    otherwise, or lines that are not a box, stay a part of their own."""
    framed = [line.strip() for line in part.lines if line.strip()]
    ends = next((line for line in reversed(last.lines) if line.strip()), "")
    return bool(framed) and RULE_LINE.match(ends) is not None and all(
        RULE_LINE.match(line) or (line.startswith("|") and line.endswith("|")) for line in framed)


def is_command_prompt(line: str) -> bool:
    """True when `line` (at most 4096 characters) starts a command in a shell transcript: a
    `COMMAND_PROMPT`, or a prompt of another theme followed by a tool (`PROMPTED_TOOL`)."""
    return COMMAND_PROMPT.match(line) is not None or PROMPTED_TOOL.match(line) is not None


def _is_prompt(part: Part) -> bool:
    """One line that reads as a shell prompt and command (`$ nvidia-smi -q`, `root@n1:~# dmesg`,
    `alex@exi > ~/Downloads > nvidia-smi`)."""
    if len(part.lines) != 1 or len(part.lines[0]) > 4096:
        return False
    return PROMPT.match(part.lines[0]) is not None or PROMPTED_TOOL.match(part.lines[0]) is not None


def _parts(lines: Sequence[str], detect: Detect, transcript: bool) -> list[Part]:
    log, other = runs(lines, transcript)
    cut = sum(len(paragraph) for run in other for paragraph in run) <= MAX_CUT_TOTAL
    parts = [part for run in other for part in parts_of_run(lines, run, detect, cut)]
    if log:
        parts.append(_part(lines, log, detect))
        parts.sort(key=lambda part: part.numbers[0])
    return _prompts_to_output(lines, parts)


def _prompts_to_output(lines: Sequence[str], parts: list[Part]) -> list[Part]:
    """`parts` with each unrecognised prompt line (`$ dmesg`) joined to the recognised part
    whose first line is the next non-blank line: the prompt of the command whose output that
    is. This covers a prompt above system-log lines, which are one part of their own (`runs`)
    and so never meet the prompt inside `parts_of_run`."""
    out: list[Part] = []
    for part in parts:
        prompt = out[-1] if out and not out[-1].kinds and _is_prompt(out[-1]) else None
        if prompt is not None and part.kinds and _next_line(lines, prompt) == part.numbers[0]:
            out[-1] = prompt.join(part, part.kinds)
        else:
            out.append(part)
    return out


def _next_line(lines: Sequence[str], part: Part) -> int | None:
    """The 1-based number of the first non-blank line after `part`'s last line."""
    return next(
        (n + 1 for n in range(part.numbers[-1], len(lines)) if lines[n].strip()), None
    )


def split_evidence(text: str, detect: Detect) -> list[Part]:
    """The parts of `text`, in file order (see the module docstring); `detect(text)` gives the
    kinds that accept a text. A text with fewer than two recognised parts gives one part, the
    whole text, with no kinds: the caller reads it as one piece of evidence. Unless no kind
    accepts the whole text: then it is read as a shell transcript (`runs(transcript=True)`: each
    prompt starts a command's output, `$ nvidia-smi` then `$ squeue`), and when some part of it
    is recognised, its parts are read, the others named as unrecognised."""
    lines = text.splitlines()
    whole = [Part((), lines, range(1, len(lines) + 1))]
    if not FOREIGN.search(text):  # a log and nothing else: no line-by-line walk
        return whole
    parts = _parts(lines, detect, transcript=False)
    recognised = sum(bool(part.kinds) for part in parts)
    if recognised >= 2:
        return parts
    if recognised == 0 and not any(is_command_prompt(line[:4096]) for line in lines):
        return whole
    if detect(text):
        return whole
    parts = _parts(lines, detect, transcript=True)
    return parts if len(parts) > 1 and any(part.kinds for part in parts) else whole


# The status line a pager prints under a screenful, copied with the terminal: less's prompt as
# systemctl and journalctl set it (`lines 1-22/22 (END)`, `lines 23-45`; less(1) `-P`, the
# `%lt-%lb/%L` prompt systemd passes in $SYSTEMD_LESS), less's bare `(END)`, and more(1)'s
# `--More--` / `--More--(42%)`. It is the terminal's, not the tool's: no reader's evidence.
PAGER_LINE = re.compile(
    r"^[ \t]*(?:lines \d+-\d+(?:/\d+)?(?: \(END\))?|\(END\)|--More--(?:\(\d{1,3}%\))?)[ \t]*$",
    re.MULTILINE,
)


def without_pager_lines(text: str) -> str:
    """`text` with every pager status line (`PAGER_LINE`) blanked, line numbers kept."""
    return PAGER_LINE.sub("", text) if "(END)" in text or "lines " in text or "--More--" in text \
        else text


def without_prompt(text: str) -> str | None:
    """`text` with its first non-blank line blanked when that line reads as a shell prompt and
    the command it ran (`PROMPT_LINE`, `PROMPTED_TOOL`) or as a command pasted without its
    prompt (`BARE_COMMAND`), so the output below it reads as the tool's own (line
    numbers kept); None when the first line is no prompt."""
    lines = text.split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None or len(lines[first]) > 4096:
        return None
    line = lines[first]
    if not (PROMPT_LINE.match(line) or BARE_COMMAND.match(line) or PROMPTED_TOOL.match(line)):
        return None
    return "\n".join([*lines[:first], "", *lines[first + 1 :]])
