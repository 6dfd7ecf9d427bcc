"""Claims ledger and claims report: ledger in step with the paper, validation, statuses."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
import yaml
from claims_inputs import write_calibration_residuals
from profiles import PROFILES, load_profile

from rollmux.experiments.claims import (
    BEYOND_COLUMNS,
    BEYOND_REPORT_COLUMNS,
    CALIBRATED,
    DIFFERS,
    NOT_REPRODUCIBLE,
    REPRODUCED,
    STRADDLES,
    ClaimsError,
    beyond_report,
    build_claims_report,
    compare,
    compare_with_paper,
    load_beyond_ledger,
    load_calibration,
    load_ledger,
    load_tolerances,
    render_html_fragment,
)
from rollmux.experiments.metrics import (
    ATTAINMENT_METRICS,
    BESIDE_READING,
    LENGTHS_READING,
    METRIC_COLUMNS,
    with_reading,
)

ROOT = Path(__file__).resolve().parents[1]
PAPER_CLAIMS = ROOT.parent / "shared" / "paper" / "claims.csv"


def _metrics_rows(ledger: pd.DataFrame) -> list[dict[str, str]]:
    """One metrics row per reproducible claim, carrying the paper's own numbers (an SLO
    attainment claim also its paper-reference companion row, same numbers)."""
    rows = [
        {
            "metric": rec["metric"],
            "value": rec["paper_value"],
            "low": rec["paper_low"],
            "high": rec["paper_high"],
            "unit": rec["unit"],
            "source": "results/test.csv",
            "note": "test row",
        }
        for rec in ledger.to_dict("records")
        if rec["reproducible"] == "yes"
    ]
    return rows + [{**row, "metric": with_reading(row["metric"], BESIDE_READING)}
                   for row in rows if row["metric"] in ATTAINMENT_METRICS]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    """Write metrics rows with the contract's columns."""
    pd.DataFrame(rows, columns=list(METRIC_COLUMNS)).to_csv(path, index=False)
    return path


def _build(tmp_path: Path, rows: list[dict[str, str]], **options: object
           ) -> tuple[dict[str, int], pd.DataFrame]:
    """Run the report on two metrics files holding ``rows``; return counts and the table.

    Without a ``calibration`` option the shipped calibration set applies: each of its fits
    gets a residuals file under ``tmp_path`` (the fit's outputs are pipeline results).
    """
    if "calibration" not in options:
        write_calibration_residuals(tmp_path)
    half = len(rows) // 2
    files = [_write(tmp_path / "a.csv", rows[:half]), _write(tmp_path / "b.csv", rows[half:])]
    options = {"require_evidence": False, "results_root": tmp_path, **options}
    counts = build_claims_report(
        files, tmp_path / "claims.csv", tmp_path / "claims.md", tmp_path / "summary.json",
        **options,  # type: ignore[arg-type]
    )
    return counts, pd.read_csv(tmp_path / "claims.csv", dtype=str, keep_default_na=False)


def test_ledger_matches_paper_claims() -> None:
    """The ledger carries exactly the rows and values of ../shared/paper/claims.csv."""
    if not PAPER_CLAIMS.exists():
        pytest.skip(f"{PAPER_CLAIMS} not present (../shared is beside the project in CI)")
    assert compare_with_paper(load_ledger(), PAPER_CLAIMS) == []


def test_ledger_reasons() -> None:
    """Every not-reproducible claim says why; most claims are reproducible."""
    ledger = load_ledger()
    no = ledger[ledger["reproducible"] == "no"]
    assert (no["not_reproducible_reason"].str.len() > 20).all()
    assert len(no) < len(ledger) / 4
    assert "C46" in set(no["claim_id"])


def test_ledger_differs_reasons_carry_no_numbers_of_ours() -> None:
    """Explanations are prose: no ratios (e.g. '1.26x') typed into the ledger's reasons."""
    ledger = load_ledger()
    for column in ("differs_reason", "not_reproducible_reason"):
        for claim, text in zip(ledger["claim_id"], ledger[column], strict=True):
            assert not re.search(r"\d+(\.\d+)?\s*x\b", text), f"{claim} {column}: {text}"


