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


@pytest.mark.parametrize("name", ["lengths", "gap"])
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
