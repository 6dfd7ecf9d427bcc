"""Evidence for the sync claims (§6.3, Fig. 13, C26-C27): what the paper's speed-ups take.

Our sync model (docs/model.md, Part A sec. 6) prices flat (veRL) sync as one model copy
over the cross-cluster link per rollout GPU and topology-aware sync as one copy plus an
intra-cluster fetch and an NVLink gather. :func:`sync_what_it_takes` inverts it per row of
``results/paperfigs/fig13_sync.csv``: for the paper's low and high speed-up, how many
copies veRL would have to send (against the rollout GPUs and replicas), and how fast the
intra-cluster step would have to be, relative to the cross link the paper calls slow.
Sync efficiency is a hardware input we could fit to Fig. 13; these numbers show that no
bandwidth consistent with the paper's testbed gives both of its figures.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rollmux.experiments.evidence import EVIDENCE_COLUMNS, evidence_row
from rollmux.hardware import GB, Hardware

__all__ = ["SYNC_CLAIMS", "sync_what_it_takes"]

#: GPUs per side -> the claim of that Fig. 13 panel.
SYNC_CLAIMS = {8: "C26", 16: "C27"}


def sync_what_it_takes(
    sync: pd.DataFrame, paper: Mapping[str, tuple[float, float]], hw: Hardware
) -> pd.DataFrame:
    """Per Fig. 13 row and end of the paper's range: the copies and intra bandwidth needed.

    ``sync`` is the Fig. 13 table (:func:`rollmux.experiments.model_figures.sync_table`); ``paper``
    the (low, high) of C26 and C27. Rows: our speed-up under both readings of flat sync; the
    copies flat sync must send for the paper's speed-up (``holds``: between the replicas
    and the GPUs, one of the two readings); on more than one node, the intra-cluster
    bandwidth that speed-up needs with a copy per GPU, over the cross link's (``holds``:
    at least 1, i.e. the intra-cluster fabric no slower than the slow link).
    """
    cross = hw.network.cross_bytes_per_s
    rows = []
    for rec in sync.itertuples(index=False):
        claim = SYNC_CLAIMS.get(int(rec.gpus))
        if claim is None:
            continue
        low, high = paper[claim]
        setting = f"{rec.model_size_b:g}B, {rec.gpus}->{rec.gpus}, TP{rec.tensor_parallel}"
        rows.append(
            evidence_row(
                claim,
                "speedup_copy_per_gpu",
                setting,
                low,
                ours=float(rec.speedup),
                holds=low * 0.9 <= rec.speedup <= high * 1.1,
                note=f"paper's range {low:g} to {high:g}",
            )
        )
        rows.append(
            evidence_row(
                claim,
                "speedup_copy_per_replica",
                setting,
                low,
                ours=float(rec.speedup_per_replica),
                holds=low * 0.9 <= rec.speedup_per_replica <= high * 1.1,
                note=f"{rec.replicas} replicas; paper's range {low:g} to {high:g}",
            )
        )
        weights = float(rec.cross_copy_s) * cross
        nodes = -(-int(rec.gpus) // hw.node.gpus_per_node)
        nvl_s = weights / int(rec.tensor_parallel) / (hw.node.nvlink_gbps * GB)
        for end, target in (("low", low), ("high", high)):
            copies = target * float(rec.topology_s) / float(rec.cross_copy_s)
            rows.append(
                evidence_row(
                    claim,
                    f"flat_copies_for_paper_{end}",
                    setting,
                    target,
                    implied=copies,
                    holds=int(rec.replicas) * 0.9 <= copies <= int(rec.gpus) * 1.1,
                    note=f"copies veRL must send for the paper's {end} end (ours: {rec.gpus} "
                    f"GPUs, {rec.replicas} replicas)",
                )
            )
            if nodes > 1:
                fetch_s = float(rec.flat_s) / target - float(rec.cross_copy_s) - nvl_s
                moved = weights * (nodes - 1) / nodes
                ratio = moved / fetch_s / cross if fetch_s > 0 else float("inf")
                rows.append(
                    evidence_row(
                        claim,
                        f"intra_over_cross_bandwidth_for_paper_{end}",
                        setting,
                        target,
                        ours=hw.network.intra_bytes_per_s / cross,
                        implied=ratio,
                        holds=ratio >= 1.0,
                        note="intra-cluster bandwidth the paper's speed-up needs with a copy per "
                        "GPU, over the cross link's (ours: the testbed's 400 Gbit/s "
                        "InfiniBand over 20 Gbit/s Ethernet)",
                    )
                )
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
