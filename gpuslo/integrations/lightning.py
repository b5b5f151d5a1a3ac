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
"""

from __future__ import annotations

import os
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
    """

    def __init__(self, journal_dir: str | os.PathLike[str], job_id: str,
                 gpus: int | None = None) -> None:
        self.journal_dir, self.job_id, self.gpus = journal_dir, job_id, gpus
        self.session: GoodputSession | None = None

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage != "fit" or trainer.local_rank != 0 or self.session is not None:
            return
        self.session = GoodputSession(self.journal_dir, self.job_id,
                                      self.gpus or trainer.num_devices)
        self.session.begin()
        strategy = trainer.strategy
        if not isinstance(strategy.checkpoint_io, _TimedCheckpointIO):
            strategy.checkpoint_io = _TimedCheckpointIO(strategy.checkpoint_io, self)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if self.session is not None:
            self.session.train_start()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        if self.session is not None:
            self.session.step(trainer.global_step)

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
