"""Theorem 1's numbers in the docs, rendered from the results files (never typed by hand).

``scripts/readme_results.py`` writes each block between ``<!-- results:NAME -->`` and
``<!-- /results:NAME -->`` in docs/theorem1.md and docs/findings.md from these
renderers, so the two docs quote the same files and cannot disagree
(tests/test_readme_results.py checks them whenever the files exist).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["FILES", "MissingResults", "findings_block", "findings_repeat_block",
           "readings_block", "repeat_block",
           "slo_optimum_block", "supremum_block", "worst_case_block"]

#: The results files the blocks read, relative to the repository root.
FILES = {
    "worst_case": Path("results") / "theorem1" / "worst_case.csv",
    "supremum": Path("results") / "theorem1" / "supremum.csv",
    "readings": Path("results") / "theorem1" / "readings.csv",
    "slo_optimum": Path("results") / "theorem1" / "slo_optimum.csv",
    "slo_optimum_summary": Path("results") / "theorem1" / "slo_optimum_summary.csv",
    "repeat": Path("results") / "beyond" / "repeat.csv",
    "summary": Path("results") / "theorem1" / "summary.csv",
}


class MissingResults(ValueError):
    """A results file a block reads is not there (the pipeline has not made it yet)."""


def _num(value: object, scale: float = 1.0, digits: int = 3, suffix: str = "") -> str:
    """``value`` formatted, or ``-`` when it is empty or not a number."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "-"
    if x != x:
        return "-"
    return f"{x * scale:.{digits}f}{suffix}"


def _read(root: Path, name: str) -> pd.DataFrame:
    """One results table; :class:`MissingResults` naming the file when it is missing."""
    path = root / FILES[name]
    if not path.is_file():
        raise MissingResults(f"{path}: missing; run the pipeline first")
    return pd.read_csv(path, keep_default_na=False)


def _family(name: str) -> str:
    """``b_shared_train`` -> ``(b)``."""
    return f"({name.split('_', 1)[0]})"


def _sup(table: pd.DataFrame, family: str, objective: str, n: int) -> str:
    """The proven supremum of a cell as text, or an empty string."""
    rows = table[(table["family"] == family) & (table["objective"] == objective)
                 & (table["n_jobs"] == n) & (table["supremum"] != "")]
    return f"{float(rows.iloc[0]['supremum']):.3f}" if len(rows) else ""


def worst_case_block(root: Path) -> str:
    """The worst-case table: per cell the ratio under cap M, its method, the supremum."""
    table = _read(root, "worst_case")
    supremum = _read(root, "supremum")
    sizes = sorted(int(n) for n in table["n_jobs"].unique())
    caps = sorted(int(m) for m in table["max_multiplicity"].unique())
    d = sorted(int(x) for x in table["max_duration_s"].unique())
    head = ("| family | objective | M | " + " | ".join(f"{n} jobs" for n in sizes)
            + " | any m, 1 + 1 (proven) | worst instance found (multiplicities) |")
    lines = [
        f"Ratio best schedule / round-robin with multiplicities `1..M` (M = "
        f"{', '.join(map(str, caps))}), durations `1..{', '.join(map(str, d))}` "
        f"(`{FILES['worst_case']}`): **bold** = exhaustive enumeration of the whole "
        "domain (the true maximum), plain = adversarial search (a lower bound), with the "
        "bound on that instance's ratio under the same cap where it is higher "
        "(`instance_bound_ratio`); last numeric column: the supremum over all "
        f"multiplicities on one rollout and one training node (`{FILES['supremum']}`, "
        "largest group size shown; per size in the supremum table below).",
        "",
        head,
        "|" + "---|" * (len(sizes) + 5),
    ]
    keys = table[["family", "objective"]].drop_duplicates().itertuples(index=False)
    for family, objective in keys:
        part = table[(table["family"] == family) & (table["objective"] == objective)]
        cells = []
        for n in sizes:
            row = part[part["n_jobs"] == n]
            if not len(row):
                cells.append("")
                continue
            r = row.iloc[0]
            text = f"{float(r['ratio']):.3f}"
            if r["method"] == "exhaustive":
                text = f"**{text}**"
            elif float(r["instance_bound_ratio"]) > float(r["ratio"]) * (1 + 1e-9):
                text += f" (<= {float(r['instance_bound_ratio']):.3f})"
            cells.append(text)
        worst = part.loc[part["ratio"].astype(float).idxmax()]
        sup = [_sup(supremum, family, objective, n) for n in sizes]
        sup_text = next((s for s in reversed(sup) if s), "")
        if sup_text:
            sup_text = ", ".join(f"{n}: {s}" for n, s in zip(sizes, sup, strict=True) if s)
        lines.append(
            f"| {_family(family)} | {objective.replace('_', '-')} | "
            f"{int(part['max_multiplicity'].iloc[0])} | " + " | ".join(cells)
            + f" | {sup_text} | `{worst['instance']}` (m = {worst['best_multiplicity']}) |")
    return "\n".join(lines) + "\n"


