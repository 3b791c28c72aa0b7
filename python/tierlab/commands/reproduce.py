"""``tierlab reproduce``: the papers' experiments, a report, and a claims table."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tierlab import papers
from tierlab.errors import ConfigError
from tierlab.papers import harness as rep
from tierlab.values import show

STYLE = {
    papers.WITHIN: "green",
    papers.QUAL_HOLDS: "green",
    papers.DIRECTION: "yellow",
    papers.WRONG: "red",
    papers.QUAL_FAILS: "red",
    papers.CALIBRATED: "blue",
    "failed": "red",
}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "reproduce",
        help="re-run the papers' experiments and compare with their claims",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs each paper's experiment on traces tierlab ships (generated or captured by\n"
        "its own tools), writes OUTDIR/report.html with every figure, and prints each claim of the\n"
        "paper beside tierlab's figure with a grade: within 25% of the paper's figure, direction\n"
        "only, wrong direction, qualitative: holds/fails by the bound of its word (docs/magnitude.md:\n"
        "'much fewer' is at most 50% of the reference, ...; shown in column 'bound'), or calibrated\n"
        "(fitted to the paper: not evidence). The last line counts the claims of each grade, and the\n"
        "claims beyond the paper apart; below it, for each claim not within 25%, how its figure\n"
        "moves with the property that drives it (sensitivity).",
        epilog="examples:\n  tierlab reproduce\n  tierlab reproduce --quick\n  tierlab reproduce bs-clock nomad-ssp",
    )
    p.add_argument("papers", nargs="*", help=f"papers to run (default: all): {', '.join(papers.PAPERS)}")
    p.add_argument("--quick", action="store_true", help="small inputs: finishes in under a minute")
    p.add_argument("-o", "--outdir", default="tierlab-reproduce", help="output directory")
    p.set_defaults(func=run)


def run(args) -> int:
    unknown = [k for k in args.papers if k not in papers.PAPERS]
    if unknown:
        raise ConfigError(f"unknown paper {show(unknown[0])}; known papers: {', '.join(papers.PAPERS)}")
    outdir = Path(args.outdir)
    done = rep.run_papers(args.papers or None, args.quick, outdir)
    out = rep.write_report(done, outdir / "report.html", args.quick)
    claims = rep.claims_frame(done)
    console = Console(width=160)
    t = Table(title="paper claims vs tierlab", title_justify="left")
    shown = rep.display_frame(claims)
    for c in ("paper", "claim", "paper figure", "tierlab figure", "ratio", "grade", "bound", "tierlab detail"):
        t.add_column(c, overflow="fold", justify="right" if c == "ratio" else "left")
    for _, r in shown.iterrows():
        style = STYLE.get(r["grade"], "")
        t.add_row(
            r["paper"],
            r["claim"],
            r["paper figure"],
            r["tierlab figure"],
            r["ratio"],
            f"[{style}]{r['grade']}" if style else r["grade"],
            r["bound"],
            r["tierlab detail"],
        )
    console.print(t)
    console.print(rep.summary_line(claims))
    sens = rep.sensitivity_frame(done, off_only=True)
    if not sens.empty:
        console.print("sensitivity of the claims not within 25% (figures in the report):")
        bands = dict(zip(zip(claims["paper"], claims["claim"], strict=True), claims["band"], strict=True))
        for (paper, claim), rows in sens.groupby(["paper", "claim"], sort=False):
            band = bands.get((paper, claim), "")
            console.print(f"  {paper}: {claim}" + (f"  (tierlab over unstated properties: {band})" if band else ""))
            for _, r in rows.iterrows():
                console.print(f"    {r['property']}: {r['verdict']}")
    failed = [k for k, res, _ in done if res is None]
    for k, res, info in done:
        if res is None:
            console.print(f"[red]{k} failed:[/]\n{info}")
    console.print(f"report: {out.resolve()}")
    return 1 if failed else 0
