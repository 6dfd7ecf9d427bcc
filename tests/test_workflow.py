"""Snakemake pipeline: lint, DAGs of both profiles, determinism, resume, claims, HTML report.

The real runs happen in a temporary copy of the pipeline (Snakefile, workflow/, config/,
analysis/, traces/ and the claims ledger) with the tests' config, .test/config/config.yaml
merged over config/config.yaml, on a small subset of cheap targets (about 3 s of work per job; most
of each run is Snakemake's and Python's start-up).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from html import escape as html_escape
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import yaml
from figure_inputs import FIGURES
from scriptmod import load_script

ROOT = Path(__file__).resolve().parents[1]
#: Files and folders of the repository a pipeline copy needs.
PIPELINE_FILES = (
    "Snakefile",
    "workflow",
    "config",
    ".test",
    "analysis",
    "traces",
    "environment.yml",
    "pyproject.toml",
    "src/rollmux/data",
    "src/rollmux/traces/workloads.yaml",
    "benchmarks/recorded",
)
#: Cheap targets of the determinism runs: two independent jobs, so two cores run both
#: at once.
SMALL_TARGETS = (
    "results/theorem1/summary.csv",
    "results/traces/trace=microbench/stats.csv",
)
#: The report's global description, as declared in the root Snakefile.
REPORT_LINE = 'report: "workflow/report/workflow.rst"'
#: The report's layout, as the Makefile's reproduce target passes it.
REPORT_STYLESHEET = "workflow/report/report.css"
#: The narrowest window the report must read in without horizontal scrolling (issue 22).
REPORT_WIDTH = 1280
#: Stages of the metrics contract (workflow/rules/claims.smk).
METRIC_STAGES = ("production", "simulation", "robustness", "models")

# Every test runs Snakemake in subprocesses. `make test` hands whole files to its xdist
# workers (--dist loadfile), so the module's pipeline run (clean_run) is built once.
pytestmark = pytest.mark.subprocess


def copy_pipeline(dest: Path) -> Path:
    """Copy the files the pipeline needs into ``dest`` (no results, figures or state)."""
    for name in PIPELINE_FILES:
        source = ROOT / name
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", ".snakemake", "*.pyc")
            shutil.copytree(source, target, ignore=ignore)
        else:
            shutil.copy2(source, target)
    return dest


#: The tests' config: an overlay on config/config.yaml with the few keys the small targets
#: read made tiny.
TEST_CONFIG = ".test/config/config.yaml"


def snakemake_command(workdir: Path, *args: str) -> list[str]:
    """Command line of Snakemake in ``workdir`` on the tests' config (targets first)."""
    return [sys.executable, "-m", "snakemake", *args, "--configfile", TEST_CONFIG]