def supremum_block(root: Path) -> str:
    """The 1 + 1 supremum per size and the ping-pong schedules approaching it."""
    table = _read(root, "supremum")
    lines = ["| family | objective | jobs | supremum, any m | status | witness | "
             "ping-pong ratio at k = ... |", "|---|---|---|---|---|---|---|"]
    for (family, objective, n), part in table.groupby(["family", "objective", "n_jobs"],
                                                      sort=True):
        first = part.iloc[0]
        sup = f"{float(first['supremum']):.4f}" if first["supremum"] != "" else "-"
        pp = ", ".join(f"{int(r['k'])}: {float(r['ratio']):.3f}"
                       for _, r in part.iterrows() if r["k"] != "")
        witness = f"`{first['instance']}`" if first["instance"] else "-"
        lines.append(f"| {_family(family)} | {objective.replace('_', '-')} | {n} | {sup} | "
                     f"{first['status']} | {witness} | {pp or '-'} |")
    return "\n".join(lines) + "\n"


def readings_block(root: Path) -> str:
    """Each counterexample under every reading: round-robin -> best schedule."""
    table = _read(root, "readings")
    lines = ["| counterexample | found under | M | m | U_R | U_T | aggregate | cost-weighted "
             "| refutes | best both-pools ratio (m) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        def pair(name: str, r: pd.Series = r) -> str:
            return f"{float(r['rr_' + name]):.3f} -> {float(r['best_' + name]):.3f}"

        refuted = [label for key, label in (("aggregate", "sum"), ("cost_weighted", "cost"),
                                            ("rollout", "U_R"), ("train", "U_T"))
                   if str(r[f"refutes_{key}"]) == "True"]
        both = float(r["both_pools_ratio"])
        lines.append(
            f"| {r['name']}: `{r['instance']}` | {r['objective'].replace('_', '-')} | "
            f"{r['max_multiplicity']} | {r['best_multiplicity']} | {pair('util_rollout')} | "
            f"{pair('util_train')} | {pair('aggregate')} | {pair('cost_weighted')} | "
            f"{', '.join(refuted) or 'none'} | {both:.3f} ({r['both_pools_multiplicity']}) |")
    return "\n".join(lines) + "\n"


def findings_block(root: Path) -> str:
    """docs/findings.md §1's numbers: the worst cases, the supremum, the readings."""
    table = _read(root, "worst_case")
    supremum = _read(root, "supremum")
    readings = _read(root, "readings")

    def cell(family: str, objective: str, n: int) -> pd.Series:
        rows = table[(table["family"] == family) & (table["objective"] == objective)
                     & (table["n_jobs"] == n)]
        if not len(rows):
            raise ValueError(f"{FILES['worst_case']}: no cell {family} {objective} n={n}")
        return rows.iloc[0]

    m = int(table["max_multiplicity"].iloc[0])
    a3 = cell("a_one_rollout_one_train", "aggregate", 3)
    b_agg = cell("b_shared_train", "aggregate", 2)
    b_cost = cell("b_shared_train", "cost_weighted", 2)
    sup3 = _sup(supremum, "a_one_rollout_one_train", "aggregate", 3)
    first = readings.iloc[0]
    both = table[table["domain_both_pools_ratio"] != ""]
    both_max = both.loc[both["domain_both_pools_ratio"].astype(float).idxmax()]
    top = table.loc[table["ratio"].astype(float).idxmax()]
    return (
        f"* One rollout and one training node, 3 jobs (family a): with at most {m} "
        f"iterations per job the best schedule found beats round-robin by "
        f"{float(a3['ratio']):.3f}x (`{a3['instance']}`, m = {a3['best_multiplicity']}, "
        f"{a3['method']}); over all multiplicities the supremum is {sup3} (proven, "
        "docs/theorem1.md), approached by two unit jobs ping-ponging under an anchor job.\n"
        f"* Shared training (family b), 2 jobs, enumerated exhaustively: "
        f"{float(b_agg['ratio']):.3f}x in aggregate and {float(b_cost['ratio']):.3f}x in "
        f"cost-weighted utilisation at `{b_agg['instance']}` (m = "
        f"{b_agg['best_multiplicity']}). The largest ratio in the table: "
        f"{float(top['ratio']):.3f}x ({_family(str(top['family']))}, "
        f"{str(top['objective']).replace('_', '-')}, {int(top['n_jobs'])} jobs, "
        f"{top['method']}, M = {int(top['max_multiplicity'])}).\n"
        f"* Which reading is refuted: the documented counterexample `{first['instance']}` "
        f"raises the sum {float(first['rr_aggregate']):.3f} -> "
        f"{float(first['best_aggregate']):.3f} but lowers rollout utilisation "
        f"{float(first['rr_util_rollout']):.3f} -> {float(first['best_util_rollout']):.3f} "
        f"(M = {int(first['max_multiplicity'])}); on it no schedule beats round-robin on "
        f"both pools (best both-pools ratio {float(first['both_pools_ratio']):.3f}). With "
        f"several rollout nodes some do: {float(both_max['domain_both_pools_ratio']):.3f}x "
        f"on both pools at once at `{both_max['domain_both_pools_instance']}` "
        f"({_family(str(both_max['family']))}, 2 jobs, exhaustive), so even the "
        "each-pool reading of Theorem 1 fails.\n"
    )


def findings_boundary_block(root: Path) -> str:
    """docs/findings.md §1's boundary-map numbers: round-robin optimal in how many of the
    proof sketch's random groups, and its smallest counterexample with its cap M."""
    table = _read(root, "summary")
    rows = table[table["family"] == "a_one_rollout_one_train"]
    if not len(rows):
        raise ValueError(f"{FILES['summary']}: no row for family a_one_rollout_one_train")
    a = rows.iloc[0]
    n = int(a["n_instances"])
    optimal = round(float(a["rr_optimal_fraction"]) * n)
    text = (
        f"* In the proof sketch's own setting (family `a_one_rollout_one_train`: one rollout "
        f"node, one training node, unsaturated), {optimal} of {n} random groups are optimal "
        f"under round-robin (every schedule with up to {int(a['max_multiplicity'])} "
        "iterations per job for 2 jobs, 2 for 3 jobs, searched exhaustively)"
    )
    instance = str(a["min_counterexample"]) if pd.notna(a["min_counterexample"]) else ""
    if instance:
        text += (
            f" and the smallest counterexample is `{instance}`: with at most "
            f"{int(a['min_counterexample_max_multiplicity'])} iterations per job the best "
            f"schedule reaches {float(a['min_counterexample_util_ratio']):.5f}x "
            "round-robin's aggregate utilisation (with 3, below, more)."
        )
    else:
        text += "; none of them is a counterexample."
    return text + "\n"


def slo_optimum_block(root: Path) -> str:
    """rollmux-repeat's planner against the certified SLO-constrained optimum, per size."""
    summary = _read(root, "slo_optimum_summary")
    table = _read(root, "slo_optimum")
    lines = ["| jobs | groups | certified | round-robin meets every SLO | planner optimal | "
             "mean gap (95 % interval) | p95 gap | largest gap | optimum / round-robin |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        lines.append(
            f"| {int(r['n_jobs'])} | {int(r['groups'])} | {int(r['certified'])} | "
            f"{int(r['rr_feasible'])} | {_num(r['heuristic_optimal_share'], 100, 0, ' %')} | "
            f"{_num(r['gap_mean'], 100, 2, ' %')} ({_num(r['gap_mean_low'], 100, 2)}-"
            f"{_num(r['gap_mean_high'], 100, 2)}) | {_num(r['gap_p95'], 100, 2, ' %')} | "
            f"{_num(r['gap_max'], 100, 1, ' %')} | {_num(r['optimum_over_rr_mean'])} |")
    missed = table[table["heuristic_utilisation"].astype(str).isin(["", "nan"])]
    lines.append("")
    lines.append(f"In {len(missed)} of {len(table)} groups the planner found no schedule "
                 "meeting every SLO although one exists (gap 100 %).")
    return "\n".join(lines) + "\n"


def _mean_range(values: pd.Series, scale: float, digits: int) -> str:
    """``mean`` over seeds, with its 95 % Student-t interval ``[low, high]`` when there are
    several (the intervals of rollmux.experiments.intervals)."""
    v = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float) * scale
    if not len(v):
        return "-"
    text = f"{v.mean():,.{digits}f}"
    if len(v) > 1:
        from scipy import special  # Student's t quantile, as scipy.stats.t.ppf computes it

        half = float(special.stdtrit(len(v) - 1, 0.975) * v.std(ddof=1) / len(v) ** 0.5)
        low, high = f"{v.mean() - half:,.{digits}f}", f"{v.mean() + half:,.{digits}f}"
        if (low, high) != (text, text):  # an interval narrower than the digits shown
            text += f" [{low}, {high}]"
    return text


