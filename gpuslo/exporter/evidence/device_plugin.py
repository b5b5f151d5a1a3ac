"""The log of NVIDIA's Kubernetes device plugin (k8s-device-plugin): the GPUs it withdrew from
scheduling, and why (evidence, no judging).

The plugin watches NVML's critical-Xid events for each GPU it advertises and marks a GPU
unhealthy on any Xid it does not ignore (it ignores the application Xids 13, 31, 43, 45, 68 and
109 unless told otherwise: `DP_DISABLE_HEALTHCHECKS` / `DP_ENABLE_HEALTHCHECKS`); Kubernetes then
allocates that GPU to no pod until the plugin restarts. Its lines (NVIDIA/k8s-device-plugin,
`internal/rm/health.go` and the plugin server; Go `log` stamps `2020/08/10 19:09:42` in old
releases, klog `I0810 19:09:42.123456 1 health.go:123]` in newer ones):

    XidCriticalError: Xid=69 on Device=GPU-7540a9b3-..., the device will go unhealthy.
    XidCriticalError: Xid=79 on Device=GPU-...; marking device as unhealthy.
    'nvidia.com/gpu' device marked unhealthy: GPU-7540a9b3-...

A MIG device is named `MIG-<uuid>` (or `GPU-<uuid>/<gi>/<ci>` by older releases).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE_CHARS = 4096
XID_LINE = re.compile(r"\bXidCriticalError: Xid=(\d{1,5}) on Device=([^\s,;]{1,256})")
UNHEALTHY_LINE = re.compile(r"'([^'\s]{1,128})' device marked unhealthy: (\S{1,256})")


@dataclass(frozen=True)
class PluginEvent:
    """One line of the plugin's log about a device: `xid` None for a "marked unhealthy" line."""

    line: int
    device: str
    xid: int | None = None
    resource: str | None = None


def parse_device_plugin_log(text: str) -> list[PluginEvent]:
    """The plugin's Xid and marked-unhealthy lines of `text`, in order (pure; other lines are
    not the plugin's judgement of a device and are skipped)."""
    events = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw[:MAX_LINE_CHARS]
        if match := XID_LINE.search(line):
            events.append(PluginEvent(number, match.group(2), xid=int(match.group(1))))
        elif match := UNHEALTHY_LINE.search(line):
            events.append(PluginEvent(number, match.group(2), resource=match.group(1)))
    return events


def looks_like_device_plugin_log(text: str) -> bool:
    """True when the text holds one of the plugin's Xid or marked-unhealthy lines."""
    head = text[:200_000]
    return XID_LINE.search(head) is not None or UNHEALTHY_LINE.search(head) is not None
