"""GPU health events (NVSentinel node conditions and events carrying DCGM error codes) for
`gpuslo inspect` (registered in `inspect.registry.KINDS`). Parsing is
`gpuslo.exporter.evidence.health_event`, judging `gpuslo.exporter.policy.health_event`."""

from __future__ import annotations

from gpuslo.exporter.evidence.health_event import looks_like_health_event, parse_health_events
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.health_event import health_event_findings
from gpuslo.verdict import Finding

__all__ = ["inspect_health_event", "looks_like_health_event"]


def inspect_health_event(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for health events (see `policy.health_event`); empty when the text holds none."""
    events = parse_health_events(text)
    return health_event_findings(events, options.policy, options.gpu_family)
