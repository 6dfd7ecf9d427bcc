"""Policies as plug-ins: the entry-point group ``rollmux.policies`` and examples/policy-plugin.

The example package is pip-installed (``--no-deps --target``) into a temporary folder and
used from subprocesses whose ``PYTHONPATH`` holds that folder, so this process's
registry (and the golden tests beside it) never sees it. The error paths use small
distributions written by hand into a temporary folder on ``sys.path``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollmux.placement import (
    PlacementPolicy,
    PluginError,
    clear_registry,
    get_policy,
    policy_names,
    policy_options,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "policy-plugin"
EXAMPLE_MODULE = EXAMPLE / "src" / "rollmux_firstfit" / "__init__.py"
TINY_TRACE = ROOT / "tests" / "golden" / "traces" / "tiny-sim.csv"
BIN = Path(sys.executable).parent


# --------------------------------------------------------------------------- fake plug-ins


def write_distribution(root: Path, dist: str, entry_points: dict[str, str],
                       module: str = "", source: str = "") -> None:
    """A minimal installed distribution ``dist`` in ``root``: metadata, entry points, module."""
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[rollmux.policies]\n{lines}")
    if module:
        (root / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def plugin_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for fake distributions; the registry is reset around the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    clear_registry()
    yield tmp_path
    monkeypatch.undo()
    for name in [m for m in sys.modules if m.startswith("fakepolicy")]:
        del sys.modules[name]
    clear_registry()


GOOD_POLICY = """
    from rollmux.placement import PlacementPolicy
    from rollmux.placement.base import admissible_profile, new_group_placement

    class Alone(PlacementPolicy):
        name = "alone"
        options = frozenset()

        def place(self, job, snapshot):
            profile = admissible_profile(job, snapshot)
            return profile if not hasattr(profile, "times") else new_group_placement(
                job, profile, snapshot)

    class Misnamed(Alone):
        name = "something-else"

    NOT_A_POLICY = 42
"""


def test_plugin_is_listed_and_built(plugin_root: Path) -> None:
    """An installed plug-in is listed by name, built by get_policy and states its options."""
    write_distribution(plugin_root, "fake-alone", {"alone": "fakepolicy_a:Alone"},
                       "fakepolicy_a", GOOD_POLICY)
    assert "alone" in policy_names()
    assert "rollmux" in policy_names()
    policy = get_policy("alone")
    assert isinstance(policy, PlacementPolicy) and policy.name == "alone"
    assert policy_options("alone") == frozenset()


def test_plugin_that_fails_to_load_names_its_distribution(plugin_root: Path) -> None:
    """A plug-in whose import raises gives one PluginError naming distribution and cause."""
    write_distribution(plugin_root, "fake-broken", {"broken": "fakepolicy_b:Policy"},
                       "fakepolicy_b", "raise RuntimeError('no GPU driver here')\n")
    assert "broken" in policy_names()  # listed without importing it
    with pytest.raises(PluginError, match=r"'broken' from distribution 'fake-broken' "
                                          r".*importing it raised RuntimeError: no GPU driver"):
        get_policy("broken")
    assert get_policy("solo-d").name == "solo-d"  # the built-ins are unaffected


@pytest.mark.parametrize(("dist", "name", "target", "ask", "match"), [
    # An entry point naming something that is not a PlacementPolicy class.
    ("fake-int", "number", "NOT_A_POLICY", policy_options,
     r"distribution 'fake-int'.*is 42, not a subclass of rollmux.placement.PlacementPolicy"),
    # A class whose ``name`` attribute is not the name it is registered under.
    ("fake-misnamed", "alias", "Misnamed", get_policy,
     r"'alias'.*'fake-misnamed'.*name is 'something-else'"),
    # A built-in's name (refused as soon as the names are listed).
    ("fake-usurper", "rollmux", "Alone", lambda name: policy_names(),
     r"'rollmux' from distribution 'fake-usurper'.*built-in"),
], ids=["not-a-subclass", "misnamed", "builtin-name"])
def test_unusable_plugin_is_refused_naming_its_distribution(
        plugin_root: Path, dist: str, name: str, target: str, ask: Any, match: str) -> None:
    """A plug-in that is not a policy, is misnamed or takes a built-in's name is refused."""
    module = f"fakepolicy_{dist.replace('-', '_')}"
    write_distribution(plugin_root, dist, {name: f"{module}:{target}"}, module, GOOD_POLICY)
    with pytest.raises(PluginError, match=match):
        ask(name)


