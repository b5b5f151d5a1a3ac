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
