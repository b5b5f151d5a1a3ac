"""One "node" of the tiny PyTorch Lightning job of tests/test_straggler_training.py:
`python tests/lightning_straggler_worker.py RANK PORT ROOT`. Lightning's `ddp` strategy on CPU
(gloo on loopback) with `num_nodes=2, devices=1`: this process is node RANK's only rank, started
externally (LOCAL_RANK, NODE_RANK, MASTER_ADDR/PORT, as a cluster launcher sets them), so it is
its node's local rank 0 and writes that node's journal through `GoodputCallback`. Node 1 sleeps
DELAY_S inside `training_step` from step STEADY_STEPS + 1; nothing else records anything: the step
times and compute times are the callback's own."""

from __future__ import annotations

import os
import sys
import time

import lightning.pytorch as pl
import torch

from gpuslo.integrations.lightning import GoodputCallback

STEADY_STEPS, SLOW_STEPS, DELAY_S = 100, 20, 0.5  # as in tests/test_straggler_training.py
COALESCE = 10  # steps per journal line (one logged interval of the slowdown rule)
BATCH = 4


class Tiny(pl.LightningModule):
    """A linear model; `slow` sleeps DELAY_S in each training step after the steady ones."""

    def __init__(self, slow: bool) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(64, 1)
        self.slow = slow

    def training_step(self, batch, batch_idx):
        if self.slow and self.global_step >= STEADY_STEPS:  # global_step: steps done before
            time.sleep(DELAY_S)  # the straggler: a slow GPU, a capped clock
        (x,) = batch
        return self.layer(x).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        steps = STEADY_STEPS + SLOW_STEPS
        data = torch.randn(2 * steps * BATCH, 64, generator=torch.Generator().manual_seed(0))
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data),
                                           batch_size=BATCH)  # Lightning adds the sampler


def train(rank: int, port: int, root: str) -> None:
    """Run node `rank` of the job, rendezvous on 127.0.0.1:`port`, journal under `root`."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NODE_RANK=str(rank),
                      LOCAL_RANK="0", WORLD_SIZE="2")
    torch.manual_seed(0)
    callback = GoodputCallback(f"{root}/node-{rank}", "tiny-llm", node=f"node-{rank}",
                               coalesce_steps=COALESCE, coalesce_s=3600)
    trainer = pl.Trainer(accelerator="cpu", devices=1, num_nodes=2, strategy="ddp",
                         max_steps=STEADY_STEPS + SLOW_STEPS, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[callback])
    trainer.fit(Tiny(slow=rank == 1))
    # Tear the gloo group down before exit, as the plain worker does: left to the interpreter's
    # teardown a gloo thread can abort the process (SIGABRT, "terminate called without an active
    # exception": one rank, once, in a loaded full run).
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    train(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
