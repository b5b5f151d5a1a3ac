"""A small PyTorch training loop that keeps one GPU busy for N seconds (default 60): the load
bench/device/run_all.py runs `gpuslo check --active` beside (issue 26 saw a PyTorch Lightning job
halve the probe's bf16 figure). An MLP on random data, AdamW, bf16 autocast.

    CUDA_VISIBLE_DEVICES=0 python3 bench/device/training_load.py 60
"""

import sys
import time

import torch  # the GPU machine's PyTorch: not a gpuslo dependency


def main(seconds: float) -> None:
    device = torch.device("cuda", 0)
    model = torch.nn.Sequential(*[torch.nn.Linear(8192, 8192) for _ in range(4)]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = torch.randn(4096, 8192, device=device)
    end, steps = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(batch).float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1
    torch.cuda.synchronize(device)
    print(f"training_load: {steps} steps in {seconds:g} s")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
