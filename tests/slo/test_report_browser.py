"""The HTML report in a real browser (Debian's headless `chromium`, which .ci/run installs): on
the demo's simulated week and on the StepFun trace, every plot renders at a real size inside the
page, nothing is wider than the window (at a desktop and a laptop width), and a full-page
screenshot of each is kept under .ci/artifacts/ (gitignored) for a person to look at."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATASETS, REPO, simulate_demo_week

from gpuslo.cli import main

ARTIFACTS = REPO / ".ci" / "artifacts"
WIDTHS = (1280, 1024)
# Measures the page once loaded and leaves the answer on <body> for --dump-dom to print.
MEASURE = """<script>
const width = document.documentElement.clientWidth;
const plots = [...document.querySelectorAll("figure svg")].map(svg => {
  const box = svg.getBoundingClientRect();
  return {width: box.width, height: box.height, left: box.left, right: box.right,
          drawn: svg.querySelectorAll("path, rect, text").length};
});
const wide = [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > width + 0.5)
  .map(e => e.tagName + (e.id ? "#" + e.id : ""));
document.body.setAttribute("data-measured", JSON.stringify({
  width, scrollWidth: document.documentElement.scrollWidth,
  height: document.documentElement.scrollHeight, plots, wide}));
</script>
"""


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed; .ci/run must install Debian's chromium")
    pytest.skip("chromium not installed (apt-get install chromium)")


def _browse(chromium: str, page: Path, width: int, *what: str) -> str:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--window-size={width},{what[1]}" if len(what) > 1 else f"--window-size={width},900",
    ]
    done = subprocess.run(
        [chromium, *flags, what[0], page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def measure(chromium: str, report: Path, width: int) -> dict:
    """The page's width, scroll width, height, plots and too-wide elements at `width` px."""
    page = report.with_name(report.stem + ".measured.html")
    page.write_text(report.read_text().replace("</body></html>", MEASURE + "</body></html>"))
    dom = _browse(chromium, page, width, "--dump-dom")
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def screenshot(chromium: str, report: Path, width: int, height: int, name: str) -> Path:
    """A full-page PNG of `report`, copied to .ci/artifacts/<name>."""
    shot = report.with_name(name)
    _browse(chromium, report, width, f"--screenshot={shot}", str(height))
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, ARTIFACTS / name)
    return shot


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("browser")
    simulate_demo_week(work / "sim")
    assert (
        main(
            [
                "report",
                "--data",
                str(work / "sim"),
                "--week",
                "2026-W48",
                "--out",
                str(work / "week"),
                "--format",
                "html",
            ]
        )
        == 0
    )
    stepfun = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"
    assert (
        main(
            [
                "report",
                "--trace",
                str(stepfun),
                "--trace-format",
                "stepfun",
                "--out",
                str(work / "stepfun"),
                "--format",
                "html",
            ]
        )
        == 0
    )
    return {
        "simulated-week": work / "week" / "report.html",
        "stepfun": work / "stepfun" / "report.html",
    }


@pytest.mark.parametrize("name", ["simulated-week", "stepfun"])
def test_plots_render_and_nothing_overflows(chromium, reports, name):
    report = reports[name]
    expected = report.read_text().count("<svg")
    for width in WIDTHS:
        page = measure(chromium, report, width)
        assert len(page["plots"]) == expected >= 3, page
        for plot in page["plots"]:
            assert plot["width"] > 300 and plot["height"] > 150, (width, plot)
            assert plot["left"] >= 0 and plot["right"] <= page["width"], (width, plot)
            assert plot["drawn"] > 10, plot  # bars, axes and text, not an empty box
        assert page["scrollWidth"] <= page["width"], (width, page["scrollWidth"])
        assert not page["wide"], (width, page["wide"])
    shot = screenshot(chromium, report, WIDTHS[0], page["height"], f"report-{name}.png")
    assert shot.exists()


# Where the plotted things land on screen, by the ids plots.py gives them (issue 27, item 4):
# the usable-ratio axes, its daily line and objective; the badput axes and each badput step.
GEOMETRY = """<script>
const box = id => { const e = document.getElementById(id);
  if (!e) return null; const b = e.getBoundingClientRect();
  return {top: b.top, bottom: b.bottom, height: b.height}; };
const steps = [...document.querySelectorAll('[id^="badput-step-"]')]
  .map(e => ({id: e.id, height: e.getBoundingClientRect().height}));
document.body.setAttribute("data-geometry", JSON.stringify({
  ratioAxes: box("usable-ratio-axes"), ratioLine: box("usable-ratio-line"),
  objective: box("usable-ratio-objective"), badputAxes: box("badput-axes"),
  badputTotal: box("badput-total"), steps,
  ranges: Object.fromEntries([...document.querySelectorAll("svg[data-plot]")]
    .map(s => [s.dataset.plot, s.dataset.yRange]))}));
</script>
"""


