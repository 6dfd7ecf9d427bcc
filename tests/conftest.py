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
