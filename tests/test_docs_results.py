"""The docs' result blocks (docs/stochastic.md `lengths`, docs/findings.md `gap`) are
written from the results files, never typed by hand."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from scriptmod import load_script

ROOT = Path(__file__).resolve().parents[1]


def docs_results() -> ModuleType:
    """scripts/docs_results.py as a module."""
    return load_script("docs_results")


def test_gap_block_is_rendered_from_the_table(tmp_path: Path) -> None:
    """Each step's claims and the share of C01's gap closed come from the table."""
    module = docs_results()
    rows = []
    for step, setup, c01, closed in (("0", "as shipped", 1.3, 0.0), ("1", "+ burst", 1.5, 0.37)):
        for claim in module.GAP_CLAIMS:
            rows.append({"step": step, "setup": setup, "claim": claim,
                         "metric": f"m_{claim}", "paper": 1.84 if claim == "C01" else 2.0,
                         "ours": c01 if claim == "C01" else 1.0, "gap_closed": closed})
        for metric, value in (("slo_attainment_realised_rollmux", 91.5),
                              ("slo_attainment_reference_rollmux", 100.0)):
            rows.append({"step": step, "setup": setup, "claim": "C03", "metric": metric,
                         "paper": 100.0, "ours": value, "gap_closed": 0.0})
    (tmp_path / "results" / "evidence").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(tmp_path / module.GAP, index=False)
    block = module.render_gap(tmp_path)
    assert "| 1 | + burst | 1.5 |" in block
    assert "step 1 (+ burst) C01 1.500, 37% of step 0's distance" in block
    with pytest.raises(ValueError, match="missing"):
        module.render_lengths(tmp_path)


def test_designs_block_is_rendered_from_the_comparison(tmp_path: Path) -> None:
    """Each design's numbers, the cheapest design meeting every SLO and the crossover come
    from results/designs/ (comparison.csv, metrics.csv)."""
    from rollmux.experiments.designs import COMPARISON_COLUMNS, design_metrics

    module = docs_results()
    base = dict.fromkeys(COMPARISON_COLUMNS, 0.0)
    rows = []
    for trace, lengths in (("prod", ""), ("prod", "polytrace"), ("bal", "")):
        for policy, cost, slo, h20, h800 in (("rollmux", 100.0, 0.9, 50.0, 60.0),
                                             ("verl", 120.0, 1.0, 0.0, 100.0),
                                             ("solo-d", 130.0, 1.0, 80.0, 80.0)):
            rows.append({**base, "trace": trace, "lengths": lengths, "policy": policy,
                         "seed": 0, "jobs": 3, "total_cost_usd": cost,
                         "cost_per_work_usd": cost / 10, "slo_attainment": slo,
                         "slo_attainment_realised": slo, "gpu_h_H20": h20,
                         "gpu_h_H800": h800, "staleness": 0, "fidelity": "event"})
    table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
    (tmp_path / "results" / "designs").mkdir(parents=True)
    table[table.trace == "prod"].to_csv(tmp_path / module.COMPARISON, index=False)
    design_metrics(table, "src", 2.85).to_csv(tmp_path / module.DESIGN_METRICS, index=False)
    block = module.render_designs(tmp_path)
    assert "**prod, real response lengths (polytrace)** (3 jobs)" in block
    assert "| verl | 120 | 12 | 1.2 | 100 | 100 | 0 / 0 | 0 |" in block
    # 50 + p 60 = p 100: p = 1.25; the cheapest meeting every SLO: verl at 1.2x.
    assert "cheapest design meeting every SLO: verl (1.2x rollmux)" in block
    assert "crossover price ratio 1.25" in block
    assert "| bal | 1.25 |" in block  # a balance trace: in the metrics, not the comparison


def test_gap_block_shows_the_95pct_interval_over_seeds(tmp_path: Path) -> None:
    """With several seeds each cell carries the table's interval, and the text says so."""
    module = docs_results()
    rows = []
    for step, c01, closed in (("0", 1.3, 0.0), ("1", 1.5, 0.37)):
        for claim in module.GAP_CLAIMS:
            value = c01 if claim == "C01" else 1.0
            rows.append({"step": step, "setup": "s", "claim": claim, "metric": f"m_{claim}",
                         "paper": 1.84, "ours": value, "ci_low": value - 0.1,
                         "ci_high": value + 0.1, "seeds": 5, "gap_closed": closed})
        for metric, value in (("slo_attainment_realised_rollmux", 91.5),
                              ("slo_attainment_reference_rollmux", 100.0)):
            rows.append({"step": step, "setup": "s", "claim": "C03", "metric": metric,
                         "paper": 100.0, "ours": value, "ci_low": value - 2,
                         "ci_high": value, "seeds": 5, "gap_closed": 0.0})
    (tmp_path / "results" / "evidence").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(tmp_path / module.GAP, index=False)
    block = module.render_gap(tmp_path)
    assert "| 1 | s | 1.5 [1.4, 1.6] |" in block
    assert "91.5 [89.5, 91.5]" in block
    assert "Means over 5 seed(s) (95% Student-t interval over seeds in brackets)" in block
    assert "C01 at step 0: 1.300 [1.200, 1.400]" in block


@pytest.mark.parametrize("name", ["lengths", "gap", "designs"])
def test_docs_block_matches_the_results_files(name: str) -> None:
    """After a pipeline run, each block is what the results files say."""
    module = docs_results()
    doc, render = module.BLOCKS[name]
    try:
        block = render(ROOT)
    except ValueError:
        pytest.skip(f"no results for block {name} here: run the pipeline first")
    text = doc.read_text(encoding="utf-8")
    assert module.current_block(text, name) == block, "run: python scripts/docs_results.py"
