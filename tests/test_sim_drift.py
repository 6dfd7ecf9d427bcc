"""Tests of rollmux.sim.drift: drift templates, settings and the failure spec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import response_length_dist
from rollmux.jobtypes import job_type
from rollmux.sim.drift import (
    NO_DRIFT,
    TEMPLATES,
    DriftDirection,
    DriftSetting,
    DriftTemplate,
    FailureSpec,
    assign_templates,
    length_factor,
    length_factors,
    parse_failures,
    parse_template,
    read_failures_csv,
)
from rollmux.sim.stochastic import PhaseSampler, StochasticConfig

progress = st.floats(0.0, 1.0)


def test_factor_at_progress_zero_is_one_for_every_template() -> None:
    """f(0) = 1: drift starts from the job's profiled lengths."""
    assert [length_factor(t, 0.0) for t in TEMPLATES] == [1.0] * 7


def test_factor_literals() -> None:
    """Increasing-1.0 doubles lengths by the end; decreasing-1.0 halves them; none is 1."""
    assert length_factor(parse_template("increasing-1.0"), 1.0) == 2.0
    assert length_factor(parse_template("increasing-0.5"), 0.5) == 1.25
    assert length_factor(parse_template("decreasing-1.0"), 1.0) == 0.5
    assert length_factor(NO_DRIFT, 0.7) == 1.0
    np.testing.assert_allclose(
        length_factors(parse_template("decreasing-1.5"), np.array([0.0, 1.0])), [1.0, 0.4]
    )


@given(p=progress, q=progress, strength=st.sampled_from([0.5, 1.0, 1.5]))
def test_increasing_is_monotone_and_decreasing_its_reciprocal(
    p: float, q: float, strength: float
) -> None:
    """Increasing templates never decrease with progress; decreasing = 1 / increasing."""
    up = DriftTemplate(DriftDirection.INCREASING, strength)
    down = DriftTemplate(DriftDirection.DECREASING, strength)
    lo, hi = sorted((p, q))
    assert length_factor(up, lo) <= length_factor(up, hi)
    assert length_factor(down, lo) >= length_factor(down, hi)
    assert length_factor(up, p) * length_factor(down, p) == pytest.approx(1.0)
    assert length_factors(up, np.array([p]))[0] == pytest.approx(length_factor(up, p))


def test_names_round_trip_and_bad_input_raises() -> None:
    """Every template parses back from its name; bad names, strengths, progress raise."""
    assert [parse_template(t.name) for t in TEMPLATES] == list(TEMPLATES)
    assert len({t.name for t in TEMPLATES}) == 7
    with pytest.raises(ValueError, match="template name"):
        parse_template("sideways-1.0")
    with pytest.raises(ValueError, match="strength"):
        DriftTemplate(DriftDirection.INCREASING, -1.0)
    with pytest.raises(ValueError, match="strength"):
        DriftTemplate(DriftDirection.NONE, 1.0)
    with pytest.raises(ValueError, match="progress"):
        length_factor(NO_DRIFT, 1.5)


def test_settings_choose_templates_per_job_independently_of_order() -> None:
    """Assignments are seeded per job id: same mapping for any job order; right families."""
    ids = [f"job-{i}" for i in range(60)]
    mixed = assign_templates(ids, DriftSetting.MIXED, seed=3)
    assert assign_templates(list(reversed(ids)), "Mixed", seed=3) == mixed
    assert len(set(mixed.values())) >= 5
    assert assign_templates(ids, "Mixed", seed=4) != mixed
    inc = assign_templates(ids, DriftSetting.INCREASING, seed=3)
    dec = assign_templates(ids, DriftSetting.DECREASING, seed=3)
    assert {t.direction for t in inc.values()} == {DriftDirection.INCREASING}
    assert {t.direction for t in dec.values()} == {DriftDirection.DECREASING}
    assert {t.strength for t in inc.values()} == {0.5, 1.0, 1.5}
    with pytest.raises(ValueError, match="setting"):
        assign_templates(ids, "Sideways")


def test_sampler_applies_the_drift_factor_to_response_lengths() -> None:
    """At progress 1 under increasing-1.0, mean tokens = n E[min(2 L, max)] within 1%."""
    hw = load_hardware()
    job = job_type("A")
    sampler = PhaseSampler(job, hw, drift=parse_template("increasing-1.0"),
                           config=StochasticConfig(migration=False), total_iterations=10)
    tokens = [sampler.sample(i, 1.0).tokens for i in range(1500)]
    lengths = response_length_dist(job, hw).sample(np.random.default_rng(0), 400_000)
    expected = sampler.responses * np.minimum(2.0 * lengths, job.max_response_tokens).mean()
    assert np.mean(tokens) == pytest.approx(expected, rel=0.01)
    assert sampler.sample(0, 1.0).length_factor == 2.0


# --------------------------------------------------------------------------- failures


def test_failure_spec_validates_its_fields() -> None:
    """Negative kill times, resubmission before the kill and empty ids raise ValueError."""
    spec = FailureSpec("E", 2180, 4480)
    assert (spec.kill_at_s, spec.resubmit_at_s) == (2180.0, 4480.0)
    assert FailureSpec("E", 10.0).resubmit_at_s is None
    with pytest.raises(ValueError, match="kill_at_s"):
        FailureSpec("E", -1.0)
    with pytest.raises(ValueError, match="resubmit_at_s"):
        FailureSpec("E", 100.0, 50.0)
    with pytest.raises(ValueError, match="job_id"):
        FailureSpec("", 1.0)


def test_parse_failures_from_dicts_and_csv(tmp_path: Path) -> None:
    """Rows from YAML-like dicts and CSV parse alike; empty resubmit cells mean never."""
    rows = [{"job_id": "E", "kill_at_s": 2180, "resubmit_at_s": 4480},
            {"job_id": "D1", "kill_at_s": "100", "resubmit_at_s": ""}]
    specs = parse_failures(rows)
    assert specs == (FailureSpec("D1", 100.0, None), FailureSpec("E", 2180.0, 4480.0))
    path = tmp_path / "failures.csv"
    path.write_text("job_id,kill_at_s,resubmit_at_s\nE,2180,4480\nD1,100,\n", encoding="utf-8")
    assert read_failures_csv(path) == specs


def test_parse_failures_rejects_bad_rows() -> None:
    """Unknown or missing keys and a kill while the job is down raise ValueError."""
    with pytest.raises(ValueError, match="unknown key"):
        parse_failures([{"job_id": "E", "kill_at_s": 1, "when": 2}])
    with pytest.raises(ValueError, match="missing key 'kill_at_s'"):
        parse_failures([{"job_id": "E"}])
    with pytest.raises(ValueError, match="not running"):
        parse_failures([{"job_id": "E", "kill_at_s": 10, "resubmit_at_s": 50},
                        {"job_id": "E", "kill_at_s": 20}])
    assert len(parse_failures([{"job_id": "E", "kill_at_s": 10, "resubmit_at_s": 50},
                               {"job_id": "E", "kill_at_s": 60}])) == 2
    with pytest.raises(ValueError, match="rows"):
        parse_failures({"job_id": "E", "kill_at_s": 1})  # type: ignore[arg-type]