def test_all_reproduced_when_ours_equal_paper(tmp_path: Path) -> None:
    """Paper values fed back as ours reproduce every reproducible claim; counts written."""
    ledger = load_ledger()
    counts, table = _build(tmp_path, _metrics_rows(ledger))
    n_no = int((ledger["reproducible"] == "no").sum())
    n_cal = len({t for fit in load_calibration(ledger).fits.values() for t in fit.targets}
                & set(ledger["claim_id"]))
    assert counts == {REPRODUCED: len(ledger) - n_no - n_cal, CALIBRATED: n_cal, DIFFERS: 0,
                      NOT_REPRODUCIBLE: n_no, STRADDLES: 0}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["counts"] == counts and summary["total"] == len(ledger)
    assert list(table["claim_id"]) == list(ledger["claim_id"])
    no_result = table[table["status"] == NOT_REPRODUCIBLE]["reason"]
    assert no_result.str.startswith("no result: ").all()
    markdown = (tmp_path / "claims.md").read_text()
    claim_rows = markdown.split("\n## Claims\n")[1].split("\n## Footnotes")[0]
    assert summary["summary"] in markdown and claim_rows.count("\n| C") == len(ledger)


def test_differs_shows_ledger_reason(tmp_path: Path) -> None:
    """A value outside tolerance differs, with the ledger's explanation; within it, no reason."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    by_metric = {row["metric"]: row for row in rows}
    by_metric["cost_ratio_solod_over_rollmux"]["value"] = "1.26"  # paper 1.84
    by_metric["cost_ratio_verl_over_rollmux"]["value"] = "1.45"  # paper 1.38, within 10%
    by_metric["theorem1_holds"]["value"] = "0"
    _, table = _build(tmp_path, rows)
    rec = table.set_index("claim_id")
    assert rec.at["C01", "status"] == DIFFERS
    assert "synthetic-trace" in rec.at["C01", "footnotes"].split(";")
    assert "synthetic" in (tmp_path / "claims.md").read_text()
    assert rec.at["C01", "comparison"] == "x0.685"
    assert rec.at["C02", "status"] == REPRODUCED and rec.at["C02", "reason"] == ""
    assert rec.at["C53", "status"] == DIFFERS and "counterexample" in rec.at["C53", "reason"]


def test_html_report_shows_counts_and_every_claim_escaped(tmp_path: Path) -> None:
    """The HTML page and the landing fragment hold the headline counts and one table row
    per claim, statements escaped; the page is self-contained (no external resource)."""
    ledger = load_ledger()
    counts, table = _build(tmp_path, _metrics_rows(ledger), out_html=tmp_path / "claims.html",
                           out_html_fragment=tmp_path / "landing.html")
    page = (tmp_path / "claims.html").read_text()
    fragment = (tmp_path / "landing.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and fragment in page
    summary = json.loads((tmp_path / "summary.json").read_text())["summary"]
    assert summary in fragment
    for status, n in counts.items():
        assert f"<th>{status}</th>" in fragment and f">{n}</td>" in fragment
    assert fragment.count("<tr><td>C") == len(ledger)
    assert html.escape(str(ledger.iloc[0]["statement"])) in fragment
    assert "<script" not in page and "http" not in page
    table.loc[0, "statement"] = "<script>x</script> & y"
    assert "&lt;script&gt;x&lt;/script&gt; &amp; y" in render_html_fragment(table)


def test_runtime_value_is_read_as_an_upper_bound(tmp_path: Path) -> None:
    """C45 (role runtime, kind value 591 ms): 2 ms is reproduced, 700 ms differs."""
    ledger = load_ledger()
    assert ledger.set_index("claim_id").loc["C45", ["role", "kind"]].tolist() == [
        "runtime", "value"]
    for ours, status, text in (("2.0", REPRODUCED, "ours <= paper"),
                               ("700", DIFFERS, "ours > paper")):
        rows = _metrics_rows(ledger)
        next(r for r in rows if r["metric"] == "decision_latency_2000_jobs")["value"] = ours
        folder = tmp_path / ours
        folder.mkdir()
        _, table = _build(folder, rows)
        rec = table.set_index("claim_id").loc["C45"]
        assert (rec["status"], rec["comparison"], rec["kind"]) == (status, text, "upper_bound")


def test_missing_reproducible_metric_fails_loudly(tmp_path: Path) -> None:
    """A reproducible claim with no result is an error naming the metric."""
    rows = [r for r in _metrics_rows(load_ledger()) if r["metric"] != "migration_speedup"]
    with pytest.raises(ClaimsError, match=r"migration_speedup \(claim C25\)"):
        _build(tmp_path, rows)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"metric": "no_such_metric"}, r"a\.csv:3: row 2, column metric: 'no_such_metric'"),
        ({"unit": "s"}, r"a\.csv:3: row 2, column unit: 's', but claim"),
        ({"value": "abc"}, r"a\.csv:3: row 2, column value: not a number: 'abc'"),
        ({"value": ""}, r"a\.csv:3: row 2, column value: empty, but claim"),
    ],
)
def test_bad_metrics_row_names_file_row_field(
    tmp_path: Path, change: dict[str, str], message: str
) -> None:
    """Validation errors name the file, line, row and column."""
    rows = _metrics_rows(load_ledger())
    rows[1] = {**rows[1], **change}
    with pytest.raises(ClaimsError, match=message):
        _build(tmp_path, rows)


def test_bad_header_and_duplicates(tmp_path: Path) -> None:
    """A wrong header and a metric reported twice are both reported."""
    rows = _metrics_rows(load_ledger())
    bad = tmp_path / "bad.csv"
    pd.DataFrame(rows).drop(columns=["note"]).to_csv(bad, index=False)
    with pytest.raises(ClaimsError, match=r"bad\.csv:1: header"):
        build_claims_report([bad], tmp_path / "c.csv", tmp_path / "c.md", tmp_path / "s.json")
    dup = _write(tmp_path / "dup.csv", [*rows, rows[0]])
    with pytest.raises(ClaimsError, match=r"already reported at .*dup\.csv:2"):
        build_claims_report([dup], tmp_path / "c.csv", tmp_path / "c.md", tmp_path / "s.json")
    assert not (tmp_path / "c.csv").exists()


def test_range_bounds_and_property_rules() -> None:
    """Range within the widened range, bounds as inequalities, property as equality."""
    tol = load_tolerances()
    paper = (None, 1.06, 1.28)
    assert compare("range", "x", paper, (None, 1.0, 1.3), tol["range"]).holds
    assert not compare("range", "x", paper, (None, 0.9, 1.3), tol["range"]).holds
    assert compare("range", "%", (None, 37.0, 58.0), (None, 33.0, 62.0), tol["range"]).holds
    assert not compare("range", "%", (None, 37.0, 58.0), (None, 30.0, 62.0), tol["range"]).holds
    assert compare(
        "lower_bound", "s", (18000.0, None, None), (20000.0, None, None), tol["lower_bound"]
    ).holds
    assert not compare(
        "upper_bound", "%", (5.9, None, None), (6.0, None, None), tol["upper_bound"]
    ).holds
    assert not compare(
        "property", "bool", (1.0, None, None), (0.0, None, None), tol["property"]
    ).holds
    assert compare("value", "%", (100.0, None, None), (95.0, None, None), tol["value"]).holds


def test_tolerance_overrides() -> None:
    """Config overrides change one number of one kind; unknown kinds are rejected."""
    tol = load_tolerances(overrides={"value": {"percent_points": 1.0}})
    assert tol["value"].percent_points == 1.0 and tol["value"].relative == 0.10
    assert not compare("value", "%", (100.0, None, None), (98.0, None, None), tol["value"]).holds
    with pytest.raises(ClaimsError, match="unknown kind"):
        load_tolerances(overrides={"nonsense": {"relative": 0.2}})


def test_report_is_deterministic(tmp_path: Path) -> None:
    """Two builds from the same inputs give the same bytes."""
    rows = _metrics_rows(load_ledger())
    _build(tmp_path, rows)
    first = {p: (tmp_path / p).read_bytes() for p in ("claims.csv", "claims.md", "summary.json")}
    _build(tmp_path, rows)
    assert first == {p: (tmp_path / p).read_bytes() for p in first}


def test_bad_ledger_row_names_line_and_column(tmp_path: Path) -> None:
    """A ledger edit that breaks a row is reported with its file line and column."""
    text = (Path(__file__).resolve().parents[1] / "src/rollmux/data/claims.csv").read_text()
    lines = text.splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.startswith("claim_id,"))
    lines[header + 2] = lines[header + 2].replace(",ratio,benefit,yes,",
                                                  ",ratios,benefit,maybe,", 1)
    bad = tmp_path / "claims.csv"
    bad.write_text("".join(lines))
    with pytest.raises(ClaimsError) as error:
        load_ledger(bad)
    message = str(error.value)
    assert f"claims.csv:{header + 3}: row 2 (C02), column kind: 'ratios'" in message
    assert "column reproducible: 'maybe' must be yes or no" in message


def test_note_with_hash_is_kept(tmp_path: Path) -> None:
    """A '#' inside a metrics field is data, not a comment."""
    rows = _metrics_rows(load_ledger())
    rows[0] = {**rows[0], "source": "results/a.csv#row 3"}
    _, table = _build(tmp_path, rows)
    assert table.set_index("metric").at[rows[0]["metric"], "source"] == "results/a.csv#row 3"


def test_config_section_schema() -> None:
    """Both configs' `claims` sections validate; unknown kinds and keys are rejected."""
    root = Path(__file__).resolve().parents[1]
    schema = yaml.safe_load((root / "workflow/schemas/claims.schema.yaml").read_text())
    for overlays in PROFILES.values():
        section = load_profile(*overlays)["claims"]
        jsonschema.validate(section, schema)
        load_tolerances(overrides=section.get("tolerance_overrides"))
    jsonschema.validate({"tolerance_overrides": {"value": {"percent_points": 2.0}}}, schema)
    for bad in (
        {"tolerance_overrides": {"bogus": {}}},
        {"tolerance_overrides": {"ratio": {"x": 1}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def _calibration_file(tmp_path: Path, targets: list[str], name: str = "trace_mix") -> Path:
    """A calibration set with one fit using ``targets`` (and one fact F1)."""
    data = {
        "version": 1,
        "facts": {"F1": {"statement": "trace span", "value": 370.2, "unit": "h"}},
        "fits": {name: {"description": "test fit", "program": "rule test_fit",
                        "parameters": {"mix": "workloads.yaml"}, "targets": targets,
                        "residuals": f"results/calibration/{name}/residuals.csv"}},
    }
    path = tmp_path / "calibration.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_calibration_rejects_benefit_unknown_and_shared_targets(tmp_path: Path) -> None:
    """RollMux's benefit claims are never fit targets; unknown and reused targets fail too."""
    ledger = load_ledger()
    with pytest.raises(ClaimsError, match="C01 is a RollMux benefit claim"):
        load_calibration(ledger, _calibration_file(tmp_path, ["C05", "C01"]))
    with pytest.raises(ClaimsError, match="'C99' is neither a claim nor a fact"):
        load_calibration(ledger, _calibration_file(tmp_path, ["C99"]))
    two = yaml.safe_load(_calibration_file(tmp_path, ["C05"]).read_text())
    two["fits"]["other"] = {**two["fits"]["trace_mix"], "targets": ["C05", "F1"]}
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(two))
    with pytest.raises(ClaimsError, match=r"C05 is already a target of fits\."):
        load_calibration(ledger, tmp_path / "two.yaml")


def test_shipped_calibration_set_fits_no_benefit_claim() -> None:
    """The declared calibration set loads: no benefit claim among its targets."""
    ledger = load_ledger()
    roles = dict(zip(ledger["claim_id"], ledger["role"], strict=True))
    calibration = load_calibration(ledger)
    for fit in calibration.fits.values():
        assert all(roles.get(t, "fact") != "benefit" for t in fit.targets), fit.name


def test_calibrated_status_and_residuals_in_report(tmp_path: Path) -> None:
    """A fit target is `calibrated` even when ours equals the paper; residuals are shown."""
    ledger = load_ledger()
    residuals = tmp_path / "results" / "calibration" / "trace_mix" / "residuals.csv"
    residuals.parent.mkdir(parents=True)
    residuals.write_text("target,unit,paper,fitted,residual,note\n"
                         "C05,USD/h,936,940.1,+0.4%,fit\nF1,h,370.2,370.2,0,fit\n")
    counts, table = _build(tmp_path, _metrics_rows(ledger),
                           calibration=_calibration_file(tmp_path, ["C05", "F1"]))
    rec = table.set_index("claim_id")
    assert rec.at["C05", "status"] == CALIBRATED and rec.at["C05", "calibration"] == "trace_mix"
    assert counts[CALIBRATED] == 1
    markdown = (tmp_path / "claims.md").read_text()
    assert "### Fit `trace_mix`" in markdown and "| C05 | USD/h | 936 | 940.1 |" in markdown
    residuals.unlink()
    with pytest.raises(ClaimsError, match="no such file"):
        _build(tmp_path, _metrics_rows(ledger),
               calibration=_calibration_file(tmp_path, ["C05", "F1"]))


def _ledger_with_evidence(tmp_path: Path, claim_id: str, evidence: str) -> Path:
    """A copy of the shipped ledger whose row ``claim_id`` names ``evidence``."""
    text = (ROOT / "src/rollmux/data/claims.csv").read_text()
    lines = text.splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if line.startswith(f"{claim_id},"))
    cells = next(csv.reader([lines[row]]))
    cells[-1] = evidence
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    lines[row] = buffer.getvalue()
    path = tmp_path / f"ledger-{claim_id}.csv"
    path.write_text("".join(lines))
    return path


def test_differing_claim_needs_existing_evidence(tmp_path: Path) -> None:
    """With require_evidence, a differs row without an existing evidence file fails loudly."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    next(r for r in rows if r["metric"] == "cost_ratio_solod_over_rollmux")["value"] = "1.26"
    bare = _ledger_with_evidence(tmp_path, "C01", "")
    with pytest.raises(ClaimsError, match=r"C01 .*no evidence in the ledger"):
        _build(tmp_path, rows, require_evidence=True, ledger=bare)
    named = _ledger_with_evidence(tmp_path, "C01", "results/evidence/c01.csv")
    with pytest.raises(ClaimsError, match=r"evidence results/evidence/c01\.csv not found"):
        _build(tmp_path, rows, require_evidence=True, ledger=named)
    (tmp_path / "results" / "evidence").mkdir(parents=True)
    (tmp_path / "results" / "evidence" / "c01.csv").write_text("what_it_would_take\n1\n")
    _, table = _build(tmp_path, rows, require_evidence=True, ledger=named)
    assert table.set_index("claim_id").at["C01", "evidence"] == "results/evidence/c01.csv"


def test_caveat_footnotes_stay_on_reproduced_rows(tmp_path: Path) -> None:
    """A reproduced row keeps only its caveat-* footnotes (agreement qualified, e.g. C47's
    gap existing without drift); a differing row keeps all of them."""
    ledger = load_ledger()
    counts, table = _build(tmp_path, _metrics_rows(ledger))
    assert counts[DIFFERS] == 0
    notes = table.set_index("claim_id")["footnotes"]
    assert notes["C47"] == "caveat-drift-gap-without-drift"
    assert notes["C01"] == ""  # synthetic-trace explains differences only
    rows = _metrics_rows(ledger)
    next(r for r in rows if r["metric"] == "cost_over_regroup_increasing")["value"] = "3"
    _, table = _build(tmp_path, rows)
    assert table.set_index("claim_id").at["C47", "footnotes"] == (
        "total-cost;caveat-drift-gap-without-drift")
    assert "[caveat-drift-gap-without-drift]" in (tmp_path / "claims.md").read_text()


def test_ledger_evidence_must_be_under_results(tmp_path: Path) -> None:
    """An evidence path outside results/ is a ledger error naming the row and column."""
    path = _ledger_with_evidence(tmp_path, "C01", "../etc/passwd")
    with pytest.raises(ClaimsError, match=r"row 1 \(C01\), column evidence"):
        load_ledger(path)


def test_every_footnote_of_the_ledger_exists() -> None:
    """Each footnote id used by the ledger has its text in claims_footnotes.yaml."""
    from rollmux.experiments.claims import load_footnotes

    notes = load_footnotes()
    used = {f for text in load_ledger()["footnotes"] for f in text.split(";") if f}
    assert used <= set(notes)


# --------------------------------------------------------------------------- beyond the paper


def _beyond_rows(ledger: pd.DataFrame, value: str = "0.95") -> list[dict[str, str]]:
    """One metrics row per result beyond the paper, all with ``value``."""
    return [{"metric": rec["metric"], "value": value, "low": "", "high": "",
             "unit": rec["unit"], "source": "results/beyond/test.csv", "note": "test row"}
            for rec in ledger.to_dict("records")]


def test_results_beyond_the_paper_are_a_section_of_the_report(tmp_path: Path) -> None:
    """The shipped beyond ledger validates; its values come from the metrics files and
    are rendered, with ids and evidence, under "Results beyond the paper"."""
    beyond = load_beyond_ledger()
    assert list(beyond.columns) == list(BEYOND_COLUMNS)
    assert beyond["result_id"].is_unique and beyond["metric"].is_unique
    assert set(beyond["metric"]).isdisjoint(load_ledger()["metric"])
    rows = _beyond_rows(beyond, "0.9467")
    rows[0].update(low="0.9", high="0.99")  # an interval over seeds, rendered beside it
    path = _write(tmp_path / "beyond.csv", rows)
    table = beyond_report(beyond, [path], tmp_path, require_evidence=False)
    assert list(table.columns) == list(BEYOND_REPORT_COLUMNS)
    assert (table["value"] == 0.9467).all() and len(table) == len(beyond)
    _build(tmp_path, _metrics_rows(load_ledger()), beyond_metrics_paths=[path])
    text = (tmp_path / "claims.md").read_text()
    section = text.split("## Results beyond the paper", 1)[1]
    for rec in beyond.to_dict("records"):
        assert f"| {rec['result_id']} | {rec['source']} |" in section
    assert "| 0.9467 |" in section and "| 0.9467 [0.9, 0.99] |" in section
    assert "| test row |" in section  # each metrics row's note
    assert json.loads((tmp_path / "summary.json").read_text())["beyond"] == len(beyond)


def test_beyond_result_without_value_or_evidence_fails_loudly(tmp_path: Path) -> None:
    """A result whose metric is in no file, or whose evidence file is missing, is named;
    so are a unit other than the ledger's and a bad ledger row."""
    beyond = load_beyond_ledger()
    rows = _beyond_rows(beyond)
    dropped = rows.pop(0)["metric"]
    path = _write(tmp_path / "beyond.csv", rows)
    with pytest.raises(ClaimsError, match=rf"B01 \({dropped}\): no value in"):
        beyond_report(beyond, [path], tmp_path, require_evidence=False)
    full = _write(tmp_path / "full.csv", _beyond_rows(beyond))
    with pytest.raises(ClaimsError, match=r"evidence results/beyond/repeat\.csv not found"):
        beyond_report(beyond, [full], tmp_path, require_evidence=True)
    for evidence in sorted(set(beyond["evidence"])):  # every results file the rows name
        (tmp_path / evidence).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / evidence).write_text("trace\nx\n")
    assert len(beyond_report(beyond, [full], tmp_path, require_evidence=True)) == len(beyond)
    wrong_unit = _beyond_rows(beyond)
    wrong_unit[0]["unit"] = "%"
    with pytest.raises(ClaimsError, match=r"beyond\.csv:2: row 1, column unit"):
        beyond_report(beyond, [_write(tmp_path / "beyond.csv", wrong_unit)], tmp_path, False)
    text = (ROOT / "src/rollmux/data/beyond.csv").read_text().replace(",x,results/", ",zz,results/",
                                                                       1)
    (tmp_path / "ledger.csv").write_text(text)
    with pytest.raises(ClaimsError, match=r"row 1 \(B01\), column unit: 'zz'"):
        load_beyond_ledger(tmp_path / "ledger.csv")