def test_two_distributions_cannot_declare_one_name(plugin_root: Path) -> None:
    """Two distributions declaring the same policy name are both named in the error."""
    write_distribution(plugin_root, "fake-one", {"twin": "fakepolicy_f:Alone"},
                       "fakepolicy_f", GOOD_POLICY)
    write_distribution(plugin_root, "fake-two", {"twin": "fakepolicy_g:Alone"},
                       "fakepolicy_g", GOOD_POLICY)
    with pytest.raises(PluginError, match=r"'twin' is declared twice: by distribution "
                                          r"'fake-one'.* and by distribution 'fake-two'"):
        policy_names()


# --------------------------------------------------------------------------- misbehaving plug-ins

#: Plug-ins that misbehave (issue 22, item 3): the module source of each, with the words
#: the one-line error must hold.
MISBEHAVING = {
    "exit-on-import": ("import sys\nsys.exit(0)\n", "importing it exited (sys.exit(0))"),
    "raise-on-import": ("raise ImportError('needs torch')\n",
                        "importing it raised ImportError: needs torch"),
    "place-raises": (GOOD_POLICY.replace("profile = admissible_profile(job, snapshot)",
                                         "raise KeyError('gpu')"),
                     "place() of job 'j0' raised KeyError"),
    "place-returns-none": (GOOD_POLICY.replace("profile = admissible_profile(job, snapshot)",
                                               "return None"),
                           "place() returned None, not a Placement"),
    "place-exits": (GOOD_POLICY.replace("profile = admissible_profile(job, snapshot)",
                                        "import sys; sys.exit(3)"),
                    "place() of job 'j0' exited (sys.exit(3))"),
    "place-hangs": (GOOD_POLICY.replace("profile = admissible_profile(job, snapshot)",
                                        "import time; time.sleep(600)"),
                    "place() of job 'j0' took longer than 0.5 s"),
}


