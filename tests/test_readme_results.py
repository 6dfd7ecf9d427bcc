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
