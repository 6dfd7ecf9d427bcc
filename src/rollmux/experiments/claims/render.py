"""Claims report rendering: Markdown and HTML, and :func:`build_claims_report`, which
validates, classifies and writes ``figures/claims.*`` atomically."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from rollmux.experiments.claims.ledger import (
    KINDS,
    RESIDUAL_COLUMNS,
    Calibration,
    fmt,
    load_beyond_ledger,
    load_calibration,
    load_footnotes,
    load_ledger,
    read_metrics,
    read_residuals,
    read_table,
)
from rollmux.experiments.claims.verdict import (
    CALIBRATED,
    DIFFERS,
    NOT_REPRODUCIBLE,
    REPRODUCED,
    STATUSES,
    Tolerance,
    attach_what_it_would_take,
    beyond_report,
    claims_report,
    counts_line,
    load_tolerances,
    near_edge,
    status_counts,
)
from rollmux.experiments.intervals import (
    INTERVAL_METHOD,
    STRADDLES,
    claim_intervals,
    read_seed_metrics,
)
from rollmux.experiments.metrics import split_reading
from rollmux.experiments.optimum_gaps import GAP_NOTE, gap_text, read_gap_metrics
from rollmux.io import write_csv, write_json, write_text

#: What ``ours`` and the interval column are (the Markdown and HTML captions).
SEEDS_NOTE = (
    "Stochastic claims are replayed over the config's `seeds`: `ours` is the mean of the"
    " per-seed values, the interval their 95% " + INTERVAL_METHOD + " interval (mean +-"
    " t(0.975, n-1) s / sqrt(n); a range claim has one per end), and the status comes from"
    " the interval: `reproduced` only if all of it lies within the tolerance, `differs` if"
    " none of it does, `straddles` otherwise (docs/metrics.md, \"Seeds and intervals\")."
    " Claims without an interval are deterministic or read from one seed."
)


def _interval_cell(rec: Mapping[str, Any]) -> str:
    """The interval over seeds and how many, or '-' for a claim without one."""
    return f"{rec['interval']} ({rec['seeds']})" if rec.get("interval") else "-"


def _ours_cell(rec: Mapping[str, Any]) -> str:
    """Ours, with the certified gap of the optimum it is normalised by, if any."""
    raw = rec.get("optimum_gap")
    gap = math.nan if raw is None or str(raw).strip() == "" else float(raw)
    return "; ".join(t for t in (str(rec["ours"] or "-"), gap_text(gap)) if t)


def _margin_text(margin: Any) -> str:
    """The margin as shown in the tables ('-' where the kind has none)."""
    value = float(margin) if margin not in ("", None) else math.nan
    return "-" if math.isnan(value) else f"{value:+.2f}"


def _reference_text(rec: Mapping[str, Any]) -> str:
    """The paper-reference reading of an attainment claim and its status ('' otherwise)."""
    return f"{rec['reference']} ({rec['reference_status']})" if rec["reference"] else ""


#: What the real-lengths section shows (the Markdown and HTML captions).
LENGTHS_NOTE = (
    "The production replays again with each iteration's response lengths drawn from real"
    " RL runs' recorded steps (config `lengths.path`, `simulate --lengths`;"
    " docs/stochastic.md section 7) instead of the lognormal, over the same seeds: each"
    " production claim's value, interval and the status the same rule gives it, beside the"
    " lognormal ones (metrics rows `<metric>@real-lengths`; docs/metrics.md, \"Real"
    " response lengths\"). The claim's own status stays the lognormal replays'."
)


def real_lengths_rows(report: pd.DataFrame) -> pd.DataFrame:
    """The claims that carry a real-lengths reading (empty without such rows)."""
    if "real_lengths" not in report.columns:
        return report.iloc[0:0]
    return report[report["real_lengths"].astype(str) != ""]


def _lengths_cells(rec: Mapping[str, Any]) -> list[str]:
    """claim, statement, paper, then ours and real lengths with interval and status."""
    return [rec["claim_id"], rec["statement"], rec["paper"], rec["ours"] or "-",
            _interval_cell(rec), rec["status"], rec["real_lengths"],
            rec["real_lengths_interval"] or "-", rec["real_lengths_status"]]


_LENGTHS_HEAD = ("claim", "statement", "paper", "ours (lognormal)", "95% interval (seeds)",
                 "status", "ours (real lengths)", "95% interval (seeds)",
                 "status (real lengths)")


def _cell(text: Any) -> str:
    """A Markdown table cell: pipes escaped, no line breaks."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(
    report: pd.DataFrame,
    tolerances: Mapping[str, Tolerance],
    calibration: Calibration | None = None,
    footnotes: Mapping[str, str] | None = None,
    residuals: Mapping[str, pd.DataFrame] | None = None,
    beyond: pd.DataFrame | None = None,
) -> str:
    """The claims report as Markdown: counts, the calibration split, the table, footnotes,
    and the results beyond the paper (``beyond``: rows of :func:`beyond_report`)."""
    calibration = calibration or Calibration(facts={}, fits={})
    footnotes = dict(footnotes or {})
    lines = [
        "# Claims: the paper's numbers next to ours",
        "",
        f"**{counts_line(status_counts(report))}.**",
        "",
        "Status: `reproduced` (ours within the tolerance of the claim's kind, predicted from"
        " inputs that were not fitted to it), `calibrated` (a target of a declared fit: agreement"
        " by construction), `differs` (outside the tolerance; the evidence column names the"
        " results file of the experiment that explains the difference), `straddles` (the 95%"
        " interval over seeds crosses the tolerance's edge: the seeds cannot decide), `not"
        " reproducible here` (the ledger, src/rollmux/data/claims.csv, says why). A fit target is"
        " `calibrated` only where the fit reaches it within the tolerance; otherwise it"
        " `differs`, with the fit's residuals as evidence.",
        "",
        SEEDS_NOTE,
        "",
        GAP_NOTE,
        "",
        "Margin: (ours - paper) as a fraction of the tolerance (0 exact, +-1 at the edge;"
        " a range shows the end nearer its failing side). SLO attainment claims take their"
        " status from the realised reading (realised iteration over solo on the same draws);"
        " the paper-reference reading (realised over the worst-case solo estimate) and the"
        " status it would give stand beside it (docs/metrics.md, \"SLO readings\").",
        "",
        "Tolerances by kind (src/rollmux/data/claims_tolerances.yaml):",
        "",
    ]
    for kind in KINDS:
        tol = tolerances[kind]
        numbers = []
        if tol.relative is not None:
            numbers.append(f"relative {fmt(tol.relative)}")
        if tol.percent_points is not None:
            numbers.append(f"{fmt(tol.percent_points)} pp for %")
        suffix = f" ({', '.join(numbers)})" if numbers else ""
        lines.append(f"- `{kind}`: {tol.rule}{suffix}")
    lines += ["", "## Calibration set", ""]
    if not calibration.fits:
        lines.append("No input is fitted to any of the paper's numbers: every value is a "
                     "prediction.")
    else:
        lines.append("Inputs we cannot read are fitted only to these numbers "
                     "(src/rollmux/data/calibration.yaml); everything else is predicted.")
        for fit in calibration.fits.values():
            lines += ["", f"### Fit `{fit.name}`", "", fit.description, "",
                      f"Program: {fit.program}. Parameters: "
                      + "; ".join(f"`{k}` ({v})" for k, v in fit.parameters.items()) + ".", ""]
            table = (residuals or {}).get(fit.name)
            if table is not None:
                lines += ["| target | unit | paper | fitted | residual | note |",
                          "|---|---|---|---|---|---|"]
                for rec in table.to_dict("records"):
                    lines.append("| " + " | ".join(_cell(rec[c]) for c in RESIDUAL_COLUMNS)
                                 + " |")
    lines += [
        "",
        "## Claims",
        "",
        "| claim | where | statement | role | unit | paper | ours | 95% interval (seeds) "
        "| ours vs paper | margin | status | paper-reference reading | reason | evidence |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in report.to_dict("records"):
        notes = [f"[{f}]" for f in str(rec["footnotes"]).split(";") if f]
        reason = " ".join(part for part in (rec["reason"], *notes) if part)
        cells = [
            rec["claim_id"],
            f"§{rec['section']} {rec['figure']}",
            rec["statement"],
            rec["role"],
            rec["unit"],
            rec["paper"],
            _ours_cell(rec),
            _interval_cell(rec),
            rec["comparison"] or "-",
            _margin_text(rec["margin"]),
            rec["status"],
            _reference_text(rec),
            reason,
            rec["evidence"] or "",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    edge = report[report["what_it_would_take"].astype(str) != ""]
    if len(edge):
        lines += ["", "## Reproduced near the edge: what it would take", "",
                  "Every `reproduced` row with |margin| > 0.5 and the input the model needs to "
                  "give the paper's value exactly (computed by the pipeline), so a reader can "
                  "see whether it agrees for the right reason.", "",
                  "| claim | paper | ours | margin | what it would take |",
                  "|---|---|---|---|---|"]
        for rec in edge.to_dict("records"):
            cells = [rec["claim_id"], rec["paper"], rec["ours"], _margin_text(rec["margin"]),
                     rec["what_it_would_take"]]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    real = real_lengths_rows(report)
    if len(real):
        lines += ["", "## Production claims with real response lengths", "", LENGTHS_NOTE, "",
                  "| " + " | ".join(_LENGTHS_HEAD) + " |", "|" + "---|" * len(_LENGTHS_HEAD)]
        for rec in real.to_dict("records"):
            lines.append("| " + " | ".join(_cell(c) for c in _lengths_cells(rec)) + " |")
    used = sorted({f for text in report["footnotes"] for f in str(text).split(";") if f})
    if used:
        lines += ["", "## Footnotes", ""]
        lines += [f"- **[{f}]** {footnotes.get(f, '')}" for f in used]
    if beyond is not None and len(beyond):
        lines += [
            "",
            "## Results beyond the paper",
            "",
            "Questions the paper leaves open, answered by this pipeline: the ledger"
            " src/rollmux/data/beyond.csv names each result, the pipeline computes its value"
            " (results/metrics/, from the evidence file).",
            "",
            "| result | source | description | value | unit | evidence | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for rec in beyond.to_dict("records"):
            value = fmt(rec["value"])
            low, high = rec.get("low", math.nan), rec.get("high", math.nan)
            if not (math.isnan(low) or math.isnan(high)):  # the 95 % interval over seeds
                value += f" [{fmt(low)}, {fmt(high)}]"
            cells = [rec["result_id"], rec["source"], rec["description"], value,
                     rec["unit"], rec["evidence"], rec.get("note", "")]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


#: Status -> background colour of its cells in the HTML report (light, readable in print).
STATUS_COLOURS: dict[str, str] = {
    REPRODUCED: "#d4edda",
    CALIBRATED: "#d6e9f8",
    DIFFERS: "#fde2cf",
    STRADDLES: "#fff3c4",
    NOT_REPRODUCIBLE: "#e9e9e9",
}

#: The HTML report's style: inline, so the report stays one self-contained file. The table
#: is in the page's own flow (no box of its own to scroll) at the size of the text around
#: it, its cells wrapped (long paths break anywhere), so it fits the width of the page;
#: the Snakemake report's own layout is workflow/report/report.css.
_HTML_STYLE = """
#rollmux-claims { font-family: sans-serif; font-size: 1rem; line-height: 1.4; }
#rollmux-claims table { border-collapse: collapse; margin: 0.5em 0 1em; width: 100%;
  font-size: 0.875rem; }
#rollmux-claims th, #rollmux-claims td { border: 1px solid #ccc; padding: 3px 6px;
  vertical-align: top; text-align: left; overflow-wrap: anywhere; }
#rollmux-claims th { background: #f3f3f3; }
#rollmux-claims td.num { overflow-wrap: normal; }
#rollmux-claims .headline td { font-weight: bold; text-align: right; }
#rollmux-claims table.headline { width: auto; }
"""


def _html_cell(text: Any, cls: str = "", style: str = "") -> str:
    """One ``<td>``, its text escaped."""
    attrs = (f' class="{cls}"' if cls else "") + (f' style="{style}"' if style else "")
    return f"<td{attrs}>{html.escape(str(text))}</td>"


def html_headline(counts: Mapping[str, int]) -> str:
    """The headline counts: one row per status and the total, as an HTML table."""
    rows = [f'<tr><th>{html.escape(s)}</th><td style="background:{STATUS_COLOURS[s]}">'
            f"{counts[s]}</td></tr>" for s in STATUSES]
    rows.append(f"<tr><th>claims in all</th><td>{sum(counts.values())}</td></tr>")
    return '<table class="headline">' + "".join(rows) + "</table>"


def _html_claims_table(report: pd.DataFrame) -> str:
    """Every claim as one row: where, statement, paper, ours, ours vs paper, status, why."""
    head = ("claim", "where", "statement", "paper", "ours", "95% interval (seeds)",
            "ours vs paper", "margin", "status", "paper-reference reading", "reason",
            "evidence")
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for rec in report.to_dict("records"):
        notes = [f"[{f}]" for f in str(rec["footnotes"]).split(";") if f]
        reason = " ".join(part for part in (rec["reason"], *notes) if part)
        status = str(rec["status"])
        rows.append("<tr>" + "".join([
            _html_cell(rec["claim_id"]),
            _html_cell(f"§{rec['section']} {rec['figure']}", "num"),
            _html_cell(rec["statement"]),
            _html_cell(rec["paper"], "num"),
            _html_cell(_ours_cell(rec), "num"),
            _html_cell(_interval_cell(rec), "num"),
            _html_cell(rec["comparison"] or "-", "num"),
            _html_cell(_margin_text(rec["margin"]), "num"),
            _html_cell(status, "num", f"background:{STATUS_COLOURS.get(status, '#fff')}"),
            _html_cell(_reference_text(rec), "num"),
            _html_cell(reason),
            _html_cell(rec["evidence"] or ""),
        ]) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _html_lengths_table(report: pd.DataFrame) -> str:
    """The claims with a real-lengths reading, ours beside it ('' when none has one)."""
    real = real_lengths_rows(report)
    if not len(real):
        return ""
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in _LENGTHS_HEAD) + "</tr>"]
    for rec in real.to_dict("records"):
        cells = _lengths_cells(rec)
        rows.append("<tr>" + "".join(
            _html_cell(c, "num", f"background:{STATUS_COLOURS.get(str(c), '#fff')}")
            if i in (5, 8) else _html_cell(c, "" if i == 1 else "num")
            for i, c in enumerate(cells)) + "</tr>")
    return f"<p>{html.escape(LENGTHS_NOTE.replace('`', ''))}</p><table>{''.join(rows)}</table>"


def _html_footnotes(report: pd.DataFrame, footnotes: Mapping[str, str]) -> str:
    """The footnotes the table cites, as a list ('' when none is cited)."""
    used = sorted({f for text in report["footnotes"] for f in str(text).split(";") if f})
    if not used:
        return ""
    items = "".join(f"<li><b>[{html.escape(f)}]</b> {html.escape(footnotes.get(f, ''))}</li>"
                    for f in used)
    return f"<h3>Footnotes</h3><ul>{items}</ul>"


def render_html_fragment(report: pd.DataFrame,
                         footnotes: Mapping[str, str] | None = None) -> str:
    """The claims report as an HTML fragment (style, headline counts, table, footnotes).

    The report's sections are listed in one place (``sections`` below), so a new section
    is one more entry. Used on the landing page of the Snakemake report and, wrapped by
    :func:`render_html`, as ``figures/claims.html``.
    """
    counts = status_counts(report)
    sections = [
        ("Claims: the paper's numbers next to ours",
         f"<p><b>{html.escape(counts_line(counts))}.</b></p>" + html_headline(counts)
         + f"<p>{html.escape(SEEDS_NOTE.replace('`', ''))}</p>"
         + f"<p>{html.escape(GAP_NOTE.replace('`', ''))}</p>"),
        ("Every claim", _html_claims_table(report)),
        ("Production claims with real response lengths", _html_lengths_table(report)),
        ("", _html_footnotes(report, footnotes or {})),
    ]
    body = "".join((f"<h2>{html.escape(title)}</h2>" if title else "") + content
                   for title, content in sections if content)
    return f'<style>{_HTML_STYLE}</style><div id="rollmux-claims">{body}</div>\n'


def render_html(report: pd.DataFrame, footnotes: Mapping[str, str] | None = None) -> str:
    """The claims report as one self-contained HTML page (:func:`render_html_fragment`)."""
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>rollmux claims report</title></head><body>"
            + render_html_fragment(report, footnotes) + "</body></html>\n")


def build_claims_report(
    metrics_paths: Iterable[Path | str],
    out_csv: Path | str,
    out_md: Path | str,
    out_summary: Path | str,
    ledger: Path | str | None = None,
    tolerances: Path | str | None = None,
    tolerance_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    calibration: Path | str | None = None,
    footnotes: Path | str | None = None,
    results_root: Path | str = ".",
    require_evidence: bool = True,
    beyond_metrics_paths: Iterable[Path | str] = (),
    beyond_ledger: Path | str | None = None,
    what_it_would_take_paths: Iterable[Path | str] = (),
    out_html: Path | str | None = None,
    out_html_fragment: Path | str | None = None,
    seed_metrics_paths: Iterable[Path | str] = (),
    gap_metrics_paths: Iterable[Path | str] = (),
) -> dict[str, int]:
    """Validate, join and classify; write the CSV, Markdown and JSON counts atomically.

    ``results_root`` is the folder that evidence and residual paths (``results/...``) are
    relative to (the pipeline's working directory). With ``beyond_metrics_paths``, the
    results beyond the paper (``beyond_ledger``, default the shipped one) are rendered
    after the claims (:func:`beyond_report`). ``what_it_would_take_paths``: computed tables
    of the inputs that give the paper's values (:func:`attach_what_it_would_take`), shown for
    every reproduced row with |margin| > 0.5. ``out_html`` and ``out_html_fragment``,
    when given, receive the report as an HTML page and as a fragment for the landing page
    of the Snakemake report. ``seed_metrics_paths`` are the per-seed metrics files
    (results/metrics/seeds/<stage>.csv): each claim's mean and 95% interval over seeds,
    and its status from the interval (:func:`claims_report`). ``gap_metrics_paths`` are
    the gaps files (results/metrics/gaps/<stage>.csv): each optimum-normalised claim's
    certified gap (:mod:`rollmux.experiments.optimum_gaps`), column ``optimum_gap``.
    """
    table = load_ledger(ledger)
    tols = load_tolerances(tolerances, tolerance_overrides)
    cal = load_calibration(table, calibration)
    notes = load_footnotes(footnotes)
    metrics = read_metrics(list(metrics_paths), table)
    units = dict(zip(table["metric"], table["unit"], strict=True))
    # companion rows (<metric>@<reading>) are in their metric's unit
    units |= {str(m): units[split_reading(str(m))[0]] for m in metrics["metric"]
              if split_reading(str(m))[1]}
    per_seed = read_seed_metrics(list(seed_metrics_paths), units)
    intervals = claim_intervals(per_seed)
    gap_rows = read_gap_metrics(list(gap_metrics_paths), table["metric"])
    gaps = dict(zip(gap_rows["metric"], gap_rows["optimum_gap"], strict=True))
    report = claims_report(table, metrics, tols, cal, notes, results_root, require_evidence,
                           intervals=intervals, gaps=gaps)
    report = attach_what_it_would_take(
        report, {str(p): read_table(p) for p in what_it_would_take_paths})
    residuals = {name: read_residuals(fit, results_root) for name, fit in cal.fits.items()}
    beyond_paths = list(beyond_metrics_paths)
    beyond = (beyond_report(load_beyond_ledger(beyond_ledger), beyond_paths, results_root,
                            require_evidence) if beyond_paths else None)
    counts = status_counts(report)
    write_csv(report, out_csv, float_format="%.4g")
    write_text(out_md, render_markdown(report, tols, cal, notes, residuals, beyond))
    if out_html is not None:
        write_text(out_html, render_html(report, notes))
    if out_html_fragment is not None:
        write_text(out_html_fragment, render_html_fragment(report, notes))
    write_json(
        {"counts": counts, "total": len(report), "summary": counts_line(counts),
         "calibration": {name: list(fit.targets) for name, fit in cal.fits.items()},
         "beyond": 0 if beyond is None else len(beyond),
         "seeds": sorted(int(s) for s in set(per_seed["seed"])),
         "interval": f"95% {INTERVAL_METHOD} over seeds",
         "near_edge": {cid: str(report.set_index("claim_id").at[cid, "what_it_would_take"])
                       for cid in near_edge(report)}},
        out_summary,
    )
    return counts
