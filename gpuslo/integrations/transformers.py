"""Hugging Face Trainer → the Recorder's journal: `GoodputCallback(journal_dir, job_id)`.

    trainer = Trainer(..., callbacks=[GoodputCallback("/var/lib/gpuslo/journals", "run-3")])
    trainer.train(resume_from_checkpoint=True)   # the same job id in every restart

Phases from the Trainer's hooks: initialization from `on_init_end` (the Trainer is built) to
`on_train_begin`; when `train` resumed from a checkpoint (`state.global_step` > 0 at
`on_train_begin`), that span is the restart's `checkpoint_restore` instead (the Trainer loads
weights, optimizer, scheduler and RNG states in it; it also sets up the dataloader, which no hook
separates). A checkpoint save is timed from the Trainer's last hook before it (the step's end, a
log or an evaluation) to `on_save` (called once the checkpoint directory is written); every
optimizer step (`state.global_step`) is a step; `on_train_end` is `job_end completed`. A crash
writes nothing more (the Trainer has no exception hook): the next run's restart says so.
Only the local process zero of each node writes (GPUs: `args.n_gpu`/`world_size` per node, or
`gpus=`). transformers ≥ 4.30; `pip install gpuslo[transformers]`.
"""

from __future__ import annotations

import os
from typing import Any

from transformers import TrainerCallback

from gpuslo.integrations.session import GoodputSession


class GoodputCallback(TrainerCallback):
    """Writes the job's goodput journal from the Trainer's hooks (see the module docstring).

    Args:
        journal_dir: directory of journals (the exporter's `--journal-dir`).
        job_id: the job's id, the same in every restart.
        gpus: GPUs this node gives the job (default: 1 per process of this node, at least 1).
    """

    def __init__(self, journal_dir: str | os.PathLike[str], job_id: str,
                 gpus: int | None = None) -> None:
        self.journal_dir, self.job_id, self.gpus = journal_dir, job_id, gpus
        self.session: GoodputSession | None = None
        self._last_hook = 0.0

    def _mark(self) -> None:
        if self.session is not None:
            self._last_hook = self.session.now()

    def _gpus(self, args: Any) -> int:
        if self.gpus:
            return self.gpus
        per_node = int(os.environ.get("LOCAL_WORLD_SIZE", "0") or 0)
        return max(1, per_node or int(getattr(args, "n_gpu", 0) or 0))

    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_local_process_zero or self.session is not None:
            return
        self.session = GoodputSession(self.journal_dir, self.job_id, self._gpus(args))
        self.session.begin()
        self._mark()

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.session is None:
            return
        if state.global_step > 0:
            now = self.session.now()
            self.session.resumed(state.global_step, self._last_hook, now)
        self.session.train_start()
        self._mark()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.session is not None:
            self.session.step(state.global_step)
            self._mark()

    def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._mark()

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._mark()

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.session is not None:
            self.session.save_started(at=self._last_hook)
            self.session.save_ended(state.global_step)
            self._mark()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.session is not None:
            self.session.end("completed")
            self.session = None
