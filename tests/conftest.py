"""Shared test helpers: where the real inputs live, and the rule for tests that need Prometheus."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = SHARED / "fixtures"
DATASETS = SHARED / "datasets"


def require_binary(name: str) -> str:
    """Path of `name` on PATH. Skips the test when missing on a developer machine, but fails
    under CI (CI=true), where .ci/run installs Debian's prometheus package: a missing binary
    there must not turn into a silent skip."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is not installed; .ci/run must install Debian's prometheus package")
    pytest.skip(f"{name} not installed (apt-get install prometheus)")


@pytest.fixture
def promtool() -> str:
    return require_binary("promtool")


@pytest.fixture
def prometheus_binary() -> str:
    return require_binary("prometheus")