def _with_residuals(tmp_path: Path, body: str) -> None:
    """Write the test fit's residuals file under ``tmp_path``."""
    residuals = tmp_path / "results" / "calibration" / "trace_mix" / "residuals.csv"
    residuals.parent.mkdir(parents=True, exist_ok=True)
    residuals.write_text("target,unit,paper,fitted,residual,note\n" + body)


def test_calibrated_only_where_the_fit_reaches_the_claim(tmp_path: Path) -> None:
    """A fit target outside its tolerance `differs`, the fit's residuals as its evidence."""
    ledger = load_ledger()
    _with_residuals(tmp_path, "C05,USD/h,936,1100,+17.5%,fit\nF1,h,370.2,370.2,0,fit\n")
    rows = _metrics_rows(ledger)
    next(r for r in rows if r["metric"] == "cost_per_hour_solod")["value"] = "1100"
    _, table = _build(tmp_path, rows, require_evidence=True,
                      calibration=_calibration_file(tmp_path, ["C05", "F1"]))
    rec = table.set_index("claim_id").loc["C05"]
    assert rec["status"] == DIFFERS and rec["calibration"] == "trace_mix"
    assert rec["evidence"] == "results/calibration/trace_mix/residuals.csv"
    assert "does not reach" in rec["reason"]