def snakemake(workdir: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run Snakemake in ``workdir``; fail the test with its output if it fails."""
    result = subprocess.run(
        snakemake_command(workdir, *args),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"snakemake {' '.join(args)} failed:\n{result.stderr[-4000:]}"
    return result


def digests(workdir: Path) -> dict[str, str]:
    """SHA-256 of every result and figure file (logs excluded), by relative path."""
    files = [
        path
        for folder in ("results", "figures")
        for path in sorted((workdir / folder).rglob("*"))
        if path.is_file() and "logs" not in path.relative_to(workdir).parts
    ]
    return {
        str(path.relative_to(workdir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in files
    }


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the pipeline with the small targets built once, on one core."""
    workdir = copy_pipeline(tmp_path_factory.mktemp("clean"))
    snakemake(workdir, *SMALL_TARGETS, "--cores", "1")
    return workdir


def test_lint_clean() -> None:
    """`snakemake --lint` finds nothing to complain about."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Congratulations" in result.stdout + result.stderr


@pytest.mark.parametrize("config", ["config/config.yaml", "config/paper.yaml"])
def test_dry_run_builds_dag(config: str, tmp_path: Path) -> None:
    """Both profiles validate and give a complete DAG of `rule all`, claims report included."""
    workdir = copy_pipeline(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--dry-run",
            "--quiet",
            "rules",
            "--configfile",
            config,
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "claims_report" in output and "all" in output


def test_runs_are_byte_identical_across_cores(clean_run: Path, tmp_path: Path) -> None:
    """A second, independent run on two cores writes the same bytes as the one-core run."""
    workdir = copy_pipeline(tmp_path)
    snakemake(workdir, *SMALL_TARGETS, "--cores", "2")
    first, second = digests(clean_run), digests(workdir)
    assert set(SMALL_TARGETS) <= set(first)
    assert first == second


def test_rerun_has_nothing_to_do(clean_run: Path) -> None:
    """Rebuilding finished targets is a no-op (nothing rerun, nothing rewritten)."""
    before = digests(clean_run)
    result = snakemake(clean_run, *SMALL_TARGETS, "--cores", "1", "--dry-run")
    assert "Nothing to be done" in result.stdout + result.stderr
    assert digests(clean_run) == before


def makefile_resume_steps() -> tuple[str, list[str]]:
    """The `reproduce` recipe's resume parts: the stale-lock script it runs first and the
    Snakemake flags of ``RESUME`` (so the test below resumes as the README's command does)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    flags = next(line.split(":=", 1)[1].split() for line in text.splitlines()
                 if line.startswith("RESUME :="))
    recipe = text[text.index("\nreproduce:"):].split("\n\n", 1)[0]
    assert "scripts/unlock_stale.py" in recipe and "$(RESUME)" in recipe
    return "scripts/unlock_stale.py", flags


def makefile_schedule_flags() -> list[str]:
    """The Snakemake flags of the Makefile's ``SCHEDULE`` (checked to be on `reproduce`)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    flags = next(line.split(":=", 1)[1].split() for line in text.splitlines()
                 if line.startswith("SCHEDULE :="))
    recipe = text[text.index("\nreproduce:"):].split("\n\n", 1)[0]
    assert "$(SCHEDULE)" in recipe
    return flags


def test_makefile_schedules_with_a_long_rate_limit_span() -> None:
    """`make reproduce` stretches Snakemake's rate-limit span beyond the default second
    (fewer scheduler passes) without limiting the paper profile's ~900 local jobs."""
    from snakemake.settings.types import MaxJobsPerTimespan

    flags = makefile_schedule_flags()
    assert flags[0] == "--max-jobs-per-timespan" and len(flags) == 2
    limit = MaxJobsPerTimespan.parse_choice(flags[1])
    assert limit.timespan > 1
    assert limit.max_jobs >= 10_000


def test_run_ends_without_waiting_out_the_scheduler_timer(tmp_path: Path) -> None:
    """With a 10-minute rate-limit span a one-job run still ends when its job does: the
    Snakefile's onsuccess handler cancels the scheduler's last timer, which the interpreter
    would otherwise wait out (the run would then hit this call's 5-minute timeout)."""
    workdir = copy_pipeline(tmp_path)
    target = "results/sim/traces/production-default-first3.csv"
    snakemake(workdir, target, "--cores", "1", "--max-jobs-per-timespan", "100000/600s",
              timeout=300)
    assert (workdir / target).is_file()


@pytest.mark.slow
@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_interrupted_run_resumes_with_the_same_command(clean_run: Path, tmp_path: Path,
                                                       interrupt: signal.Signals) -> None:
    """Ctrl-C (SIGINT to the whole process group) or SIGKILL mid-run, then the README's
    command again: it resumes (no IncompleteFilesException, no stale lock) and ends with
    the uninterrupted run's bytes.

    The interrupt lands as soon as the job's script has started; whether or not its atomic
    write had happened by then, the target must afterwards be either absent or complete.
    Marked slow (about 12 s per case on an idle 2-core machine): a killed run and a resume.
    """
    target = "results/theorem1/summary.csv"
    unlock, resume = makefile_resume_steps()
    workdir = copy_pipeline(tmp_path)
    shutil.copy2(ROOT / unlock, workdir / "unlock_stale.py")
    log = workdir / "results" / "logs" / "theorem1_summary.log"
    proc = subprocess.Popen(
        snakemake_command(workdir, target, "--cores", "1", *resume),
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not log.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, interrupt)
    proc.wait(timeout=60)
    output = workdir / target
    if output.exists():  # the write beat the interrupt: it must be whole
        assert output.read_bytes() == (clean_run / target).read_bytes()
    subprocess.run([sys.executable, "unlock_stale.py", "--configfile", TEST_CONFIG],
                   cwd=workdir, check=True, timeout=240)
    snakemake(workdir, target, "--cores", "1", *resume)
    assert output.read_bytes() == (clean_run / target).read_bytes()
    # a script killed inside its atomic write may leave its hidden temporary file, never
    # a visible partial output
    assert sorted(p.name for p in output.parent.iterdir() if not p.name.startswith(".")) == [
        "summary.csv"
    ]


def _write_metrics(workdir: Path) -> None:
    """Metrics files carrying the paper's own numbers for every reproducible claim, and a
    stand-in for every evidence file the ledger names (inputs of the claims rule)."""
    from rollmux.experiments.metrics import ATTAINMENT_METRICS, BESIDE_READING, with_reading

    ledger = pd.read_csv(
        workdir / "src/rollmux/data/claims.csv", dtype=str, keep_default_na=False, comment="#"
    )
    rows = ledger[ledger["reproducible"] == "yes"].rename(
        columns={"paper_value": "value", "paper_low": "low", "paper_high": "high"}
    )
    rows = rows.assign(source="test", note="paper value fed back")[
        ["metric", "value", "low", "high", "unit", "source", "note"]
    ]
    folder = workdir / "results" / "metrics"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seeds").mkdir(exist_ok=True)
    for i, stage in enumerate(METRIC_STAGES):
        part = rows.iloc[i :: len(METRIC_STAGES)]
        # each SLO attainment claim's paper-reference companion (`<metric>@reference`)
        companions = part[part["metric"].isin(ATTAINMENT_METRICS)].assign(
            metric=lambda t: t["metric"].map(lambda m: with_reading(m, BESIDE_READING)))
        pd.concat([part, companions]).to_csv(folder / f"{stage}.csv", index=False)
        # the per-seed values: the same numbers at two seeds (a zero-width interval)
        pd.concat([part.assign(seed=seed) for seed in (0, 1)])[
            ["metric", "seed", "value", "low", "high", "unit"]
        ].to_csv(folder / "seeds" / f"{stage}.csv", index=False)
    # the certified gaps of the optimum-normalised claims (rollmux.experiments.optimum_gaps):
    # a header only, no claim normalised by an optimum
    (folder / "gaps").mkdir(exist_ok=True)
    for stage in ("simulation", "robustness"):
        (folder / "gaps" / f"{stage}.csv").write_text(
            "metric,reference,readings,optimum_gap,optimum_gap_mean,source\n")
    for evidence in sorted({e for e in ledger["evidence"] if e.strip()}):
        path = workdir / evidence.strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("stand-in\n")
    # the what-it-would-take table is also an input the claims rule parses: its header only
    (workdir / "results/microbench/what_it_would_take.csv").write_text(
        "claim_id,quantity,unit,ours,needed,note\n")
    from rollmux.experiments.near_edge import NEAR_EDGE_COLUMNS

    (workdir / "results/evidence/what_it_would_take.csv").write_text(
        ",".join(NEAR_EDGE_COLUMNS) + "\n")
    # the results beyond the paper (rules beyond_repeat and designs_comparison: their
    # metrics files, BEYOND_METRICS), values of 1; the D rows are the designs'
    beyond = pd.read_csv(workdir / "src/rollmux/data/beyond.csv", dtype=str,
                         keep_default_na=False, comment="#")
    stand_in = beyond.assign(value="1", low="", high="", source="test", note="stand-in")[
        ["metric", "value", "low", "high", "unit", "source", "note"]
    ]
    designs = beyond["result_id"].str.startswith("D")
    stand_in[~designs].to_csv(folder / "beyond.csv", index=False)
    stand_in[designs].to_csv(folder / "designs.csv", index=False)
    for evidence in sorted(set(beyond["evidence"])):
        (workdir / evidence).parent.mkdir(parents=True, exist_ok=True)
        (workdir / evidence).write_text("stand-in\n")


@pytest.fixture(scope="module")
def html_report(clean_run: Path) -> Path:
    """The claims rule run on stand-in metrics, then ``snakemake --report`` (built once).

    Only the claims rule and the figure's rules are allowed, so the metrics files written
    here stand in for the simulation stages' outputs.
    """
    _write_metrics(clean_run)
    allowed = ("--allowed-rules", "claims_report", "calibrate_production_mix",
               "calibrate_microbench_types", "gantt_phases", "fig01_gantt")
    targets = ("figures/fig01_gantt.png", "figures/claims.csv", "figures/claims.md")
    snakemake(clean_run, *targets, "--cores", "2", *allowed)
    # the global description of the report (root Snakefile); added to this copy if absent
    snakefile = clean_run / "Snakefile"
    text = snakefile.read_text()
    if REPORT_LINE not in text:
        anchor = 'configfile: "config/config.yaml"\n'
        assert anchor in text, "root Snakefile without its configfile line"
        snakefile.write_text(text.replace(anchor, f"{anchor}{REPORT_LINE}\n", 1))
    report = clean_run / "figures" / "report.html"
    snakemake(clean_run, "figures/fig01_gantt.png", "figures/claims.csv", "figures/claims.html",
              "--report", str(report), "--report-stylesheet", REPORT_STYLESHEET, *allowed)
    return report


def _first_claim(workdir: Path) -> dict[str, str]:
    """The first row of the claims report the pipeline wrote."""
    table = pd.read_csv(workdir / "figures" / "claims.csv", dtype=str, keep_default_na=False)
    return dict(table.iloc[0])


def test_claims_rule_and_html_report(clean_run: Path, html_report: Path) -> None:
    """The claims rule joins the metrics files; the HTML report holds the figure and the
    claims table (a table, not only a CSV download), with the headline counts on its
    landing page and the figures under the numbered categories in the paper's order."""
    summary = yaml.safe_load((clean_run / "results" / "claims_summary.json").read_text())
    assert summary["counts"]["differs"] == 0 and summary["total"] > 50
    claims_md = (clean_run / "figures" / "claims.md").read_text()
    assert summary["summary"] in claims_md
    assert "## Results beyond the paper" in claims_md and summary["beyond"] >= 8
    html = html_report.read_text(encoding="utf-8")
    assert "fig01_gantt.png" in html and "claims.csv" in html and "claims.html" in html
    assert 'src="http' not in html, "the report must be self-contained"
    assert "rollmux Snakemake pipeline" in html, "workflow/report/workflow.rst not rendered"
    # the landing page (the global description, a JSON string in the page) holds the
    # headline counts and the claims table with every claim's statement
    landing = (clean_run / "results" / "report" / "claims_landing.html").read_text()
    assert summary["summary"] in landing and "<table" in landing
    claim = _first_claim(clean_run)
    assert html_escape(claim["statement"]) in landing
    assert json.dumps(landing.strip())[1:200] in html, "landing page without the claims table"
    assert "2. Motivation: Fig. 1-4" in html and "1. Claims" in html


def test_report_shows_the_claims_table_in_a_browser(clean_run: Path, html_report: Path,
                                                    tmp_path: Path) -> None:
    """Headless Chromium renders the report: a claim row is in the DOM, the page not blank."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1400,1000", "--virtual-time-budget=10000"]
    url = html_report.as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    claim = _first_claim(clean_run)
    assert 'id="rollmux-claims"' in dom.stdout, "the claims table was not rendered"
    assert html_escape(claim["statement"]) in dom.stdout
    assert f">{claim['claim_id']}<" in dom.stdout
    shot = tmp_path / "report.png"
    done = subprocess.run([*flags, f"--screenshot={shot}", url], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    pixels = plt.imread(shot)
    assert pixels.shape[0] >= 900 and float(pixels[..., :3].std()) > 0.05, "blank screenshot"


def _chromium() -> str:
    """The headless browser, or skip the test with the reason."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    return browser


def _tall_figure(tmp_path: Path) -> str:
    """Fig. 10 drawn from the figure check's stand-ins, as a data URI: the report's tallest
    figure (2:2.4), which once lost its top edge above the pane."""
    png, pdf = tmp_path / "fig10.png", tmp_path / "fig10.pdf"
    fig10 = load_script("fig10_microbench", "analysis")
    assert fig10.main([*FIGURES["fig10_microbench.py"].argv(), "--png", str(png),
                       "--pdf", str(pdf)]) == 0
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()


def _layout(report: Path, browser: str, width: int, extra: dict[str, str],
            tmp_path: Path) -> dict[str, Any]:
    """What tests/report_layout.js measures in a copy of ``report`` at ``width`` pixels."""
    html = report.read_text(encoding="utf-8")
    hook = "root.render(e(App));"
    assert html.count(hook) == 1, "the Snakemake report no longer starts its app this way"
    html = html.replace(hook, "root.render(e(App, {ref: (app) => { window.rollmuxApp = app; }}));")
    probe = (ROOT / "tests" / "report_layout.js").read_text(encoding="utf-8")
    script = f"<script>window.rollmuxExtraFigures = {json.dumps(extra)};\n{probe}</script>"
    end = html.rindex("</body>")
    page = tmp_path / f"probe-{width}.html"
    page.write_text(html[:end] + script + html[end:], encoding="utf-8")
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},900", "--virtual-time-budget=60000", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.findall(r'<pre id="rollmux-layout"[^>]*>(.*?)</pre>', done.stdout, re.S)
    assert found, "the layout probe wrote nothing"
    layout: dict[str, Any] = json.loads(html_unescape(found[-1]))
    assert "error" not in layout, layout.get("error")
    return layout


