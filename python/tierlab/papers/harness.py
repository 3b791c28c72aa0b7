"""``tierlab reproduce``: run each paper's experiment on traces the project ships, write one
HTML report, and grade the paper's claims against tierlab's figures.

Every claim gets a grade (:data:`tierlab.papers.GRADES`): a numeric claim is "within 25%" of the
paper's figure, "direction only" or "wrong direction"; a qualitative one "qualitative: holds" or
"qualitative: fails" by the bound of its word (:data:`tierlab.papers.WORDS`, docs/magnitude.md);
a claim whose figure was fitted to the paper is "calibrated" and is no evidence either way. The
summary line counts each grade, and the claims that go beyond the paper apart."""

from __future__ import annotations

import ctypes
import html
import json
import math
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from tierlab import papers
from tierlab.papers import PaperResult, progress

#: Columns of :func:`claims_frame` (and of ``tierlab.reproduce()``).
COLUMNS = [
    "paper",
    "claim",
    "grade",
    "paper figure",
    "tierlab figure",
    "ratio",
    "unit",
    "paper value",
    "tierlab",
    "holds",
    "calibrated",
    "calibrated by",
    "sensitivity",
    "band",
    "word",
    "bound",
    "bounded figure",
    "beyond the paper",
]


def run_papers(
    keys: list[str] | None, quick: bool, outdir: Path, jobs: int | None = None, show: Callable | None = None
) -> list[tuple[str, PaperResult | None, str]]:
    """Runs the papers; a paper that fails is reported with its traceback, the others still run.

    The papers are independent, so up to ``jobs`` of them (default: one per core, at most two)
    run at once, the longest first: this process runs one lane of them itself and each other lane
    has a worker process (:class:`Worker`), which reads its own traces (every process of a run
    counts towards its memory, and this one would otherwise only wait). Each lane takes the next
    paper when its last one ends. The results come back in the order of ``keys``.
    ``show(key, share, seconds)`` is called in this process with each paper's progress (``share``
    in [0, 1]) and ``seconds`` when it ends, from more than one thread when ``jobs`` > 1."""
    outdir.mkdir(parents=True, exist_ok=True)
    keys = list(dict.fromkeys(keys or list(papers.PAPERS)))
    for key in keys:
        if key not in papers.PAPERS:  # an unknown key fails here, before anything runs
            raise KeyError(f"unknown paper '{key}'; known: {', '.join(sorted(papers.PAPERS))}")
    jobs = max(1, min(jobs or min(os.cpu_count() or 1, 2), len(keys)))
    large_blocks_mapped()
    todo = sorted(keys, key=lambda k: -EXPECTED_SECONDS.get(k, 0.0))
    lock = threading.Lock()
    out = {}

    def take() -> str | None:
        with lock:
            return todo.pop(0) if todo else None

    def shares(key: str, share: float) -> None:
        if show is not None:
            show(key, share, None)

    def ended(key: str, result: tuple) -> None:
        out[key] = result
        if show is not None:
            show(key, 1.0, result[3])

    def lane_here() -> None:
        while (key := take()) is not None:
            progress.install(shares, key)
            try:
                result = run_paper(key, quick, outdir)
            finally:
                progress.install(None)
            ended(key, result)

    def lane_there() -> None:
        worker = None
        try:
            while (key := take()) is not None:
                try:
                    worker = worker or Worker()
                    result = worker.call(run_paper, key, quick, outdir, key=key, on_share=shares)
                except Exception:  # noqa: BLE001 - a worker that died loses its paper only
                    result = (key, None, traceback.format_exc(), 0.0)
                    if worker is not None:
                        worker.close()
                    worker = None
                ended(key, result)
        finally:
            if worker is not None:
                worker.close()

    lanes = [threading.Thread(target=lane_there, daemon=True) for _ in range(jobs - 1)]
    for t in lanes:
        t.start()
    try:
        lane_here()
    except BaseException:  # interrupted: the other lanes take nothing more
        with lock:
            todo.clear()
        raise
    finally:
        for t in lanes:
            t.join()
    return [out[k][:3] for k in keys]


