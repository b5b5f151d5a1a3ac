"""PyTorch Lightning → the Recorder's journal: `GoodputCallback(journal_dir, job_id)`.

    trainer = Trainer(callbacks=[GoodputCallback("/var/lib/gpuslo/journals", "llama-run-3")])
    trainer.fit(model, ckpt_path="last")      # the same job id in every restart

Phases are timed where Lightning does the work: `setup` opens initialization; the checkpoint
file is read and written through the strategy's `CheckpointIO`, which the callback wraps, so
`checkpoint_restore` is exactly the load (`load_checkpoint`) and `checkpoint_save` exactly the
write (`save_checkpoint`; with an asynchronous CheckpointIO, the hand-off); initialization ends
at `on_train_start`; every optimizer step (`trainer.global_step`) is a step; an exception that
ends `fit` is `job_end failed` (KeyboardInterrupt: cancelled), the end of `fit` `completed`.
A process killed outright writes nothing more: its next run's restart says so. Only local rank 0
of each node writes (GPUs: `trainer.num_devices`, or `gpus=`); on nodes other than the one
that writes the file, progress is committed when Lightning builds the checkpoint. Lightning ≥ 2.0
(`lightning.pytorch`); `pip install gpuslo[lightning]`.

Each step's compute time (`compute_s`, the exporter's `gpuslo_job_step_compute_seconds`, which
the rules turn into per-node straggler scores) is the writing rank's own section timing: its
forward (`training_step`, from `on_train_batch_start` to `on_before_backward`) plus its
optimizer update (`on_before_optimizer_step` to `on_train_batch_end`). The backward is left out
because DDP and FSDP overlap the gradient all-reduce with it: a fast rank's backward includes
waiting for the slowest rank, which would make every node of the gang look as slow as the
straggler. It is local rank 0's timing only (the rank that writes), so a straggling GPU on
another local rank of the node shows in the job's step time (the slowdown), not in the node's
score. A batch without `on_before_backward` (manual optimization without `manual_backward`) is
timed whole.
"""

from __future__ import annotations

import os
import time
from typing import Any

from lightning.pytorch import Callback
from lightning.pytorch.plugins.io import CheckpointIO

from gpuslo.integrations.session import GoodputSession


class _TimedCheckpointIO(CheckpointIO):
    """Delegates to the strategy's CheckpointIO and tells the session when each read and write
    begins and ends."""

    def __init__(self, inner: CheckpointIO, callback: GoodputCallback) -> None:
        self.inner, self.callback = inner, callback

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any,
                        storage_options: Any | None = None) -> None:
        session = self.callback.session
        if session is not None:
            session.save_started()
        self.inner.save_checkpoint(checkpoint, path, storage_options=storage_options)
        if session is not None:
            session.save_ended(int(checkpoint.get("global_step", 0)))

    def load_checkpoint(self, path: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        session = self.callback.session
        started = session.now() if session is not None else 0.0
        checkpoint = self.inner.load_checkpoint(path, *args, **kwargs)
        if session is not None:
            session.resumed(int(checkpoint.get("global_step", 0)), started, session.now())
        return checkpoint

    def remove_checkpoint(self, path: Any) -> None:
        self.inner.remove_checkpoint(path)

    def teardown(self) -> None:
        self.inner.teardown()


class GoodputCallback(Callback):
    """Writes the job's goodput journal from Lightning's hooks (see the module docstring).

    Args:
        journal_dir: directory of journals (the exporter's `--journal-dir`).
        job_id: the job's id, the same in every restart.
        gpus: GPUs this node gives the job (default `trainer.num_devices`).
        node: the node's name in the journal (default the host name).
        coalesce_steps, coalesce_s: one journal `steps` line per this many steps or seconds
            (the Recorder's defaults, 1000 and 60 s; each line is one logged interval of the
            slowdown rule).
    """

    def __init__(self, journal_dir: str | os.PathLike[str], job_id: str,
                 gpus: int | None = None, node: str | None = None,
                 coalesce_steps: int = 1000, coalesce_s: float = 60.0) -> None:
        self.journal_dir, self.job_id, self.gpus = journal_dir, job_id, gpus
        self._recorder_options = {"node": node, "coalesce_steps": coalesce_steps,
                                  "coalesce_s": coalesce_s}
        self.session: GoodputSession | None = None
        self._section: float | None = None  # perf_counter when the open compute section began
        self._compute: float | None = None  # compute seconds of this batch so far (None: unseen)

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage != "fit" or trainer.local_rank != 0 or self.session is not None:
            return
        self.session = GoodputSession(self.journal_dir, self.job_id,
                                      self.gpus or trainer.num_devices, **self._recorder_options)
        self.session.begin()
        strategy = trainer.strategy
        if not isinstance(strategy.checkpoint_io, _TimedCheckpointIO):
            strategy.checkpoint_io = _TimedCheckpointIO(strategy.checkpoint_io, self)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if self.session is not None:
            self.session.train_start()

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        self._compute, self._section = 0.0, time.perf_counter()

    def _close_section(self) -> None:
        if self._section is not None and self._compute is not None:
            self._compute += time.perf_counter() - self._section
        self._section = None

    def on_before_backward(self, trainer: Any, pl_module: Any, loss: Any) -> None:
        self._close_section()  # the forward ends; the backward waits in collectives

    def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
        self._close_section()
        self._section = time.perf_counter()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        self._close_section()
        if self.session is not None:
            self.session.step(trainer.global_step, compute_s=self._compute)
        self._compute = None

    def on_save_checkpoint(self, trainer: Any, pl_module: Any,
                           checkpoint: dict[str, Any]) -> None:
        # Only global rank 0 writes (through the wrapped CheckpointIO); the local rank 0 of
        # every other node commits its progress when the checkpoint is built, on all ranks.
        if self.session is not None and not trainer.is_global_zero:
            self.session.save_started()
            self.session.save_ended(int(checkpoint.get("global_step", trainer.global_step)))

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if self.session is not None:
            self.session.end("cancelled" if isinstance(exception, KeyboardInterrupt)
                             else "failed")
            self.session = None

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.session is not None:
            self.session.end("completed")
            self.session = None
