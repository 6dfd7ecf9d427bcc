"""The README's result numbers are written from the results files, never typed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
from scriptmod import load_script

ROOT = Path(__file__).resolve().parents[1]


def readme_results() -> ModuleType:
    """scripts/readme_results.py as a module."""
    return load_script("readme_results")


def test_block_is_rendered_from_the_files(tmp_path: Path) -> None:
    """The counts and the headline ratio come from the summary and the claims table."""
    module = readme_results()
    (tmp_path / "results").mkdir()
    (tmp_path / "figures").mkdir()
    (tmp_path / "results" / "claims_summary.json").write_text(
        json.dumps({"summary": "3 claims: 1 reproduced, 2 differs"}))
    (tmp_path / "figures" / "claims.csv").write_text(
        "claim_id,paper,ours\nC00,1,1\nC01,1.84,1.2345\n")
    block = module.render(tmp_path)
    assert "**3 claims: 1 reproduced, 2 differs**" in block
    assert "1.23x cheaper than Solo-D against the paper's 1.84x" in block
    (tmp_path / "figures" / "claims.csv").write_text("claim_id,paper,ours\nC02,1,1\n")
    with pytest.raises(ValueError, match="no row for claim C01"):
        module.render(tmp_path)
    with pytest.raises(ValueError, match=r"claims_summary\.json: missing"):
        module.render(tmp_path / "nowhere")


def test_readme_numbers_sit_only_in_the_generated_block() -> None:
    """Outside the generated block the README quotes no claims count or ratio of ours."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    module = readme_results()
    outside = module.BLOCK.sub("", text)
    assert not re.search(r"\d+ claims:", outside), "claims counts typed outside the block"
    assert not re.search(r"\d\.\d+x cheaper", outside), "a ratio typed outside the block"
    module.readme_block(text)  # the markers are there


def test_readme_block_matches_the_results_files() -> None:
    """After a pipeline run, the README's block is what the results files say."""
    module = readme_results()
    if not (ROOT / module.SUMMARY).is_file() or not (ROOT / module.CLAIMS).is_file():
        pytest.skip("no results/claims_summary.json here: run the pipeline first")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert module.readme_block(text) == module.render(), "run: python scripts/readme_results.py"


def test_doc_blocks_are_in_the_docs() -> None:
    """docs/theorem1.md and docs/findings.md carry every named block's markers."""
    module = readme_results()
    for name, (doc, _) in module.DOC_BLOCKS.items():
        module.doc_block((ROOT / doc).read_text(encoding="utf-8"), name)


def test_theorem1_blocks_are_rendered_from_the_files(tmp_path: Path) -> None:
    """The worst-case, supremum and readings blocks quote the files' numbers; stale ones show."""
    import pandas as pd

    from rollmux.theorem1.readings import readings_table
    from rollmux.theorem1.supremum import supremum_table
    from rollmux.theorem1.worst_case import Budget, worst_case_table

    module = readme_results()
    budget = Budget(examples=4, optimizer_generations=0, polish_evaluations=0, max_vectors=2)
    searched = Budget(examples=4, optimizer_generations=0, polish_evaluations=0,
                      max_vectors=2, exhaustive_max_genomes=0)
    table = pd.concat([worst_case_table(["a_one_rollout_one_train"], [3], 2, searched),
                       worst_case_table(["b_shared_train"], [2], 2, budget)])
    out = tmp_path / "results" / "theorem1"
    out.mkdir(parents=True)
    table.to_csv(out / "worst_case.csv", index=False)
    supremum_table([2, 3], 2, (1, 2)).to_csv(out / "supremum.csv", index=False)
    readings_table(2, (("x", "r=1,5,13;t=6,1,9;R=0,0,0;T=0,0,0", "aggregate"),)).to_csv(
        out / "readings.csv", index=False)
    b2 = table[(table["family"] == "b_shared_train") & (table["objective"] == "aggregate")]
    ratio = f"{float(b2['ratio'].iloc[0]):.3f}"
    assert f"**{ratio}**" in module.DOC_BLOCKS["theorem1-worst-case"][1](tmp_path)
    assert f"{ratio}x in aggregate" in module.DOC_BLOCKS["findings-theorem1"][1](tmp_path)
    assert "1.591 -> 1.600" in module.DOC_BLOCKS["theorem1-readings"][1](tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    for doc in {doc for doc, _ in module.DOC_BLOCKS.values()}:
        names = [n for n, (d, _) in module.DOC_BLOCKS.items() if d == doc]
        (tmp_path / doc).write_text("".join(f"<!-- results:{n} -->\nold\n<!-- /results:{n} -->\n"
                                            for n in names))
    # blocks whose files are here are stale; the others (no slo_optimum, no repeat) are skipped
    rendered = ["findings-theorem1", "theorem1-readings", "theorem1-supremum",
                "theorem1-worst-case"]
    assert sorted(module.stale_doc_blocks(tmp_path)) == rendered
    assert sorted(module.stale_doc_blocks(tmp_path, write=True)) == rendered
    assert module.stale_doc_blocks(tmp_path) == []
    with pytest.raises(ValueError, match=r"worst_case\.csv: missing"):
        module.DOC_BLOCKS["theorem1-worst-case"][1](tmp_path / "nowhere")


def test_doc_blocks_match_the_results_files() -> None:
    """After a pipeline run, the docs' Theorem 1 blocks are what results/theorem1/ says."""
    module = readme_results()
    if not (ROOT / "results" / "theorem1" / "worst_case.csv").is_file():
        pytest.skip("no results/theorem1/worst_case.csv here: run the pipeline first")
    assert module.stale_doc_blocks(ROOT) == [], "run: python scripts/readme_results.py"


def test_findings_boundary_block_names_the_counterexample_cap(tmp_path: Path) -> None:
    """findings §1's boundary-map bullet quotes summary.csv, counterexample with its cap M."""
    import pandas as pd

    from rollmux.theorem1.boundary import summarise

    module = readme_results()
    render_block = module.DOC_BLOCKS["findings-boundary"][1]
    rows = []
    for i, (ratio, optimal) in enumerate(((1.0, True), (1.25, False), (1.0, True))):
        rows.append({"family": "a_one_rollout_one_train", "objective": "aggregate",
                     "instance": f"r={i + 1},1;t=1,1;R=0,0;T=0,0", "n_jobs": 2 + (i == 1),
                     "max_multiplicity": 2 if i == 1 else 3, "rr_optimal": optimal,
                     "rr_period_at_bound": True, "util_ratio": ratio, "period_ratio": 1.0,
                     "rr_period_over_bound": 1.0, "order_reaches_opt": optimal,
                     "index": i, "_size": (2 + (i == 1), 2, i)})
    out = tmp_path / "results" / "theorem1"
    out.mkdir(parents=True)
    summarise(pd.DataFrame(rows)).to_csv(out / "summary.csv", index=False)
    text = render_block(tmp_path)
    assert "2 of 3 random groups" in text
    assert "`r=2,1;t=1,1;R=0,0;T=0,0`: with at most 2 iterations per job" in text
    assert "1.25000x" in text
