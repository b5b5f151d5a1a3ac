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


def test_the_series_figure_names_the_default_checks():
    """newcomer6 finding 18: the README said "the 9 default checks" and 16.6 series per GPU where
    an idle 8-GPU node runs 11 checks and exposes 193 series (24.1 per GPU). The count and the
    list it gives are the registry's defaults (the negative: an active-only check is not one)."""
    import re

    from gpuslo.exporter.checks.check_names import ACTIVE_ONLY
    from gpuslo.exporter.checks.registry import default_names

    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"with the (\d+)\s+default checks \(([^)]*)\)", text)
    assert found, "README: 'with the N default checks (...)'"
    listed = [name.strip() for name in found.group(2).split(",")]
    defaults = default_names(active=False)
    assert int(found.group(1)) == len(defaults) and sorted(listed) == sorted(defaults)
    assert not set(listed) & set(ACTIVE_ONLY)