def test_range_claim_with_one_fitted_end_judges_the_other_as_a_prediction(
        tmp_path: Path) -> None:
    """Target `C24:high`: the high end is fitted, the low end a prediction that can miss."""
    ledger = load_ledger()
    _with_residuals(tmp_path, "C24,%,18.1,18.1,+0.000 pp,fit\nF1,h,370.2,370.2,0,fit\n")
    calibration = _calibration_file(tmp_path, ["C24:high", "F1"])
    assert load_calibration(ledger, calibration).fitted_end("C24") == "high"
    rows = _metrics_rows(ledger)
    _, table = _build(tmp_path, rows, calibration=calibration)
    rec = table.set_index("claim_id").loc["C24"]
    assert rec["status"] == CALIBRATED and "low end is not fitted" in rec["reason"]
    next(r for r in rows if r["metric"] == "iteration_slowdown_vs_ideal")["low"] = "0.3"
    _, table = _build(tmp_path, rows, calibration=calibration)
    rec = table.set_index("claim_id").loc["C24"]
    assert rec["status"] == DIFFERS and "a prediction outside the tolerance" in rec["reason"]
    with pytest.raises(ClaimsError, match="one end of a range claim"):
        load_calibration(ledger, _calibration_file(tmp_path, ["C05:high"]))


