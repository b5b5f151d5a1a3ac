"""`gpuslo report` with no source names every source flag its parser defines (--training-log
was missing from a literal list); a source given is never told it is missing (the negative)."""

from __future__ import annotations

import argparse

from gpuslo.cli import main
from gpuslo.cli.report import configure


def _source_flags() -> list[str]:
    """The source group's flags as the parser defines them (--trace-format qualifies --trace)."""
    parser = argparse.ArgumentParser()
    configure(parser)
    group = next(g for g in parser._action_groups if g.title.startswith("source"))
    return [a.option_strings[0] for a in group._group_actions if a.dest != "trace_format"]


def test_no_source_lists_every_source_flag(tmp_path, capsys):
    assert main(["report", "--week", "2026-W48", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "give one source" in err
    flags = _source_flags()
    assert "--training-log" in flags and all(flag in err for flag in flags)
    assert not (tmp_path / "out").exists()


def test_negative_a_training_log_alone_is_a_source(tmp_path, capsys):
    log = tmp_path / "empty.log"
    log.write_text("")
    main(["report", "--training-log", str(log), "--gpus", "8", "--out", str(tmp_path / "o")])
    assert "give one source" not in capsys.readouterr().err
