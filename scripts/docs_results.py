"""Write the docs' result blocks from the results files (never typed by hand).

Usage: python scripts/docs_results.py [--check]

Three generated blocks, each between ``<!-- NAME -->`` and ``<!-- /NAME -->``:

* ``lengths`` in docs/stochastic.md: what the real response lengths say against our length
  model, per workload, from results/lengths/fit.csv and steps.csv (`rollmux trace lengths`
  on config ``lengths.path``; rule ``trace_lengths``);
* ``gap`` in docs/findings.md: the production cost gap decomposed, from
  results/evidence/production_gap.csv (rule ``evidence_production_gap``);
* ``designs`` in docs/designs.md: every design on every comparison trace, the cheapest
  design meeting every SLO and the crossover price ratio, from results/designs/
  (rule ``designs_comparison``).

``--check`` exits 1 (writing nothing) when a block differs from the files.
tests/test_docs_results.py runs the same check whenever the results files exist.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from rollmux.io import write_text

ROOT = Path(__file__).resolve().parents[1]
FIT = Path("results") / "lengths" / "fit.csv"
STEPS = Path("results") / "lengths" / "steps.csv"
GAP = Path("results") / "evidence" / "production_gap.csv"
BURST = Path("results") / "evidence" / "production_gap_burst.json"
BY_WORKLOAD = Path("results") / "evidence" / "production_lengths_by_workload.csv"
COMPARISON = Path("results") / "designs" / "comparison.csv"
DESIGN_METRICS = Path("results") / "designs" / "metrics.csv"
#: The claims of the gap block, in its column order.
GAP_CLAIMS = ("C01", "C02", "C04", "C10", "C11", "C12", "C13")


def block_pattern(name: str) -> re.Pattern[str]:
    """The block ``name``'s markers and body."""
    return re.compile(rf"(<!-- {name} -->\n)(.*?)(<!-- /{name} -->)", re.S)


def _read(root: Path, path: Path) -> pd.DataFrame:
    """A results table; ValueError names a missing one."""
    full = root / path
    if not full.is_file():
        raise ValueError(f"{full}: missing; run the pipeline first")
    return pd.read_csv(full)