def test_margin_is_the_difference_over_the_tolerance(tmp_path: Path) -> None:
    """0 exact, +-1 at the edge; a range shows the end nearer its failing side."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    paper = dict(zip(ledger["metric"], ledger["paper_value"], strict=True))
    ratio = next(r for r in rows if r["metric"] == "cost_ratio_solod_over_rollmux")
    ratio["value"] = str(float(paper["cost_ratio_solod_over_rollmux"]) * 1.05)  # tol 10%
    c24 = next(r for r in rows if r["metric"] == "iteration_slowdown_vs_ideal")  # 8-18.1 %
    c24["low"], c24["high"] = "12", "16.1"  # low +4 pp, high -2 pp; 5 pp band
    _, table = _build(tmp_path, rows)
    rec = table.set_index("claim_id")
    assert float(rec.at["C01", "margin"]) == pytest.approx(0.5)
    assert float(rec.at["C24", "margin"]) == pytest.approx(-0.4)
    assert float(rec.at["C02", "margin"]) == pytest.approx(0.0)
    kinds = dict(zip(rec.index, rec["kind"], strict=True))
    bounds = [c for c, k in kinds.items() if k in ("lower_bound", "upper_bound", "property")]
    assert bounds and all(rec.at[c, "margin"] == "" for c in bounds)


def test_attainment_claims_take_the_realised_reading(tmp_path: Path) -> None:
    """C03 differs on its realised value; the reference value stands beside it, and the
    row says the two readings disagree; without the reference row the report fails."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    next(r for r in rows if r["metric"] == "slo_attainment_rollmux")["value"] = "91.5"
    _, table = _build(tmp_path, rows)
    rec = table.set_index("claim_id").loc["C03"]
    assert (rec["status"], rec["reading"]) == (DIFFERS, "realised")
    assert (rec["reference"], rec["reference_status"]) == ("100", REPRODUCED)
    assert rec["reason"].startswith("The readings disagree: realised 91.5 (differs), paper "
                                    "reference 100 (reproduced)")
    same = table.set_index("claim_id").loc["C38"]
    assert same["status"] == same["reference_status"] == REPRODUCED
    assert "disagree" not in same["reason"]
    assert (table.set_index("claim_id").loc["C01", ["reading", "reference"]] == "").all()
    markdown = (tmp_path / "claims.md").read_text()
    assert "| 100 (reproduced) |" in markdown
    without = [r for r in rows if r["metric"] != "slo_attainment_rollmux@reference"]
    with pytest.raises(ClaimsError, match=r"slo_attainment_rollmux@reference \(claim C03\)"):
        _build(tmp_path, without)
    stray = [*rows, {**rows[0], "metric": "cost_ratio_solod_over_rollmux@reference"}]
    with pytest.raises(ClaimsError, match="no companion row under reading 'reference'"):
        _build(tmp_path, stray)