def geometry(chromium: str, report: Path) -> dict:
    """Screen boxes (px) of the plotted things GEOMETRY names, and each plot's y range."""
    page = report.with_name(report.stem + ".geometry.html")
    page.write_text(report.read_text().replace("</body></html>", GEOMETRY + "</body></html>"))
    dom = _browse(chromium, page, WIDTHS[0], "--dump-dom")
    found = re.search(r'data-geometry="([^"]*)"', dom)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_plot_axes_show_the_story(chromium, reports):
    """The simulated week's usable ratio is 0.994–0.997 a day against the 0.98 objective, and
    its 9,336 badput GPU-hours are 5.9 % of 157,747 allocated: on a fixed 0–1 ratio axis the
    days and the objective lie on one line, and on a 0-based allocated axis every badput step
    is a sliver. Rendered in Chromium, the daily line must spread over a tenth of its axes,
    stand a quarter of the axes above the objective, and the largest badput step must fill a
    third of the badput axes (the whole badput, 80 %)."""
    seen = geometry(chromium, reports["simulated-week"])
    axes, line, objective = seen["ratioAxes"], seen["ratioLine"], seen["objective"]
    assert axes and line and objective, seen
    assert line["height"] >= 0.1 * axes["height"], seen
    assert objective["top"] - line["bottom"] >= 0.25 * axes["height"], seen
    assert axes["top"] <= objective["top"] <= axes["bottom"], seen
    low, high = (float(v) for v in seen["ranges"]["usable-ratio"].split())
    assert 0.9 < low < 0.98 < high <= 1.0, seen["ranges"]
    badput, total = seen["badputAxes"], seen["badputTotal"]
    assert badput and total and seen["steps"], seen
    assert max(s["height"] for s in seen["steps"]) >= badput["height"] / 3, seen
    assert total["height"] >= 0.8 * badput["height"], seen
    low, high = (float(v) for v in seen["ranges"]["badput-waterfall"].split())
    assert low == 0 and 9335 < high < 157_747 / 4, seen["ranges"]


# The "Inference serving" section (issue 29) on a fleet with a serving node: its four tables are
# laid out inside the window, and the screenshot shows it.
SERVING = """<script>
const width = document.documentElement.clientWidth;
const section = document.getElementById("serving");
const box = section ? section.getBoundingClientRect() : null;
const tables = section ? [...section.querySelectorAll("table")].map(t => {
  const b = t.getBoundingClientRect();
  return {width: b.width, height: b.height, right: b.right, rows: t.rows.length}; }) : [];
document.body.setAttribute("data-serving", JSON.stringify({width,
  section: box && {top: box.top, height: box.height, right: box.right},
  heading: section ? section.querySelector("h2").textContent : null, tables}));
</script>
"""


def test_serving_section_renders_inside_the_page(chromium, tmp_path):
    assert main(["simulate", "--nodes", "4", "--gpus-per-node", "8", "--days", "14", "--seed",
                 "5", "--fault-rate", "40", "--serving-nodes", "1",
                 "--out", str(tmp_path / "sim")]) == 0
    assert main(["report", "--data", str(tmp_path / "sim"), "--week", "2026-W49", "--out",
                 str(tmp_path / "report"), "--format", "html"]) == 0
    report = tmp_path / "report" / "report.html"
    for width in WIDTHS:
        page = report.with_name(f"serving-{width}.html")
        page.write_text(report.read_text().replace("</body></html>", SERVING + "</body></html>"))
        dom = _browse(chromium, page, width, "--dump-dom")
        found = re.search(r'data-serving="([^"]*)"', dom)
        assert found, dom[-2000:]
        seen = json.loads(html.unescape(found.group(1)))
        assert seen["heading"] == "Inference serving" and seen["section"], seen
        assert seen["section"]["height"] > 400 and seen["section"]["right"] <= seen["width"]
        assert len(seen["tables"]) == 4, seen
        for table in seen["tables"]:
            assert table["height"] > 40 and table["rows"] >= 3, table
            assert table["right"] <= seen["width"] + 0.5, (width, table)
    height = measure(chromium, report, WIDTHS[0])["height"]
    assert screenshot(chromium, report, WIDTHS[0], height, "report-serving.png").exists()
