"""One type per concept: a job's phase times are declared by one class, PhaseTimes.

Classes are read with ``ast`` over src/rollmux (no module is imported), so a new class
anywhere in the package that declares the phase-time fields again fails here.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from rollmux.closedform import JobPhases
from rollmux.jobs import RLJob
from rollmux.phasetimes import PhaseTimes

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rollmux"

PHASE_TIME_FIELDS = frozenset(field.name for field in dataclasses.fields(PhaseTimes))

#: A class declaring this many phase-time fields is a second phase-time type. Below it
#: are records naming a phase or two of their own (``VerlMetrics.rollout_s``, the
#: co-located rollout; a schedule's per-group ``rollout_s``/``train_s`` arrays).
SECOND_TYPE_MIN_FIELDS = 3

#: Classes that may declare phase-time fields, each with why it is not a second type.
ALLOWED: dict[str, str] = {
    "rollmux.phasetimes.PhaseTimes": "the one type",
    "rollmux.jobs.RLJob": "a trace's per-job overrides of the model (None: modelled), "
                          "read only by phasetimes.phase_times",
}


def declared_fields() -> dict[str, set[str]]:
    """Annotated class-body names of every class in src/rollmux, by qualified class name."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                found[f"{module}.{node.name}"] = {
                    stmt.target.id for stmt in node.body
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                }
    return found


def test_phase_time_fields_are_declared_once() -> None:
    """No class but PhaseTimes (and RLJob's overrides) declares the phase-time fields."""
    classes = declared_fields()
    assert classes["rollmux.phasetimes.PhaseTimes"] == PHASE_TIME_FIELDS
    second_types = {
        name: sorted(names & PHASE_TIME_FIELDS) for name, names in classes.items()
        if len(names & PHASE_TIME_FIELDS) >= SECOND_TYPE_MIN_FIELDS and name not in ALLOWED
    }
    assert second_types == {}, "declare phase times once, in PhaseTimes, and hold one instead"
    assert set(ALLOWED) <= set(classes), "an allowed class is gone: drop it from ALLOWED"


def test_job_phases_holds_phase_times() -> None:
    """JobPhases declares only its PhaseTimes and GPU counts, and reads each time from it."""
    assert [field.name for field in dataclasses.fields(JobPhases)] == [
        "times", "rollout_gpus", "train_gpus"
    ]
    times = PhaseTimes(10.0, 20.0, 3.0, 9.0, 1.0, 50.0, 40.0, 60.0)
    phases = JobPhases(times, 8, 16)
    for name in PHASE_TIME_FIELDS & set(dir(JobPhases)):
        assert getattr(phases, name) == getattr(times, name), name


def test_job_overrides_name_phase_time_fields() -> None:
    """Each phase-time override a job can carry is named as the PhaseTimes field it sets."""
    durations = {f.name for f in dataclasses.fields(RLJob) if f.name.endswith("_s")}
    assert durations - {"arrival_s"} <= PHASE_TIME_FIELDS


#: The phase model's per-job functions of ``(job, hw)``: resolving a job.
DERIVING = frozenset({
    "phase_times", "rollout_shape", "response_length_dist", "responses_per_iter",
    "resolved_mean_response_tokens", "resolved_sigma", "resolved_prompt_tokens",
    "resolved_prompts_per_iter", "resolved_responses_per_prompt", "rollout_mem_gb_per_node",
    "train_mem_gb_per_node", "sync_times", "switch_times", "rollout_time_s", "train_time_s",
    "rollout_time_ratio",
})

#: Modules that call them besides the phase model itself and ``rollmux.model.resolved``,
#: each with why. An entry that no longer calls them fails, so the list only shrinks.
DERIVES: dict[str, str] = {
    "rollmux.anchors": "the phase model's anchors against the paper: its own components",
    "rollmux.experiments.model_figures": "figures of the phase model's switch and sync parts",
    "rollmux.experiments.microbench_evidence": "the roofline ratio at other batch sizes",
    "rollmux.experiments.placement_bench": "times one uncached phase-model call on purpose",
}


def deriving_calls() -> dict[str, set[str]]:
    """Module -> the per-job phase-model functions it calls (ast, no import)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name in DERIVING:
                    found.setdefault(module, set()).add(name)
    return found


def test_only_resolve_derives_a_job_on_a_hardware() -> None:
    """Above the phase model, only rollmux.model.resolve (and the listed modules) resolves."""
    calls = deriving_calls()
    others = {m for m in calls if m not in ("rollmux.phasetimes", "rollmux.model.resolved")}
    assert others - set(DERIVES) == set(), "take a ResolvedJob (rollmux.model.resolve) instead"
    assert set(DERIVES) - others == set(), "a listed module no longer derives: drop it"
