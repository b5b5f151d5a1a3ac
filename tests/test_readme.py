"""The README's reference tables are generated from gpuslo.names and its quick start is the
two commands .ci/run relies on."""

from tests.conftest import REPO
from tools import readme_reference


def test_reference_tables_match_the_vocabulary():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    regenerate = "regenerate with: python -m tools.readme_reference"
    assert readme_reference.render_readme(text) == text, regenerate


def test_quick_start_is_two_commands_and_ci_runs_the_second():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line for line in block.strip().splitlines() if line.strip()]
    assert len(commands) == 2
    assert "gpuslo demo" in commands[0]
    assert commands[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8")
