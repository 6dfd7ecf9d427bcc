"""Tests of rollmux.sim.drift: drift templates, settings and the failure spec."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollmux.hardware import load_hardware
from rollmux.jobs import RLJob
from rollmux.jobtypes import job_type
from rollmux.model import resolve
from rollmux.phasetimes import response_length_dist
from rollmux.placement import (
    ClusterSnapshot,
    Placement,
    PlacementPolicy,
    Regrouping,
    Strategy,
)
from rollmux.placement.rollmux import RollMuxPolicy
from rollmux.sim.drift import (
    NO_DRIFT,
    TEMPLATES,
    DriftDirection,
    DriftReach,
    DriftSetting,
    DriftTemplate,
    FailureSpec,
    assign_templates,
    length_factor,
    length_factors,
    parse_failures,
    parse_reach,
    parse_template,
    read_failures_csv,
)
from rollmux.sim.engine import SimConfig, simulate_trace, with_submitted_jobs
from rollmux.sim.stochastic import PhaseSampler, StochasticConfig
from rollmux.traces import load_trace

HW = load_hardware()
OFF = StochasticConfig(migration=False)
INC15 = parse_template("increasing-1.5")
TINY_PROD = Path(__file__).resolve().parent / "golden" / "traces" / "tiny-prod.csv"

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
    with pytest.raises(ValueError, match="setting"):
        assign_templates(ids, "Sideways")
    # Sec. 6.6: "Increasing, where each job samples from {no drift, increasing 0.5x, 1.0x,
    # 1.5x}; Decreasing, defined analogously".
    assert set(inc.values()) == set(TEMPLATES[0:4])
    assert set(dec.values()) == {NO_DRIFT, *TEMPLATES[4:7]}


def test_sampler_applies_the_drift_factor_to_response_lengths() -> None:
    """Profile reach: at progress 1 under increasing-1.0, mean tokens = n E[2 L] within 1%."""
    job = job_type("A")
    sampler = PhaseSampler(resolve(job, HW), drift=parse_template("increasing-1.0"), config=OFF,
                           total_iterations=10)
    tokens = [sampler.sample(i, 1.0).tokens for i in range(1500)]
    lengths = response_length_dist(job, HW).sample(np.random.default_rng(0), 400_000)
    assert np.mean(tokens) == pytest.approx(sampler.responses * 2.0 * lengths.mean(), rel=0.01)
    assert sampler.sample(0, 1.0).length_factor == 2.0


def test_sampler_applies_the_drift_factor_to_response_lengths_under_cap_reach() -> None:
    """Cap reach: at progress 1 under increasing-1.0 mean tokens = n E[min(2 L, max)]."""
    job = job_type("A")
    sampler = PhaseSampler(resolve(job, HW), drift=parse_template("increasing-1.0"),
                           drift_reach=DriftReach.CAP, config=OFF, total_iterations=10)
    tokens = [sampler.sample(i, 1.0).tokens for i in range(1500)]
    lengths = response_length_dist(job, HW).sample(np.random.default_rng(0), 400_000)
    expected = sampler.responses * np.minimum(2.0 * lengths, job.max_response_tokens).mean()
    assert np.mean(tokens) == pytest.approx(expected, rel=0.01)


def _over_admission(sampler: PhaseSampler, iterations: int) -> tuple[int, float]:
    """Iterations whose drawn rollout + training exceed the admission worst case, and the
    longest drawn response over the maximum length."""
    cols = sampler.arrays(iterations)
    worst = sampler.times.rollout_max_s + sampler.times.train_max_s
    over = int(np.sum(cols["rollout_s"] + cols["train_s"] > worst))
    return over, float(cols["longest_tokens"].max()) / sampler.job.max_response_tokens


def test_profile_drift_takes_a_job_beyond_its_admission_worst_case() -> None:
    """Increasing-1.5 with profile reach exceeds the worst case admission planned for (and
    the maximum length); no iteration does without drift, or with drift capped."""
    job = job_type("A")
    for migration in (OFF, StochasticConfig(migration=True)):
        drifted = PhaseSampler(resolve(job, HW), drift=INC15, config=migration,
                               total_iterations=100)
        over, longest = _over_admission(drifted, 100)
        assert drifted.drift_reach is DriftReach.PROFILE  # the default
        assert over >= 20 and longest > 2.0
        none = PhaseSampler(resolve(job, HW), config=migration, total_iterations=100)
        over, longest = _over_admission(none, 100)
        assert over == 0 and longest <= 1.0
        capped = PhaseSampler(resolve(job, HW), drift=INC15, drift_reach="cap", config=migration,
                              total_iterations=100)
        over, longest = _over_admission(capped, 100)
        assert over == 0 and longest <= 1.0


def test_drifted_profile_scales_every_length_dependent_part() -> None:
    """drifted_times: the admission profile at p = 0 and under cap reach; under profile
    reach rollout beyond its fixed part and the tokens training follows scale by f(p)."""
    job = job_type("B")
    sampler = PhaseSampler(resolve(job, HW), drift=parse_template("increasing-1.0"), config=OFF)
    t, fixed = sampler.times, sampler.coefficients.fixed_s
    assert sampler.drifted_times(0.0) == t
    end = sampler.drifted_times(1.0)
    assert end.rollout_max_s == pytest.approx(fixed + 2.0 * (t.rollout_max_s - fixed))
    assert end.rollout_s == pytest.approx(fixed + 2.0 * (t.rollout_s - fixed))
    slope = (t.train_max_s - t.train_s) / (sampler.max_tokens - sampler.expected_tokens)
    assert end.train_max_s == pytest.approx(t.train_max_s + slope * sampler.max_tokens)
    assert end.train_s == pytest.approx(t.train_s + slope * sampler.expected_tokens)
    assert (end.sync_s, end.warm_switch_s) == (t.sync_s, t.warm_switch_s)
    shrunk = PhaseSampler(resolve(job, HW),
                          drift=parse_template("decreasing-1.0")).drifted_times(1.0)
    assert shrunk.rollout_max_s < t.rollout_max_s and shrunk.train_max_s < t.train_max_s
    capped = PhaseSampler(resolve(job, HW), drift=INC15, drift_reach=DriftReach.CAP)
    assert capped.drifted_times(1.0) is capped.times
    with pytest.raises(ValueError, match="progress"):
        sampler.drifted_times(1.5)


def test_drifted_expected_times_agree_with_the_mean_of_drifted_draws() -> None:
    """Two models of one drift: the mean of draws at progress 1 matches drifted_times."""
    job = job_type("A")
    sampler = PhaseSampler(resolve(job, HW), drift=parse_template("increasing-1.0"), config=OFF,
                           total_iterations=10)
    draws = [sampler.sample(i, 1.0) for i in range(1500)]
    end = sampler.drifted_times(1.0)
    assert np.mean([d.rollout_s for d in draws]) == pytest.approx(end.rollout_s, rel=0.02)
    assert np.mean([d.train_s for d in draws]) == pytest.approx(end.train_s, rel=0.02)


def test_parse_reach_names_the_valid_reaches() -> None:
    """Both reaches parse from their names; anything else raises naming them."""
    assert [parse_reach(r.value) for r in DriftReach] == list(DriftReach)
    with pytest.raises(ValueError, match="profile"):
        parse_reach("everywhere")
    with pytest.raises(ValueError, match="drift_reach"):
        SimConfig(drift_reach="everywhere")


class _ProfileSpy(PlacementPolicy):
    """Static RollMux placement; records the profiles each periodic re-solve is shown."""

    name = "profile-spy"
    regroup_interval_s = 3600.0

    def __init__(self) -> None:
        """No re-solve seen yet."""
        self.static = RollMuxPolicy()
        self.seen: list[RLJob] = []

    def place(self, job: RLJob, snapshot: ClusterSnapshot) -> object:  # type: ignore[override]
        """Algorithm 1."""
        return self.static.place(job, snapshot)

    def regroup(self, snapshot: ClusterSnapshot) -> Regrouping | None:
        """Record the jobs as the snapshot shows them; never re-partition."""
        for placed in snapshot.jobs.values():
            assert placed.times == resolve(placed.job, HW).times
            self.seen.append(placed.job)
        return None


@pytest.mark.parametrize(("drift", "reach", "grows"), [
    ("increasing-1.5", "profile", True),
    ("increasing-1.5", "cap", False),
    ("none", "profile", False),
])
def test_periodic_resolves_see_the_jobs_current_drifted_profiles(
    drift: str, reach: str, grows: bool
) -> None:
    """Sec. 6.6: regrouping re-solves "under the jobs' current drifted profiles"; admission
    placements and the SLO reference keep the profile at submission."""
    jobs = load_trace(TINY_PROD, HW)
    jobs = [dataclasses.replace(j, iterations=40) for j in jobs]
    spy = _ProfileSpy()
    result = simulate_trace(jobs, spy, HW, 0, SimConfig(drift=drift, drift_reach=reach,
                                                        record_phases=False))
    assert spy.seen
    admitted = {j.job_id: resolve(j, HW).times.rollout_max_s for j in jobs}
    growth = [resolve(j, HW).times.rollout_max_s / admitted[j.job_id] for j in spy.seen]
    assert (max(growth) > 1.05) is grows
    assert min(growth) >= 1.0 - 1e-12
    solo = {j.job_id: resolve(j, HW).times.solo_iteration_max_s for j in jobs}
    table = result.jobs.set_index("job_id")
    np.testing.assert_allclose(table["solo_iteration_s"], [solo[j] for j in table.index])


def test_a_regrouping_under_drifted_profiles_is_applied_to_the_submitted_jobs() -> None:
    """with_submitted_jobs puts each job as submitted, and its profile, back in place."""
    jobs = load_trace(TINY_PROD, HW)[:2]
    drifted = [dataclasses.replace(j, rollout_max_s=3.0 * resolve(j, HW).times.rollout_max_s)
               for j in jobs]
    placements = tuple(Placement(job=d, strategy=Strategy.REGROUP, group_id="G9",
                                 profile=resolve(d, HW)) for d in drifted)
    r = Regrouping(job=None, time_s=3600.0, kept_groups=(), placements=placements,
                   moved_jobs=(), pause_s={}, marginal_cost_usd_per_h=0.0, cost_usd_per_h=1.0)
    back = with_submitted_jobs(r, {j.job_id: j for j in jobs}, HW)
    assert [p.job for p in back.placements] == jobs
    assert [p.profile for p in back.placements] == [resolve(j, HW) for j in jobs]
    assert [p.group_id for p in back.placements] == ["G9", "G9"]
    assert with_submitted_jobs(back, {j.job_id: j for j in jobs}, HW) == back


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