#: What a :class:`Worker` process runs (``python -c``, with the pipes' descriptors and this
#: process's ``sys.path`` as arguments): pyarrow is made unimportable before anything imports
#: pandas, which otherwise imports it (34 MiB of the process's resident memory) and then keeps its
#: strings in it; without it pandas keeps them as Python strings, with the same values.
_WORKER_MAIN = """import json, sys
sys.path[:] = json.loads(sys.argv[3])
sys.modules["pyarrow"] = None
from tierlab.papers.harness import _serve
_serve(int(sys.argv[1]), int(sys.argv[2]))
"""


class Worker:
    """A Python process that runs functions for this one (a lane of :func:`run_papers`), started
    with :mod:`subprocess` and spoken to over two pipes (:class:`multiprocessing.connection.Connection`):
    unlike :mod:`multiprocessing`'s pools it needs no resource tracker (a third process, 14 MiB),
    and it runs without pyarrow (:data:`_WORKER_MAIN`). It ends when :meth:`close` closes its pipe,
    or with this process (its next read of the pipe ends)."""

    def __init__(self):
        from multiprocessing.connection import Connection

        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER_MAIN, str(job_r), str(res_w), json.dumps(sys.path)],
                pass_fds=(job_r, res_w),
            )
        except BaseException:
            os.close(job_w)
            os.close(res_r)
            raise
        finally:  # the worker's ends
            os.close(job_r)
            os.close(res_w)
        self.jobs = Connection(job_w, readable=False)
        self.results = Connection(res_r, writable=False)

    def call(self, fn: Callable, *args, key: str = "", on_share: Callable | None = None):
        """``fn(*args)`` in the worker (``fn`` a module-level function, ``args`` picklable):
        its value, or its exception raised here; ``on_share(key, share)`` gets the progress
        (:mod:`progress`) it reports meanwhile. An error (EOFError, OSError) when the worker
        has ended."""
        self.jobs.send((fn, args, key))
        while True:
            kind, value = self.results.recv()
            if kind == "share":
                if on_share is not None:
                    on_share(key, value)
            elif kind == "value":
                return value
            else:
                raise value

    def close(self) -> None:
        """Ends the worker (it finishes the call under way first) and waits for it."""
        self.jobs.close()
        self.results.close()
        self.proc.wait()


def _serve(job_fd: int, result_fd: int) -> None:
    """The worker's loop (:class:`Worker`): runs each ``(fn, args, key)`` read from ``job_fd``,
    sending ``("share", share)`` for its progress and then ``("value", value)`` or ``("error",
    exception)`` to ``result_fd``, until ``job_fd`` ends."""
    from multiprocessing.connection import Connection

    jobs = Connection(job_fd, writable=False)
    results = Connection(result_fd, readable=False)
    large_blocks_mapped()
    while True:
        try:
            fn, args, key = jobs.recv()
        except EOFError:
            return
        progress.install(lambda _key, share: results.send(("share", share)), key)
        results.send(("share", 0.0))
        try:
            reply = ("value", fn(*args))
        except Exception as e:  # noqa: BLE001 - the caller raises it
            reply = ("error", e)
        finally:
            progress.install(None)
        try:
            results.send(reply)
        except Exception:  # noqa: BLE001 - a value or exception that does not pickle
            results.send(("error", RuntimeError(traceback.format_exc())))


#: Each paper's share of a full run's time, relative (measured side by side on a loaded 2-core
#: machine: bs-clock 390 s, emram-swap 181, hybrid-dram-pcm 104, nomad-ssp 61, android-lmk 24),
#: to start the longest first.
EXPECTED_SECONDS = {"bs-clock": 390.0, "emram-swap": 181.0, "hybrid-dram-pcm": 104.0, "nomad-ssp": 61.0}


#: glibc's ``M_MMAP_THRESHOLD`` (mallopt), and the value it is kept at: blocks this large or larger
#: get a mapping of their own. glibc's default starts at 128 KiB; kept there, the papers' runs took
#: about 6% more CPU time (the page faults of every new mapping), at 1 MiB about half that, for
#: nearly the same peak (benches/README.md).
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 20


