"""Training-framework callbacks that write the Recorder's journal with exact phases, so a job
gets its goodput without changing its training loop (DESIGN.md §5):

- `gpuslo.integrations.lightning.GoodputCallback` — PyTorch Lightning (`pip install
  gpuslo[lightning]`);
- `gpuslo.integrations.transformers.GoodputCallback` — the Hugging Face Trainer (`pip install
  gpuslo[transformers]`);
- `gpuslo.integrations.session.GoodputSession` — the framework-neutral part both use.

The framework modules import their framework at import time; this package does not.
"""
