"""Seed batches: every seed of one replay setting replayed in one process.

A replay job of the pipeline (rule ``sim_replay``, ``workflow/rules/simulate.smk``) is a
fresh Python process that spends about 1 s of CPU importing numpy, scipy, pandas and
rollmux before its replay starts (benchmarks/RESULTS-startup.md); most replays of the
sweeps cost about as much again. A *setting* is a replay folder without its last segment,
``<trace=...>/.../policy=<name>`` (everything between ``results/sim/`` and ``/seed=``);
when the pipeline asks for one setting at several seeds, the rule ``sim_replay_seeds``
(``workflow/rules/sim_batch.smk``) replays them one after another in one process, into
the same folders, with the same bytes, as one ``sim_replay`` job per seed would.

Which settings (:func:`seed_batches`): those requested at more than one seed whose
replays are cheap (:func:`batchable_policy`: the policy solves no optimisation problem),
without a kill list (the failure replay keeps a per-phase table: rule
``sim_replay_phases``). An expensive replay (the exact optimum, hourly regrouping: 5 s to
several minutes each) keeps a job per seed, so that its seeds still run in parallel.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from rollmux.sim.replay import path_keys
from rollmux.sim.sweeps import trace_file

__all__ = [
    "REPLAY_FILES",
    "SOLVER_OPTIONS",
    "batch_inputs",
    "batch_resources",
    "batch_rule_name",
    "batchable_policy",
    "group_by_seeds",
    "seed_batches",
    "seed_folder",
    "setting_pattern",
]

#: The files of a replay folder the batch rule declares for each seed (those of rule
#: ``sim_replay``: no ``phases.csv``, which only the failure replay keeps).
REPLAY_FILES = ("summary.json", "timeseries.csv", "jobs.csv", "events.csv", "config.json")

#: Options by which a policy declares that it solves an optimisation problem at its
#: decisions (a solver's time budget or stopping gap: ``optimal`` and ``regroup`` take
#: both). Such a replay costs from seconds to minutes (``optimal`` 2-390 s, ``regroup``
#: under drift on the whole production trace 45-210 s CPU; benchmarks/RESULTS.md), so its
#: seeds are not batched: one process would run them one after another on one core.
SOLVER_OPTIONS = frozenset({"time_limit_s", "mip_gap"})


def batchable_policy(policy: str) -> bool:
    """Whether replays of ``policy`` may share a process across seeds: a registered policy
    declaring none of :data:`SOLVER_OPTIONS` (the heuristics decide in milliseconds;
    their replays cost 0.3-9 s CPU each on the shipped traces). False for an unknown name."""
    from rollmux.placement import policy_options

    try:
        return not (SOLVER_OPTIONS & policy_options(policy))
    except ValueError:
        return False


def _replay_file(path: str, root: str) -> tuple[str, int] | None:
    """``(setting, seed)`` of a replay folder's file ``<root>/<setting>/seed=<s>/<file>``
    that the batch rule can write (one of :data:`REPLAY_FILES`), else None."""
    parts = PurePosixPath(path).parts
    base = PurePosixPath(root).parts
    if len(parts) < len(base) + 3 or parts[:len(base)] != base:
        return None
    name, folder = parts[-1], parts[-2]
    if name not in REPLAY_FILES or not re.fullmatch(r"seed=\d+", folder):
        return None
    setting = "/".join(parts[len(base):-2])
    try:
        keys = path_keys(f"{setting}/{folder}")
    except ValueError:
        return None
    if "policy" not in keys or "trace" not in keys or "failures" in keys \
            or list(keys)[-2:] != ["policy", "seed"]:
        return None
    return setting, int(keys["seed"])


def seed_batches(files: Iterable[str | Path], root: str = "results/sim",
                 ) -> dict[str, tuple[int, ...]]:
    """The settings to replay in one process each, with their seeds (sorted).

    ``files`` are the files a workflow asks for (any: those that are not files of a
    replay folder under ``root`` are ignored). A setting is batched when its files are
    asked for at more than one seed, its policy is :func:`batchable_policy` and it has no
    ``failures=`` segment; its seeds are exactly the seeds asked for, so the batch writes
    no replay nobody asked for.
    """
    seeds: dict[str, set[int]] = {}
    for path in files:
        hit = _replay_file(str(path), root)
        if hit is not None:
            seeds.setdefault(hit[0], set()).add(hit[1])
    return {setting: tuple(sorted(found)) for setting, found in sorted(seeds.items())
            if len(found) > 1 and batchable_policy(path_keys(setting)["policy"])}


def setting_pattern(settings: Iterable[str]) -> str:
    """A regex matching exactly the given settings (the batch rule's wildcard constraint)."""
    names = sorted(set(settings))
    if not names:
        raise ValueError("no settings to match")
    return "|".join(re.escape(name) for name in names)


def batch_inputs(setting: str) -> dict[str, str]:
    """The files a setting's replays read: its trace (:func:`rollmux.sim.sweeps.trace_file`)."""
    return {"trace": trace_file(path_keys(setting)["trace"])}


def seed_folder(setting: str, seed: int, root: str = "results/sim") -> str:
    """The replay folder of ``setting`` at ``seed``: ``<root>/<setting>/seed=<seed>``."""
    return f"{root}/{setting}/seed={int(seed)}"


def group_by_seeds(batches: Mapping[str, tuple[int, ...]]
                   ) -> dict[tuple[int, ...], tuple[str, ...]]:
    """The batched settings grouped by their seed lists (one batch rule per list)."""
    out: dict[tuple[int, ...], list[str]] = {}
    for setting, seeds in sorted(batches.items()):
        out.setdefault(seeds, []).append(setting)
    return {seeds: tuple(names) for seeds, names in sorted(out.items())}


def batch_rule_name(seeds: Sequence[int], default_seeds: Sequence[int]) -> str:
    """The batch rule of a seed list: ``sim_replay_seeds`` for the config's ``seeds``,
    else ``sim_replay_seeds_<s1>_<s2>...``."""
    if [int(s) for s in seeds] == [int(s) for s in default_seeds]:
        return "sim_replay_seeds"
    return "sim_replay_seeds_" + "_".join(str(int(s)) for s in seeds)


#: SLURM sizes of one replay of a batchable policy (workflow/profiles/slurm: a
#: ``sim_replay`` job of these policies gets 30 min and 3 GB).
REPLAY_RUNTIME_MIN = 30
REPLAY_MEM_MB = 3000


def batch_resources(n_seeds: int) -> dict[str, Callable[..., int]]:
    """A batch job's ``runtime`` (minutes: a replay's times the seeds) and ``mem_mb`` (a
    replay's: the seeds run one after another, the memos are bounded), both times the
    attempt (a retried job gets more), as Snakemake resource callables."""
    if n_seeds < 1:
        raise ValueError(f"a batch needs at least one seed, got {n_seeds}")

    def runtime(wildcards: object, attempt: int) -> int:
        return REPLAY_RUNTIME_MIN * n_seeds * attempt

    def mem_mb(wildcards: object, attempt: int) -> int:
        return REPLAY_MEM_MB * attempt

    return {"runtime": runtime, "mem_mb": mem_mb}
