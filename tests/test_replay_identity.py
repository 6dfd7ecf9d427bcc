"""Run identity once: ReplaySpec.path() and from_keys are inverses; the workflow's wildcard
template and its constraints, generated from the same segments, match exactly the folders
path() names and decode back to the same spec."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import profile_examples

from rollmux.placement import builtin_policy_names
from rollmux.sim import ReplaySpec, SimConfig, run_replay
from rollmux.sim.replay import (
    SEGMENTS,
    path_keys,
    wildcard_constraints,
    wildcard_keys,
    wildcard_template,
)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "golden" / "traces" / "tiny-sim.csv"

_NUMBER = st.floats(min_value=0.01, max_value=99.0, allow_nan=False, allow_infinity=False)


@st.composite
def specs(draw: st.DrawFn) -> ReplaySpec:
    """Any valid spec: every optional segment on or off, numbers not only %g-exact."""
    policy = draw(st.sampled_from(builtin_policy_names()))
    fidelity = draw(st.sampled_from(["event", "analytic"]))
    stochastic = draw(st.booleans())
    sampled = fidelity == "event" and stochastic
    lengths = draw(st.sampled_from([None, "data/polytrace-a", "/x/y/lengths"])) if sampled \
        else None
    slo = draw(st.sampled_from(["trace", "1.2", "2.0", "1,2", "1.5,3.25"]))
    sim = SimConfig(
        fidelity=fidelity, stochastic=stochastic, migration=draw(st.booleans()),
        migration_threshold=draw(st.none() | st.floats(0.05, 0.95)),
        drift=draw(st.sampled_from(["none", "Mixed", "Increasing", "increasing-1.0"])),
        drift_reach=draw(st.sampled_from(["profile", "cap"])),
        sync=draw(st.sampled_from(["topology", "flat"])),
        record_phases=draw(st.booleans()), lengths=lengths)
    return ReplaySpec(
        trace=draw(st.sampled_from(["traces/production-default.csv", "a/b/tiny-sim.csv"])),
        policy=policy, seed=draw(st.integers(0, 10_000)), slo=slo,
        max_group_size=draw(st.none() | st.integers(1, 16)),
        regroup_interval_h=draw(st.none() | _NUMBER),
        failures=draw(st.sampled_from([None, "results/sim/failures/failure.csv"])),
        hardware=draw(st.sampled_from([None, "config/hw.yaml"])),
        hardware_overrides=draw(st.sampled_from([(), (("node.gpus_per_node", 4),)])),
        sim=sim)


def _inverse(spec: ReplaySpec, keys: dict[str, str]) -> ReplaySpec:
    """from_keys with the files and settings the path does not hold taken from ``spec``."""
    return ReplaySpec.from_keys(keys, trace=spec.trace, failures=spec.failures,
                                lengths=spec.sim.lengths, hardware=spec.hardware,
                                hardware_overrides=spec.hardware_overrides,
                                record_phases=spec.sim.record_phases)


@profile_examples(1.0)
@given(specs())
def test_from_keys_inverts_path(spec: ReplaySpec) -> None:
    """from_keys(path_keys(spec.path())) is the spec again, so its path is the same."""
    keys = path_keys(spec.path())
    assert keys == spec.segments()
    again = _inverse(spec, keys)
    assert again == spec and again.path() == spec.path()


@profile_examples(1.0)
@given(specs(), specs())
def test_no_replay_folder_nests_inside_another(a: ReplaySpec, b: ReplaySpec) -> None:
    """Two different replays' folders are never one inside the other: each is replaced
    whole (rollmux.io.replace_folder), which would delete or refuse a nested replay."""
    pa, pb = a.path(), b.path()
    if pa != pb:
        assert not pa.is_relative_to(pb) and not pb.is_relative_to(pa)
    assert pa.parts[-2:] == (f"policy={a.policy}", f"seed={a.seed}")


@profile_examples(1.0)
@given(specs())
def test_wildcard_template_matches_exactly_the_specs_folder(spec: ReplaySpec) -> None:
    """The generated template, with its constraints, matches spec.path() and its wildcards
    decode (wildcard_keys) to the spec's keys; a default spec's folder is the template with
    every optional wildcard empty."""
    constraints = wildcard_constraints()
    pattern = re.sub(r"\{(\w+)\}", lambda m: f"(?P<{m[1]}>{constraints[m[1]]})",
                     wildcard_template())
    match = re.fullmatch(pattern, spec.path().as_posix())
    assert match is not None
    wildcards = {k: v or "" for k, v in match.groupdict().items()}
    assert wildcard_keys(wildcards) == spec.segments()
    assert _inverse(spec, wildcard_keys(wildcards)) == spec


def test_template_and_path_of_the_pipelines_replays() -> None:
    """The template names the pipeline's folders; every optional segment comes before
    policy=, so no replay's folder nests inside another's (each is replaced whole)."""
    assert wildcard_template() == (
        "trace={trace}/slo={slo}/maxgroup={maxgroup}/drift={drift}{drift_reach}{lengths}"
        "{fidelity}{phases}{migration}{migration_threshold}{sync}{regroup}{failures}"
        "/policy={policy}/seed={seed}")
    assert [s.key for s in SEGMENTS if not s.optional] == [
        "trace", "slo", "maxgroup", "drift", "policy", "seed"]
    spec = ReplaySpec(trace="traces/x.csv", policy="rollmux", max_group_size=4,
                      sim=SimConfig(drift="Mixed", drift_reach="cap", fidelity="analytic",
                                    stochastic=False))
    assert spec.path() == Path("trace=x/slo=trace/maxgroup=4/drift=Mixed/drift_reach=cap/"
                               "fidelity=analytic/phases=expected/policy=rollmux/seed=0")


def test_from_keys_refuses_what_no_spec_writes() -> None:
    """Unknown, missing and non-canonical keys and files that do not match their key."""
    base = ReplaySpec(trace="traces/x.csv", policy="rollmux").segments()
    bad = [({**base, "colour": "red"}, "unknown"),
           ({k: v for k, v in base.items() if k != "seed"}, "missing"),
           ({**base, "slo": "2.0"}, "canonical"),
           ({**base, "fidelity": "event"}, "canonical"),
           ({**base, "maxgroup": "many"}, "maxgroup"),
           ({**base, "migration_threshold": "x"}, "not a number"),
           ({**base, "failures": "kills"}, "failures")]
    for keys, match in bad:
        with pytest.raises(ValueError, match=match):
            ReplaySpec.from_keys(keys, trace="traces/x.csv")
    with pytest.raises(ValueError, match="trace"):
        ReplaySpec.from_keys(base, trace="traces/y.csv")
    with pytest.raises(ValueError, match="wildcard"):
        wildcard_keys({**{s.key: "" for s in SEGMENTS}, "fidelity": "analytic"})


def test_migration_threshold_is_part_of_the_identity(tmp_path: Path) -> None:
    """A spec can set migration_threshold: its folder says so and the replay uses it (the
    phase draws, hence the result, change)."""
    low = ReplaySpec(trace=str(TINY), policy="rollmux", seed=1,
                     sim=SimConfig(migration_threshold=0.3, record_phases=False))
    default = dataclasses.replace(low, sim=SimConfig(record_phases=False))
    assert "migration_threshold=0.3" in low.path().parts
    a, b = run_replay(low), run_replay(default)
    assert a.config["migration_threshold"] == 0.3 and b.config["migration_threshold"] is None
    assert not a.jobs["finish_s"].equals(b.jobs["finish_s"])


def test_from_config_rebuilds_the_spec_that_wrote_it(tmp_path: Path) -> None:
    """ReplaySpec.from_config(config.json) is the spec run_replay was given."""
    spec = ReplaySpec(trace=str(TINY), policy="regroup", seed=3, slo="1,2",
                      max_group_size=2, regroup_interval_h=0.5,
                      hardware_overrides=(("node.gpus_per_node", 8),),
                      sim=SimConfig(drift="Mixed", drift_reach="cap", migration=False,
                                    migration_threshold=0.6, record_phases=False))
    run_replay(spec, tmp_path / "run")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert ReplaySpec.from_config(config) == spec
