"""Tests of the calibration table and of the generated tables in docs/model.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rollmux.anchors import (
    CALIBRATION_COLUMNS,
    calibration_markdown,
    calibration_table,
    doc_tables,
    fill_doc,
    to_markdown,
)
from rollmux.hardware import load_hardware

DOC = Path(__file__).resolve().parents[1] / "docs" / "model.md"

# Anchors the model does not meet, each explained in docs/model.md, Part A sec. 10.
# Anything else must be met; a change that flips either set fails here on purpose.
NOT_MET = {
    "sync speed-up 16->16 (x)",
    "shortest phase (s)",
    "70B / 32B rollout state per node",
    "resident 14B training states, 2 TB node",
}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """The calibration table of the default hardware (computed once per module)."""
    return calibration_table()


def test_columns_and_unique_anchors(table: pd.DataFrame) -> None:
    """The table has the documented columns and one row per distinct anchor."""
    assert tuple(table.columns) == CALIBRATION_COLUMNS
    assert table["anchor"].is_unique
    assert NOT_MET.issubset(table["anchor"])


def test_each_anchor_met_or_documented(table: pd.DataFrame) -> None:
    """Every anchor lies in its accepted interval unless listed (and explained) as not met."""
    for row in table.itertuples(index=False):
        inside = row.accept_lo <= row.model <= row.accept_hi
        assert inside == row.met
        assert row.met == (row.anchor not in NOT_MET), row.anchor


@pytest.mark.parametrize(
    ("anchor", "lo", "hi"),
    [
        ("cold switch, largest (s)", 135 * 0.85, 135 * 1.15),
        ("warm speed-up, largest (x)", 71.5 * 0.85, 71.5 * 1.15),
        ("sync speed-up 8->8 (x)", 7.87, 8.33),
        ("multi-turn rollout / training (x)", 3.0, 4.0),
        ("longest phase (s)", 900.0, float("inf")),
    ],
)
def test_key_anchors_within_stated_tolerance(table: pd.DataFrame, anchor: str, lo: float,
                                             hi: float) -> None:
    """The headline anchors sit inside the tolerances stated in the doc."""
    value = float(table.set_index("anchor").loc[anchor, "model"])
    assert lo <= value <= hi


def test_model_column_is_computed_not_typed() -> None:
    """Changing a hardware parameter changes the model values of the anchors that use it."""
    base = calibration_table().set_index("anchor")["model"]
    slow = calibration_table(load_hardware(overrides={"perf.control_plane_start_s": 60.0}))
    slow_model = slow.set_index("anchor")["model"]
    assert slow_model["cold switch, largest (s)"] == pytest.approx(
        base["cold switch, largest (s)"] + 30.0
    )
    assert slow_model["sync speed-up 8->8 (x)"] == base["sync speed-up 8->8 (x)"]


def test_to_markdown_literal() -> None:
    """A small frame renders as a pipe table with 3 significant digits and escaped pipes."""
    df = pd.DataFrame({"name": ["a|b", "c"], "x": [1.23456, 1234.5], "ok": [True, False]})
    assert to_markdown(df) == (
        "| name | x | ok |\n"
        "|---|---|---|\n"
        "| a\\|b | 1.23 | yes |\n"
        "| c | 1234 | no |\n"
    )


def test_fill_doc_replaces_only_marked_block() -> None:
    """fill_doc rewrites the block between markers and keeps the rest; bad markers fail."""
    text = "intro\n<!-- t:start -->\nold\n<!-- t:end -->\noutro\n"
    assert fill_doc(text, {"t": "NEW\n"}) == "intro\n<!-- t:start -->\nNEW\n<!-- t:end -->\noutro\n"
    with pytest.raises(ValueError, match="text must contain"):
        fill_doc("no markers", {"t": "NEW\n"})


def test_doc_tables_match_generated() -> None:
    """docs/model.md embeds exactly the generated calibration and parameter tables.

    Regenerate with: .venv/bin/rollmux calibration --update-doc docs/model.md
    """
    text = DOC.read_text(encoding="utf-8")
    assert fill_doc(text, doc_tables()) == text


@pytest.mark.subprocess
def test_module_prints_the_table() -> None:
    """`rollmux calibration --format markdown` (here `python -m rollmux.cli calibration`)
    prints the Markdown calibration table."""
    out = subprocess.run(
        [sys.executable, "-m", "rollmux.cli", "calibration", "--format", "markdown"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert out == calibration_markdown()
    assert "**NO**" in out and "| yes |" in out