def test_report_layout_in_a_browser(clean_run: Path, html_report: Path,
                                    tmp_path: Path) -> None:
    """At 1280 px the report reads without horizontal scrolling: the claims table in the
    page's flow, normal-sized text, its evidence column on screen; every figure, the tall
    Fig. 10 too, fully visible (top and left edges at scroll 0, its bottom when scrolled);
    no absolute path of the build machine anywhere in the report."""
    browser = _chromium()
    layout = _layout(html_report, browser, REPORT_WIDTH,
                     {"Fig. 10 (tall)": _tall_figure(tmp_path)}, tmp_path)
    assert layout["viewport"][0] == REPORT_WIDTH
    assert layout["claims_table"], "the claims table was not rendered"
    assert layout["landing_horizontal_scroll"] == []
    assert layout["table_scroll_boxes"] == [], "the claims table sits in a scroll box"
    assert layout["cell_font_px"] >= 12
    evidence = layout.get("evidence")
    assert evidence is not None, f"no evidence column in {layout.get('headers')}"
    assert evidence["visible"], "the evidence column is hidden"
    assert evidence["right"] <= REPORT_WIDTH, "the evidence column is off screen"
    # no column squeezed to a letter a line ("ev id en ce", "C0 1")
    assert layout["broken_headers"] == [] and layout["broken_ids"] == []
    names = [f["name"] for f in layout["figures"]]
    assert "figures/fig01_gantt.png" in names and "Fig. 10 (tall)" in names
    for figure in layout["figures"]:
        assert figure["shown"], figure["name"]
        for edge in ("top_gap", "left_gap", "right_gap", "bottom_gap"):
            assert figure[edge] >= -0.5, (figure["name"], edge, figure[edge])
        assert figure["horizontal_scroll"] == [], figure["name"]
    html = html_report.read_text(encoding="utf-8")
    machine = {str(clean_run), str(ROOT), sys.prefix, sys.base_prefix, sys.executable,
               str(Path.home())} - {"/", ""}
    assert sorted(p for p in machine if p in html) == [], "absolute paths in the report"


