"""The layer of a training log's Xid interruption, from the Xid policy (pure).

A log line naming an Xid (`NVRM: Xid (PCI:0000:cb:00): 13, ...`, rule cause `xid` in
gpuslo/data/log_profiles.yaml, its code in the named group `xid`) interrupts the job on the layer
the Xid policy gives its code: the same table (gpuslo/data/xid_policy.yaml, `default` section:
the log names no GPU family) and the same class-to-layer map (`layer_of_class`) that `inspect` and
the exporter use, so one Xid is never the job's fault in one reading and the node's in another
(newcomer8 F1: Xid 13, class `application`, NVIDIA's catalogue action RESTART_APP, was billed to
the node). Class `application` is the workload's own fault (`training`); every other class,
unknown codes included (`unknown_code`: fatal), stays on `node`. A fatal Xid after an
application one in the same stop makes the stop the node's (`is_fatal_xid`); a warn one (Xid 109
after Xid 13, gpud PR #46) does not.
"""

from __future__ import annotations

import functools
from typing import Any

from gpuslo import names
from gpuslo.packaged import packaged_yaml
from gpuslo.verdict import layer_of_class

XID_POLICY = "xid_policy.yaml"  # the exporter's Xid policy file (exporter.policy.xid.PACKAGED)


def xid_layer(code: str | None, default: str) -> str:
    """Layer (a `names.LAYERS` value) of an interruption by Xid `code` (its digits as the line
    printed them); `default` (the rule's own layer) when the line gave no code."""
    if not code or not code.isdigit():
        return default
    class_ = xid_class(int(code))
    return layer_of_class(class_) if class_ != names.CLASS_UNKNOWN else default


def is_fatal_xid(code: str | None) -> bool:
    """True when the policy classes Xid `code` fatal (unknown codes included: fail closed)."""
    if not code or not code.isdigit():
        return False
    return xid_class(int(code)) == names.CLASS_FATAL


def xid_class(xid: int) -> str:
    """The Xid policy's class of `xid` in its `default` section (a log names no GPU family), its
    `unknown_code` entry for a code it does not list: the lookup of
    `exporter.policy.xid.XidPolicy.xid_rule` with no family."""
    policy = _policy()
    entry = policy["xid"]["default"].get(xid) or policy["unknown_code"]
    return str(entry["class"])


@functools.cache
def _policy() -> dict[str, Any]:
    """The packaged Xid policy's data, read once a process (its parsed copy: no YAML library)."""
    return packaged_yaml(XID_POLICY)
