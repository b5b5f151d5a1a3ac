"""What the reader made of a log, for `gpuslo goodput --explain` (pure).

`explain(parsed, wording) -> dict`:
- `stamps`: the stamp layouts learnt (`9999-99-99 99:99:99,999`, `glog/c10 ...`);
- `progress`: the templates read as training progress, with their family, record count in
  the sample, an example line and the role of every field (`iteration: step`, `elapsed time per
  iteration (ms): step_s (named as a time per step)`); timing lines (a rate with no counter,
  timing the record beside them) are listed there too, family `timing`, and so is a line with no
  counter that may come once per step (`perstep`), family `per-step`;
- `epoch_markers`: templates that set the epoch of the lines after them;
- `not_progress`: templates with a counter that were not read as steps, and why (evaluation
  bars, another loop's counter, event lines);
- `events`: the sample's templates that event rules read, with the kinds;
- `unread`: templates that recur (3 or more records) with numbers and that nothing read - the
  shapes an overlay (`--profiles`, `roles:` pins or rules) could teach.
- `sample`: what the record counts rest on: `lines` the head lines learnt from (the first
  `reader.SAMPLE_LINES`, or `SAMPLE_BYTES`) of `of_lines`, `whole` when that is the whole log;
  `unread_counted` of `unread_seen` records nothing read (every one of the first 64, then one
  in `reader.UNREAD_EVERY`). The record counts above are the sample's, not the log's.
Template text shows numbers as `<n>`, durations as `<d>` and dates as `<date>`.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.parsedlog import ParsedLog
from gpuslo.goodput.logs.roles import Reading
from gpuslo.goodput.logs.templates import readable
from gpuslo.goodput.logs.wording import Wording

MAX_LISTED = 40


def _fields(reading: Reading) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in reading.template.fields:
        role = reading.roles.get(f.index)
        if role is None:
            continue
        name = f.key or f"#{f.index}"
        if name in out:
            name = f"{name} #{f.index}"
        out[name] = f"{role.role} ({role.why})" if role.why else role.role
    return out


def _entry(reading: Reading) -> dict[str, Any]:
    tpl = reading.template
    return {"template": readable(tpl.text)[:300], "records": tpl.count,
            "first_line": tpl.lines[0] if tpl.lines else None, "example": tpl.example[:300],
            "why": reading.why}


def sample(parsed: ParsedLog) -> dict[str, Any]:
    """What the explanation's record counts rest on (see the module docstring)."""
    return {"lines": parsed.sampled, "of_lines": parsed.lines,
            "whole": parsed.sampled >= parsed.lines,
            "unread_counted": parsed.unread_counted, "unread_seen": parsed.unread_seen}


def explain(parsed: ParsedLog, wording: Wording) -> dict[str, Any]:
    """The explanation of one read log (see the module docstring)."""
    learnt = parsed.learnt
    out: dict[str, Any] = {"stamps": parsed.stamp_layouts, "progress": [], "epoch_markers": [],
                           "not_progress": [], "events": [], "unread": [],
                           "sample": sample(parsed)}
    if learnt is None:
        return out
    # the reading a template is read by (an epoch marker read as the steps of a log with no
    # step lines is read by its own reading, `learn._epochs_as_steps`)
    counted = [learnt.counted[0]] if learnt.counted else []  # (`perstep`)
    used = {m.reading.template.text: m for m in learnt.progress + learnt.timing + counted}
    for reading in learnt.readings:
        tpl = reading.template
        if tpl.text in used:
            matcher = used[tpl.text]
            out["progress"].append({**_entry(matcher.reading), "family": matcher.family,
                                    "fields": _fields(matcher.reading)})
        elif reading.epoch_marker:
            out["epoch_markers"].append({**_entry(reading), "fields": _fields(reading)})
        elif reading.step is not None:
            out["not_progress"].append(_entry(reading))
        else:
            kinds = sorted({rule.kind for rule, _, _ in wording.match(tpl.example)})
            if kinds:
                out["events"].append({"template": readable(tpl.text)[:300],
                                      "records": tpl.count, "kinds": kinds})
            elif tpl.count >= 3 and tpl.fields:
                out["unread"].append({"template": readable(tpl.text)[:300],
                                      "records": tpl.count, "first_line": tpl.lines[0],
                                      "example": tpl.example[:300]})
    seen = {u["template"] for u in out["unread"]}
    for shape, (count, line, example) in parsed.unread.items():
        if readable(shape)[:300] not in seen:
            out["unread"].append({"template": readable(shape)[:300], "records": count,
                                  "first_line": line, "example": example})
    for key in ("not_progress", "events", "unread"):
        out[key] = sorted(out[key], key=lambda e: -e["records"])[:MAX_LISTED]
    return out
