"""``tierlab mrc``: miss-ratio curves over many sizes."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from tierlab import _core, api, values
from tierlab.cli import add_replay_args, save_frame, trace_of


def add_parser(sub) -> None:
    p = sub.add_parser(
        "mrc",
        help="miss-ratio curve over many sizes (exact one-pass LRU, SHARDS sampling, or any policy)",
        description="For LRU the curve is exact and computed in one pass over the trace for all sizes\n"
        "(stack distances); --shards RATE samples pages by a spatial hash (SHARDS) for very large\n"
        "traces, and --compare also computes the exact curve and reports the sampling error.\n"
        "For other policies every size is replayed (still one pass over the trace for all sizes).",
        epilog="examples:\n"
        "  tierlab mrc OLTP.lis.zst\n"
        "  tierlab mrc OLTP.lis.zst --shards 0.01 --compare\n"
        "  tierlab mrc sprite.trace.gz -p arc -p lru --points 20 -o mrc.csv",
    )
    add_replay_args(p, "policy (default lru; repeatable)", "sizes (default: --points sizes spread up to the footprint)")
    p.add_argument(
        "--points",
        type=values.count_arg("--points", maximum=10_000),
        default=16,
        help="number of sizes when -s is not given (default 16, at most 10000)",
    )
    p.add_argument("--shards", type=_rate, help="SHARDS sampling rate for LRU in (0, 1], e.g. 0.01")
    max_pages = values.count_arg("--shards-max-pages")
    p.add_argument("--shards-max-pages", type=max_pages, help="SHARDS with a fixed number of sampled pages")
    p.add_argument("--compare", action="store_true", help="with --shards: also the exact curve and the error")
    p.add_argument("-o", "--output", help="write the curve to .csv, .parquet or .json")
    p.set_defaults(func=run)


def _rate(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not 0 < x <= 1:
        raise argparse.ArgumentTypeError(f"{values.show(text)} is not a sampling rate in (0, 1]")
    return x


def default_sizes(distinct: int, points: int) -> list[int]:
    sizes = np.unique(np.geomspace(max(1, distinct / 1000), distinct, points).round().astype(int))
    return [int(s) for s in sizes if s > 0]


def _mrc(trace: api.Trace, sizes: list[int], rate: float | None, max_pages: int | None) -> dict:
    """The LRU curve from the core: exact (one pass), or SHARDS-sampled when a rate or cap is given."""
    return _core.mrc(trace.to_json(), sizes, rate, max_pages, 0)


def run(args) -> int:
    trace = trace_of(args)
    policies = args.policy or ["lru"]
    if args.size:
        sizes = sorted(set(api.resolve_sizes(trace, args.size)))
    else:
        sizes = default_sizes(int(api.info(trace)["distinct_pages"]), args.points)
    frames = []
    for pol in policies:
        name = api.parse_policy(pol)["name"]
        if name == "lru" and (args.shards or args.shards_max_pages):
            cur = _mrc(trace, sizes, args.shards, args.shards_max_pages)
            frames.append(
                pd.DataFrame({"policy": "lru (SHARDS)", "size_pages": cur["sizes"], "miss_ratio": cur["miss_ratios"]})
            )
            if args.compare:
                exact = _mrc(trace, sizes, None, None)
                frames.append(
                    pd.DataFrame({"policy": "lru", "size_pages": exact["sizes"], "miss_ratio": exact["miss_ratios"]})
                )
                err = np.abs(np.array(cur["miss_ratios"]) - np.array(exact["miss_ratios"]))
                print(f"SHARDS vs exact: mean absolute error {err.mean():.4f}, max {err.max():.4f}")
        elif name == "lru":
            cur = _mrc(trace, sizes, None, None)
            frames.append(pd.DataFrame({"policy": "lru", "size_pages": cur["sizes"], "miss_ratio": cur["miss_ratios"]}))
        else:
            df = api.run(trace, policies=[pol], sizes=sizes)
            frames.append(
                pd.DataFrame({"policy": df["label"], "size_pages": df["size_pages"], "miss_ratio": df["miss_ratio"]})
            )
    curve = pd.concat(frames, ignore_index=True)
    wide = curve.pivot_table(index="size_pages", columns="policy", values="miss_ratio", sort=False)
    table = Table(title=f"miss ratio: {args.trace}", title_justify="left")
    table.add_column("size (pages)", justify="right")
    for c in wide.columns:
        table.add_column(str(c), justify="right")
    for size, row in wide.iterrows():
        table.add_row(f"{size:,}", *[f"{v:.4f}" for v in row])
    Console(width=160).print(table)
    if args.output:
        save_frame(curve, args.output)
    return 0