def test_near_edge_reproduced_rows_get_a_computed_what_it_would_take(tmp_path: Path) -> None:
    """A reproduced row with |margin| > 0.5 shows the computed input that gives the paper's
    value, or `not computed`; rows nearer the paper and differing rows get nothing."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    paper = dict(zip(ledger["metric"], ledger["paper_value"], strict=True))
    for metric, factor in (("cost_ratio_solod_over_rollmux", 1.08),
                           ("cost_ratio_verl_over_rollmux", 1.09),
                           ("cost_per_hour_rollmux", 1.02)):
        rec = next(r for r in rows if r["metric"] == metric)
        rec["value"] = str(float(paper[metric]) * factor)
    wit = tmp_path / "wit.csv"
    pd.DataFrame([
        {"claim_id": "C01", "quantity": "utilisation", "unit": "x", "ours": 0.52,
         "needed": 0.73, "note": "n"},
        {"claim_id": "C01", "quantity": "a reading", "unit": "x", "ours": 1.0, "needed": "",
         "note": "no input"},
    ]).to_csv(wit, index=False)
    _, table = _build(tmp_path, rows, what_it_would_take_paths=[wit])
    rec = table.set_index("claim_id")
    assert rec.at["C01", "what_it_would_take"] == f"utilisation: ours 0.52, needed 0.73 x ({wit})"
    assert rec.at["C02", "what_it_would_take"] == "not computed"
    assert rec.at["C04", "what_it_would_take"] == ""
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["near_edge"]) == {"C01", "C02"}
    assert "## Reproduced near the edge" in (tmp_path / "claims.md").read_text()


def test_real_lengths_rows_stand_beside_the_lognormal_values(tmp_path: Path) -> None:
    """A production claim's @real-lengths row fills the real-lengths columns with the
    status the claims' rule gives it over its seeds; the claim's own status is untouched,
    and the report shows both side by side."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    paper = dict(zip(ledger["metric"], ledger["paper_value"], strict=True))
    c01, c02 = "cost_ratio_solod_over_rollmux", "cost_ratio_verl_over_rollmux"
    real = tmp_path / "real.csv"
    seeds = tmp_path / "seeds_real.csv"
    _write(real, [{**next(r for r in rows if r["metric"] == m), "value": str(v),
                   "metric": with_reading(m, LENGTHS_READING)}
                  for m, v in ((c01, 1.2), (c02, float(paper[c02])))])
    per_seed = [{"metric": with_reading(c01, LENGTHS_READING), "seed": k, "value": v,
                 "low": "", "high": "", "unit": "x"} for k, v in enumerate((1.19, 1.21))]
    per_seed += [{"metric": with_reading(c02, LENGTHS_READING), "seed": k,
                  "value": float(paper[c02]), "low": "", "high": "", "unit": "x"}
                 for k in range(2)]
    pd.DataFrame(per_seed).to_csv(seeds, index=False)
    half = len(rows) // 2
    files = [_write(tmp_path / "a.csv", rows[:half]), _write(tmp_path / "b.csv", rows[half:]),
             real]
    write_calibration_residuals(tmp_path, ledger)
    build_claims_report(files, tmp_path / "claims.csv", tmp_path / "claims.md",
                        tmp_path / "summary.json", require_evidence=False,
                        results_root=tmp_path, seed_metrics_paths=[seeds])
    table = pd.read_csv(tmp_path / "claims.csv", dtype=str, keep_default_na=False)
    rec = table.set_index("claim_id")
    assert rec.at["C01", "status"] == REPRODUCED  # the lognormal value is the paper's
    assert (rec.at["C01", "real_lengths"], rec.at["C01", "real_lengths_status"]) == (
        "1.2", DIFFERS)
    assert rec.at["C01", "real_lengths_interval"].endswith("(2)")
    assert rec.at["C02", "real_lengths_status"] == REPRODUCED
    assert (rec.loc[["C03", "C38"], ["real_lengths", "real_lengths_status"]] == "").all().all()
    markdown = (tmp_path / "claims.md").read_text()
    assert "## Production claims with real response lengths" in markdown
    assert re.search(r"\| C01 \|[^\n]*\| reproduced \| 1\.2 \| \[[^\n]*\(2\) \| differs \|",
                     markdown)
    # a companion row of a metric outside the production stage is refused
    stray = _write(tmp_path / "stray.csv", [{**rows[0], "metric": with_reading(
        "slo_greedy_mixed", LENGTHS_READING), "unit": "%"}])
    with pytest.raises(ClaimsError, match="no companion row under reading 'real-lengths'"):
        build_claims_report([*files, stray], tmp_path / "c.csv", tmp_path / "c.md",
                            tmp_path / "s.json", require_evidence=False,
                            results_root=tmp_path)


