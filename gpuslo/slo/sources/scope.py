"""Scope a PromQL query to one cluster of a global store: add `cluster="a"` to every series
selector, as prom-label-proxy does for tenants, so the Prometheus source reads one cluster's
series from Thanos Query, Mimir or VictoriaMetrics exactly as it reads that cluster's own
Prometheus (where the series carry no `cluster`: external labels are added only on the way out).

`scoped(query, matchers)` is pure. It rewrites the selectors of the metric families gpuslo's
sources read — names starting with `METRIC_PREFIXES` (`gpuslo_...`, the recorded `gpuslo:...`,
kube-state-metrics' `kube_...`) — outside string literals and label matchers:
`gpuslo_gpu_info{instance=~"a"}` → `gpuslo_gpu_info{cluster="a",instance=~"a"}` and a bare
`gpuslo:gpu_usable:count` → `gpuslo:gpu_usable:count{cluster="a"}`. Function names, keywords
and label names never start with those prefixes, and a name inside a string (an instance
called `gpuslo-7`) is left alone. It serves the queries gpuslo writes, not arbitrary PromQL.
"""

from __future__ import annotations

import re

METRIC_PREFIXES = ("gpuslo_", "gpuslo:", "kube_")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_QUOTES = "\"'`"


def matcher_text(matchers: dict[str, str]) -> str:
    """`cluster="a"` (label="value" pairs, sorted, values escaped as PromQL strings)."""
    return ",".join(
        f'{label}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for label, value in sorted(matchers.items())
    )


def _string_end(query: str, start: int) -> int:
    """Index just past the string literal opening at `start` (backslash escapes honoured;
    backquoted strings have none)."""
    quote, i = query[start], start + 1
    while i < len(query) and query[i] != quote:
        i += 2 if quote != "`" and query[i] == "\\" else 1
    return min(i + 1, len(query))


def scoped(query: str, matchers: dict[str, str]) -> str:
    """`query` with `matchers` added to every selector of a gpuslo or kube-state-metrics
    family (see the module docstring); `query` itself when `matchers` is empty. Pure."""
    if not matchers:
        return query
    extra = matcher_text(matchers)
    out, i, depth = [], 0, 0
    while i < len(query):
        char = query[i]
        if char in _QUOTES:
            end = _string_end(query, i)
            out.append(query[i:end])
            i = end
            continue
        if char in "{}":
            depth += 1 if char == "{" else -1
            out.append(char)
            i += 1
            continue
        word = _IDENTIFIER.match(query, i)
        if not word or (i and (query[i - 1].isalnum() or query[i - 1] in "_:")):
            out.append(char)
            i += 1
            continue
        name, i = word.group(0), word.end()
        out.append(name)
        if depth or not name.startswith(METRIC_PREFIXES):
            continue
        after = len(query[i:]) - len(query[i:].lstrip())
        if query[i + after:i + after + 1] == "{":
            empty = query[i + after + 1:].lstrip().startswith("}")
            out.append(query[i:i + after + 1] + extra + ("" if empty else ","))
            i += after + 1
            depth += 1
        else:
            out.append("{" + extra + "}")
    return "".join(out)