def test_layout_probe_catches_a_report_too_wide(clean_run: Path, html_report: Path,
                                                tmp_path: Path) -> None:
    """The probe can fail: without the stylesheet the claims table squeezes its columns or
    scrolls sideways, and the tall figure's top is out of reach (issue 22's report)."""
    browser = _chromium()
    html = html_report.read_text(encoding="utf-8")
    css = (ROOT / REPORT_STYLESHEET).read_text(encoding="utf-8")
    assert css.strip() and css.strip() in html, "the report does not carry report.css"
    bare = tmp_path / "bare.html"
    bare.write_text(html.replace(css.strip(), ""), encoding="utf-8")
    layout = _layout(bare, browser, REPORT_WIDTH,
                     {"Fig. 10 (tall)": _tall_figure(tmp_path)}, tmp_path)
    tall = next(f for f in layout["figures"] if f["name"] == "Fig. 10 (tall)")
    assert (layout.get("evidence", {}).get("right", 0) > REPORT_WIDTH
            or layout["landing_horizontal_scroll"] or layout["broken_headers"])
    assert tall["top_gap"] < -0.5, "without the stylesheet Fig. 10's top is out of reach"


def test_claims_rule_fails_on_missing_metric(clean_run: Path, tmp_path: Path) -> None:
    """A reproducible claim without a result fails the rule, naming the metric."""
    workdir = copy_pipeline(tmp_path)
    _write_metrics(workdir)
    models = workdir / "results" / "metrics" / "models.csv"
    table = pd.read_csv(models, dtype=str, keep_default_na=False)
    dropped = table["metric"].iloc[0]
    table.iloc[1:].to_csv(models, index=False)
    result = subprocess.run(
        snakemake_command(
            workdir, "figures/claims.csv", "--cores", "1", "--allowed-rules", "claims_report",
            "calibrate_production_mix", "calibrate_microbench_types",
        ),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    log = (workdir / "results" / "logs" / "claims_report.log").read_text()
    assert dropped in log and "no result" in log
    assert not (workdir / "figures" / "claims.csv").exists()