@pytest.mark.parametrize("case", sorted(MISBEHAVING))
def test_misbehaving_plugin_is_one_line_with_the_plugin_status(
        plugin_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], case: str) -> None:
    """`rollmux simulate` with a plug-in that exits or raises on import, or whose place()
    raises, exits, returns None or hangs: exit status 5 (not 70, not 0), one line naming
    the plug-in and its distribution, and no output folder."""
    from rollmux.cli import main
    from rollmux.errors import ExitStatus

    source, words = MISBEHAVING[case]
    module = f"fakepolicy_{case.replace('-', '_')}"
    write_distribution(plugin_root, f"fake-{case}", {"alone": f"{module}:Alone"}, module,
                       source)
    monkeypatch.setenv("ROLLMUX_PLUGIN_TIME_LIMIT_S", "0.5")
    trace = tmp_path / "t.csv"
    trace.write_text(TINY_TRACE.read_text().replace("sim-0000,", "j0,", 1))
    out = tmp_path / "out"
    status = main(["simulate", "--trace", str(trace), "--policy", "alone", "--quiet",
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert status == ExitStatus.PLUGIN == 5, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollmux: error: policy plug-in 'alone' "
                                                   f"from distribution 'fake-{case}'"), err
    assert words in lines[0], err
    assert not out.exists()


def test_a_dry_run_imports_every_policy_the_config_names(plugin_root: Path) -> None:
    """The config checks (run by every Snakemake invocation, a dry run too) import each
    policy the config names: a plug-in that cannot load is reported at each key naming it."""
    from rollmux.experiments.config_checks import semantic_problems

    write_distribution(plugin_root, "fake-broken", {"broken": "fakepolicy_dry:Policy"},
                       "fakepolicy_dry", "raise RuntimeError('no GPU driver here')\n")
    config = {"sim": {"production": {"policies": ["rollmux", "broken"]},
                      "fluid": {"production_policies": ["broken"]}}}
    problems = sorted(str(p) for p in semantic_problems(config) if "broken" in str(p))
    assert problems == sorted([
        "sim.production.policies[1]: policy plug-in 'broken' from distribution 'fake-broken' "
        "(fakepolicy_dry:Policy): importing it raised RuntimeError: no GPU driver here",
        "sim.fluid.production_policies[0]: policy plug-in 'broken' from distribution "
        "'fake-broken' (fakepolicy_dry:Policy): importing it raised RuntimeError: no GPU "
        "driver here"])


def test_fig15_policies_must_be_among_the_sensitivity_policies() -> None:
    """A documented cross-key rule, checked with the config (a dry run stops on it)."""
    from rollmux.experiments.config_checks import membership_problems

    config = {"sim": {"figures": {"fig15_policies": ["rollmux", "verl"]},
                      "sensitivity": {"policies": ["rollmux", "random"]}}}
    assert [str(p) for p in membership_problems(config)] == [
        "sim.figures.fig15_policies: 'verl' is not among sim.sensitivity.policies "
        "(rollmux, random)"]
    config["sim"]["figures"]["fig15_policies"] = ["random"]
    assert membership_problems(config) == []


# --------------------------------------------------------------------------- the example


def readme_block(language: str, marker: str) -> str:
    """The README's fenced ``language`` block that contains ``marker``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"expected one {language} block with {marker!r} in README.md"
    return found[0]


def test_readme_recipe_is_the_example() -> None:
    """The README shows the example's policy module and entry point, character for character."""
    assert readme_block("python", "class FirstFitPolicy") == EXAMPLE_MODULE.read_text()
    pyproject = (EXAMPLE / "pyproject.toml").read_text()
    entry = readme_block("toml", "rollmux.policies")
    assert entry in pyproject, "the README's entry-point block is not in the example"


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example pip-installed into a temporary target; the environment that sees it."""
    work = tmp_path_factory.mktemp("plugin")
    source = work / "policy-plugin"
    # A copy: pip builds in the source tree, which must stay clean (and xdist-safe).
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(source)], check=True, cwd=work)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(target), env.get("PYTHONPATH")) if p)
    return env


@pytest.mark.slow
@pytest.mark.subprocess
def test_example_runs_in_rollmux_simulate(installed_example: dict[str, str],
                                          tmp_path: Path) -> None:
    """`rollmux simulate --policy first-fit` replays a tiny trace with the installed example."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(BIN / "rollmux"), "simulate", "--trace", str(TINY_TRACE), "--policy", "first-fit",
         "--max-group-size", "3", "--out", str(out)],
        env=installed_example, capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    config = json.loads((out / "config.json").read_text())
    assert summary["jobs"] == summary["jobs_completed"] > 0
    assert config["policy"] == "first-fit"


@pytest.mark.slow
@pytest.mark.subprocess
def test_example_runs_in_simulate_trace_and_the_pipeline_config(
        installed_example: dict[str, str]) -> None:
    """simulate_trace takes the plug-in by name, and every policy list of the pipeline's
    config accepts it: the schema validates and each planned replay's spec builds."""
    script = textwrap.dedent(f"""
        import yaml, jsonschema
        from rollmux.hardware import load_hardware
        from rollmux.sim import simulate_trace
        from rollmux.sim.sweeps import sweep_plan
        from rollmux.traces import load_trace

        hw = load_hardware()
        jobs = load_trace({str(TINY_TRACE)!r}, hw)
        result = simulate_trace(jobs, "first-fit", hw, seed=0)
        assert result.summary["jobs_completed"] == len(jobs), result.summary

        config = yaml.safe_load(open("config/config.yaml"))
        sim = config["sim"]
        lists = [(sim["production"], "policies"), (sim["sensitivity"], "policies"),
                 (sim["fluid"], "production_policies"), (sim["fluid"], "mixed_policies"),
                 (sim["figures"], "fig14_policies"), (sim["figures"], "fig15_policies")]
        for section, key in lists:
            section[key] = [*section[key], "first-fit"]
        jsonschema.validate(sim, yaml.safe_load(open("workflow/schemas/sim.schema.yaml")))
        plan = sweep_plan(sim)
        runs = [k for k in (*plan.production, *plan.sensitivity, *plan.fluid)
                if k.policy == "first-fit"]
        assert runs
        for key in runs:
            key.spec()  # validates the policy name against the registry
        print(len(runs))
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=installed_example,
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) > 0
