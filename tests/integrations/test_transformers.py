"""The Hugging Face Trainer writes the Recorder's journal through GoodputCallback: a one-layer
GPT-2 built from a config in the test (nothing downloaded) trains on CPU, saves every 3 steps,
crashes at step 5 (a callback raises, as a failing step would), and resumes from checkpoint-3
to step 8. The journal gives recovery from the last journal line before the crash to the
resume, the saves and the restore as phases, one interruption seen by the next run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_module

transformers = require_module("transformers", "transformers")
torch = require_module("torch", "transformers")

from gpuslo.goodput.calculator import compute_goodput  # noqa: E402
from gpuslo.goodput.journal import journal_path, parse_journal  # noqa: E402
from gpuslo.integrations.transformers import GoodputCallback  # noqa: E402


class Crash(transformers.TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 5:
            raise RuntimeError("simulated crash after step 5")


def dataset() -> list[dict]:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (32, 8), generator=generator)
    return [{"input_ids": row, "labels": row} for row in ids]


def trainer(tmp_path: Path, *extra) -> transformers.Trainer:
    config = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=16, n_layer=1,
                                     n_head=2, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=8, save_steps=3, save_strategy="steps",
        per_device_train_batch_size=4, logging_steps=1, report_to=[], use_cpu=True,
        disable_tqdm=True)
    return transformers.Trainer(model=transformers.GPT2LMHeadModel(config), args=args,
                                train_dataset=dataset(),
                                callbacks=[GoodputCallback(tmp_path / "journals", "hf-job"),
                                           *extra])


def test_train_save_crash_resume(tmp_path: Path):
    with pytest.raises(RuntimeError, match="simulated crash"):
        trainer(tmp_path, Crash()).train()
    trainer(tmp_path).train(resume_from_checkpoint=str(tmp_path / "out" / "checkpoint-3"))

    events, problems = parse_journal(journal_path(tmp_path / "journals", "hf-job").read_text(),
                                     "hf-job")
    assert not problems
    kinds = [(e["event"], e.get("category") or e.get("status") or e.get("step")
              or e.get("from_step")) for e in events if e["event"] != "steps"]
    assert kinds == [
        ("job_start", None), ("phase_start", "initialization"), ("phase_end", "initialization"),
        ("phase_start", "checkpoint_save"), ("phase_end", "checkpoint_save"), ("checkpoint", 3),
        # the crash: the journal just stops; the restart says the job was interrupted
        ("restart", 3), ("phase_start", "initialization"), ("phase_end", "initialization"),
        ("phase_start", "checkpoint_restore"), ("phase_end", "checkpoint_restore"),
        ("phase_start", "checkpoint_save"), ("phase_end", "checkpoint_save"), ("checkpoint", 6),
        # max_steps reached: the Trainer saves the last step too
        ("phase_start", "checkpoint_save"), ("phase_end", "checkpoint_save"), ("checkpoint", 8),
        ("job_end", "completed"),
    ]
    assert max(e["step"] for e in events if e["event"] == "steps") == 8
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    goodput = compute_goodput(events)
    for category in ("productive", "checkpoint_save", "checkpoint_restore", "recovery"):
        assert goodput.gpu_seconds[category] > 0, category
    # The Trainer has no exception hook and the Recorder coalesces steps (60 s here): steps 4-5
    # never reached the journal, so the time after checkpoint 3 is recovery, not wasted
    # progress (the total lost is the same; DESIGN §5, "a crash loses the unflushed steps").
    assert goodput.gpu_seconds["wasted_progress"] == 0
    # a journal that just stopped: the cause was not seen (the SLO engine correlates verdicts)
    assert goodput.interruptions["observability"] == 1 and goodput.status == "completed"
    assert goodput.committed_step == 8
