"""PyTorch Lightning writes the Recorder's journal through GoodputCallback: a tiny model built in
the test trains on CPU, saves a checkpoint every 3 steps, crashes at step 5, and resumes from
the step-3 checkpoint to step 8. The journal then gives, by the one calculator: the steps 4-5
lost to the crash as wasted progress, the gap until the resume as recovery, the checkpoint
writes and the load as their phases, one training interruption.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_module

pl = require_module("lightning.pytorch", "lightning")
torch = require_module("torch", "lightning")

from gpuslo.goodput.calculator import compute_goodput  # noqa: E402
from gpuslo.goodput.journal import journal_path, parse_journal  # noqa: E402
from gpuslo.integrations.lightning import GoodputCallback  # noqa: E402


class Tiny(pl.LightningModule):
    def __init__(self, crash_at: int | None = None) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.crash_at = crash_at

    def training_step(self, batch, batch_idx):
        if self.crash_at is not None and self.global_step + 1 == self.crash_at:
            raise RuntimeError("simulated crash in the training step")
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        generator = torch.Generator().manual_seed(0)
        data = torch.utils.data.TensorDataset(torch.randn(64, 4, generator=generator),
                                              torch.randn(64, 1, generator=generator))
        return torch.utils.data.DataLoader(data, batch_size=4)


def trainer(tmp_path: Path, max_steps: int) -> pl.Trainer:
    checkpoints = pl.callbacks.ModelCheckpoint(dirpath=tmp_path / "ckpt", every_n_train_steps=3,
                                               save_top_k=-1, filename="{step}")
    return pl.Trainer(max_steps=max_steps, accelerator="cpu", devices=1, logger=False,
                      enable_progress_bar=False, enable_model_summary=False,
                      callbacks=[GoodputCallback(tmp_path / "journals", "lit-job"), checkpoints])


def test_train_save_crash_resume(tmp_path: Path):
    with pytest.raises(RuntimeError, match="simulated crash"):
        trainer(tmp_path, 8).fit(Tiny(crash_at=5))
    trainer(tmp_path, 8).fit(Tiny(), ckpt_path=str(tmp_path / "ckpt" / "step=3.ckpt"))

    events, problems = parse_journal(journal_path(tmp_path / "journals", "lit-job").read_text(),
                                     "lit-job")
    assert not problems
    kinds = [(e["event"], e.get("category") or e.get("status") or e.get("step")
              or e.get("from_step")) for e in events if e["event"] != "steps"]
    assert kinds == [
        ("job_start", None), ("phase_start", "initialization"), ("phase_end", "initialization"),
        ("phase_start", "checkpoint_save"), ("phase_end", "checkpoint_save"), ("checkpoint", 3),
        ("job_end", "failed"),
        ("restart", 3), ("phase_start", "initialization"), ("phase_end", "initialization"),
        ("phase_start", "checkpoint_restore"), ("phase_end", "checkpoint_restore"),
        ("phase_start", "checkpoint_save"), ("phase_end", "checkpoint_save"), ("checkpoint", 6),
        ("job_end", "completed"),
    ]
    assert max(e["step"] for e in events if e["event"] == "steps") == 8
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    goodput = compute_goodput(events)
    seconds = goodput.gpu_seconds
    for category in ("productive", "checkpoint_save", "checkpoint_restore", "wasted_progress",
                     "recovery", "initialization"):
        assert seconds[category] > 0, category
    assert goodput.interruptions["training"] == 1 and goodput.status == "completed"
    assert goodput.gpus == 1 and goodput.committed_step == 6
