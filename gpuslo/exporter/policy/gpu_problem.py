"""`GpuProblem`: one problem a GPU rule found (`policy.gpu.evaluate_gpu`, `policy.clocks`), and
its one conversion into an `inspect` finding."""

from __future__ import annotations

from dataclasses import dataclass

from gpuslo import names, signal_names
from gpuslo.verdict import Finding


@dataclass(frozen=True)
class GpuProblem:
    """One problem `evaluate_gpu` found on one GPU.

    Attributes:
        signal: key of `signal_names.SIGNALS`; reason: key of `names.REASON_LAYER`;
        class_: `names.CLASS_FATAL` or `names.CLASS_WARN`; action: one of `names.ACTIONS`;
        message: one human line; links: NVLink link numbers concerned (sorted), else None;
        count: the count behind the problem (errors, rows) where there is one.
    """

    signal: str
    class_: str
    reason: str
    action: str
    message: str
    links: tuple[int, ...] | None = None
    count: int | None = None

    def finding(self, kind: str, **where: object) -> Finding:
        """This problem as an `inspect` finding of `kind`, placed by `where` (gpu, uuid, pci,
        line): the one conversion every GPU source's findings use."""
        return Finding(
            kind=kind,
            class_=self.class_,
            signal=self.signal,
            reason=self.reason,
            action=self.action,
            message=self.message,
            count=self.count,
            links=list(self.links) if self.links else None,
            **where,
        )

    def __post_init__(self) -> None:
        if self.signal not in signal_names.SIGNALS:
            raise ValueError(f"signal {self.signal!r} not in signal_names.SIGNALS")
        if self.reason not in names.REASON_LAYER:
            raise ValueError(f"reason {self.reason!r} not in names.REASON_LAYER")
        if self.action not in names.ACTIONS:
            raise ValueError(f"action {self.action!r} not in names.ACTIONS")
