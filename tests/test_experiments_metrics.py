"""The metrics contract: one declaration per metric, in step with the ledger and builders."""

from __future__ import annotations

import importlib

import pytest

from rollmux.experiments.claims import load_ledger
from rollmux.experiments.metrics import (
    METRICS,
    STAGES,
    metric_row,
    metric_unit,
    metrics_frame,
    stage_metrics,
)


def test_contract_declares_every_ledger_metric_with_its_unit() -> None:
    """Each claim's metric is declared once, with the ledger's unit; nothing else is."""
    ledger = load_ledger()
    assert set(ledger["metric"]) == set(METRICS)
    for rec in ledger.to_dict("records"):
        assert metric_unit(rec["metric"]) == rec["unit"], rec["claim_id"]


def test_every_stage_function_exists() -> None:
    """The function named for each stage is importable and callable."""
    for stage, dotted in STAGES.items():
        module, _, name = dotted.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name)), stage
        assert stage_metrics(stage), stage


def test_rows_are_checked_against_the_contract() -> None:
    """A row with an undeclared metric, another stage's metric or a wrong unit is refused."""
    row = metric_row("peak_h20_ratio", "a.csv", "note", value=1.234567891)
    assert row["unit"] == "x" and row["value"] == 1.23457
    assert list(metrics_frame([row], "production")["metric"]) == ["peak_h20_ratio"]
    with pytest.raises(ValueError, match="belongs to stage 'production'"):
        metrics_frame([row], "models")
    with pytest.raises(ValueError, match="unit '%', declared 'x'"):
        metrics_frame([{**row, "unit": "%"}], "production")
    with pytest.raises(ValueError, match="'no_such_metric' is not declared"):
        metric_row("no_such_metric", "a.csv", "note")
    with pytest.raises(ValueError, match="unknown stage"):
        stage_metrics("nowhere")
