"""Shared pytest configuration: Hypothesis profiles and the path to ../shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# A bounded profile for CI and everyday runs; a larger one for deliberate searches:
#   HYPOTHESIS_PROFILE=thorough make test
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run files with ``slow`` tests first, then files with ``subprocess`` tests.

    Files stay whole and in order inside (module fixtures are built once). Under
    pytest-xdist (``make test`` hands out whole files in this order) the long files start
    at once on every worker and the many short ones even out the finish, instead of one
    long file running alone at the end.
    """

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("slow"):
            return 0
        return 1 if item.get_closest_marker("subprocess") else 2

    file_rank: dict[Path, int] = {}
    for item in items:
        file_rank[item.path] = min(rank(item), file_rank.get(item.path, 2))
    items.sort(key=lambda item: file_rank[item.path])


@pytest.fixture
def shared_traces() -> Path:
    """Path to ../shared/traces; skips the test when the folder is absent."""
    path = SHARED / "traces"
    if not path.is_dir():
        pytest.skip(f"public traces not found at {path} (expected ../shared beside the repo)")
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden``: rewrite tests/golden/ instead of comparing with it."""
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden outputs under tests/golden/ (commit the "
                          "refresh on its own, saying what moved and why)")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when pytest runs with --update-golden."""
    return bool(request.config.getoption("--update-golden"))
