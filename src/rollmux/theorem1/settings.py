"""What the Theorem 1 commands accept, without the machinery behind them.

The family names (:data:`FAMILIES`) and the worst-case search's budget (:class:`Budget`,
:data:`BUDGET_FLAGS`) live here, free of numpy and pandas, so that ``rollmux theorem1
--help`` and ``rollmux theorem1-worst-case --help`` answer at once;
:mod:`rollmux.theorem1.boundary` and :mod:`rollmux.theorem1.worst_case` re-export them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

#: The instance families of the boundary map and the worst-case search
#: (:mod:`rollmux.theorem1.boundary`, docs/theorem1.md).
FAMILIES: tuple[str, ...] = (
    "a_one_rollout_one_train",
    "b_shared_train",
    "c_crossing",
    "d_cost_weighted",
    "e_saturated",
)


@dataclass(frozen=True)
class Budget:
    """Search effort per cell and per instance (see :func:`search_cell`).

    Per cell: ``examples`` Hypothesis draws; differential evolution from the
    ``optimizer_starts`` best structures, ``optimizer_generations`` generations of
    ``optimizer_popsize`` x (number of durations) members each; a compass search of at
    most ``polish_evaluations`` instances. Per instance
    (:func:`rollmux.schedule.repeat.repeat_schedule`): multiplicities
    ``1..max_multiplicity``, at most ``max_vectors`` vectors searched beyond the proven
    bounds, ``local_evaluations`` periods per vector, exhaustive orders up to
    ``exact_limit`` states.
    """

    max_multiplicity: int = 3
    examples: int = 150
    optimizer_generations: int = 6
    optimizer_popsize: int = 3
    optimizer_starts: int = 3
    polish_evaluations: int = 96
    max_vectors: int | None = 12
    local_evaluations: int = 80
    exact_limit: int = 2_000
    exhaustive_max_genomes: int = 1_500_000

    def __post_init__(self) -> None:
        """Validate every count (ValueError names the field)."""
        for name in ("max_multiplicity", "examples", "optimizer_popsize", "optimizer_starts",
                     "local_evaluations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} = {value!r}: expected an int >= 1")
        for name in ("optimizer_generations", "polish_evaluations", "exact_limit",
                     "exhaustive_max_genomes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} = {value!r}: expected an int >= 0")
        if self.max_vectors is not None and (
            isinstance(self.max_vectors, bool) or not isinstance(self.max_vectors, int)
            or self.max_vectors < 1
        ):
            raise ValueError(f"max_vectors = {self.max_vectors!r}: expected None or an int >= 1")

    @classmethod
    def from_settings(cls, settings: Mapping[str, object]) -> Budget:
        """The budget named by ``settings`` (e.g. a config section); other keys are ignored."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in settings.items() if k in names})  # type: ignore[arg-type]


# Command-line flags of the budget: (flag, Budget field, help).
BUDGET_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("--max-multiplicity", "max_multiplicity", "iterations per job and meta-iteration, 1..M"),
    ("--examples", "examples", "Hypothesis draws per cell"),
    ("--generations", "optimizer_generations", "optimiser generations"),
    ("--popsize", "optimizer_popsize", "optimiser population factor"),
    ("--starts", "optimizer_starts", "structures the optimiser starts from"),
    ("--polish", "polish_evaluations", "compass-search evaluations per cell"),
    ("--vectors", "max_vectors", "multiplicity vectors searched per instance"),
    ("--local-evaluations", "local_evaluations", "periods per vector in the order local search"),
    ("--exhaustive-max-genomes", "exhaustive_max_genomes",
     "enumerate a cell whose domain has at most this many genomes (0: never)"),
)
