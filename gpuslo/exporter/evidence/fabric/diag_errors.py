"""The infiniband-diags tools' own failure lines (`ibstat`, `ibaddr`, `perfquery`, ...).

Three forms, from the sources (rdma-core / OFED management):
- libibmad `mad.h` `IBPANIC(fmt, ...)`: `ibpanic: [<pid>] <function>: <message>: <strerror>`,
  then `exit(-1)`: the tool stopped (ibstat: "stat of IB device 'mthca0' failed", "can't init
  UMAD library", "'%s' IB device can't be found").
- infiniband-diags `ibdiag_common.c` `iberror()` / `ibexit()`: `<prog>: iberror: [pid <pid>]
  <function>: failed: <message>` (with `-d`) or `<prog>: iberror: failed: <message>`, then
  `exit(-1)`: the tool stopped.
- libibmad `IBWARN(fmt, ...)`: `ibwarn: [<pid>] <function>: <message>`: a warning, the tool goes
  on; only a warning, never a failure by itself.

Pure: `parse_diag_messages(text)` never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IBPANIC = re.compile(r"^[ \t]*ibpanic: \[(\d{1,10})\] ([\w.]{1,64}): ([^\n]{0,1024})$", re.M)
_IBERROR = re.compile(
    r"^[ \t]*(?:([\w.-]{1,64}): )?iberror: (?:\[pid (\d{1,10})\] ([\w.]{1,64}): )?"
    r"failed: ([^\n]{0,1024})$",
    re.M,
)
_IBWARN = re.compile(r"^[ \t]*ibwarn: \[(\d{1,10})\] ([\w.]{1,64}): ([^\n]{0,1024})$", re.M)
# The device a message names: "stat of IB device 'mlx5_8' failed", "'mlx5_3' IB device can't be
# found" (ibstat.c), "can't open CA 'mlx4_0'".
_DEVICE = re.compile(r"(?:device|CA) '([^'\n]{1,64})'|'([^'\n]{1,64})' IB device")


@dataclass(frozen=True)
class DiagMessage:
    """One infiniband-diags message line: `form` "ibpanic" | "iberror" | "ibwarn"; `tool` the
    program `iberror` names ("" when not printed); `function` the C function ("" when not
    printed); `message` the rest; `device` the IB device it names ("" when none); `fatal` True
    when the tool exited on it (ibpanic, iberror)."""

    form: str
    tool: str
    function: str
    message: str
    device: str
    line: str

    @property
    def fatal(self) -> bool:
        return self.form != "ibwarn"


def _device(message: str) -> str:
    match = _DEVICE.search(message)
    return (match.group(1) or match.group(2)) if match else ""


def parse_diag_messages(text: str) -> list[DiagMessage]:
    """Every infiniband-diags message line in `text` (first 200 000 characters), in order."""
    head = text[:200_000]
    found: list[tuple[int, DiagMessage]] = []
    for match in _IBPANIC.finditer(head):
        _pid, function, message = match.groups()
        found.append((match.start(), DiagMessage(
            "ibpanic", "", function, message, _device(message), match.group(0).strip())))
    for match in _IBERROR.finditer(head):
        tool, _pid, function, message = match.groups()
        found.append((match.start(), DiagMessage(
            "iberror", tool or "", function or "", message, _device(message),
            match.group(0).strip())))
    for match in _IBWARN.finditer(head):
        _pid, function, message = match.groups()
        found.append((match.start(), DiagMessage(
            "ibwarn", "", function, message, _device(message), match.group(0).strip())))
    return [message for _, message in sorted(found, key=lambda pair: pair[0])]


def is_diag_line(line: str) -> bool:
    """True for one infiniband-diags message line (any form)."""
    return any(form.match(line) for form in (_IBPANIC, _IBERROR, _IBWARN))


def tool_failed_only(text: str, tool: str) -> bool:
    """True when `text` is only `tool`'s own failure: at least one fatal diag line (ibpanic, or
    an iberror naming `tool` or no program), and every other non-blank line is a diag line or
    the command line that ran `tool` (a prompt line naming it)."""
    messages = parse_diag_messages(text)
    if not any(m.fatal and m.tool in ("", tool) for m in messages):
        return False
    named = re.compile(rf"(?:^|[\s/]){re.escape(tool)}(?:\s|$)")
    return all(
        not line.strip() or is_diag_line(line) or named.search(line)
        for line in text[:200_000].splitlines()
    )
