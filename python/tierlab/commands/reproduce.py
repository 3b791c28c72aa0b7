"""``tierlab reproduce``: the papers' experiments, a report, and a claims table."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from tierlab import papers, values
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
        description="Runs each paper's experiment on traces tierlab ships (generated or captured by\n"
        "its own tools), writes OUTDIR/report.html with every figure, and prints each claim of the\n"
        "paper beside tierlab's figure with a grade: within 25% of the paper's figure, direction\n"
        "only, wrong direction, qualitative: holds/fails by the bound of its word (docs/magnitude.md:\n"
        "'much fewer' is at most 50% of the reference, ...; shown in column 'bound'), or calibrated\n"
        "(fitted to the paper: not evidence). The last line counts the claims of each grade, and the\n"
        "claims beyond the paper apart; below it, for each claim not within 25%, how its figure\n"
        "moves with the property that drives it (sensitivity).\n\n"
        "Independent papers run side by side (--jobs). On a terminal each paper shows a progress\n"
        "line with its share done and the time left; otherwise one line per paper as it ends.\n"
        "Generated workloads are cached across runs by content under ~/.cache/tierlab\n"
        "($TIERLAB_CACHE or $XDG_CACHE_HOME/tierlab if set); --clear-cache empties it first.",
        epilog="examples:\n  tierlab reproduce\n  tierlab reproduce --quick\n  tierlab reproduce bs-clock nomad-ssp",
    )
    p.add_argument("papers", nargs="*", help=f"papers to run (default: all): {', '.join(papers.PAPERS)}")
    p.add_argument("--quick", action="store_true", help="small inputs: finishes in under a minute")
    p.add_argument("-o", "--outdir", default="tierlab-reproduce", help="output directory")
    p.add_argument(
        "-j",
        "--jobs",
        type=values.count_arg("--jobs", maximum=64),
        default=None,
        help="papers run at once (default: one per core, at most 2)",
    )
    p.add_argument(
        "--clear-cache", action="store_true", help="remove the cached generated workloads and trace footprints first"
    )
    p.set_defaults(func=run)


class _Shown:
    """Progress of the papers: on a terminal a line per paper (bar, share, elapsed, time left);
    otherwise a line per paper when it ends, with its time."""

    def __init__(self, console: Console, keys: list[str]):
        self.console = console
        self.bars = None
        if console.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bars = Progress(
                TextColumn("{task.description:<16}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
            )
            self.tasks = {k: self.bars.add_task(k, total=1.0, start=False) for k in keys}

    def __enter__(self):
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *exc):
        if self.bars is not None:
            self.bars.stop()

    def __call__(self, key: str, share: float, seconds: float | None) -> None:
        if self.bars is None:
            if seconds is not None:
                print(f"{key}: done in {seconds:.1f} s", flush=True)
            return
        task = self.tasks[key]
        self.bars.start_task(task)
        if seconds is not None:
            self.bars.update(task, completed=1.0, description=f"{key} ({seconds:.1f} s)")
            self.bars.stop_task(task)
        else:
            self.bars.update(task, completed=share)


def run(args) -> int:
    unknown = [k for k in args.papers if k not in papers.PAPERS]
    if unknown:
        raise ConfigError(f"unknown paper {show(unknown[0])}; known papers: {', '.join(papers.PAPERS)}")
    from tierlab import cache

    if args.clear_cache:
        freed = cache.clear()
        print(f"cleared the generated workloads and footprints in {cache.cache_dir()} ({freed / 1e6:.1f} MB)")
    outdir = Path(args.outdir)
    console = Console(width=160)
    keys = list(dict.fromkeys(args.papers or papers.PAPERS))
    with _Shown(console, keys) as shown:
        done = rep.run_papers(keys, args.quick, outdir, jobs=args.jobs, show=shown)
    out = rep.write_report(done, outdir / "report.html", args.quick)
    claims = rep.claims_frame(done)
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
    console.print(rep.summary_line(claims), soft_wrap=True)
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
