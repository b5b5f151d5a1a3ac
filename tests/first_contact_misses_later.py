"""The training-log misses of the fresh halves from fresh12 on (split from
tests/first_contact_misses.py, which merges them into KNOWN_MISSES, to keep each module small):
("training_logs", half) -> the case names not read right, each set with why its cases are left,
the first-contact score and where it is recorded (tests/data/first_contact/). A set only shrinks.
"""
from __future__ import annotations

LATER_TRAINING_MISSES = {
    # Twelfth fresh batch (20 log files committed to public repositories, SOURCES_o.md): 2/20 at
    # first contact (2026-12-07, f009a2f;
    # tests/data/first_contact/training_logs_fresh12_2026-12-07.txt), facts written before the first
    # run. Read right since (tests/goodput/test_fresh12a_lines.py, test_fresh12b_lines.py,
    # test_fresh12c_lines.py): `batch_id` and `batch i` name the counter; an epoch's first mean over
    # the print interval is no step time; a per-epoch counter whose epoch length is never printed is
    # kept as printed (the job-wide guess given as `global_*`); a bar run once inside another loop's
    # gap is not the steps; NUL runs are padding; a purpose (`for storing the model`), an intention
    # (`will be saved`) and a save noun only in a path are no saves; a duration inside a worked sum
    # is an operand; a run header printed again is a relaunch; a time per epoch on the `n/N` line at
    # its N is the epoch's window; `Saving Gaussians` is a save; verl's `timing_s/save_checkpoint`
    # is the save's seconds and its per-step `timing_s/step` lines, each the step the bar draws
    # next, outrank the bar's run mean; a worker death that lists possible causes names none;
    # numbered stage headers (`Step 3: Loading Data`) are no progress; a rich record wrapped over
    # lines is one record. O01 reads right since a line with no step number printed, in every gap
    # between numbered lines, as many times as the counter rose is a per-step record, its duration
    # each step's time (`[timing] sample processed in 14.7 s` 25 times between `[step N]` lines 25
    # apart: perstep.py, tests/goodput/test_fresh12d_lines.py); O14 since a bar's opening draw
    # `0/3746 [00:00<?, ?it/s]` that carries nothing else is no step 0 (bars.opening_draw). Left:
    # O13 and O15 time their steps by unnumbered lines with no numbered line to count them against
    # (O13's `Batch loss` per 5 batches, the 5 only in the source's `idx % 5 == 0`; O15's `max
    # GPU_mem cost` per optimizer step): no step time, never a guessed one. O02's relaunch loads
    # `dispnetcres_0_22.pth` as a `pretrain model`, wording that means pretrained weights in most
    # trainers; that it is this run's own epoch-22 file shows only by matching the name to the
    # resumed `Epoch: [23]`, which no rule does. O16's step time is the bar's elapsed over its steps
    # (0.0218 s; the clock bounds the mean at 0.0184-0.0237 s) where the facts take tqdm's smoothed
    # rate (0.0238 s). Its save at 7000 reads right since a save worded as one that names a step
    # the progress printed (`[ITER 30000] Saving Gaussians`) keeps its own lower step, printed late
    # (`[ITER 7000] Saving Gaussians`, stdout flushed after the bar; savesteps.off_counter,
    # tests/goodput/test_oldB_lines.py). O19 reads right since the script's opening printed
    # again (its framed banner, 16 s after the first run stopped) is a relaunch where the log
    # never stepped before (relaunch.reopenings; tests/goodput/test_fresh13c_lines.py).
    ("training_logs", "fresh12"): {
        "O02",
        "O13",
        "O15",
        "O16",
    },
    # Thirteenth fresh batch (18 logs of 15 trainers new to the project, SOURCES_p.md), scored
    # once at the end of round 12 against its merged work: 10/18 (2026-12-07, 1219853; tests/data/
    # first_contact/training_logs_fresh13_2026-12-07.txt). Read right since (tests/goodput/
    # test_fresh13a_lines.py, test_fresh13b_lines.py): a time of day printed as a named field
    # that rises on every line is a clock, not a step time; `[Checkpoint] saved <path>` is a save;
    # samples or tokens per second over the items per step the run printed once is a step time
    # (P12, P15); an RL loop's `Frame` beside its `Episode` is the step (P05); `checkpoint @ epoch
    # N` is a restore, and a log that starts from a restore counts it as a restart, as the shared
    # T21 (P14). P04 and P07 read right since the script's opening (its first two lines,
    # numbers and all) printed again is a relaunch where a new launch follows: a restore, a
    # counter or epoch that does not go on, or no progress before (relaunch.reopenings; guarded
    # against a loop's status pair, a table header per row, debug lines as a log ends); P07 too
    # since evaluations naming their step, steadily spaced, are the steps of a log with no step
    # line (learn._evaluated_steps) and a save naming no step after the error of a launch that
    # never stepped is no checkpoint (walk). P17 reads right since a bare row's unnamed opening
    # integer rising by a steady stride over stamped rows is the counter, its template apart from
    # another printer's float pairs (barerows.bare_row_counter, templates.group;
    # tests/goodput/test_fresh13c_lines.py). Left: P18's step time is Applio's own
    # `training_speed` over the epoch's steps (0.5375 s) where the facts take the stamps between
    # lines (0.675 s, the epoch's best-model save and set-up included).
    ("training_logs", "fresh13"): {
        "P18",
    },
    # Fourteenth fresh batch (20 logs, SOURCES_q.md), scored once before any fix: 9/20 (2026-12-07,
    # 39b3fcc; tests/data/first_contact/training_logs_fresh14_2026-12-07.txt). Read right since
    # (tests/goodput/test_fresh14a_lines.py, test_fresh14b_lines.py): a timer on a line of its
    # own that climbs and goes back to where it began each epoch is a clock, not a step's time
    # (Q02's `Time elasped`, 30 s read for a 0.145 s step), and `Saving custom_model..` is a save
    # (a `<name>_model` subject); MXNet's Speedometer range `Batch [0-20]` .. `[0-1600]` with its
    # lower end held at 0 counts at its upper end (Q03); a save worded as its call,
    # `save_model!!`, is a save (Q04); a cumulative `Elapsed Time` among memory sizes times the
    # iterations above it, and a phase summary printing the same clock again times none (Q09); a
    # counter that starts again at its beginning after a phase seen over (its N reached, an end
    # line such as Keras's `Epoch 00008: early stopping`, or under 2 s on the clock) with nothing
    # between telling a start or a stop is a new phase of the same process, numbered on, not a
    # restart (Q15 SUBLIME's next trial, Q16 Keras `fit` called three times; phases.py). Q01's
    # start-up `trained model saved at :<path>` notices before a run from scratch are no saves
    # (notices.py: no commit evidence, goodput unknown) and its per-epoch `iter:0020` under each
    # new `Epoch: 000N` line is no longer four restarts (epochs.reset_at_markers). Q01, Q05, Q08
    # and Q19 read right since any two start-up lines (the records before the first progress
    # record, and that record) printed again in order are a place a launch may begin, not only
    # the log's first two (opening.Opening; relaunch.reopenings decides by what follows: a
    # restore, a counter that does not go on, or a launch that never stepped): Q01's two alike
    # notices printed again, Q05's config block printed again without its opening line, Q08's
    # `Parameters:` block before `Training epoch: 0` again (torchlight's `[%m.%d.%y|%H:%M:%S]`
    # stamps read), Q19's unstamped start-up block before each `Resuming from
    # checkpoints/best.pt`; a chained traceback's frames and a stamped record's unstamped tail
    # are no place, and a start-up line printed again at two places or more with the loop going
    # on is the loop's header (tests/goodput/test_fresh14r_lines.py). Left: Q07, SB3 PPO tables:
    # the facts take `total_timesteps` as the step, but SB3's logger docs
    # (docs/common/logger.rst, "Explanation of logger output") define `iterations` as "data
    # collection + policy update for A2C/PPO", the training loop's count, and `total_timesteps`
    # as "steps in the environments"; gpuslo's step is the training update, as the facts of dev
    # B26 and holdout B23 (SB3 PPO tables, iterations) and holdout B22 (SB2's `nupdates`) hold:
    # the facts are not changed, and reading `total_timesteps` would turn those two wrong.
    ("training_logs", "fresh14"): {
        "Q07",
    },
    # Fifteenth fresh batch (18 logs of 17 LLM, NLP, speech and diffusion trainers, SOURCES_r.md),
    # scored once at the end of round 13 against its merged work: 8/18 (2026-12-07, b31134c;
    # tests/data/first_contact/training_logs_fresh15_2026-12-07.txt). Read right since
    # (tests/goodput/test_fresh15r_lines.py, test_fresh15t2_lines.py): a load of step 0 before any
    # progress (Megatron loading released weights) is no restart and no commit, so no goodput
    # 0.0 where nothing was committed (R07); an evaluation bar drawn now and then between a
    # steady bar's steps is not the steps, and tqdm's untimed `? examples/s` draw at 0 is the
    # bar's creation (R08); a stamped record glued after another on one line is its own, and a
    # length counted in frames is no duration (R15); the one steady whole number of a bare list
    # of losses is the step, and a save again after a load is another save (R18); a save
    # inside the logging interval after the last step line is the last step (R02). R01 (Marian)
    # reads right since `[data] Restoring the corpus state to epoch 5, batch 156666` is a restore
    # of update 156666 (the relaunch's restart; the save after `[valid] ... Up. 156666` is dated
    # by it, items._restored_later) and, in a log whose saves write the optimizer state, a
    # best-model export writing none is no save (notices.model_exports;
    # tests/goodput/test_fresh15_marian_lines.py). Left: R04's
    # final `Saving model checkpoint to .../all-MiniLM-L6-v2` (no step, `save_model` for
    # `from_pretrained`, not resumable trainer state) is not counted where the facts count it
    # (173 against 172, the collector's stated choice); R03 prints no step on its progress
    # lines and R05 only a fractional epoch: their step times rest on a logging interval the
    # lines never print (13.1 s from the saves' spacing, 20.4 s from 20 lines between
    # checkpoint-2000 and -2100), so none is given (R03's 0.193 s, HF's `eval_steps_per_second`
    # read as the training step's rate, is read as the evaluation's since
    # tests/goodput/test_oldB_lines.py); R11's fairseq 0.6 `ups 7` (updates per second
    # of training alone, rounded) gives 0.143 s where the facts take the cumulative `wall` with
    # validation and saving (0.153 s).
    ("training_logs", "fresh15"): {
        "R03",
        "R04",
        "R05",
        "R11",
    },
    # Sixteenth fresh batch (18 logs people pasted into GitHub issue threads, SOURCES_s.md):
    # 8/18 on first contact (2026-12-07, 4574c93; tests/data/first_contact/
    # training_logs_fresh16_2026-12-07.txt). Read right since (tests/goodput/
    # test_fresh16a_lines.py, test_fresh16b_lines.py): finished bars standing at one value lose to
    # a counter that moves (S02); an unnamed (epoch, in-epoch counter) pair opening each record
    # and seen resetting gives steps and step time (S04); a Keras Progbar seen for two or three
    # states is steps (S06), and a message glued after its last value is its own line (S12);
    # escapes written out as text (rsyslog `#015`, `cat -v`'s `^M`), Open MPI's
    # `[1,mpirank:0,host]<stdout>:` tag and tqdm's reset draw (S14); a `[a-b]` range that tiles
    # counts from its lower end, once over the ranks printing it (S18, CNTK); finished bars of
    # varying totals are one loop each, not restarts, and a banner ruled with `=` is no dangling
    # key (S03); a loop that starts from iteration N restored N-1 (S08); a dropped terminal
    # session (S10) and glog's failure-signal banner (S15) are failures. Nothing left.
    ("training_logs", "fresh16"): set(),
    # Seventeenth fresh batch (20 log files committed to public repositories, SOURCES_u.md),
    # scored once at the end of round 14 against its merged work: 12/20 (2026-12-07, c150c68;
    # tests/data/first_contact/training_logs_fresh17_2026-12-07.txt). Read right since
    # (tests/goodput/test_fresh17u_saves.py, test_fresh17u_runs.py): a save to a weights file
    # named only by its path (U01); a tokenizer written into a checkpoints folder is no save
    # (U20); a script's opening printed again after a traceback is a relaunch, its crash an
    # interruption (U14); a counter printed every few epochs that starts again after its N is a
    # new phase (U18); stamped epoch markers falling to 1 after a pause longer than any of the
    # run's own are relaunches in a log with no progress records (U11). U03 reads right since
    # a script's own end mark naming it (`END train.py`) is a clean end, and another script
    # started after a clean end (`START predict.py`, its start-up like train.py's) is the job's
    # next step, not a seventh restart; the same script again, or another after a crash or a
    # log that just stops, stays a relaunch (relaunch.next_script, log_profiles.yaml;
    # tests/goodput/test_fresh17u_steps.py). Left: U09's hapi `save checkpoint at .../save/final`
    # rewrites save/9's state after evaluation lines only, which the lines cannot tell from
    # Marian's best-model copies of one update (fresh C02, counted once by its facts); U12's
    # global step is settled by its in-epoch bars (`(step b/324)`, `global_step=324`: the facts'
    # 16..1668), but its ASCII bar splits into one template per fill and gpuslo keeps the named
    # `step N/200000` counter as printed (100..1620); masking the `|||....|` fill as one bar
    # glyph (tried in round 15) makes the bars one family, but the two step families of one
    # loop are then combined on the wrong scale (saves dated 200000..), so it was not kept.
    ("training_logs", "fresh17"): {
        "U09",
        "U12",
    },
    # Eighteenth fresh batch (18 log files committed to public repositories by 18 trainers,
    # SOURCES_v.md), scored once before any fix: 7/18 (2026-12-07, c282e8b; tests/data/
    # first_contact/training_logs_fresh18_2026-12-07.txt). Read right since (tests/goodput/
    # test_fresh18a_lines.py, test_fresh18b_lines.py): a rate printed finer than a window's
    # whole-second duration times the window (V01, fairseq `ups` over `train_wall`); a value named
    # as a loss is no duration, and a best model's weights file under its bare label opening the
    # record is a save begun (V02, Coqui); year-less stamps above the log's first full stamp take
    # its year, a logging record glued to a line's last value is its own record, an unnamed
    # integer after a record's open `[` before a named value is the step, and an unstamped
    # start-up printed again after an interruption is a relaunch (V03); the same start-up printed
    # by each process of one launch before any step is no relaunch (V04); a counter printed only
    # under bare evaluation headers is not the training steps (V07); an evaluation bar's tail the
    # log opens inside is no training loop, and a save naming a step below its run's first is on
    # another counter (V14); a fast bar's paced jumps in its first second go on (V15); `→ saved`
    # after a best result is a save, and an epoch counter starting again where its fold rises is
    # no restart (V16). V08 reads right since the stamps, longer than PaddleGAN's own
    # `batch_cost` (1.133 s, loader and train_iter averaged over the interval) on every window
    # and at most twice it, are the step time (1.3 s; wholestep.py, tests/goodput/
    # test_whole_step_clock.py). Left: V13's facts take Stable-Baselines3's `total_timesteps`
    # (environment steps) as the step; gpuslo's step is the gradient update `n_updates` (SB3's
    # logger docs), as for Q07. V18's only counter is the episode number inside each saved
    # weights file's name on keras-rl lines with no separators; no rule reads steps or
    # relaunches out of save paths.
    ("training_logs", "fresh18"): {
        "V13",
        "V18",
    },
    # Nineteenth fresh batch (20 logs pasted into issue threads by users of 19 trainers,
    # SOURCES_w.md), scored once at the end of round 15 against its merged work: 11/20
    # (2026-12-07, f55b5c6; tests/data/first_contact/training_logs_fresh19_2026-12-07.txt). Read
    # right since (tests/goodput/test_fresh19a_lines.py, test_fresh19b_lines.py): a CSV header
    # names the cells of its rows (W04, Lightning's metrics.csv); a bar's last rate inside its
    # short whole-second clock is the run's mean (W06); a `<x>loader <index>` bar is an
    # evaluation, no restart (W12); an iteration glued after a `[n/N (p%)]` samples bracket is
    # the step (W13); an `n/N` whose n stays while its N rises is epoch then counter (W14,
    # CosyVoice's `Batch {epoch}/{batch}`); a tqdm bar copied without its glyphs counts its own
    # n, and stderr's traceback shown before the lone bar state it stopped is that state's
    # interruption (W20). Left: W02's only counter is `Processing sentence number:` (samples;
    # that it equals the updates is in the source, not the lines) and `Time: 12.89` may be per
    # sentence or per 100: two records and no clock cannot tell. W15's global `Step N` lines
    # show its per-epoch bars' epoch label is 0-based where gpuslo counts it from 1 (281 for
    # 300); reading the two families together is no rule yet. Its step time reads right since a
    # per-epoch bar drawn anew whose n steps from 0 fit its `00:00` at its rate is timed by that
    # rate (`16/16 [00:00<00:00, 28.30it/s]`: 0.0355 s; steptimes._anew_from_zero,
    # tests/goodput/test_oldB_lines.py), not left untimed as a resumed bar's first redraw.
    # W16's `saving checkpoint:` has no end line and the traceback after it comes from sample
    # generation, which the walk cannot tell from a failing save (W17's same wording fails
    # inside save_model) without the frames.
    ("training_logs", "fresh19"): {
        "W02",
        "W15",
        "W16",
    },
    # Twentieth fresh batch (20 log files committed to repositories by 19 trainers,
    # SOURCES_x.md), scored once before any fix: 7/20 (2026-12-07, 9b32521; tests/data/
    # first_contact/training_logs_fresh20_2026-12-07.txt). Four of the misses (X02, X05, X09,
    # X16) are steps read job-wide (epoch x batches an epoch + batch) where the facts give a
    # per-epoch counter's first and last values as printed across an epoch rise (the collector's
    # brief said "as printed"; earlier batches give null there); the others are step times,
    # saves and restarts. Read right since (tests/goodput/test_fresh20b_lines.py): a process-group
    # set-up line naming the rank (`Initialized (rank/world-size) 0/1`) is a process starting,
    # after progress a relaunch (X10); `Resume training from <file>` is a restore, and a run
    # header printed again with a checkpoint load between and no progress is another launch
    # (X14); `==> Saving <weights file>...` is a save, and a counter printed once with no N or
    # time does not outrank recurring epoch lines (X19). X02 and X09 now read their saves (a
    # save line printed again after an evaluation, a second or more later, is another save) and
    # step times (an epoch's first record a whole print interval in keeps a faster time) right;
    # they stay for the steps convention above. X16's step time reads right since a duration
    # named per batch (`Epoch 12 done. Time per batch: 2.223[s]`) is one batch's time, not the
    # epoch's over its 3385 batches (0.000657 s; tests/goodput/test_oldB_lines.py): it too stays
    # for the steps convention only.
    # Also read right since (tests/goodput/test_fresh20a_lines.py): a duration
    # counting down to the counter's N read as time left, whatever its name (X20); a duration
    # on a line of its own printed once per many records, or an epoch's time, over the steps it
    # covers (X04, X08, X12; a window that held a save times none; a line naming a file opens
    # no block of metrics); tqdm's `<n>it [elapsed, rate]` past its total redrawn at one n is
    # still the bar's counter, and a bar begun long before the log is timed by its spans (X06);
    # a bordered table's rows and rules are drawn to its width, not wrapped, and a row that
    # also holds words gives its numbers named (Ray Tune's trial table, X18).
    ("training_logs", "fresh20"): {
        "X02", "X05", "X09", "X16",
    },
    # Twenty-first fresh batch (15 logs pasted into issue threads by users of 15 trainers,
    # SOURCES_y.md), scored once at the end of round 16 against its merged work: 11/15
    # (2026-12-07, 4115221; tests/data/first_contact/training_logs_fresh21_2026-12-07.txt).
    # Read right since (tests/goodput/test_fresh21_lines.py): a trainer's fail-safe worded
    # `Restarting training from last epoch ...` is a restart (Y01); a run header in the HF
    # examples' `LEVEL - logger - ` format, first printed after the loop stepped and not
    # followed by the counter going on, is a new launch (Y08); tqdm's ascii bar's partial cell
    # (`#####8`) is a glyph, so the bar a traceback is glued to gives its step, and a lone draw
    # long into its bar gives tqdm's settled rate (Y12). Left: Y14's counter wraps within its
    # epoch and its facts give the per-epoch values as printed (3..0) where gpuslo reads the
    # job-wide count (the fresh20 convention note above).
    ("training_logs", "fresh21"): {"Y14"},
    # Twenty-second fresh batch (20 log files committed to 20 repositories, SOURCES_z.md), scored
    # once at the start of round 17, before its fixes: 6/20 (2026-12-07; tests/data/first_contact/
    # training_logs_fresh22_2026-12-07.txt). Read right since (tests/goodput/
    # test_fresh22_events.py): an early-stopping patience counter is no step (Z02); MMEngine's
    # best checkpoint `is saved to` after its periodic save is a save of its own, and a load of
    # torch.hub-named weights (`…-80513adc.pth`) is no restore (Z11); the next `Saving Metrics`
    # banner closes the model save begun on the line before (Z13); MAE's `Resume checkpoint
    # <file>` is a restore (Z14). Better, still missed: Z08's saves (a file saved into
    # `checkpoint-N`, `model, tokenizer, and config saved!`) and Z10's saves (a begun save that
    # the failure follows, no step in the log) are read; Z08 still misses its step time. Since
    # (tests/goodput/test_fresh23_events.py) Z10's restart is read: TF1's `Restoring parameters
    # from …model.ckpt-0`, which TF1 prints for evaluation loads too (fresh9 L11's note), is a
    # restore before the first progress of its launch only; Z01's launches, its one start-up line
    # printed again after a pause its run never took (relaunch._paused), and its final
    # `Finetuned model saved: …final.pth` right after `Checkpoint saved: …epoch40.pth`, a file
    # name without the epoch's number (story.other_file); Z19's three bare `Using device cuda`
    # in a row, three launches where the log's own launch printed the line once (ranks once
    # where it printed it in a row too). Left: Z08's step time (below); Z16's second script (an
    # epoch counter no template reads as progress); Z16's and Z17's saves are read from the
    # trainers' source (`####best:<dice>`, a `bestEpoch` equal to the epoch), not printed as
    # saves; Z17's two launches that print the epoch they stopped at again (`Epoch:1`, then
    # `Epoch:1` ten minutes later) read as one record printed twice.
    ("training_logs", "fresh22"): {
        "Z08", "Z16", "Z17",
    },
    # fresh22, steps and step times (round 17, tests/goodput/test_fresh22_steps.py): Z07, Z09,
    # Z12 and Z20 read right since a validation bar run anew in a few gaps of the step lines is
    # an inner loop (families.run_in_gaps), two unnamed `e/E n/N` pairs are the epoch and the
    # batch within it (leadpair.inner_pair), a line fitting a recurring epoch-steps template
    # whole (each epoch once) is no epoch marker (matchers.own_line) and a value in braces is
    # named by the word before them (tokens._key).
    # Z08's median step time is left: its fact (3.15 s) is phase 2's mean (train_runtime / 700,
    # the bar's final average); the bar's own captures give 2.06, 3.96 and 3.75 s a step over
    # 294, 349 and 57 steps, no median of which is 3.15 - a fact doubted, not a reader to bend.
    # Twenty-third fresh batch (19 logs pasted into issue threads by users of 19 trainers,
    # SOURCES_aa.md), scored once at the end of round 17 against its merged work: 13/19
    # (2026-12-07, 824c7d8; tests/data/first_contact/training_logs_fresh23_2026-12-07.txt).
    # Step times read right since (tests/goodput/test_fresh23_steps.py): BasicSR's `time (data):
    # 0.326 (0.002)` names each value by its own name (AA19, tokens._paired_names); an Orbit
    # record printed again unstamped is no other work in the next window, and its one-figure
    # `steps/sec:    0.1` is kept out where the absl stamps measure inside its rounding (AA01,
    # windows._gap, coarserate); finished tqdm bars of two totals in turn count steps and
    # `Epoch 6 complete.` closes the epoch of the bar above it (AA17, counters.step_score,
    # epochs.closing_markers). Events read right since (tests/goodput/test_fresh23_events.py):
    # a save's own time printed on the line after it, `Time on save model 510.14` (AA18); Lua
    # Torch xlua's bar `[== n/N ==>]  Tot: 6h54m | Step: 81ms` (the count drawn over its glyphs;
    # `Tot` its elapsed) and a command line's `-start_epoch 11`, a resume (AA10). Left: AA02's
    # last step (its fact, 120, leaves out the final `Saving checkpoints for 125`, where fresh15
    # R02's fact counts fairseq's last save at 4791: the rule of assemble._last_from_save serves
    # R02): two facts that disagree.
    ("training_logs", "fresh23"): {"AA02"},
    # Twenty-fourth fresh batch (20 log files committed to 20 repositories, SOURCES_ab.md),
    # scored once at the start of round 18, before its fixes: 10/20 (2026-12-08, 4b307c6;
    # tests/data/first_contact/training_logs_fresh24_2026-12-08.txt). Read right since
    # (tests/goodput/test_fresh24_events.py): a launcher's `Main process received SIGTERM,
    # exiting` is a stop (AB07), and a start-up first printed after an earlier launch's stop line
    # (AB10, AB20) or epoch markers above the first epoch record that fall to it (AB13) are
    # launches. AB05's SLURM cancel (`slurmstepd-<host>:`) and AB18's `Module saved!` lines are
    # read now too, but their save counts (44, 29), like AB17's (4), count each file a save point
    # writes as a save, where the shared README's T15 (model, optimizer and rank-specific files:
    # one save) and fresh12 O10 and O12 (a best or final copy at the same step: one save) count
    # one: facts doubted, not a reader to bend (27, 18 and 3 save points are read).
    # fresh24, steps and step times (round 18, tests/goodput/test_fresh24_steps.py): AB09 and
    # AB16. Read right since a `saved=<checkpoint file> step=N` record is a save at N and a save
    # line's steps a second time the untimed steps before it (saverates), a per-episode step
    # count that rises on every record is the cumulative step (counters), a `Time Delta` is the
    # window since the last record (durations.since_report) and `Loading model at <file>.chkpt`
    # is a restore. AB15 is left: its fact (last step 1880) is doubted, not a reader to bend:
    # JAX-CFD's models/train.py runs `for step_num in range(start_step, num_train_steps)`, logs
    # only when step_num % 10 == 0 and saves after the loop at `step_num`, so the save's 1881
    # (= 1882 - 1) is the last step run, hidden by the thinned printing (the R02 rule).
    ("training_logs", "fresh24"): {"AB05", "AB15", "AB17", "AB18"},
    # Twenty-fifth fresh batch (20 logs pasted into issue threads by users of 19 trainers,
    # SOURCES_ac.md), scored once at the end of round 18 against its merged work: 11/20
    # (2026-12-08, 30e1d5d; tests/data/first_contact/training_logs_fresh25_2026-12-08.txt).
    # Not yet worked on: Tesseract's iteration counters and its saves (AC01), the restore of its
    # own checkpoint (AC12), step times off by a unit or a window (AC03 1000 vs 0.0054 s, AC05
    # 27.3 vs 0.273 s), saves not read (AC06, AC07, AC10, AC14) and AC15's steps, saves and
    # false restarts.
    ("training_logs", "fresh25"): {
        "AC01", "AC03", "AC05", "AC06", "AC07", "AC10", "AC12", "AC14", "AC15",
    },
}
