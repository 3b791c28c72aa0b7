"""``tierlab sweep``: run an experiment file into a resumable result store."""

from __future__ import annotations

import sys

from tierlab import experiment, sweep, values


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run an experiment file (TOML) into a resumable Parquet store",
        description="Expand EXPERIMENT.toml into cells (traces x systems x policy parameters x sizes),\n"
        "replay each trace once for all its cells, and store one row per cell. Rerunning\n"
        "finishes only the missing cells. Reference: experiments/REFERENCE.md.",
        epilog="examples:\n"
        "  tierlab sweep experiments/classic.toml\n"
        "  tierlab sweep experiments/classic.toml --scheduler tcp://127.0.0.1:8786\n"
        "  tierlab report results/classic -o report.html",
    )
    p.add_argument("experiment", help="experiment TOML file")
    p.add_argument("--results", default=None, help="store directory (default: results/<experiment name>)")
    p.add_argument("--scheduler", help="Dask scheduler address; workers need only `pip install tierlab`")
    workers = values.count_arg("--workers", maximum=4096)
    p.add_argument("--workers", type=workers, help="local worker processes (default: all cores)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    exp = experiment.load(args.experiment)
    store = sweep.Store(args.results) if args.results else sweep.default_store(exp)
    df = sweep.sweep(
        exp, store, scheduler=args.scheduler, workers=args.workers, progress=not args.quiet and sys.stderr.isatty()
    )
    print(f"{len(df)} of {len(exp.cells)} cells in {store.root}")
    return 0 if len(df) == len(exp.cells) else 1
