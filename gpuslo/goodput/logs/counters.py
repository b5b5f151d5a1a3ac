"""Shapes of a step counter: which numeric field of a template counts the steps (pure).

`step_score(f, fields, roles, bar, burst, lead) -> int` says how much the field `f` of a template
looks like its step counter (0: not one); `roles.read_template` takes the best. A counter is an
integer that does not go down within the template (a reset is allowed: a restart or a new epoch)
and is, best first:

- 5 named as a global counter (`global_step`, `num_updates`, `optimizer step`), also when logged
  as a whole float (`global_step=208.0`, not tqdm's rounded `3.2e+4`), or a `total step` beside a
  step counted within a unit (FunASR's `step_in_epoch: 32900, total step: 32900`);
- 4 named `step` (`Step 1 |`, `step:0/6200`, `global step 1:`): `step` beats `iter` (an optimizer
  step spans several micro-batch iters);
- 3 named `iter`, `iteration`, `update`, `batch`, `progress` (Marian's abbreviated `Up.`;
  CNTK's ProgressPrinter `Minibatch[   1- 500]: loss = …`;
  baselines' glued `nupdates`; PaddlePaddle's loop index `batch_id`, `step_id`);
- 2 a count named only `n` printed first and cut off by `:` or `|` (SafeLife's `n=960: loss=…`);
  the `n` of a bar's `n/N` or `n/?`, of an `n/N` beside an epoch or beside a rate of iterations
  (a status drawn with no glyphs: text-generation-webui's `Running… 128 / 7296 … 1.10 s/it`),
  of a bar drawn with glyphs, Keras's `n/N [===>...] -` and Lua Torch xlua's `[== n/N ==>]`,
  or a counter printed first:
  an unnamed integer (or `n/N` pair) that opens the record, cut off from named values after it
  by `:` or `|` (darknet's ` 69: 145.7, …`; zipnerf's `1/25000:loss=…`) or set in brackets
  (clu's `[1500] steps_per_second=…`; `[ 510] 9.4s/step`; `[10/500] loss …`), or after an
  opening `[` left open before a named value (DCGAN-tensorflow's `[   1 Epoch:[ 0/25] …`);
  but 3 for the unnamed integer right after such a bracket, cut off by `|` (YOLACT's `[  0]
  10 || B: …`: the bracket is the epoch, `after_bracket`);
- 1 another `n/N`, or an unnamed count followed by its plural noun (fairseq-lua's `| epoch 009 |
  0045063 updates | words/s …`: `NNN updates`, `NNN steps`), or the index a named value is
  reported at, printed between the name and the value (tacotron2's `Train loss 7 5.797815`),
  or an `Episode` counter (an RL loop's unit of work where it prints no step: `Episode: 59,
  Actions: 2351, …, Time: 4.28`), chosen only when it recurs (a one-off `training for 1000
  steps` is a setting) and only where no better counter is printed; but 2 for a `Frame`
  counter beside the `Episode` (never alone: `frame #0: c10::Error…` is a C++ stack frame),
  an RL loop's environment steps (the DQN family's `for frame in range(1, frames+1)`
  with one `agent.step` a frame, printed `Episode 1\tFrame 20 \tAverage100 Score: 20.00`):
  the unit of work the run's budget counts, over the episode that groups a varying number of them.

An unnamed integer opening a bare row of numbers, rising by a steady stride over stamped rows, is
the counter too (`barerows.bare_row_counter`). A range `Batch [a-b]` (MXNet's Speedometer) is read
at its upper end (`range_end`). An epoch is an integer named `epoch`, `ep` or PaddlePaddle's `Pass`
(`Pass 0, Batch 100, Cost …`: the v2 trainer's `event.pass_id`, one pass over the data). The
counter is per epoch (`per_epoch`) when seen reset while the epoch rose, else assumed for an
`n/N` or `iter`/`batch` counter beside the epoch, or one whose N is below the epoch's own N
(`below_epochs`).
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.bars import after_glyphs, has_glyphs, keras_drawn, xlua_drawn
from gpuslo.goodput.logs.templates import Field

STEP_WORDS = {"step", "steps", "iter", "iters", "iteration", "iterations", "it", "update",
              "updates", "progress", "batch", "globalstep", "minibatch"}
# the update counter abbreviated with its dot (Marian's `Ep. 1 : Up. 10000 : Sen. …`), only so
_ABBREVIATED = re.compile(r"^up\.$")
# a count's `n` glued to its counter (baselines' `nupdates`, `niter`), read as `n_updates`;
# not `nsteps` (baselines' rollout length, a setting)
_GLUED_COUNT = {"n" + w: w for w in ("update", "updates", "iter", "iters", "iteration",
                                     "iterations")}
GLOBAL_WORDS = ("global_step", "global step", "num_updates", "globalstep", "optimizer step")
NOT_STEP = {"skipped", "nan", "zeros", "number", "size", "samples", "tokens", "seqs", "per",
            "time", "timing", "ms", "sec", "avg", "mean", "loss", "lr", "max", "min",
            "accumulation", "warmup", "total", "consumed", "eval", "val", "timesteps", "this",
            "episodes", "env", "since", "restore", "sampled", "trained", "valid", "test",
            "actor", "actors", "evaluator", "environment"}
# `actor`/`evaluator` steps count environment frames, not updates (Acme's `counting.Counter`:
# `Actor Steps = 825 | … | Learner Steps = 2`; the learner's steps are the training steps)
EPOCH_WORDS = {"epoch", "epochs", "ep"}
# PaddlePaddle's pass: `Pass 0, Batch 100, Cost 2.26` (v2 trainer's EndIteration event),
# `Pass 3, Batch 0, Cost ...` (fluid book examples): an epoch, named alone
_PASS = ("pass",)
# the noun after an unnamed count (`0045063 updates |`): its plural says it counts them
_COUNTED = re.compile(r"^\s*(?:updates|steps|iterations|iters)\b")
# a loop's index named `<word>_id` (PaddleRec's trainer: `epoch: 0, batch_id: 500, …`, from
# `for batch_id, batch in enumerate(train_dataloader)`); not `run_id`, `step_ids` of a dataset
_INDEXED = {"step", "iter", "iteration", "batch"}
_COMPOUND = re.compile(r"[A-Za-z]\w*[-_][A-Za-z]+")  # `epoch3-batch`: parts glued by - or _
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# a loop variable's letter after the counter's noun (AlphaZero_Gobang's `print("batch i:{},
# episode_len:{}".format(i + 1, ...))`: `batch i:1`): the noun names the counter
_LOOP_LETTERS = {"i", "j", "k"}
_OPENING_BRACKET = re.compile(r"^\[\s*\x01")
# records a per-episode step count must rise on, every one, to be read as the cumulative step
CUMULATIVE_MIN = 5


def words(key: str) -> list[str]:
    """A field name as lower-case words (`elapsed_time_per_iteration_ms` → elapsed, time, ...;
    camelCase split: UCTransNet's `AvgTime` → avg, time); a `(t)` after a name is its time
    (open_clip's `Data (t)`, `Batch (t)`: seconds per data load and per batch)."""
    key = _CAMEL.sub(" ", key.replace("(t)", " time"))
    return [w for w in re.split(r"[^a-z0-9µ]+", key.lower()) if w]


def is_epoch_name(key: str) -> bool:
    """`Epoch`, `train epoch`, `ep`, PaddlePaddle's `Pass`; not `num_epochs`, `max epoch`, nor a
    step counted within the epoch (FunASR's `step_in_epoch`: `within`)."""
    ws = words(key)
    if tuple(ws) == _PASS:
        return True
    return bool(ws) and ws[-1] in EPOCH_WORDS and not set(ws) & {"num", "number", "total",
                                                                 "max", "n"} and not within(key)


def within(key: str) -> bool:
    """A step counted within a larger unit, named `<step word> in <unit>` (FunASR's
    `step_in_slice`, `step_in_epoch`): it resets with that unit."""
    ws = words(key)
    return len(ws) >= 3 and ws[0] in STEP_WORDS and ws[1] == "in"


def total_counter(f: Field, fields: list[Field]) -> bool:
    """A `total step` (singular) printed beside a step counted within a unit (FunASR's trainer:
    `step_in_slice: 32900/81081, step_in_epoch: 32900, total step: 32900`, its
    `self.batch_total`): the job-wide counter. Alone, `Total steps: 512` is the planned length."""
    return words(f.key) == ["total", "step"] and any(within(g.key) for g in fields)


def is_step_name(key: str) -> bool:
    """A name of a step counter (see the module docstring). A counter glued to its name by `-`
    or `_` in one token after a sentence (hualin95/Deeplab-v3plus's `The train loss of
    epoch3-batch-50:0.23`) is named by that token alone: the words of the sentence before it
    (`loss`) name the value after the `:`, not the counter."""
    low, ws = key.lower(), [_GLUED_COUNT.get(w, w) for w in words(key)]
    if any(g in low for g in GLOBAL_WORDS) or _ABBREVIATED.search(low):
        return True
    token = key.split()[-1] if key.split() else ""
    if " " in key.strip() and _COMPOUND.fullmatch(token):
        ws = [_GLUED_COUNT.get(w, w) for w in words(token)]
    if len(ws) >= 2 and ws[-1] in _LOOP_LETTERS:
        ws = ws[:-1]
    if len(ws) >= 2 and ws[-1] == "id" and ws[-2] in _INDEXED:
        ws = ws[:-1]  # PaddlePaddle's `batch_id` (the index of enumerate(loader)): the counter
    return bool(ws) and ws[-1] in STEP_WORDS and not set(ws[:-1]) & NOT_STEP


def is_global(key: str) -> bool:
    """Named as a job-wide counter (`global_step`, `num_updates`)."""
    low = key.lower()
    return any(g in low for g in GLOBAL_WORDS)


def unnamed(step: Field) -> str:
    """How an unnamed counter was found, in words."""
    if not step.key and _COUNTED.match(step.after):
        return step.after.split()[0]
    return "n/N" if step.after.lstrip().startswith("/") else "printed first"


def _leading(f: Field, fields: list[Field], opening: str) -> bool:
    """An unnamed integer (or the `n` of an `n/N`) that opens the record, cut off from the rest
    by `:` or `|` (`opening` "lead": the template starts with it) or closed by `]` (`opening`
    "bracket": the template starts `[`), with named values after it (darknet's ` 69: 145.7,
    212.6 avg, …`, `40 | loss 6.68 | …`, zipnerf's `1/25000:loss=0.059,…`, clu's `[1500]
    steps_per_second=1.77, …`): the step counter printed first."""
    if f.index or not opening:
        return False
    last = f
    if f.after.strip() == "/" and len(fields) > 1 and fields[1].kind == "num" and (
            fields[1].integer and not fields[1].key):
        last = fields[1]  # `1/25000:` - the pair ends at its N
    sep = last.after.strip()[:1]
    if opening == "bracket" and sep != "]" and _named_next(last, fields):
        return True
    if sep not in ((":", "|") if opening == "lead" else ("]",)):
        return False
    return any(g.key or g.after.strip()[:1].isalpha() for g in fields[last.index + 1:])


def _named_next(f: Field, fields: list[Field]) -> bool:
    """The record's opening `[` and unnamed integer `f`, then the name of the next value with
    the bracket left open (DCGAN-tensorflow's model.py `"[%8d Epoch:[%2d/%2d] [%4d/%4d] time:
    …" % (counter, epoch, config.epoch, idx, batch_idxs)`: `[       1 Epoch:[ 0/25] [   0/
    273] time: 1.2979, …`, its global counter before the epoch and the batch in it)."""
    nxt = fields[f.index + 1] if f.index + 1 < len(fields) else None
    return nxt is not None and bool(nxt.key) and f.after.strip().startswith(nxt.key)


def opening(text: str) -> str:
    """How a template opens: "lead" with a value, "bracket" with `[` and a value, else ''."""
    text = text.lstrip()
    if text[:1] == "\x01":
        return "lead"
    return "bracket" if _OPENING_BRACKET.match(text) else ""


def whole_global(f: Field) -> bool:
    """A global counter logged as a float (Lightning's `global_step=208.0`: `self.log` turns
    every logged value into a float tensor): named global, every value whole, none in exponent
    form (NeMo's bar `global_step=3.2e+4` beside `32040/500150`: tqdm's `format_num` keeps three
    significant figures when that is shorter, so the value is rounded, not a count)."""
    seen = f.known()
    return bool(seen) and not f.rounded and all(n == int(n) for n in seen) and is_global(f.key)


def postfix_step(f: Field, fields: list[Field], roles: dict[int, str], bar: bool) -> bool:
    """A step logged as a float in a tqdm bar's postfix (Lightning's bar: `Epoch 5999: 100% 2/2
    [00:03<00:00,  1.92s/it, v_num=2, step=7440.0]`, `self.log` turns every logged value into a
    float tensor; newcomer6 #19, piper#746): named `step` (or a global name, `whole_global`),
    after the bar's rate (tqdm's `set_postfix` prints after `[elapsed<remaining, rate`), every
    value whole and none rounded to three figures (`7.44e+5`). A whole float elsewhere
    (`loss: 2.0`, `step: 3.0` on a line with no bar) stays a metric."""
    if not bar or words(f.key) != ["step"]:
        return False
    seen = f.known()
    rated = any(roles.get(g.index) in ("rate_spi", "rate_ips") for g in fields[:f.index])
    return rated and bool(seen) and not f.rounded and all(n == int(n) for n in seen)


def step_score(f: Field, fields: list[Field], roles: dict[int, str], bar: bool,
               burst: bool = False, lead: str = "") -> int:
    """How much `f` looks like the step counter (module docstring); `roles` the role names by
    field index so far, `burst` the records are copies of one (a constant counter still
    counts), `lead` how the template opens (`opening`)."""
    if not (f.integer or whole_global(f) or postfix_step(f, fields, roles, bar)) or (
            f.kind != "num") or roles[f.index] != "metric" or f.unit == "%":
        return 0
    moving = fields[range_end(fields, f.index)]  # a range `[a-b]` moves at its upper end
    seen = moving.known()
    pair = f.after.lstrip().startswith("/")
    # every draw at its N: loops each drawn finished, whose n need not rise (a training bar
    # `2492/2492` and a validation bar `1068/1068` in turn, fresh23 AA17)
    finished = pair and f.index + 1 < len(fields) and fields[f.index + 1].numbers == f.numbers
    done = finished or _redrawn_count(f, roles)
    if seen and min(seen) < 0 or (
            len(seen) >= 3 and moving.constant() and not done and not burst) or (
            moving.rising() < 0.6 and not finished and not _resets_with_epoch(
                f, fields, roles, moving)):
        return 0
    if total_counter(f, fields):
        return 5
    if is_step_name(f.key):
        if is_global(f.key):
            return 5
        return 4 if words(f.key)[-1] in ("step", "steps") else 3
    if _named_n(f, fields):
        return 2
    if words(f.key) in (["frame"], ["frames"]) and any(
            words(g.key) == ["episode"] for g in fields):
        return 2
    if _cumulative_per_episode(f, fields):
        return 2
    if _index_of_value(f, fields) or words(f.key) == ["episode"]:
        return 1
    if f.key and not pair:
        return 0
    if not f.key and not f.unit and _COUNTED.match(f.after):
        return 1
    if after_bracket(f, fields, lead):
        return 3
    if _leading(f, fields, lead):
        return 2
    if pair and (keras_drawn(fields, f.index) or xlua_drawn(fields, f.index)):
        return 2  # Keras's Progbar `n/N [===>...] - `, xlua's `[== n/N ==>]`: the bar's counter
    if pair or f.unit == "it" or f.after.startswith("/?"):
        if bar and has_glyphs(fields) and not after_glyphs(fields, f.index):
            return 1  # another n/N on a bar's line (YOLOv5's epoch `0/1`): not the bar's
        epoch_here = "epoch" in roles.values()
        rated = bool({"rate_spi", "rate_ips"} & set(roles.values()))
        return 2 if bar or epoch_here or (pair and rated) else 1
    return 0


def _cumulative_per_episode(f: Field, fields: list[Field]) -> bool:
    """Steps named as counted per episode (`Steps this episode`, `steps per episode`) that rise
    on every record beside a rising `Episode` counter: the run's cumulative agent step under a
    wrong label (the PyTorch Mario-RL tutorial's MetricLogger prints `curr_step` as it; PyBoy-RL's
    `Episode 0 - Steps this episode 1806 - …`, then 5510, 9207, …, fresh24 AB16). Episode
    lengths vary, so a count per episode that never falls over `CUMULATIVE_MIN` records is no
    such count; one that falls anywhere is the episode's length, not the step."""
    ws = words(f.key)
    if len(ws) != 3 or ws[0] not in ("step", "steps") or ws[1] not in ("this", "per", "in") or (
            ws[2] != "episode") or not any(words(g.key) == ["episode"] for g in fields):
        return False
    seen = f.known()
    return len(seen) >= CUMULATIVE_MIN and all(b > a for a, b in zip(seen, seen[1:], strict=False))


def _redrawn_count(f: Field, roles: dict[int, str]) -> bool:
    """tqdm's count with no total, `<n>it [<elapsed>, <rate>]` (a bar past its total drops the
    `n/N` and percentage: STTN's `20001it [12:17:02,  3.35s/it]`, fresh20 X06), its elapsed
    rising while n stays: the bar redrawn at its last count (a postfix update, `close()`), still
    the bar's counter, as an `n/N` drawn at N is."""
    return f.unit == "it" and f.after.lstrip().startswith("[") and (
        roles.get(f.index + 1) == "elapsed")


def _resets_with_epoch(f: Field, fields: list[Field], roles: dict[int, str],
                       moving: Field | None = None) -> bool:
    """A step-named counter that never falls while the named epoch on its line stays and falls
    only where that epoch rises: counted within the epoch (MXNet Gluon's train_net.py `[Epoch
    0][Batch 0], Speed: …` and `[Epoch 0][Batch 50]`, then `[Epoch 1][Batch 0]`), not a counter
    that wanders. It must rise within some epoch at least. `moving`: the field whose numbers
    count, where the counter is a range (`range_end`: MXNet's Speedometer with auto_reset off,
    `Epoch[5] Batch [0-20]` … `[0-1600]`, then `Epoch[6] Batch [0-20]`)."""
    epochs = [i for i, r in roles.items() if r == "epoch"]
    if not epochs or not is_step_name(f.key):
        return False
    numbers = (moving or f).numbers
    pairs = [(e, n) for e, n in zip(fields[epochs[0]].numbers, numbers, strict=False)
             if e is not None and n is not None]
    rose = False
    for (e0, n0), (e1, n1) in zip(pairs, pairs[1:], strict=False):
        if e1 < e0 or (e1 == e0 and n1 < n0) or (e1 > e0 and n1 >= n0 and n0 > 0):
            return False
        rose = rose or (e1 == e0 and n1 > n0)
    return rose


def after_bracket(f: Field, fields: list[Field], lead: str) -> bool:
    """The unnamed integer right after a record's opening `[e]`, cut off by `|` or `:` from
    named values (YOLACT's train.py `'[%3d] %7d ||' % (epoch, iteration)`: `[  0]      10 ||
    B: 6.872 | … || timer: 1.618`): the step, the bracket's number its epoch (`bracket_epoch`).
    It must move; a constant one after the bracket is no counter."""
    if lead != "bracket" or f.index != 1 or f.key or f.unit or f.constant():
        return False
    first = fields[0]
    if first.key or not first.integer or first.after.strip() != "]":
        return False
    sep = f.after.strip()[:1]
    return sep in (":", "|") and any(g.key for g in fields[2:])


def bracket_epoch(fields: list[Field], step: int, lead: str) -> bool:
    """The opening `[e]` of a step read by `after_bracket` is the epoch when it never falls."""
    if step != 1 or not after_bracket(fields[1], fields, lead):
        return False
    seen = fields[0].known()
    return all(b >= a for a, b in zip(seen, seen[1:], strict=False))


def _named_n(f: Field, fields: list[Field]) -> bool:
    """A count named only `n` that opens the record, cut off by `:` or `|` from named values
    after it (SafeLife's `INFO     n=960: loss=0.304, entropy=2.175, …`: its `num_steps`)."""
    return f.index == 0 and words(f.key) == ["n"] and f.after.strip()[:1] in (":", "|") and any(
        g.key for g in fields[1:])


def _index_of_value(f: Field, fields: list[Field]) -> bool:
    """An integer printed between a value's name and the value, with only a space on either side
    (NVIDIA/tacotron2's `Train loss {} {:.6f} Grad Norm {:.6f} {:.2f}s/it` of iteration,
    reduced_loss, grad_norm, duration: `Train loss 7 5.797815 Grad Norm 6.959098 3.97s/it`):
    the index the value is reported at, when the value after it is an unnamed fraction and the
    integer moves (a constant one is a setting: `Recall at 5 0.91`)."""
    if not f.key or f.after != " " or f.index + 1 >= len(fields) or f.constant():
        return False
    value = fields[f.index + 1]
    return value.kind == "num" and not value.key and not value.integer and not value.unit


def range_end(fields: list[Field], step: int) -> int:
    """A counter printed as a range `[a-b]` of the batches since the last report (MXNet's
    Speedometer, `Epoch[0] Batch [115980-116000]`: `last_count` to `count`; with auto_reset off
    the lower end stays 0, `Batch [0-20]` … `[0-1600]`, and only the upper end moves; CNTK's
    ProgressPrinter pads both ends, `Minibatch[   1- 500]`): the step is the upper end, an
    unnamed integer right after `-` (a blank may follow it) closed by `]` that is above the
    lower end on every record. Anything else (`step 5 - loss 3`, a blank before the `-`) keeps
    the counter."""
    f = fields[step]
    if f.after.rstrip() != "-" or step + 1 >= len(fields):
        return step
    end = fields[step + 1]
    if end.key or not end.integer or end.kind != "num" or not end.after.startswith("]"):
        return step
    pairs = list(zip(f.numbers, end.numbers, strict=False))
    if pairs and all(a is not None and b is not None and b > a for a, b in pairs):
        return step + 1
    return step


def below_epochs(fields: list[Field], epoch: int, total: int | None) -> bool:
    """The counter's N is below the epoch's own N (`Epoch 35/50 iter 5/9`): a job-wide counter
    counts at least one step per epoch, so this one restarts every epoch."""
    if total is None or epoch + 1 >= len(fields) or fields[epoch + 1].index == total:
        return False
    if not fields[epoch].after.strip().startswith(("/", "of")):
        return False
    big_n, small_n = fields[epoch + 1].known(), fields[total].known()
    return bool(big_n and small_n) and max(small_n) < min(big_n)


def per_epoch(epoch: Field, step: Field, has_total: bool) -> bool:
    """True when the counter restarts each epoch: seen reset while the epoch rose, or one record
    before (an epoch label that lags, `epochs.lagging_labels`), else assumed for an `n/N` or
    `iter`/`batch` counter printed beside the epoch."""
    pairs = list(zip(epoch.numbers, step.numbers, strict=False))
    for i, ((e0, s0), (e1, s1)) in enumerate(zip(pairs, pairs[1:], strict=False)):
        if None in (e0, s0, e1, s1) or e1 == e0:
            continue
        before = pairs[i - 1] if i else (None, None)
        lagged = before[0] == e0 and before[1] is not None and s0 < before[1]  # type: ignore[operator]
        return bool(e1 > e0 and (s1 <= s0 or lagged))  # type: ignore[operator]
    name = words(step.key)[-1:] if step.key else []
    return has_total or name in (["iter"], ["iteration"], ["batch"], ["it"])
