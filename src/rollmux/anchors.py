"""Anchors of the phase-time model: its values against the numbers the paper reports.

Each anchor computes the model's value from :mod:`rollmux.phasetimes` (never typed)
and compares it with the paper's value or range. ``rollmux calibration`` prints the
Markdown table that docs/model.md embeds; ``--update-doc docs/model.md`` refreshes it there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rollmux.hardware import Hardware, load_hardware, parameter_table
from rollmux.jobs import RLJob
from rollmux.phasetimes import (
    phase_times,
    rollout_mem_gb_per_node,
    switch_times,
    sync_times,
    train_mem_gb_per_node,
)

__all__ = [
    "CALIBRATION_COLUMNS",
    "Anchor",
    "anchors",
    "calibration_markdown",
    "calibration_table",
    "doc_tables",
    "fill_doc",
    "reference_job",
    "to_markdown",
]

CALIBRATION_COLUMNS = (
    "anchor",
    "paper_section",
    "paper",
    "model_setup",
    "model",
    "accept_lo",
    "accept_hi",
    "met",
    "calibrated_with",
)

# Single-node jobs spanning the paper's model sizes (sec. 1, Fig. 2 and 4).
_SIZES_B = (3.0, 7.0, 14.0, 32.0)
_MAX_TOKENS = (4096, 8192, 16384, 32768)


@dataclass(frozen=True)
class Anchor:
    """One paper number, the model quantity compared with it and the accepted interval."""

    anchor: str
    paper_section: str
    paper: str
    model_setup: str
    compute: Callable[[Hardware], float]
    accept_lo: float
    accept_hi: float
    calibrated_with: str = ""


def reference_job(
    size_b: float, gpus: int = 8, max_tokens: int = 8192, **fields: object
) -> RLJob:
    """A job of ``size_b`` billion parameters on ``gpus`` H20 + ``gpus`` H800 GPUs.

    Single-turn unless ``fields`` say otherwise (any other :class:`RLJob` field).
    """
    return RLJob(
        job_id=f"ref-{size_b:g}b-{gpus}",
        model_size_b=size_b,
        max_response_tokens=max_tokens,
        rollout_gpus=gpus,
        train_gpus=gpus,
        **fields,  # type: ignore[arg-type]
    )


def _max_cold_s(hw: Hardware) -> float:
    """Largest cold switch over single-node 3B-32B jobs and both phases."""
    out = 0.0
    for size in _SIZES_B:
        sw = switch_times(reference_job(size), hw)
        out = max(out, sw.rollout_cold_s, sw.train_cold_s)
    return out


def _max_warm_speedup(hw: Hardware) -> float:
    """Largest cold/warm switch ratio over single-node 3B-32B jobs and both phases."""
    out = 0.0
    for size in _SIZES_B:
        sw = switch_times(reference_job(size), hw)
        out = max(out, sw.rollout_cold_s / sw.rollout_warm_s, sw.train_cold_s / sw.train_warm_s)
    return out


def _sync_speedup(size_b: float, gpus: int) -> Callable[[Hardware], float]:
    """Flat over topology-aware sync time for a job with ``gpus`` -> ``gpus`` GPUs."""

    def compute(hw: Hardware) -> float:
        sync = sync_times(reference_job(size_b, gpus), hw)
        return sync.flat_s / sync.topology_s

    return compute


def _multi_turn_ratio(hw: Hardware) -> float:
    """Rollout over training time of a 4-turn agentic 7B job (8k max tokens)."""
    pt = phase_times(reference_job(7.0, turns=4), hw)
    return pt.rollout_s / pt.train_s


def _phase_extreme(hw: Hardware, pick: Callable[[list[float]], float]) -> float:
    """Shortest or longest expected phase over 3B-32B x 4k-32k single-node jobs."""
    durations: list[float] = []
    for size in _SIZES_B:
        for max_tokens in _MAX_TOKENS:
            pt = phase_times(reference_job(size, max_tokens=max_tokens), hw)
            durations += [pt.rollout_s, pt.train_s]
    return pick(durations)


def _resident_jobs(size_b: float, host_mem_gb: float) -> Callable[[Hardware], float]:
    """How many copies of a single-node job's training state fit one node's DRAM."""

    def compute(hw: Hardware) -> float:
        return float(math.floor(host_mem_gb / train_mem_gb_per_node(reference_job(size_b), hw)))

    return compute


def _mem_range(hw: Hardware, pick: Callable[[list[float]], float]) -> float:
    """Smallest or largest per-node state (rollout and training) over 7B-32B jobs."""
    values: list[float] = []
    for size in (7.0, 14.0, 32.0):
        job = reference_job(size)
        values += [rollout_mem_gb_per_node(job, hw), train_mem_gb_per_node(job, hw)]
    return pick(values)


def _mem_70b_over_32b(kind: str) -> Callable[[Hardware], float]:
    """Per-node state of 70B on 32+32 GPUs (TP8PP4) over 32B on 8+8 GPUs."""
    per_node = rollout_mem_gb_per_node if kind == "rollout" else train_mem_gb_per_node

    def compute(hw: Hardware) -> float:
        return per_node(reference_job(70.0, 32), hw) / per_node(reference_job(32.0), hw)

    return compute


def _price_ratio(hw: Hardware) -> float:
    """H800 over H20 price per GPU-hour."""
    return hw.gpu("H800").price_usd_per_h / hw.gpu("H20").price_usd_per_h


def _summary_switch(kind: str) -> Callable[[Hardware], float]:
    """Warm or cold switch of a 14B single-node job (slower phase)."""

    def compute(hw: Hardware) -> float:
        pt = phase_times(reference_job(14.0), hw)
        return pt.warm_switch_s if kind == "warm" else pt.cold_switch_s

    return compute


def anchors() -> tuple[Anchor, ...]:
    """The paper anchors, each with its accepted interval (the stated tolerance)."""
    inf = math.inf
    return (
        Anchor("cold switch, largest (s)", "1, Fig. 4", "up to ~135 s on an 8-GPU node",
               "max over 3B/7B/14B/32B on 8+8 GPUs, both phases", _max_cold_s,
               135 * 0.85, 135 * 1.15, "control_plane_start_s, disk_gbps"),
        Anchor("warm speed-up, largest (x)", "1, Fig. 4", "up to 71.5x",
               "max cold/warm over the same jobs", _max_warm_speedup,
               71.5 * 0.85, 71.5 * 1.15, "warm_switch_const_s"),
        Anchor("warm switch, summary (s)", "1", "~1.7 s",
               "14B on 8+8, slower phase", _summary_switch("warm"), 1.7 * 0.7, 1.7 * 1.3),
        Anchor("cold switch, summary (s)", "1", "~80 s",
               "14B on 8+8, slower phase", _summary_switch("cold"), 80 * 0.85, 80 * 1.15),
        Anchor("sync speed-up 8->8 (x)", "5, Fig. 13", "7.87-8.33x",
               "7B (rollout TP1, 8 GPUs pull a copy)", _sync_speedup(7.0, 8), 7.87, 8.33),
        Anchor("sync speed-up 8->8, 32B (x)", "5, Fig. 13", "7.87-8.33x",
               "32B (rollout TP4, 8 GPUs pull a copy)", _sync_speedup(32.0, 8), 7.87, 8.33),
        Anchor("sync speed-up 16->16 (x)", "5, Fig. 13", "2.62-2.75x",
               "32B (rollout TP4, 16 GPUs pull a copy)", _sync_speedup(32.0, 16), 2.62, 2.75),
        Anchor("multi-turn rollout / training (x)", "1, Fig. 2", "3-4x",
               "7B, 8k max, 4 turns, 8+8", _multi_turn_ratio, 3.0, 4.0,
               "tool_latency_s_per_turn"),
        Anchor("shortest phase (s)", "1, Fig. 2", "~50 s",
               "min over 3B-32B x 4k-32k, 8+8, expected", lambda hw: _phase_extreme(hw, min),
               50 * 0.5, 50 * 1.5),
        Anchor("longest phase (s)", "1, Fig. 2", "over 900 s",
               "max over 3B-32B x 4k-32k, 8+8, expected", lambda hw: _phase_extreme(hw, max),
               900, inf),
        Anchor("state per node, smallest (GB)", "1, Table 2", "hundreds of GB",
               "min over 7B/14B/32B, rollout and training", lambda hw: _mem_range(hw, min),
               100, 1000),
        Anchor("state per node, largest (GB)", "1, Table 2", "hundreds of GB",
               "max over 7B/14B/32B, rollout and training", lambda hw: _mem_range(hw, max),
               100, 1000),
        Anchor("70B TP8PP4 / 32B training state per node", "1, Table 2", "<= 1",
               "70B on 32 H800 vs 32B on 8 H800", _mem_70b_over_32b("train"), 0, 1),
        Anchor("70B / 32B rollout state per node", "1, Table 2", "<= 1",
               "70B TP8 on 32 H20 vs 32B TP4 on 8 H20", _mem_70b_over_32b("rollout"), 0, 1),
        Anchor("resident 32B training states, 1 TB node", "1", "2-5 jobs",
               "floor(1024 GB / state per node)", _resident_jobs(32.0, 1024), 2, 5),
        Anchor("resident 32B training states, 2 TB node", "1", "2-5 jobs",
               "floor(2048 GB / state per node)", _resident_jobs(32.0, 2048), 2, 5),
        Anchor("resident 14B training states, 2 TB node", "1", "2-5 jobs",
               "floor(2048 GB / state per node)", _resident_jobs(14.0, 2048), 2, 5),
        Anchor("H800 / H20 price ratio", "6, Table 1", "2.85",
               "price_usd_per_h ratio", _price_ratio, 2.85 * 0.995, 2.85 * 1.005,
               "price_usd_per_h (H800)"),
    )


def calibration_table(
    hw: Hardware | None = None, progress: Callable[[int], object] | None = None
) -> pd.DataFrame:
    """One row per anchor: the paper value, the model value, the accepted interval, met.

    ``progress(1)`` is called after each anchor.
    """
    hw = load_hardware() if hw is None else hw
    rows = []
    for a in anchors():
        value = float(a.compute(hw))
        if progress is not None:
            progress(1)
        rows.append(
            {
                "anchor": a.anchor,
                "paper_section": a.paper_section,
                "paper": a.paper,
                "model_setup": a.model_setup,
                "model": value,
                "accept_lo": a.accept_lo,
                "accept_hi": a.accept_hi,
                "met": bool(a.accept_lo <= value <= a.accept_hi),
                "calibrated_with": a.calibrated_with,
            }
        )
    return pd.DataFrame(rows, columns=list(CALIBRATION_COLUMNS))


def _format_cell(value: object) -> str:
    """Render a cell: 3 significant digits (whole numbers from 100), yes/no, pipes escaped."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isinf(number):
            return "∞" if number > 0 else "-∞"
        return f"{number:.0f}" if abs(number) >= 100 else f"{number:.3g}"
    return str(value).replace("|", "\\|")


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of ``df`` (no dependency on tabulate)."""
    header = "| " + " | ".join(str(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = [
        "| " + " | ".join(_format_cell(v) for v in row) + " |"
        for row in df.itertuples(index=False, name=None)
    ]
    return "\n".join([header, rule, *body]) + "\n"


def calibration_markdown(
    hw: Hardware | None = None, progress: Callable[[int], object] | None = None
) -> str:
    """The calibration table as Markdown, with unmet anchors in bold."""
    df = calibration_table(hw, progress)
    df["met"] = ["yes" if met else "**NO**" for met in df["met"]]
    return to_markdown(df)


def doc_tables(
    hw: Hardware | None = None, progress: Callable[[int], object] | None = None
) -> dict[str, str]:
    """The generated tables of docs/model.md, keyed by their marker name."""
    return {
        "calibration-table": calibration_markdown(hw, progress),
        "parameter-table": to_markdown(parameter_table()),
    }


def fill_doc(text: str, tables: dict[str, str]) -> str:
    """Replace each ``<!-- name:start -->...<!-- name:end -->`` block with its table."""
    for name, table in tables.items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        if text.count(start) != 1 or text.count(end) != 1:
            raise ValueError(f"text must contain exactly one {start} and one {end}")
        head, rest = text.split(start)
        _, tail = rest.split(end)
        text = f"{head}{start}\n{table}{end}{tail}"
    return text