def large_blocks_mapped() -> None:
    """Keeps glibc's malloc giving every block of :data:`MMAP_THRESHOLD` or more a mapping of its
    own in this process (the native side's large buffers: decode batches, page-id tables,
    after-cache logs): by default it raises its threshold to the size of each such block freed (up
    to 32 MiB), after which large blocks come from the heap, their pages stay with the process once
    freed, and a growing vector is copied where it would be remapped. Fixed, a freed block's pages
    go back to the system at once. Cost: a mapping and its page faults per large block. Nothing
    off glibc."""
    try:
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):  # not glibc: its allocator keeps its own policy
        pass


def run_paper(key: str, quick: bool, outdir: Path) -> tuple[str, PaperResult | None, str, float]:
    """Runs one paper and writes its figures and tables into ``outdir/key``: (key, result or None,
    its time or its traceback, seconds)."""
    module = papers.load(key)
    t0 = time.perf_counter()
    try:
        res = module.reproduce(quick=quick, outdir=outdir / key)
        check_sensitivities(res)
        units = {c.claim: c.unit for c in res.claims}
        for i, sens in enumerate(res.sensitivities):
            res.figures[f"sensitivity {i + 1}: {sens.claim}"] = plot_sensitivity(
                sens, outdir / key / f"sensitivity_{i + 1}.png", units.get(sens.claim, "")
            )
            res.tables[f"sensitivity_{i + 1}"] = sens.points
        for name, table in res.tables.items():
            table.to_csv(outdir / key / f"{name}.csv", index=False)
        seconds = time.perf_counter() - t0
        return key, res, f"{seconds:.1f} s", seconds
    except Exception:  # noqa: BLE001 - one broken paper must not lose the others' results
        return key, None, traceback.format_exc(), time.perf_counter() - t0
    finally:
        progress.install(None)


def check_sensitivities(res: PaperResult) -> None:
    """Every sensitivity names one of the paper's claims."""
    known = {c.claim for c in res.claims}
    for sens in res.sensitivities:
        if sens.claim not in known:
            raise ValueError(f"{res.key}: sensitivity for unknown claim {sens.claim!r}")


