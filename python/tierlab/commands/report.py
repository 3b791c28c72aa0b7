"""``tierlab report``: a self-contained HTML page from a result store or a results file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tierlab import _core
from tierlab.store import Store


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report",
        help="build an HTML report (figures embedded) from sweep results",
        description="Miss-ratio curves, time bars split by component, energy and each policy's\n"
        "counters, per trace and system, in one self-contained HTML file.",
        epilog="example:\n  tierlab report results/classic -o report.html",
    )
    p.add_argument("results", help="a sweep store directory, or a .parquet/.csv file of rows")
    p.add_argument("-o", "--output", default="report.html", help="HTML file to write (default report.html)")
    p.add_argument("--title", default=None)
    p.set_defaults(func=run)


def load_results(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    try:
        if p.is_dir():
            df = Store(p).load()
        elif p.suffix == ".parquet":
            df = pd.read_parquet(p)
        elif p.suffix == ".csv":
            df = pd.read_csv(p)
        else:
            raise _core.ConfigError(f"{p}: expected a store directory, .parquet or .csv")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise _core.TraceFormatError(f"{p}: not a results {p.suffix[1:] or 'store'} file ({e})") from None
    except (OSError, ValueError) as e:
        if isinstance(e, _core.TierlabError):
            raise
        raise _core.TraceFormatError(f"{p}: not a results {p.suffix[1:] or 'store'} file ({e})") from None
    if df.empty:
        raise _core.ConfigError(f"{p}: no result rows")
    return df


def run(args) -> int:
    from tierlab import report  # matplotlib: only for this command, not for every command's parser

    df = load_results(args.results)
    out = report.write_results_report(df, args.output, title=args.title or f"tierlab: {Path(args.results).name}")
    print(f"wrote {out} ({len(df)} rows)")
    return 0
