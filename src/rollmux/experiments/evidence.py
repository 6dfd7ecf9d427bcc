"""The evidence tables' shared shape: one row per quantity, the paper's number beside ours.

Every evidence experiment (``results/evidence/<name>.csv``, the ledger's ``evidence``
column) writes rows of :data:`EVIDENCE_COLUMNS`: the claim it explains, the quantity, the
setting or reading it is computed under, the paper's number, ours, the value a derivation
implies, and whether the stated condition holds (docs/metrics.md, "Evidence").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

__all__ = ["EVIDENCE_COLUMNS", "evidence_row", "paper_ranges", "paper_values"]

#: Columns of every evidence table.
EVIDENCE_COLUMNS = ("claim", "quantity", "reading", "paper", "ours", "implied", "holds", "note")


def evidence_row(
    claim: str,
    quantity: str,
    reading: str = "",
    paper: float | None = None,
    ours: float | None = None,
    implied: float | None = None,
    holds: bool | None = None,
    note: str = "",
) -> dict[str, object]:
    """One evidence row; numbers to 6 significant digits, missing ones empty."""

    def num(x: float | None) -> object:
        return "" if x is None or not math.isfinite(x) else float(f"{x:.6g}")

    return {
        "claim": claim,
        "quantity": quantity,
        "reading": reading,
        "paper": num(paper),
        "ours": num(ours),
        "implied": num(implied),
        "holds": "" if holds is None else bool(holds),
        "note": note,
    }


def paper_values(ledger: pd.DataFrame, claim_ids: Sequence[str]) -> dict[str, float]:
    """The paper's value of each claim id (ledger column ``paper_value``); KeyError if absent."""
    by_id = ledger.set_index("claim_id")
    out = {}
    for cid in claim_ids:
        if cid not in by_id.index or not str(by_id.at[cid, "paper_value"]).strip():
            raise KeyError(f"claims ledger has no paper_value for {cid}")
        out[cid] = float(by_id.at[cid, "paper_value"])
    return out


def paper_ranges(ledger: pd.DataFrame, claim_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The paper's (low, high) of each claim: its range, or (value, value)."""
    by_id = ledger.set_index("claim_id")
    out = {}
    for cid in claim_ids:
        if cid not in by_id.index:
            raise KeyError(f"claims ledger has no claim {cid}")
        rec = by_id.loc[cid]
        if str(rec["paper_low"]).strip():
            out[cid] = (float(rec["paper_low"]), float(rec["paper_high"]))
        else:
            out[cid] = (float(rec["paper_value"]),) * 2
    return out
