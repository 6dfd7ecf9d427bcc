"""The worst-case search's domains: integer instances of one family, decoded from genomes.

See :mod:`rollmux.theorem1.worst_case` (the domain of each family) and
:mod:`rollmux.theorem1.exhaustive` (its enumeration).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rollmux.theorem1.boundary import FAMILIES, Instance, t_cycle_s, t_load_s, unsaturate

__all__ = ["Domain", "Genome", "canonical"]

# Node subsets a job may be pinned to, per pool, by family: code -> node ids.
_ONE: tuple[tuple[int, ...], ...] = ((0,),)
_PINS: dict[str, tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]] = {
    "a_one_rollout_one_train": (_ONE, _ONE),
    "b_shared_train": (((0,), (1,), (2,)), _ONE),
    "c_crossing": (((0,), (1,), (0, 1)), ((0,), (1,), (0, 1))),
    "d_cost_weighted": (_ONE, _ONE),
    "e_saturated": (((0,), (1,)), _ONE),
}
_SATURATED = frozenset({"e_saturated"})


# --------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Genome:
    """One point of a domain: anchor, pin codes per job and pool, integer durations."""

    anchor: int
    rollout_codes: tuple[int, ...]
    train_codes: tuple[int, ...]
    values: tuple[int, ...]


@dataclass(frozen=True)
class Domain:
    """The integer instances of one family with ``n_jobs`` jobs and durations up to ``D``."""

    family: str
    n_jobs: int
    max_duration_s: int

    def __post_init__(self) -> None:
        """Validate the family, the job count and the duration range."""
        if self.family not in _PINS:
            raise ValueError(f"family {self.family!r}: expected one of {', '.join(FAMILIES)}")
        for name, value, low in (("n_jobs", self.n_jobs, 2), ("max_duration_s",
                                                              self.max_duration_s, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} = {value!r}: expected an int >= {low}")

    @property
    def saturated(self) -> bool:
        """Whether the family is the saturated one (``T_load > T_cycle``)."""
        return self.family in _SATURATED

    @property
    def n_codes(self) -> tuple[int, int]:
        """Number of pin choices per job in the rollout and the training pool."""
        r, t = _PINS[self.family]
        return len(r), len(t)

    def value_bounds(self) -> list[tuple[int, int]]:
        """Inclusive bounds of the integer durations a genome carries.

        Unsaturated: the other jobs' rollouts and trainings (``1..D``), then the anchor's
        extra rollout and training (``0..D``). Saturated: every rollout and training.
        """
        d = self.max_duration_s
        if self.saturated:
            return [(1, d)] * (2 * self.n_jobs)
        return [(1, d)] * (2 * (self.n_jobs - 1)) + [(0, d), (0, d)]

    def decode(self, genome: Genome) -> Instance | None:
        """The instance of ``genome``, or ``None`` when it lies outside the family."""
        r_pins_of, t_pins_of = _PINS[self.family]
        n = self.n_jobs
        r_pins = tuple(r_pins_of[c] for c in genome.rollout_codes)
        t_pins = tuple(t_pins_of[c] for c in genome.train_codes)
        if self.family == "c_crossing" and (
            {x for p in t_pins for x in p} != {0, 1} or not _connected(r_pins, t_pins)
        ):
            return None
        v = [float(x) for x in genome.values]
        if self.saturated:
            r, t = tuple(v[:n]), tuple(v[n:])
            if t_load_s(r, t, r_pins, t_pins) <= t_cycle_s(r, t):
                return None
            return Instance(r, t, r_pins, t_pins)
        others = [j for j in range(n) if j != genome.anchor]
        r_base = [1.0] * n
        t_base = [1.0] * n
        for i, j in enumerate(others):
            r_base[j] = v[i]
            t_base[j] = v[n - 1 + i]
        r, t = unsaturate(r_base, t_base, r_pins, t_pins, genome.anchor, v[-2], v[-1])
        return Instance(r, t, r_pins, t_pins)

    def genomes(self) -> Iterator[Genome]:
        """Every genome of the domain (the exhaustive enumeration)."""
        n = self.n_jobs
        n_r, n_t = self.n_codes
        anchors = [0] if self.saturated else list(range(n))
        ranges = [range(lo, hi + 1) for lo, hi in self.value_bounds()]
        for anchor in anchors:
            for r_codes in itertools.product(range(n_r), repeat=n):
                for t_codes in itertools.product(range(n_t), repeat=n):
                    for values in itertools.product(*ranges):
                        yield Genome(anchor, r_codes, t_codes, values)


def _connected(r_pins: Sequence[tuple[int, ...]], t_pins: Sequence[tuple[int, ...]]) -> bool:
    """Whether every job is linked to every other through shared nodes (one group, not two)."""
    n = len(r_pins)
    reached = {0}
    frontier = [0]
    while frontier:
        a = frontier.pop()
        for b in range(n):
            if b not in reached and (set(r_pins[a]) & set(r_pins[b])
                                     or set(t_pins[a]) & set(t_pins[b])):
                reached.add(b)
                frontier.append(b)
    return len(reached) == n


def canonical(instance: Instance) -> str:
    """The instance with each pool's nodes renumbered by first use (same ratio), compact."""

    def relabel(pins: Sequence[tuple[int, ...]]) -> tuple[tuple[int, ...], ...]:
        order: dict[int, int] = {}
        for p in pins:
            for x in p:
                order.setdefault(x, len(order))
        return tuple(tuple(sorted(order[x] for x in p)) for p in pins)

    return Instance(instance.rollout_s, instance.train_s, relabel(instance.rollout_node),
                    relabel(instance.train_node)).compact()
