"""The optimum over many jobs: set partitioning over the feasible groups, by MILP.

Columns are every job alone and every clique of the compatibility graph (rule P1) with
a feasible plan cheaper than its best split into smaller columns (rule P5), found by
the group search (:mod:`.search`); HiGHS picks the minimum-cost exact cover through
``highspy``. :class:`ColumnCache` keeps columns, periods and MILP
answers across calls on overlapping job sets (docs/optimum.md, sections 2 and 3a).
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rollmux.hardware import Hardware
from rollmux.jobs import RLJob
from rollmux.model import ResolvedJob
from rollmux.placement.optimum.budgets import NodeCounts, node_counts, solve_by_node_budgets
from rollmux.placement.optimum.certified import CertifyOptions, certified_partition
from rollmux.placement.optimum.periods import PeriodCache
from rollmux.placement.optimum.plans import (
    Context,
    GroupPlan,
    Orders,
    Partition,
    Space,
    check_group_size,
    check_orders,
    check_space,
    check_time_limit,
    context,
    resolved_jobs,
    solo_plan,
)
from rollmux.placement.optimum.search import (
    DeadlineError,
    Effort,
    EffortError,
    carried_least_cost,
    compatible,
    min_cost,
)

__all__ = [
    "DEFAULT_EXACT_EFFORT",
    "METHODS",
    "ColumnCache",
    "Method",
    "MilpAnswer",
    "cliques",
    "compatibility_graph",
    "optimal_partition",
    "solve_set_partitioning",
]

# "exact": every candidate group searched to the end; "certified": column generation
# with a proven lower bound (module certified); "auto": exact while its searches stay
# within ``exact_effort`` work units per call, else certified from what they found.
Method = Literal["exact", "certified", "auto"]
METHODS: tuple[str, ...] = ("exact", "certified", "auto")
# Work units (pinnings and orders tried) of one call's exact searches before "auto"
# switches to the certified method (a unit is about 0.1 ms of search on the 2-core VM).
DEFAULT_EXACT_EFFORT = 40_000

# (chosen column indices, HiGHS status text, proven optimal (within the asked gap), and,
# when a gap was asked, HiGHS's proven dual bound)
MilpAnswer = tuple[list[int], str, bool] | tuple[list[int], str, bool, float]
# (job count, each column's job indices, each column's cost)
MilpInput = tuple[int, tuple[tuple[int, ...], ...], tuple[float, ...]]


def compatibility_graph(data: Sequence[ResolvedJob]) -> list[int]:
    """Each job's compatible jobs as a bit mask (bit k of entry i: jobs i and k may share
    a group, :func:`rollmux.placement.optimum.search.compatible`)."""
    adj = [0] * len(data)
    for i, k in itertools.combinations(range(len(data)), 2):
        if compatible(data[i], data[k]):
            adj[i] |= 1 << k
            adj[k] |= 1 << i
    return adj


def cliques(adj: Sequence[int], n: int, max_size: int) -> list[list[tuple[int, ...]]]:
    """Cliques of the compatibility graph by size (index 0: size 1), each in lexicographic order."""
    levels: list[list[tuple[int, ...]]] = [[(i,) for i in range(n)]]
    while len(levels) < max_size:
        nxt = []
        for clique in levels[-1]:
            common = (1 << n) - 1
            for i in clique:
                common &= adj[i]
            for j in range(clique[-1] + 1, n):
                if common >> j & 1:
                    nxt.append((*clique, j))
        if not nxt:
            break
        levels.append(nxt)
    return levels


@dataclass
class _SetEntry:
    """What the search found for one job set: its column cost (None: no column) and plans.

    Plans are kept by the job order they were searched in (``GroupPlan.job_ids``), since
    the first feasible pinning found depends on that order.
    """

    cost: float | None
    plans: dict[tuple[str, ...], GroupPlan]


class ColumnCache:
    """Columns of :func:`optimal_partition` kept across calls on overlapping job sets.

    Whether a set of jobs is a column, and its least cost, depend only on the set (its
    jobs' specs), the hardware, ``orders`` and ``space``: a set is a column when it has a
    feasible plan cheaper than its best split into smaller columns, and the smaller
    columns are themselves properties of sets (docs/optimum.md, sec. 3a). A policy that
    re-solves the optimum at every decision can therefore keep one cache: after an
    arrival only the sets containing the new job are searched. Jobs are identified by
    their :class:`RLJob` values (a resubmitted job with other fields is another job), and
    sets with a job absent from a call's job list are dropped at that call.

    The cache also keeps the exact periods of every (sub)problem the searches met
    (:class:`PeriodCache`, keyed by durations and pinning) and the answers of the last
    MILPs (keyed by the whole MILP input), both pure functions of their keys.
    """

    # MILP answers kept (a periodic re-solve with no arrival or departure in between
    # hands HiGHS the same input again).
    MILP_ENTRIES = 8

    def __init__(self) -> None:
        """An empty cache; it binds to the first call's hardware, orders and space."""
        self._config: tuple[Hardware, Orders, Space] | None = None
        self._uid: dict[RLJob, int] = {}  # each job value's serial number
        self._next_uid = 0
        self._sets: dict[frozenset[int], _SetEntry] = {}
        self._by_job: dict[int, list[frozenset[int]]] = {}
        self.job_data: dict[RLJob, ResolvedJob] = {}  # each job resolved (resolved_jobs)
        self.periods = PeriodCache()
        self._milp: dict[Any, MilpAnswer] = {}
        # What the certified method proved about job sets (a lower bound, the plan once
        # exact), keyed like the sets; properties of the sets alone.
        self.certified: dict[frozenset[int], Any] = {}
        # The last plan found for each set of job ids (whatever the jobs' values then): a
        # candidate proof of the set's least cost once a job's profile drifted
        # (search.carried_least_cost; docs/optimum.md, section 3d). Keyed by job ids.
        self.carried: dict[frozenset[str], GroupPlan] = {}

    def __len__(self) -> int:
        """Number of job sets whose search result is kept."""
        return len(self._sets)

    def clear(self) -> None:
        """Forget everything (columns, job data, periods, MILP answers)."""
        self._uid.clear()
        self._sets.clear()
        self._by_job.clear()
        self.job_data.clear()
        self.periods.clear()
        self._milp.clear()
        self.certified.clear()
        self.carried.clear()

    def configure(self, hw: Hardware, orders: Orders, space: Space) -> None:
        """Bind to this configuration (compared by value); clear everything if it differs."""
        config = (hw, orders, space)
        if self._config != config:
            self._config = config
            self.clear()

    def bind(self, jobs: Sequence[RLJob]) -> list[int]:
        """The serial numbers of ``jobs``; drops every set holding a job not in ``jobs``."""
        uids = []
        for job in jobs:
            uid = self._uid.get(job)
            if uid is None:
                uid = self._uid[job] = self._next_uid
                self._next_uid += 1
            uids.append(uid)
        active = set(uids)
        for job, uid in [(job, uid) for job, uid in self._uid.items() if uid not in active]:
            for key in self._by_job.pop(uid, ()):
                self._sets.pop(key, None)
            self.job_data.pop(job, None)
            del self._uid[job]
        if self.certified and len(self._uid) < self._next_uid:
            live = frozenset(self._uid.values())
            self.certified = {k: v for k, v in self.certified.items() if k <= live}
        if self.carried:
            ids = frozenset(job.job_id for job in jobs)
            if any(not key <= ids for key in self.carried):
                self.carried = {k: v for k, v in self.carried.items() if k <= ids}
        return uids

    @property
    def entries(self) -> dict[frozenset[int], _SetEntry]:
        """Every kept search result by job set (serial numbers); read it, do not write."""
        return self._sets

    def get(self, key: frozenset[int]) -> _SetEntry | None:
        """The search result of a job set (serial numbers), if kept."""
        return self._sets.get(key)

    def put(self, key: frozenset[int], plan: GroupPlan | None) -> None:
        """Record a job set's search result (``plan`` None: not a column)."""
        self._sets[key] = _SetEntry(
            cost=None if plan is None else plan.cost_usd_per_h,
            plans={} if plan is None else {plan.job_ids: plan},
        )
        for uid in key:
            self._by_job.setdefault(uid, []).append(key)

    def put_cost(self, key: frozenset[int], cost: float) -> None:
        """Record a job set's proven least cost without a plan (a carried proof)."""
        self._sets[key] = _SetEntry(cost=cost, plans={})
        for uid in key:
            self._by_job.setdefault(uid, []).append(key)

    def milp_answer(self, key: Hashable, mip_gap: float = 0.0) -> MilpAnswer | None:
        """A kept answer of the MILP with exactly this input (and gap tolerance)."""
        return self._milp.get((key, mip_gap) if mip_gap else key)

    def keep_milp_answer(self, key: Hashable, answer: MilpAnswer, mip_gap: float = 0.0) -> None:
        """Keep the answer of a MILP solved without a time limit."""
        if len(self._milp) >= self.MILP_ENTRIES:
            self._milp.clear()
        self._milp[(key, mip_gap) if mip_gap else key] = answer


class _SplitTable:
    """Least cost of partitioning a job set (bit mask) into the columns found so far (P5)."""

    def __init__(self, column_cost: dict[int, float]) -> None:
        self.column_cost = column_cost
        self._best: dict[int, float] = {0: 0.0}

    def reset(self) -> None:
        """Forget the splits (new columns below the next size may lower them)."""
        self._best.clear()
        self._best[0] = 0.0

    def best(self, mask: int) -> float:
        """Optimal cost of partitioning ``mask`` into the known columns."""
        best = self._best.get(mask)
        if best is not None:
            return best
        column_cost = self.column_cost
        low = mask & -mask
        rest = mask ^ low
        best = column_cost.get(mask, math.inf)
        sub = rest
        while True:  # every block A holding the lowest job, A a proper subset
            block = low | sub
            cost = column_cost.get(block)
            if cost is not None and block != mask:
                # min() of floats is order-free: the same value as any other visit order.
                split = cost + self.best(mask ^ block)
                if split < best:
                    best = split
            if sub == 0:
                break
            sub = (sub - 1) & rest
        self._best[mask] = best
        return best


def optimal_partition(
    jobs: Sequence[RLJob],
    hw: Hardware,
    max_group_size: int = 5,
    time_limit_s: float | None = None,
    orders: Orders = "all",
    space: Space = "full",
    cache: ColumnCache | None = None,
    method: Method = "exact",
    exact_effort: int = DEFAULT_EXACT_EFFORT,
    certify: CertifyOptions | None = None,
    mip_gap: float = 0.0,
) -> Partition:
    """Minimum-cost partition of ``jobs`` into feasible groups, by set-partitioning MILP.

    Columns: every job alone, and every compatible set of 2..``max_group_size`` jobs with
    a feasible plan cheaper than its best split into smaller sets. ``time_limit_s`` bounds
    the whole call; when it runs out the result is feasible but ``solver`` says it is not
    proven optimal (and ``proven_optimal`` is False). Groups are ordered by their first
    job's position in ``jobs``. ``cache`` keeps the columns for later calls on
    overlapping job sets; with ``method="exact"`` results are the same with or without it.

    ``method``: ``"exact"`` searches every candidate group; ``"certified"`` uses column
    generation (:mod:`.certified`, options ``certify``) and returns a partition with a
    proven lower bound (``Partition.lower_bound_usd_per_h``, ``Partition.gap``);
    ``"auto"`` is exact while one call's searches stay within ``exact_effort`` work
    units, and certified otherwise (docs/optimum.md, section 6). ``mip_gap`` > 0 lets the
    exact method's MILP stop at that proven relative gap (HiGHS's ``mip_rel_gap``); the
    partition then carries HiGHS's dual bound as its lower bound.
    """
    start = time.perf_counter()
    max_group_size = check_group_size(max_group_size)
    deadline = start + check_time_limit(time_limit_s)
    all_orders = check_orders(orders)
    full_space = check_space(space)
    ctx = context(hw)
    if cache is not None and not isinstance(cache, ColumnCache):
        raise ValueError(f"cache = {cache!r}: expected a ColumnCache or None")
    if method not in METHODS:
        raise ValueError(f"method = {method!r}: expected one of {', '.join(METHODS)}")
    budget = Effort(exact_effort) if method == "auto" else None
    if isinstance(mip_gap, bool) or not isinstance(mip_gap, int | float) or not (
        0.0 <= mip_gap < 1.0
    ):
        raise ValueError(f"mip_gap = {mip_gap!r}: expected a number in [0, 1)")
    certify = CertifyOptions() if certify is None else certify
    if cache is not None:
        cache.configure(hw, orders, space)
    data = resolved_jobs(jobs, ctx, None if cache is None else cache.job_data)
    uids = [] if cache is None else cache.bind([d.job for d in data])
    n = len(data)
    adj = compatibility_graph(data)
    column_cost: dict[int, float] = {}
    columns: list[tuple[tuple[int, ...], GroupPlan | None]] = []
    for i, d in enumerate(data):
        solo = solo_plan(d, ctx)
        column_cost[1 << i] = solo.cost_usd_per_h
        columns.append(((i,), solo))
    splits = _SplitTable(column_cost)
    # Sets of one size reuse the periods of their subsets (and, with a cache, of
    # earlier calls: the periods are functions of their keys).
    periods = PeriodCache() if cache is None else cache.periods
    timed_out = False
    searched = 0
    # Most sets of a re-solve were searched by an earlier call: their lookup is the hot
    # path (about 100,000 per production replay), hence C-level maps over local tables.
    bit = [1 << i for i in range(n)].__getitem__
    uid_of = uids.__getitem__
    job_id_of = [d.job.job_id for d in data].__getitem__
    cached = {} if cache is None else cache.entries
    levels = cliques(adj, n, max_group_size)
    outcome: dict[tuple[int, ...], GroupPlan | None] = {}  # this call's searches
    fallback = method == "certified"
    for level in levels[1:] if not fallback else ():
        splits.reset()
        for subset in level:
            mask = sum(map(bit, subset))
            key = None
            if cache is not None:
                key = frozenset(map(uid_of, subset))
                entry = cached.get(key)
                if entry is not None:
                    if entry.cost is not None:
                        column_cost[mask] = entry.cost
                        columns.append((subset, entry.plans.get(tuple(map(job_id_of, subset)))))
                    continue
            if time.perf_counter() > deadline:
                timed_out = True
                break
            upper = splits.best(mask)  # no column for ``mask`` yet: its best split
            # P8: every plan of the set costs at least each proper subset's optimum (the
            # largest is a subset one job short). Not in space "rollmux": a subset's
            # induced plan may hold more training nodes than that space allows it.
            floor = max(splits.best(mask ^ (1 << i)) for i in subset) if full_space else 0.0
            members = [data[i] for i in subset]
            hint = None if cache is None or not all_orders else cache.carried.get(
                frozenset(map(job_id_of, subset)))
            if hint is not None and key is not None and cache is not None:
                # A job's profile changed since this set's last search (drift): its
                # earlier plan may prove the least cost without a search (section 3d).
                proven = carried_least_cost(members, ctx, hint, upper, full_space, periods,
                                            floor)
                if proven is not None:
                    cache.put_cost(key, proven)
                    column_cost[mask] = proven
                    columns.append((subset, None))
                    continue
            try:
                found = min_cost(
                    members, ctx, upper, True, all_orders, full_space, periods, deadline, floor,
                    budget,
                )
            except DeadlineError:
                timed_out = True
                break
            except EffortError:
                fallback = True
                break
            searched += 1
            outcome[subset] = found
            if cache is not None and key is not None:
                cache.put(key, found)
                if found is not None:
                    cache.carried[frozenset(found.job_ids)] = found
            if found is not None:
                column_cost[mask] = found.cost_usd_per_h
                columns.append((subset, found))
        if timed_out or fallback:
            break
    if fallback and not timed_out:
        candidates = [subset for level in levels[1:] for subset in level]
        known: dict[tuple[int, ...], GroupPlan] = {}
        dominated: set[tuple[int, ...]] = set()
        for subset in candidates:
            if subset in outcome:
                plan = outcome[subset]
            elif cache is not None and (entry := cached.get(frozenset(map(uid_of, subset)))):
                plan = None if entry.cost is None else entry.plans.get(
                    tuple(map(job_id_of, subset)), next(iter(entry.plans.values()), None))
                if entry.cost is not None and plan is None:
                    continue
            else:
                continue
            if plan is None:
                dominated.add(subset)  # no plan cheaper than its split (rule P5)
            else:
                known[subset] = plan
        return certified_partition(
            data, ctx, candidates, known, dominated, all_orders=all_orders,
            full_space=full_space, periods=periods, deadline=deadline, options=certify,
            cache=cache, uids=uids, start=start, searched_before=searched,
            solve=solve_set_partitioning,
        )
    costs = [column_cost[sum(1 << i for i in subset)] for subset, _ in columns]
    milp_input: MilpInput = (n, tuple(subset for subset, _ in columns), tuple(costs))
    nodes = _node_counts(data, ctx, milp_input)
    # The answer depends on the columns' classes too (the node-budget proof runs per class).
    milp_key = milp_input if nodes is None else (milp_input, nodes)
    answer = None if cache is None else cache.milp_answer(milp_key, mip_gap)
    if answer is None:
        # In the full space a cover is as good as a partition (rule P8, see
        # solve_set_partitioning), and HiGHS proves a covering optimum faster.
        if mip_gap:
            answer = solve_set_partitioning(
                *milp_input, deadline, cover=full_space, mip_gap=mip_gap
            )
        else:  # the call the tests' stand-ins take
            answer = solve_set_partitioning(
                *milp_input, deadline, cover=full_space, nodes=nodes
            )
        if cache is not None and not math.isfinite(deadline):
            cache.keep_milp_answer(milp_key, answer, mip_gap)
    chosen, status, solved, *dual = answer
    if timed_out:
        status += "; column enumeration hit the time limit: not proven optimal"
    groups: list[tuple[int, GroupPlan]] = []  # (first job's position, plan)
    covered = 0
    for c in sorted(chosen, key=lambda c: columns[c][0]):
        subset, kept = columns[c]
        # A job covered twice stays in the first of its groups (in column order).
        rest = tuple(i for i in subset if not covered >> i & 1)
        if not rest:
            continue
        covered |= sum(1 << i for i in rest)
        if rest != subset:
            # P8: the rest has a one-group plan no dearer than the column it came from
            # (the cover's cost is the optimum, so the partition's is too).
            kept = min_cost(
                [data[i] for i in rest], ctx, costs[c] * (1.0 + 1e-6), True, all_orders,
                full_space, periods,
            )
            if kept is None:
                raise RuntimeError(f"jobs {rest}: no plan within {costs[c]} (rule P8)")
        elif kept is None:
            members = [data[i] for i in subset]
            kept = _research(cache, uids, members, subset, costs[c], ctx, all_orders, full_space)
        groups.append((rest[0], kept))
    # A reduced group's first job may come after the next column's (its own was covered).
    plans = tuple(plan for _, plan in sorted(groups, key=lambda g: g[0]))
    total = sum(g.cost_usd_per_h for g in plans)
    lower = None
    if dual and solved and not timed_out:
        # Every column enumerated: HiGHS's dual bound bounds the whole problem (a cover's
        # optimum is the partition's, rule P8).
        lower = min(float(dual[0]), total)
        if total - lower <= 1e-9 * max(1.0, total):
            lower = None  # proven optimal
    return Partition(
        groups=plans,
        cost_usd_per_h=total,
        solver=status,
        seconds=time.perf_counter() - start,
        n_columns=len(columns),
        proven_optimal=solved and not timed_out and lower is None,
        n_searched=searched,
        lower_bound_usd_per_h=lower,
    )


def _node_counts(
    data: Sequence[ResolvedJob], ctx: Context, milp_input: MilpInput
) -> NodeCounts | None:
    """Each column's cost as node counts times its GPU types' node prices (:mod:`.budgets`).

    A column's jobs share their GPU types (rule P1), so its first job's types give them.
    """
    classes: dict[tuple[str, str], int] = {}
    kinds = []
    for subset in milp_input[1]:
        job = data[subset[0]].job
        kinds.append(classes.setdefault((job.rollout_gpu_type, job.train_gpu_type), len(classes)))
    prices = [(ctx.node_price(r), ctx.node_price(t)) for r, t in classes]
    return node_counts(milp_input[2], kinds, prices)


def _research(
    cache: ColumnCache | None,
    uids: Sequence[int],
    members: Sequence[ResolvedJob],
    subset: tuple[int, ...],
    cost: float,
    ctx: Context,
    all_orders: bool,
    full_space: bool,
) -> GroupPlan:
    """The plan of a cached column searched in another job order, searched in this order.

    The first feasible plan depends on the job order; with the known cost as cap, the
    call's orders and space, and the cache's periods (functions of their keys) the search
    returns the same plan as without the cache.
    """
    assert cache is not None
    plan = min_cost(
        members, ctx, cost * (1.0 + 1e-6), True, all_orders, full_space, cache.periods
    )
    if plan is None or not math.isclose(plan.cost_usd_per_h, cost, rel_tol=1e-9):
        raise RuntimeError(f"column {plan!r}: cached cost {cost} not reproduced")
    entry = cache.get(frozenset([uids[i] for i in subset]))
    if entry is not None:
        entry.plans[plan.job_ids] = plan
    cache.carried[frozenset(plan.job_ids)] = plan
    return plan


# HiGHS's options for the set-partitioning MILP (docs/optimum.md, section 2): proven
# optimal (no 0.01 % default gap), one thread (the machine's cores go to parallel
# replays) and no restart after the root: measured fastest on the MILPs of the
# production replays, where a restart redoes presolve and the root for little gain.
# Presolve stays on (off, HiGHS once returned a non-optimal partition as optimal).
HIGHS_OPTIONS: dict[str, bool | int | float] = {
    "output_flag": False,
    "threads": 1,
    "mip_allow_restart": False,
    "mip_rel_gap": 0.0,
}
# HiGHS's model status -> (scipy.optimize.milp's status code, its message head): the
# status text keeps the form it had when HiGHS was called through scipy.
_SCIPY_STATUS = {
    "kOptimal": (0, "Optimization terminated successfully. "),
    "kTimeLimit": (1, "Time limit reached. "),
    "kIterationLimit": (1, "Iteration limit reached. "),
    "kSolutionLimit": (1, "Solution limit reached. "),
    "kInterrupt": (1, "Interrupted. "),
    "kInfeasible": (2, "The problem is infeasible. "),
    "kModelError": (2, ""),
    "kUnbounded": (3, "The problem is unbounded. "),
    "kUnboundedOrInfeasible": (4, "The problem is unbounded or infeasible. "),
}


#: Whether this process has made its first HiGHS instance (:func:`_quiet_first_highs`).
_HIGHS_STARTED = False


def _quiet_first_highs() -> None:
    """Make the process's first HiGHS instance with file descriptor 1 on the null device.

    HiGHS writes its banner to the C-level standard output when the process's first
    instance is made (later ones print nothing), so replays print nothing of HiGHS's.
    Does nothing after the first call.
    """
    global _HIGHS_STARTED
    if _HIGHS_STARTED:
        return
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        highspy.Highs()
        _HIGHS_STARTED = True
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _new_highs() -> Any:
    """A HiGHS instance (``highspy``) with :data:`HIGHS_OPTIONS` set."""
    import highspy

    _quiet_first_highs()
    highs = highspy.Highs()
    for name, value in HIGHS_OPTIONS.items():
        highs.setOptionValue(name, value)
    return highs


def _status_text(model_status: Any, text: str) -> str:
    """The status text of a solve, in the form scipy's ``milp`` gave it."""
    code, head = _SCIPY_STATUS.get(model_status.name, (4, ""))
    return f"highs-milp status {code}: {head}(HiGHS Status {int(model_status)}: {text})"


def solve_set_partitioning(
    n: int,
    subsets: Sequence[tuple[int, ...]],
    costs: Sequence[float],
    deadline: float,
    cover: bool = False,
    mip_gap: float = 0.0,
    nodes: NodeCounts | None = None,
) -> MilpAnswer:
    """Solve min c.x, A x = 1, x binary with HiGHS (A x >= 1 with ``cover``).

    Returns the chosen column indices, the status text and whether HiGHS proved the solution
    optimal (with ``mip_gap`` > 0: within that relative gap, and then also HiGHS's dual
    bound as a fourth item). ``cover`` is for costs that never rise when a job leaves a set
    (rule P8 of the full search space): then every cover turns into a partition of no
    greater cost by dropping each job's repeats, so the least cover costs what the least
    partition does, and HiGHS proves it faster (its presolve drops columns dominated in a
    covering problem; docs/optimum.md, section 2). The caller makes the partition.

    ``nodes`` (each column's cost as node counts times prices, :mod:`.budgets`): with
    ``mip_gap`` 0 the optimum is proven through node budgets, a few LPs and small MILPs,
    instead of HiGHS's branch-and-bound over the LP gap (docs/optimum.md, section 2); the
    plain MILP when that enumeration does not apply or gives up.

    HiGHS runs through ``highspy`` with :data:`HIGHS_OPTIONS` (one thread, no restart);
    it is deterministic, so equal inputs give equal answers.
    """
    import highspy

    if nodes is not None and not mip_gap:
        found = solve_by_node_budgets(n, subsets, nodes, deadline, cover, _new_highs)
        if found is not None:
            chosen, (model_status, text), _ = found
            return chosen, _status_text(model_status, text), True
    highs = _new_highs()
    highs.setOptionValue("mip_rel_gap", float(mip_gap))
    left = deadline - time.perf_counter()
    if math.isfinite(left):
        highs.setOptionValue("time_limit", max(left, 1.0))  # the columns are in: let HiGHS finish
    m = len(subsets)
    lp = highspy.HighsLp()
    lp.num_col_ = m
    lp.num_row_ = n
    lp.col_cost_ = np.asarray(costs, dtype=np.float64)
    lp.col_lower_ = np.zeros(m)
    lp.col_upper_ = np.ones(m)
    lp.row_lower_ = np.ones(n)
    lp.row_upper_ = np.full(n, highspy.kHighsInf if cover else 1.0)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.cumsum([0, *map(len, subsets)], dtype=np.int32)
    lp.a_matrix_.index_ = np.fromiter(
        itertools.chain.from_iterable(subsets), dtype=np.int32, count=int(lp.a_matrix_.start_[-1])
    )
    lp.a_matrix_.value_ = np.ones(len(lp.a_matrix_.index_))
    lp.integrality_ = [highspy.HighsVarType.kInteger] * m
    highs.passModel(lp)
    highs.run()
    model_status = highs.getModelStatus()
    code = _SCIPY_STATUS.get(model_status.name, (4, ""))[0]
    status = _status_text(model_status, highs.modelStatusToString(model_status))
    info = highs.getInfo()
    if info.primal_solution_status != highspy.SolutionStatus.kSolutionStatusFeasible:
        # Every job alone is always feasible; fall back to it when the solver found nothing.
        return (
            [c for c, subset in enumerate(subsets) if len(subset) == 1],
            status + "; fell back to every job alone",
            False,
        )
    x = np.asarray(highs.getSolution().col_value)
    chosen = [int(c) for c in np.flatnonzero(x > 0.5)]
    if mip_gap:
        bound = float(info.mip_dual_bound)
        if not math.isfinite(bound):
            bound = float(info.objective_function_value) * (1.0 - mip_gap)  # the gap's promise
        return chosen, status, code == 0, bound
    return chosen, status, code == 0