def plot_sensitivity(sens: papers.Sensitivity, path: Path, unit: str = "") -> Path:
    """tierlab's figure against the property, the paper's figure as a line with its 25% band, the
    paper's operating point (dashed if stated, dotted if assumed) and tierlab's default."""
    from tierlab.plot import plt, save_figure

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    pts = sens.points.sort_values("x")
    if "series" in pts.columns:
        for name, g in pts.groupby("series", sort=False):
            lw = 2.0 if name == sens.main_series else 1.0
            ax.plot(g["x"], g["figure"], marker="o", lw=lw, label=str(name))
    else:
        ax.plot(pts["x"], pts["figure"], marker="o", lw=2.0, label="tierlab")
    lo = sens.neutral + (1 - papers.TOLERANCE) * (sens.paper_figure - sens.neutral)
    hi = sens.neutral + (1 + papers.TOLERANCE) * (sens.paper_figure - sens.neutral)
    ax.axhspan(min(lo, hi), max(lo, hi), color="tab:green", alpha=0.12, label="paper's figure +-25%")
    ax.axhline(sens.paper_figure, color="tab:green", lw=1.2)
    ax.axhline(sens.neutral, color="grey", lw=0.6)
    if sens.paper_x is not None:
        ax.axvline(
            sens.paper_x,
            color="black",
            ls="--" if sens.stated else ":",
            lw=1.0,
            label="paper's setup" + ("" if sens.stated else " (assumed)"),
        )
    if sens.ours_x is not None:
        ax.axvline(sens.ours_x, color="tab:red", ls="-.", lw=1.0, label="tierlab's default")
    if sens.log_x:
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        xs = sorted(set(pts["x"]))
        ax.set_xticks(xs, [f"{x:.3g}" for x in xs])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(sens.parameter)
    ax.set_ylabel(f"tierlab figure ({unit.strip()})" if unit.strip() else "tierlab figure")
    ax.set_title(sens.claim if len(sens.claim) < 70 else sens.claim[:67] + "...", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def sensitivity_frame(done, off_only: bool = False) -> pd.DataFrame:
    """One row per sensitivity: the claim and its grade, the property swept, the paper's and
    tierlab's operating points, the range and the verdict; ``off_only`` keeps the claims not
    within 25% (what the terminal and the report list)."""
    rows = []
    for key, res, _ in done:
        if res is None:
            continue
        grades = {c.claim: c.grade for c in res.claims}
        for s in res.sensitivities:
            if off_only and grades[s.claim] == papers.WITHIN:
                continue
            rows.append(
                {
                    "paper": key,
                    "claim": s.claim,
                    "grade": grades[s.claim],
                    "property": s.parameter,
                    "paper's point": "not stated"
                    if s.paper_x is None
                    else f"{s.paper_x:.3g}" + ("" if s.stated else " (assumed)"),
                    "tierlab's default": "" if s.ours_x is None else f"{s.ours_x:.3g}",
                    "range": f"{s.points['x'].min():.3g}-{s.points['x'].max():.3g}",
                    "verdict": s.verdict,
                    "why this range": s.why,
                }
            )
    return pd.DataFrame(rows)


def band_text(values: list[float] | None, unit: str) -> str:
    """tierlab's figures over the plausible range of the properties the paper does not state
    ("lo to hi"), "" when the claim has no such sweep."""
    if not values:
        return ""
    return f"{fmt_figure(min(values), unit)} to {fmt_figure(max(values), unit)}"


def claims_frame(done) -> pd.DataFrame:
    """One row per claim: its grade, the paper's and tierlab's figures (NaN for a qualitative
    claim), tierlab's effect over the paper's (``ratio``), the texts, and ``holds`` (the direction
    for a numeric claim, the verdict for a qualitative one)."""
    rows = []
    for key, res, _ in done:
        if res is None:
            rows.append({"paper": key, "claim": "(experiment failed)", "grade": "failed", "holds": False})
            continue
        verdicts: dict[str, list[str]] = {}
        bands: dict[str, list[float]] = {}
        for sens in res.sensitivities:
            verdicts.setdefault(sens.claim, []).append(f"{sens.parameter}: {sens.verdict}")
            if not sens.stated:
                bands.setdefault(sens.claim, []).extend(sens.points["figure"].dropna().tolist())
        for c in res.claims:
            rows.append(
                {
                    "paper": key,
                    "claim": c.claim,
                    "grade": c.grade,
                    "paper figure": c.paper if c.numeric else math.nan,
                    "tierlab figure": c.tierlab if c.numeric else math.nan,
                    "ratio": c.ratio,
                    "unit": c.unit,
                    "paper value": c.paper_value,
                    "tierlab": c.tierlab_value,
                    "holds": bool(c.holds),
                    "calibrated": c.calibrated,
                    "calibrated by": c.calibrated_by,
                    "sensitivity": "; ".join(verdicts.get(c.claim, [])),
                    "band": band_text(bands.get(c.claim), c.unit),
                    "word": c.word,
                    "bound": c.bound,
                    "bounded figure": c.bounded,
                    "beyond the paper": c.beyond,
                }
            )
    df = pd.DataFrame(rows, columns=COLUMNS)
    for col in ("paper figure", "tierlab figure", "ratio", "bounded figure"):
        df[col] = df[col].astype(float)
    for col in ("unit", "paper value", "tierlab", "calibrated by", "sensitivity", "band", "word", "bound"):
        df[col] = df[col].fillna("").astype(str)
    for col in ("calibrated", "beyond the paper"):
        df[col] = df[col].fillna(False).astype(bool)
    return df


def grade_counts(claims: pd.DataFrame, beyond: bool = False) -> dict[str, int]:
    """Claims per grade (every grade, zero when none) from :func:`claims_frame`'s rows: the
    paper's own claims, or with ``beyond`` the claims that go beyond the paper; failed papers are
    counted under "failed" when any."""
    counts = dict.fromkeys(papers.GRADES, 0)
    rows = claims[claims["beyond the paper"] == beyond]
    for g, n in rows["grade"].value_counts().items():
        counts[g] = counts.get(g, 0) + int(n)
    return counts


def summary_line(claims: pd.DataFrame) -> str:
    """``N claims: numeric a within 25%, b direction only, c wrong direction; qualitative d holds,
    e fails; f calibrated (not evidence); g beyond the paper (h qualitative: holds, ...)``: the
    evidence kinds counted apart, the claims beyond the paper (tierlab's own findings) last."""
    n = grade_counts(claims)
    line = (
        f"{len(claims)} claims: numeric {n[papers.WITHIN]} {papers.WITHIN}, {n[papers.DIRECTION]} "
        f"{papers.DIRECTION}, {n[papers.WRONG]} {papers.WRONG}; qualitative {n[papers.QUAL_HOLDS]} holds, "
        f"{n[papers.QUAL_FAILS]} fails; {n[papers.CALIBRATED]} calibrated (not evidence)"
    )
    b = grade_counts(claims, beyond=True)
    nb = sum(b.values())
    if nb:
        line += f"; {nb} beyond the paper (" + ", ".join(f"{k} {g}" for g, k in b.items() if k) + ")"
    if n.get("failed"):
        line += f"; {n['failed']} paper(s) failed"
    return line


def fmt_figure(value: float, unit: str) -> str:
    """A figure with its unit for tables ("43.4%", "2.68x", "55% of NOMAD's"); "" when NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    if not unit:
        return text
    return f"{text}{unit}" if unit[0] in "%x" else f"{text} {unit}"


def fmt_ratio(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.2f}"


def fmt_bounded(value: float, word_name: str) -> str:
    """A qualitative claim's figure nearest its bound: a signed change ("-10.2%") or a value."""
    if not word_name:
        return ""
    if math.isnan(value):
        return "n/a"
    if papers.word(word_name).kind == "change":
        return f"{value:+.1f}%" if abs(value) < 1000 else f"{value:+.0f}%"
    return f"{value:.3g}"


def display_frame(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims as shown in the terminal and the report: figures with units, ratio to 2 places;
    a qualitative claim shows its figure nearest its word's bound (a change from the reference, or
    a value) and the bound."""
    return pd.DataFrame(
        {
            "paper": claims["paper"],
            "claim": claims["claim"] + ["" if not b else " [beyond the paper]" for b in claims["beyond the paper"]],
            "paper figure": [
                fmt_figure(v, u) or t
                for v, u, t in zip(claims["paper figure"], claims["unit"], claims["paper value"], strict=True)
            ],
            "tierlab figure": [
                fmt_figure(v, u) or fmt_bounded(b, w)
                for v, u, b, w in zip(
                    claims["tierlab figure"], claims["unit"], claims["bounded figure"], claims["word"], strict=True
                )
            ],
            "ratio": [fmt_ratio(v) for v in claims["ratio"]],
            "grade": claims["grade"],
            "bound": claims["bound"],
            "tierlab over unstated properties": claims["band"],
            "tierlab detail": claims["tierlab"],
        }
    )


GRADE_CSS = {
    papers.WITHIN: "ok",
    papers.QUAL_HOLDS: "ok",
    papers.DIRECTION: "warn",
    papers.WRONG: "no",
    papers.QUAL_FAILS: "no",
    papers.CALIBRATED: "cal",
    "failed": "no",
}


def _claims_html(claims: pd.DataFrame) -> str:
    shown = display_frame(claims)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in shown.columns)
    rows = []
    for _, r in shown.iterrows():
        cells = []
        for c in shown.columns:
            v = html.escape(str(r[c]))
            cells.append(f"<td class='{GRADE_CSS.get(r['grade'], '')}'>{v}</td>" if c == "grade" else f"<td>{v}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


GRADES_NOTE = (
    "Grades: a numeric claim compares tierlab's effect with the paper's, both measured from the figure "
    "that means no effect (0 for a change or reduction, 1x for a multiple, 100% for a share of a "
    "baseline, 50% for a share of cases); ratio = tierlab's effect / the paper's. 'within 25%': same "
    "direction and |ratio - 1| <= 0.25; 'direction only': same direction; 'wrong direction': otherwise. "
    "A claim the paper states without a figure, or as a bound, is qualitative and is graded by the bound "
    "of its word ('much fewer', 'same level', 'never lower', ...), fixed once for every paper "
    "(docs/magnitude.md); its tierlab figure is the one nearest that bound, as a change from the "
    "reference (e.g. -10% for 90% of NOMAD's) or a value. 'calibrated': tierlab's "
    "figure comes from a preset or parameter fitted to the paper's own measurement of it, so it is no "
    "evidence and is counted apart."
)


SENSITIVITY_NOTE = (
    "Each row sweeps one workload or device property that drives a claim tierlab does not reproduce "
    "within 25%, with everything else at the reproduction's setup; the figures (one per row, in the "
    "paper's section) mark the paper's figure with its 25% band, the paper's operating point where "
    "the paper states it, and tierlab's default. The verdict says whether tierlab comes within 25% "
    "at the paper's stated setup, or where on the swept range (if anywhere) it does."
)


def write_report(done, out: Path, quick: bool) -> Path:
    """Writes the HTML report to ``out`` and, beside it, ``claims.csv`` (:func:`claims_frame`) and
    ``sensitivity.csv`` (:func:`sensitivity_frame`)."""
    from tierlab import report  # matplotlib: imported only where the report is written

    claims = claims_frame(done)
    claims.to_csv(out.parent / "claims.csv", index=False)
    sensitivity_frame(done).to_csv(out.parent / "sensitivity.csv", index=False)
    body = [
        f"<p class='note'>mode: {'quick' if quick else 'full'}; traces: generated or captured by tierlab's "
        "own tools and shipped with the project.</p>"
    ]
    if not claims.empty:
        body.append(
            f"<h2>claims</h2><p><b>{html.escape(summary_line(claims))}</b></p>"
            f"<p class='note'>{html.escape(GRADES_NOTE)}</p>" + _claims_html(claims)
        )
        cal = claims[claims["calibrated"]]
        if not cal.empty:
            items = "".join(
                f"<li>{html.escape(r['paper'])}: {html.escape(r['claim'])}: {html.escape(r['calibrated by'])}</li>"
                for _, r in cal.iterrows()
            )
            body.append(f"<p class='note'>calibrated claims (not evidence):</p><ul class='note'>{items}</ul>")
        sens = sensitivity_frame(done, off_only=True)
        if not sens.empty:
            body.append(
                "<h2>sensitivity of the claims not within 25%</h2><p class='note'>"
                + html.escape(SENSITIVITY_NOTE)
                + "</p>"
                + report.table_html(sens, max_rows=200)
            )
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


def reproduce(
    papers_: list[str] | str | None = None, *, quick: bool = False, outdir: str | Path = "tierlab-reproduce"
) -> pd.DataFrame:
    """Runs the papers' experiments (all by default), writes ``outdir/report.html`` and returns the
    claims table (:data:`COLUMNS`); ``df.attrs["summary"]`` is the summary line and
    ``df.attrs["report"]`` the report's path and ``df.attrs["sensitivity"]`` the rows of the
    sensitivity table (:func:`sensitivity_frame`). Raises RuntimeError if an experiment failed."""
    keys = [papers_] if isinstance(papers_, str) else papers_
    outdir = Path(outdir)
    done = run_papers(keys, quick, outdir)
    out = write_report(done, outdir / "report.html", quick)
    failed = {k: info for k, res, info in done if res is None}
    if failed:
        raise RuntimeError("experiments failed: " + "\n".join(f"{k}:\n{v}" for k, v in failed.items()))
    claims = claims_frame(done)
    claims.attrs["summary"] = summary_line(claims)
    claims.attrs["report"] = str(out)
    claims.attrs["sensitivity"] = sensitivity_frame(done).to_dict("records")
    return claims