def test_what_it_would_take_shows_the_value_fed_back(tmp_path: Path) -> None:
    """A computed input with the claim's value recomputed at it shows that value and the
    paper's, so the reader sees the input reproduce the paper's number."""
    ledger = load_ledger()
    rows = _metrics_rows(ledger)
    paper = dict(zip(ledger["metric"], ledger["paper_value"], strict=True))
    rec = next(r for r in rows if r["metric"] == "slo_greedy_mixed")
    rec["value"] = str(float(paper["slo_greedy_mixed"]) - 3.7)
    wit = tmp_path / "wit.csv"
    pd.DataFrame([{"claim_id": "C43", "quantity": "slo_scale", "unit": "x", "ours": 1.0,
                   "needed": 1.08, "paper": 62.0, "fed_back": 63.33, "note": "n"}]
                 ).to_csv(wit, index=False)
    _, table = _build(tmp_path, rows, what_it_would_take_paths=[wit])
    text = table.set_index("claim_id").at["C43", "what_it_would_take"]
    assert text == f"slo_scale: ours 1, needed 1.08 x, which gives 63.33 (paper 62) ({wit})"
    # a search that found no value says so, with its note
    pd.DataFrame([{"claim_id": "C43", "quantity": "price", "unit": "x", "ours": 2.85,
                   "needed": "", "paper": 62.0, "fed_back": "", "note": "none in [1, 2]"}]
                 ).to_csv(wit, index=False)
    _, table = _build(tmp_path, rows, what_it_would_take_paths=[wit])
    text = table.set_index("claim_id").at["C43", "what_it_would_take"]
    assert text == f"price: ours 2.85, none gives the paper's value (none in [1, 2]) ({wit})"