def _num(x: float, digits: int = 3) -> str:
    """A number to ``digits`` significant digits; a dash for a missing one."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{float(x):.{digits}g}"


def render_lengths(root: Path = ROOT) -> str:
    """The ``lengths`` block: the fit per workload and the per-step extremes."""
    fit = _read(root, FIT)
    steps = _read(root, STEPS)
    full = steps[~steps["partial"].astype(bool)]
    lines = [
        "| workload | format | full steps x responses | cap (source) | mean tokens | "
        "mean / cap (ours 0.35) | fitted shape (ours 0.8) | at the cap: observed / fitted "
        "(ours 0) | per-step max / mean | KS: fit / ours / ours' shape | 5% critical |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in fit.to_dict("records"):
        mine = full[full["workload"] == rec["workload"]]
        per_step = round(rec["responses"] / rec["steps"]) if rec["steps"] else 0
        cap = "unknown" if math.isnan(rec["cap"]) else f"{rec['cap']:.0f} ({rec['cap_source']})"
        at_cap = ("-" if math.isnan(rec["observed_at_cap"]) else
                  f"{100 * rec['observed_at_cap']:.1f}% / {100 * rec['mass_at_cap']:.1f}%")
        ratio = f"{mine['max_over_mean'].min():.1f}-{mine['max_over_mean'].max():.1f}x"
        lines.append(
            f"| {rec['workload']} | {rec['format']} | {rec['steps']} x {per_step} | {cap} | "
            f"{rec['mean']:.0f} | {_num(rec['mean_over_cap'])} | {rec['sigma']:.3f} "
            f"(log-sd {rec['log_sd']:.3f}) | {at_cap} | {ratio} | {_num(rec['ks'])} / "
            f"{_num(rec['ours_ks'])} / {_num(rec['ours_sigma_ks'])} | "
            f"{_num(rec['ks_5pct'])} |")
    return "\n".join(lines) + "\n"


def render_gap(root: Path = ROOT) -> str:
    """The ``gap`` block: the claims after each step and the share of C01's gap closed."""
    table = _read(root, GAP)
    table["step"] = table["step"].astype(str)
    steps = list(dict.fromkeys(table["step"]))
    head = ["step", "setup", *GAP_CLAIMS, "SLO realised %", "SLO vs worst case %"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    paper = table.drop_duplicates("metric").set_index("metric")["paper"]
    metric_of = table.drop_duplicates("claim").set_index("claim")["metric"]
    paper_row = ["paper", ""] + [_num(paper[metric_of[c]]) for c in GAP_CLAIMS]
    paper_row += [_num(paper["slo_attainment_realised_rollmux"]), "-"]
    lines.append("| " + " | ".join(paper_row) + " |")
    def cell(part: pd.DataFrame, metric: str) -> str:
        """The mean over seeds, with its 95% interval when there are several."""
        text = _num(part.at[metric, "ours"])
        if "seeds" in part.columns and int(part.at[metric, "seeds"]) > 1:
            text += (f" [{_num(part.at[metric, 'ci_low'])}, "
                     f"{_num(part.at[metric, 'ci_high'])}]")
        return text

    for step in steps:
        part = table[table["step"] == step].set_index("metric")
        cells = [step, str(part["setup"].iloc[0])]
        cells += [cell(part, metric_of[c]) for c in GAP_CLAIMS]
        cells += [cell(part, "slo_attainment_realised_rollmux"),
                  cell(part, "slo_attainment_reference_rollmux")]
        lines.append("| " + " | ".join(cells) + " |")
    c01 = table[table["claim"] == "C01"].set_index("step")
    seeds = int(c01["seeds"].max()) if "seeds" in c01.columns else 1

    def c01_text(step: str) -> str:
        """C01 at a step, with its 95% interval over seeds when there are several."""
        text = f"{c01.at[step, 'ours']:.3f}"
        if seeds > 1:
            text += f" [{c01.at[step, 'ci_low']:.3f}, {c01.at[step, 'ci_high']:.3f}]"
        return text

    sentences = []
    for step in steps[1:]:
        sentences.append(f"step {step} ({c01.at[step, 'setup']}) C01 "
                         f"{c01_text(step)}, {100 * c01.at[step, 'gap_closed']:.0f}% "
                         f"of step 0's distance to the paper's {_num(paper[metric_of['C01']])} "
                         "closed")
    lines.append("")
    what = ("95% Student-t interval over seeds in brackets" if seeds > 1
            else "one seed: no interval")
    lines.append(f"Means over {seeds} seed(s) ({what}). "
                 f"C01 at step 0: {c01_text(steps[0])}; " + "; ".join(sentences) + ".")
    burst_path = root / BURST
    if burst_path.is_file():
        burst = json.loads(burst_path.read_text(encoding="utf-8"))
        lines.append(f"The burst step pulls arrivals toward the start of their "
                     f"{burst['window_h']:g} h window by factor {burst['factor']:.3f}: "
                     f"Solo-D's peak {burst['solo_peak_before']:g} -> "
                     f"{burst['solo_peak_after']:g} GPUs per pool ({BURST}).")
    by_path = root / BY_WORKLOAD
    if by_path.is_file():
        by = pd.read_csv(by_path)
        lines += ["", f"RollMux's jobs with real lengths on the trace as shipped, by the run that "
                  f"served them, pooled over the replays of every seed (a job counts once per "
                  f"seed; {BY_WORKLOAD}):", "",
                  "| served by | jobs | realised SLO met % | realised solo / worst-case solo "
                  "(median) | realised slowdown (median) |", "|---|---|---|---|---|"]
        for rec in by.to_dict("records"):
            lines.append(f"| {rec['workload']} | {rec['jobs']} | "
                         f"{_num(rec['slo_met_realised_pct'])} | "
                         f"{_num(rec['realised_over_worst_solo_median'])} | "
                         f"{_num(rec['slowdown_realised_median'])} |")
    return "\n".join(lines) + "\n"


def _design_value(metrics: pd.DataFrame, metric: str, digits: int = 3) -> str:
    """A design metric's value, with its interval over seeds when it has one."""
    if metric not in metrics.index:
        return "-"
    rec = metrics.loc[metric]
    text = _num(rec["value"], digits)
    if not (pd.isna(rec["low"]) or pd.isna(rec["high"])):
        text += f" [{_num(rec['low'], digits)}, {_num(rec['high'], digits)}]"
    return text


def render_designs(root: Path = ROOT) -> str:
    """The ``designs`` block: per trace each design's numbers, the cheapest design that met
    every SLO and the crossover price ratio (means over seeds, intervals in brackets)."""
    table = _read(root, COMPARISON).fillna({"lengths": ""})
    metrics = _read(root, DESIGN_METRICS).set_index("metric")
    lines: list[str] = []
    seeds = table.groupby(["trace", "lengths", "policy"])["seed"].nunique().max()
    for (trace, lengths), part in table.groupby(["trace", "lengths"], sort=False):
        label = (f"{trace}_{lengths}" if lengths else trace).replace("-", "_")
        title = f"{trace}" + (f", real response lengths ({lengths})" if lengths else
                              ", synthetic response lengths")
        lines += [f"**{title}** ({int(part['jobs'].iloc[0])} jobs)", "",
                  "| design | total cost (USD) | USD per solo job-hour | over rollmux | SLO "
                  "realised % | SLO paper-reference % | peak GPUs H20 / H800 | staleness |",
                  "|---|---|---|---|---|---|---|---|"]
        means = part.groupby("policy", sort=False).mean(numeric_only=True)
        for policy, rec in means.iterrows():
            name = str(policy).replace("-", "_")
            ratio = ("1" if policy == "rollmux" else
                     _design_value(metrics, f"designs_{name}_cost_ratio_{label}"))
            steady = set(part.loc[part["fidelity"] == "analytic", "policy"])
            shown = f"{policy} (steady state)" if policy in steady else str(policy)
            lines.append(f"| {shown} | {rec['total_cost_usd']:,.0f} | "
                         f"{_num(rec['cost_per_work_usd'])} | {ratio} | "
                         f"{_num(100 * rec['slo_attainment_realised'])} | "
                         f"{_num(100 * rec['slo_attainment'])} | {rec['peak_gpus_H20']:.0f} / "
                         f"{rec['peak_gpus_H800']:.0f} | {rec['staleness']:.0f} |")
        sentences = []
        for metric, what in (("designs_cheapest_cost_ratio", "cheapest design meeting every "
                              "SLO"), ("designs_cheapest_on_policy_cost_ratio", "on-policy")):
            key = f"{metric}_{label}"
            if key in metrics.index:
                design = str(metrics.at[key, "note"]).split(" on ", 1)[0]
                sentences.append(f"{what}: {design} ({_design_value(metrics, key)}x rollmux)")
            else:
                sentences.append(f"{what}: none")
        sentences.append("crossover price ratio " + _design_value(
            metrics, f"designs_crossover_price_ratio_{label}"))
        lines += ["", "; ".join(sentences) + ".", ""]
    balance = sorted({m.rsplit("_crossover_price_ratio_", 1)[1] for m in metrics.index
                      if m.startswith("designs_crossover_price_ratio_")}
                     - {(f"{t}_{ln}" if ln else t).replace("-", "_")
                        for t, ln in table[["trace", "lengths"]].itertuples(index=False)})
    if balance:
        lines += ["**The balance traces** (rollmux, rollmux-join, verl, solo-d)", "",
                  "| trace | crossover price ratio | rollmux-join over rollmux | SLO realised "
                  "% rollmux / rollmux-join | SLO paper-reference % rollmux / rollmux-join |",
                  "|---|---|---|---|---|"]
        for label in balance:
            lines.append(
                f"| {label} | {_design_value(metrics, f'designs_crossover_price_ratio_{label}')}"
                f" | {_design_value(metrics, f'designs_rollmux_join_cost_ratio_{label}')} | "
                f"{_design_value(metrics, f'designs_rollmux_slo_attainment_realised_{label}')}"
                " / "
                + _design_value(metrics, f"designs_rollmux_join_slo_attainment_realised_{label}")
                + f" | {_design_value(metrics, f'designs_rollmux_slo_attainment_{label}')} / "
                + _design_value(metrics, f"designs_rollmux_join_slo_attainment_{label}")
                + " |")
        lines.append("")
    lines.append(f"Means over {int(seeds)} seed(s) (`designs.seeds`), 95 % Student-t "
                 f"intervals in brackets from two seeds on; {COMPARISON}, {DESIGN_METRICS}.")
    return "\n".join(lines) + "\n"


#: Each block: its document and renderer.
BLOCKS: dict[str, tuple[Path, Callable[[Path], str]]] = {
    "lengths": (ROOT / "docs" / "stochastic.md", render_lengths),
    "gap": (ROOT / "docs" / "findings.md", render_gap),
    "designs": (ROOT / "docs" / "designs.md", render_designs),
}


def current_block(text: str, name: str) -> str:
    """The document's current block ``name``; ValueError when its markers are missing."""
    match = block_pattern(name).search(text)
    if match is None:
        raise ValueError(f"no <!-- {name} --> ... <!-- /{name} --> block")
    return match.group(2)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the blocks, or with --check report whether they match the files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block differs")
    args = parser.parse_args(argv)
    status = 0
    for name, (doc, render) in BLOCKS.items():
        text = doc.read_text(encoding="utf-8")
        try:
            block = render(ROOT)
        except ValueError as exc:  # that block's results are not there yet
            print(f"{doc.name}: block {name} left as it is: {exc}", file=sys.stderr)
            continue
        if current_block(text, name) == block:
            continue
        if args.check:
            print(f"{doc.name}: block {name} differs from the results files: "
                  "python scripts/docs_results.py", file=sys.stderr)
            status = 1
            continue
        write_text(doc, block_pattern(name).sub(lambda m, b=block: m.group(1) + b + m.group(3),
                                                text, count=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
