"""``tierlab reproduce``: run each paper's experiment on traces the project ships, write one
HTML report, and print the paper's claims beside tierlab's figures."""

from __future__ import annotations

import html
import time
import traceback
from pathlib import Path

import pandas as pd

from tierlab import papers, report
from tierlab.papers import PaperResult


def run_papers(keys: list[str] | None, quick: bool, outdir: Path) -> list[tuple[str, PaperResult | None, str]]:
    """Runs the papers; a paper that fails is reported with its traceback, the others still run."""
    outdir.mkdir(parents=True, exist_ok=True)
    keys = keys or list(papers.PAPERS)
    done = []
    for key in keys:
        module = papers.load(key)
        t0 = time.perf_counter()
        try:
            res = module.reproduce(quick=quick, outdir=outdir / key)
            for name, table in res.tables.items():
                table.to_csv(outdir / key / f"{name}.csv", index=False)
            done.append((key, res, f"{time.perf_counter() - t0:.1f} s"))
        except Exception:  # noqa: BLE001 - one broken paper must not lose the others' results
            done.append((key, None, traceback.format_exc()))
    return done


def claims_frame(done) -> pd.DataFrame:
    rows = []
    for key, res, _ in done:
        if res is None:
            rows.append(
                {"paper": key, "claim": "(experiment failed)", "paper value": "", "tierlab": "", "holds": False}
            )
            continue
        for c in res.claims:
            rows.append(
                {
                    "paper": key,
                    "claim": c.claim,
                    "paper value": c.paper_value,
                    "tierlab": c.tierlab_value,
                    "holds": bool(c.holds),
                }
            )
    return pd.DataFrame(rows, columns=["paper", "claim", "paper value", "tierlab", "holds"])


def write_report(done, out: Path, quick: bool) -> Path:
    body = [
        f"<p class='note'>mode: {'quick' if quick else 'full'}; traces: generated or captured by tierlab's "
        "own tools and shipped with the project.</p>"
    ]
    claims = claims_frame(done)
    if not claims.empty:
        shown = claims.assign(holds=claims["holds"].map({True: "yes", False: "NO"}))
        body.append("<h2>claims</h2>" + report.table_html(shown, max_rows=1000))
    for key, res, info in done:
        title = papers.PAPERS[key][1]
        body.append(f"<h2>{html.escape(key)}: {html.escape(title)}</h2>")
        if res is None:
            body.append(f"<pre>{html.escape(info)}</pre>")
            continue
        body.append(f"<p class='note'>ran in {info}</p>")
        for note in res.notes:
            body.append(f"<p class='note'>{html.escape(note)}</p>")
        for name, fig in res.figures.items():
            body.append(f"<h3>{html.escape(name)}</h3>{report.png_to_img(fig)}")
        for name, table in res.tables.items():
            body.append(f"<h3>data: {html.escape(name)}</h3>{report.table_html(table, max_rows=60)}")
    out.write_text(report.page("tierlab: paper reproductions", "\n".join(body)))
    return out
