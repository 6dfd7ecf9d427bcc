"""Seed batches (rollmux.sim.seedbatch, rule sim_replay_seeds): which settings, same bytes."""

from __future__ import annotations

import filecmp
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_workflow import TEST_CONFIG, copy_pipeline

import rollmux.sim
from rollmux.io import OUTPUT_MARKER
from rollmux.sim.seedbatch import (
    REPLAY_FILES,
    batch_inputs,
    batchable_policy,
    group_by_seeds,
    seed_batches,
    seed_folder,
    setting_pattern,
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "workflow" / "scripts" / "sim_replay_seeds.py"
BASE = "trace=t/slo=trace/maxgroup=5/drift=none"
#: The manifest rollmux.io.replace_folder leaves in every folder it writes.
MARKER = OUTPUT_MARKER


def files(setting: str, seeds: list[int], name: str = "summary.json") -> list[str]:
    """The file ``name`` of ``setting``'s replay folder at each seed."""
    return [f"{seed_folder(setting, s)}/{name}" for s in seeds]


def test_batchable_policy_by_solver_options() -> None:
    """Policies that solve an optimisation problem (optimal, regroup) are not batched;
    the heuristics are; an unknown name is not."""
    assert not batchable_policy("optimal")
    assert not batchable_policy("regroup")
    for name in ("rollmux", "random", "greedy", "solo-d", "verl", "rollmux-repeat"):
        assert batchable_policy(name), name
    assert not batchable_policy("no-such-policy")


def test_seed_batches_picks_cheap_settings_asked_at_several_seeds() -> None:
    """Exactly the settings asked for at more than one seed with a cheap policy and no
    kill list, each with exactly the seeds asked for."""
    random = f"{BASE}/phases=expected/policy=random"
    rollmux = f"{BASE}/policy=rollmux"
    asked = [
        *files(random, [0, 2, 1]),
        *files(random, [0, 1], "jobs.csv"),  # the same seeds asked by another table
        *files(rollmux, [3]), *files(rollmux, [4], "events.csv"),
        *files(f"{BASE}/fidelity=analytic/policy=optimal", [0, 1, 2]),
        *files(f"{BASE}/policy=regroup", [0, 1]),
        *files(f"{BASE}/failures=f/policy=rollmux", [0, 1]),
        *files(f"{BASE}/policy=greedy", [0]),  # one seed: its own job
        *files(f"{BASE}/policy=verl", [0, 1], "phases.csv"),  # not a file batches write
        "results/sim/traces/t-first20.csv", "results/sim/production.csv",
        "results/other/policy=rollmux/seed=0/summary.json",
    ]
    batches = seed_batches(asked)
    assert batches == {random: (0, 1, 2), rollmux: (3, 4)}
    assert group_by_seeds(batches) == {(0, 1, 2): (random,), (3, 4): (rollmux,)}
    assert seed_batches([Path(f) for f in asked]) == batches
    assert seed_batches(files(random, [0, 1]), root="results/elsewhere") == {}


def test_setting_pattern_matches_only_the_settings() -> None:
    """The wildcard constraint matches each setting whole and nothing else (dots escaped)."""
    import re

    a, b = f"{BASE}/policy=rollmux", "trace=t-first20/slo=1.2/maxgroup=5/drift=none/policy=random"
    pattern = re.compile(f"(?:{setting_pattern([b, a, a])})")
    assert pattern.fullmatch(a) and pattern.fullmatch(b)
    assert not pattern.fullmatch(b.replace("1.2", "1x2"))
    assert not pattern.fullmatch(f"{a}/seed=0")
    assert not pattern.fullmatch(f"{BASE}/policy=rollmux-repeat")
    with pytest.raises(ValueError):
        setting_pattern([])
    assert batch_inputs(a) == {"trace": "results/sim/traces/t.csv"}


def run_batch_script(tmp_path: Path, setting: str, seeds: list[int], trace: str) -> Path:
    """sim_replay_seeds.py as the rule runs it (a stand-in ``snakemake`` object), in
    ``tmp_path``; the results root."""
    root = tmp_path / "results" / "sim"
    output = [str(root / setting / f"seed={s}" / name) for s in seeds for name in REPLAY_FILES]
    fake = SimpleNamespace(
        log=[str(tmp_path / "batch.log")], wildcards=SimpleNamespace(setting=setting),
        output=output, input=SimpleNamespace(trace=trace),
        params=SimpleNamespace(seeds=seeds, lengths="", overrides={}))
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": fake})
    return root


def test_a_failing_seed_names_the_setting_and_seed(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A replay that fails in a batch raises its own error, noted with the setting and
    seed; the seeds before it were written whole."""
    trace = tmp_path / "t.csv"
    trace.write_text((ROOT / "traces" / "production-default.csv").read_text(encoding="utf-8"))
    from rollmux.sim.sweeps import window_trace_text

    trace.write_text(window_trace_text(trace.read_text(encoding="utf-8"), 5),
                     encoding="utf-8")
    real = rollmux.sim.replay.run_replay

    def failing(spec: rollmux.sim.ReplaySpec, out: Path) -> object:
        if spec.seed == 1:
            raise ValueError("broken replay")
        return real(spec, out)

    # the adapters replay through rollmux.sim.replay.run_replay_folder
    monkeypatch.setattr(rollmux.sim.replay, "run_replay", failing)
    setting = f"{BASE}/policy=random"
    with pytest.raises(ValueError, match="broken replay") as info:
        run_batch_script(tmp_path, setting, [0, 1, 2], str(trace))
    assert any(f"{setting}/seed=1" in note for note in info.value.__notes__)
    seed0 = tmp_path / "results" / "sim" / setting / "seed=0"
    assert {p.name for p in seed0.iterdir()} == {*REPLAY_FILES, MARKER}
    assert not (tmp_path / "results" / "sim" / setting / "seed=2").exists()
    assert f"{setting} seed=1 failed" in caplog.text  # the job's log (pytest captures it)


def dry_run_jobs(workdir: Path, *configfiles: str) -> dict[str, list[str]]:
    """Each replay rule's jobs in a forced dry run of the whole DAG: rule -> the replay
    folders of each job's outputs (sorted, repeated when two jobs write one)."""
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--forceall", "--configfile", *configfiles],
        cwd=workdir, capture_output=True, text=True, timeout=300, check=True).stdout
    jobs: dict[str, list[str]] = {}
    for block in out.split("\nrule ")[1:]:
        name = block.split(":", 1)[0]
        if not name.startswith("sim_replay"):
            continue
        line = next(x for x in block.splitlines() if x.strip().startswith("output:"))
        outputs = line.split(":", 1)[1].split(",")
        folders = sorted({str(Path(f.strip()).parent) for f in outputs})
        jobs.setdefault(name, []).append(";".join(folders))
    return jobs


@pytest.mark.subprocess
def test_quick_profile_batches_exactly_the_multi_seed_cheap_settings(tmp_path: Path) -> None:
    """The quick profile's DAG: one sim_replay_seeds job per setting asked for at several
    seeds whose policy solves nothing, covering the same folders as one job per replay
    (batching off), none twice; optimal and regroup keep one job per seed."""
    workdir = copy_pipeline(tmp_path)
    (workdir / "config" / "nobatch.yaml").write_text("sim:\n  batch_seeds: false\n")
    on = dry_run_jobs(workdir, "config/config.yaml")
    off = dry_run_jobs(workdir, "config/config.yaml", "config/nobatch.yaml")
    assert "sim_replay_seeds" not in off
    singles = [f for folders in off.values() for f in folders]
    assert len(singles) == len(set(singles))
    by_setting: dict[str, set[str]] = {}
    for folder in singles:
        setting, seed = folder.rsplit("/", 1)
        by_setting.setdefault(setting, set()).add(seed)
    expected = {s for s, seeds in by_setting.items() if len(seeds) > 1
                and not s.endswith(("policy=optimal", "policy=regroup"))}
    batched = {job.split(";")[0].rsplit("/", 1)[0]: job.split(";")
               for job in on["sim_replay_seeds"]}
    assert len(batched) == len(on["sim_replay_seeds"])
    assert set(batched) == expected
    for setting, folders in batched.items():
        assert {f.rsplit("/", 1)[1] for f in folders} == by_setting[setting]
    # the expensive policies are asked for at several seeds in this profile, and stay single
    assert any(s.endswith("policy=regroup") and len(v) > 1 for s, v in by_setting.items())
    written = [f for job in on["sim_replay_seeds"] for f in job.split(";")]
    written += [f for rule, jobs in on.items() if rule != "sim_replay_seeds" for f in jobs]
    assert sorted(written) == sorted(singles)


@pytest.mark.slow
@pytest.mark.subprocess
def test_batched_replays_are_byte_identical_to_single_replays(tmp_path: Path) -> None:
    """Two seeds of two drift settings on a 6-arrival window, once in sim_replay_seeds
    jobs and once as one sim_replay job per seed: the same files, byte for byte."""
    overlay = "seeds: [0, 1]\nrobustness:\n  first_arrivals: 6\n"
    settings = [f"trace=production-default-first6/slo=trace/maxgroup=5/drift={d}/policy={p}"
                for d, p in (("Mixed", "random"), ("Increasing", "rollmux"))]
    targets = [f for s in settings for f in files(s, [0, 1])]
    runs = {}
    for variant, extra in (("batched", ""), ("single", "sim:\n  batch_seeds: false\n")):
        workdir = copy_pipeline(tmp_path / variant)
        (workdir / "overlay.yaml").write_text(overlay + extra)
        result = subprocess.run(
            [sys.executable, "-m", "snakemake", *targets, "--cores", "1", "--configfile",
             TEST_CONFIG, "overlay.yaml"],
            cwd=workdir, capture_output=True, text=True, timeout=600, check=False)
        assert result.returncode == 0, result.stderr[-4000:]
        rules = {line.split()[-1].rstrip(":") for line in result.stderr.splitlines()
                 if line.startswith(("rule ", "localrule "))}
        assert ("sim_replay_seeds" in rules) == (variant == "batched"), rules
        runs[variant] = workdir
    for target in targets:
        folder = Path(target).parent
        a, b = runs["batched"] / folder, runs["single"] / folder
        names = {p.name for p in a.iterdir()}
        assert names == {p.name for p in b.iterdir()} == {*REPLAY_FILES, MARKER}
        _, mismatch, errors = filecmp.cmpfiles(a, b, sorted(names), shallow=False)
        assert not mismatch and not errors, (folder, mismatch, errors)


def test_batch_rule_names_and_sizes() -> None:
    """One rule name per seed list (the config's: sim_replay_seeds); SLURM runtime scales
    with the seeds and the attempt, memory with the attempt only."""
    from rollmux.sim.seedbatch import batch_resources, batch_rule_name

    assert batch_rule_name((0, 1, 2), [0, 1, 2]) == "sim_replay_seeds"
    assert batch_rule_name((0, 2), [0, 1, 2]) == "sim_replay_seeds_0_2"
    sizes = batch_resources(10)
    assert sizes["runtime"](None, 1) == 300 and sizes["runtime"](None, 2) == 600
    assert sizes["mem_mb"](None, 1) == 3000 and sizes["mem_mb"](None, 2) == 6000
    assert batch_resources(1)["runtime"](None, 1) == 30
    with pytest.raises(ValueError):
        batch_resources(0)
