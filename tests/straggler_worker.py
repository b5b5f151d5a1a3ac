"""One rank ("node") of the tiny distributed training job of tests/test_straggler_training.py:
`python tests/straggler_worker.py RANK PORT ROOT`. A linear model trained on CPU with gloo
all-reduce (the ranks move in lock step); rank 1 sleeps DELAY_S in its compute section from step
STEADY_STEPS + 1. Each rank records its steps with the Recorder: `step_time_s` from its clock,
`compute_s` from its section timing (without the wait in the all-reduce)."""

from __future__ import annotations

import datetime
import sys
import time

import torch
import torch.distributed as dist

from gpuslo.goodput.recorder import Recorder

STEADY_STEPS, SLOW_STEPS, DELAY_S = 40, 20, 0.2
COALESCE = 5  # steps per logged interval


def train(rank: int, port: int, root: str) -> None:
    """Run the job's rank `rank`, rendezvous on 127.0.0.1:`port`, journal under `root`."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2, timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(256, 64)
    rec = Recorder(f"{root}/node-{rank}", "tiny-llm", node=f"node-{rank}",
                   coalesce_steps=COALESCE, coalesce_s=3600)
    rec.job_start(1)
    dist.barrier()
    last = time.time()
    for step in range(1, STEADY_STEPS + SLOW_STEPS + 1):
        began = time.perf_counter()
        model(data).pow(2).mean().backward()
        if rank == 1 and step > STEADY_STEPS:
            time.sleep(DELAY_S)  # the straggler: a slow GPU, a capped clock
        compute = time.perf_counter() - began
        for parameter in model.parameters():
            dist.all_reduce(parameter.grad)
        optimizer.step()
        optimizer.zero_grad()
        now = time.time()
        rec.step(step, step_time_s=now - last, compute_s=compute)
        last = now
    rec.checkpoint(STEADY_STEPS + SLOW_STEPS)
    rec.job_end("completed")
    dist.destroy_process_group()


if __name__ == "__main__":
    train(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
