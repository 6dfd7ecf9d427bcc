"""Write the README's result numbers from the results files (never typed by hand).

Usage: python scripts/readme_results.py [--check]

The README block between ``<!-- results -->`` and ``<!-- /results -->`` is rendered from
results/claims_summary.json (the claims counts) and figures/claims.csv (the headline
ratio, claim C01: ours against the paper's) after a pipeline run. ``--check`` exits 1
(writing nothing) when the README's block differs from the files.
tests/test_readme_results.py runs the same check whenever the results files exist.

The docs' blocks between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``
(:data:`DOC_BLOCKS`: Theorem 1's worst cases, supremum and readings in docs/theorem1.md
and docs/findings.md §1) are rendered the same way, from results/theorem1/
(:mod:`rollmux.theorem1.numbers`), so the two docs quote the same files.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from rollmux.io import write_text
from rollmux.theorem1 import numbers as theorem1_numbers

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SUMMARY = Path("results") / "claims_summary.json"
CLAIMS = Path("figures") / "claims.csv"
#: The headline claim quoted in the README: RollMux's cost over Solo-D's on the trace.
HEADLINE = "C01"
BLOCK = re.compile(r"(<!-- results -->\n)(.*?)(<!-- /results -->)", re.S)
#: Named blocks in docs: name -> (file, renderer of the block from the repository root).
DOC_BLOCKS = {
    "theorem1-worst-case": (Path("docs") / "theorem1.md", theorem1_numbers.worst_case_block),
    "theorem1-supremum": (Path("docs") / "theorem1.md", theorem1_numbers.supremum_block),
    "theorem1-readings": (Path("docs") / "theorem1.md", theorem1_numbers.readings_block),
    "theorem1-slo-optimum": (Path("docs") / "theorem1.md", theorem1_numbers.slo_optimum_block),
    "theorem1-repeat": (Path("docs") / "theorem1.md", theorem1_numbers.repeat_block),
    "findings-boundary": (Path("docs") / "findings.md",
                          theorem1_numbers.findings_boundary_block),
    "findings-theorem1": (Path("docs") / "findings.md", theorem1_numbers.findings_block),
    "findings-repeat": (Path("docs") / "findings.md", theorem1_numbers.findings_repeat_block),
}


def doc_block_pattern(name: str) -> re.Pattern[str]:
    """The markers of the docs block ``name``."""
    return re.compile(rf"(<!-- results:{re.escape(name)} -->\n)(.*?)(<!-- /results:"
                      rf"{re.escape(name)} -->)", re.S)


def doc_block(text: str, name: str) -> str:
    """The current text of block ``name``; ValueError when its markers are missing."""
    match = doc_block_pattern(name).search(text)
    if match is None:
        raise ValueError(f"no <!-- results:{name} --> ... <!-- /results:{name} --> block")
    return match.group(2)


def stale_doc_blocks(root: Path = ROOT, write: bool = False) -> list[str]:
    """Names of the docs blocks that differ from their files (rewritten when ``write``).

    A block whose results files are missing is left alone (not stale, not written).
    """
    stale = []
    texts: dict[Path, str] = {}
    for name, (doc, render_block) in DOC_BLOCKS.items():
        path = root / doc
        text = texts.get(path, path.read_text(encoding="utf-8"))
        try:
            block = render_block(root)
        except theorem1_numbers.MissingResults:
            continue
        if doc_block(text, name) != block:
            stale.append(name)
            texts[path] = doc_block_pattern(name).sub(
                lambda m, b=block: m.group(1) + b + m.group(3), text, count=1)
    if write:
        for path, text in texts.items():
            write_text(path, text)
    return stale


def render(root: Path = ROOT) -> str:
    """The README block's text from ``root``'s results files; ValueError names a missing one."""
    summary_path, claims_path = root / SUMMARY, root / CLAIMS
    for path in (summary_path, claims_path):
        if not path.is_file():
            raise ValueError(f"{path}: missing; run the pipeline first")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))["summary"]
    with claims_path.open(encoding="utf-8", newline="") as fh:
        rows = {row["claim_id"]: row for row in csv.DictReader(fh)}
    if HEADLINE not in rows:
        raise ValueError(f"{claims_path}: no row for claim {HEADLINE}")
    headline = rows[HEADLINE]
    # its 95% interval over seeds, when the report has one (docs/metrics.md)
    interval = (f", 95% interval {float(headline['ci_low']):.2f}-"
                f"{float(headline['ci_high']):.2f}x over {headline['seeds']} seeds"
                if headline.get("interval") else "")
    return (
        f"On the quick profile the report reads **{summary}** "
        f"({SUMMARY}). The production trace replay is {float(headline['ours']):.2f}x "
        f"cheaper than Solo-D{interval} against the paper's {float(headline['paper']):.2f}x "
        f"(claim {HEADLINE}, figures/claims.csv).\n"
    )


def readme_block(text: str) -> str:
    """The README's current block; ValueError when the markers are missing."""
    match = BLOCK.search(text)
    if match is None:
        raise ValueError("README.md: no <!-- results --> ... <!-- /results --> block")
    return match.group(2)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the README's block, or with --check report whether it matches the files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README differs")
    args = parser.parse_args(argv)
    stale = stale_doc_blocks(write=not args.check)
    if args.check and stale:
        print(f"docs blocks {', '.join(stale)} differ from the results files: "
              "python scripts/readme_results.py", file=sys.stderr)
        return 1
    text = README.read_text(encoding="utf-8")
    block = render()
    if readme_block(text) == block:
        return 0
    if args.check:
        print("README.md result numbers differ from the results files: "
              "python scripts/readme_results.py", file=sys.stderr)
        return 1
    write_text(README, BLOCK.sub(lambda m: m.group(1) + block + m.group(3), text, count=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