def _workloads(table: pd.DataFrame) -> pd.DataFrame:
    """The repeat table with its traces named by workload: a trace drawn again with seed
    s (``<name>-gen<s>[-first<n>]``, rollmux.sim.sweeps.generated_trace_name) counts as
    its shipped trace's seed s."""
    import re

    return table.assign(trace=[re.sub(r"-gen\d+", "", str(t)) for t in table["trace"]])


def repeat_block(root: Path) -> str:
    """rollmux-repeat (and its variants) against rollmux on results/beyond/repeat.csv."""
    table = _workloads(_read(root, "repeat"))
    lines = ["| trace | policy | seeds | cost (USD) | cost / rollmux's | SLO attainment: "
             "planned | paper reference | realised | iterations above SLO x T_solo | "
             "jobs with any | mean slowdown |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (trace, policy), part in table.groupby(["trace", "policy"], sort=True):
        base = table[(table["trace"] == trace) & (table["policy"] == "rollmux")]
        paired = part.merge(base[["seed", "total_cost_usd"]], on="seed",
                            suffixes=("", "_base"))
        ratio = pd.to_numeric(paired["total_cost_usd"], errors="coerce") / pd.to_numeric(
            paired["total_cost_usd_base"], errors="coerce")
        readings = []
        for c in ("slo_attainment_planned", "slo_attainment", "slo_attainment_realised"):
            text = _mean_range(part[c], 100.0, 1) if c in part else "-"
            readings.append(text if text == "-" else text + " %")
        tail = [_mean_range(part[c], 1.0, 1) if c in part else "-"
                for c in ("iterations_above_slo", "jobs_above_slo")]
        lines.append(f"| {trace} | {policy} | {part['seed'].nunique()} | "
                     f"{_mean_range(part['total_cost_usd'], 1.0, 0)} | "
                     f"{'-' if policy == 'rollmux' else _mean_range(ratio, 1.0, 3)} | "
                     + " | ".join(readings + tail)
                     + f" | {_mean_range(part['mean_slowdown'], 1.0, 3)} |")
    lines.append("")
    lines.append("Means over seeds with their 95 % Student-t intervals [low, high] where "
                 "the seeds differ at the digits shown (cost ratios paired by seed); '-': "
                 "not in the replays' files.")
    return "\n".join(lines) + "\n"


def findings_repeat_block(root: Path) -> str:
    """docs/findings.md §1's rollmux-repeat numbers: cost, the three readings, the tail."""
    table = _workloads(_read(root, "repeat"))
    lines = []
    for trace, part in table.groupby("trace", sort=True):
        base = part[part["policy"] == "rollmux"]
        if not len(base):
            continue
        seeds = base["seed"].nunique()

        def reading(policy_part: pd.DataFrame) -> str:
            texts = [_mean_range(policy_part[c], 100.0, 1) for c in (
                "slo_attainment_planned", "slo_attainment", "slo_attainment_realised")]
            tail = (f"{_mean_range(policy_part['iterations_above_slo'], 1.0, 1)} iterations "
                    f"above SLO x T_solo in {_mean_range(policy_part['jobs_above_slo'], 1.0, 1)}"
                    " jobs")
            return (f"planned {texts[0]} %, paper reference {texts[1]} %, realised "
                    f"{texts[2]} %; {tail}")

        parts = [f"rollmux: {reading(base)}"]
        for policy, cand in part.groupby("policy", sort=True):
            if policy == "rollmux":
                continue
            paired = cand.merge(base[["seed", "total_cost_usd"]], on="seed",
                                suffixes=("", "_base"))
            ratio = paired["total_cost_usd"] / paired["total_cost_usd_base"]
            parts.append(f"{policy}: cost x{_mean_range(ratio, 1.0, 3)} of rollmux's, "
                         f"{reading(cand)}")
        lines.append(f"* `{trace}` ({seeds} seed{'s' if seeds > 1 else ''}; means with "
                     "95 % Student-t intervals where the seeds differ): "
                     + "; ".join(parts) + ".")
    return "\n".join(lines) + "\n"
