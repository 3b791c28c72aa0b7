"""A 16-size x 8-policy sweep (128 cells, one trace) through ``tierlab.sweep``: one local process
against a Dask ``LocalCluster`` of several worker processes, alternating, medians.

    python benches/dask_sweep.py                        # 5M-reference Zipf, 2 workers, 3 repeats
    python benches/dask_sweep.py --workers 2 4 --n 2e6 --repeats 1

Each run sweeps into a fresh store; the script checks every run's store holds each of the 128
cells exactly once with the same rows as the one-process run (timing columns aside), then prints
wall seconds, M instance-references per second and the speed-up over one process. The sweep
splits the trace's 128 cells into tasks of ``--cells-per-task`` (each task decodes the trace once
and replays all its cells in one pass), so Dask can spread them over its workers. The cluster is
started outside the timed region; its start-up time is printed separately. On a 2-core machine the
speed-up is at most 2x (and less while other jobs share the cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

import tierlab
from tierlab import experiment, sweep
from tierlab.store import Store
from tierlab.sweep import TIMING_COLUMNS

POLICIES = ["lru", "fifo", "clock", "arc", "2q", "s3fifo", "sieve", "lirs"]


def sizes(pages: int) -> list[int]:
    """16 sizes a factor sqrt(2) apart, from pages/256 up (as in cachesim.py's sweep)."""
    return [int(pages / 256 * 2 ** (i / 2)) for i in range(16)]


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without timing columns, in key order, columns sorted (the policy counter columns come
    in the order the store's parts landed)."""
    df = df.drop(columns=[c for c in TIMING_COLUMNS if c in df]).sort_values("cell_key").reset_index(drop=True)
    return df[sorted(df.columns)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="5e6", help="references of the Zipf(1.0) trace")
    ap.add_argument("--pages", default="1e6")
    ap.add_argument("--workers", type=int, nargs="+", default=[2], help="Dask worker processes to try")
    ap.add_argument("--cells-per-task", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from dask.distributed import LocalCluster

    n, pages = int(float(args.n)), int(float(args.pages))
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        trace = tmp / "zipf.tlt"
        tierlab.convert.convert(tierlab.Trace.of(f"zipf:alpha=1.0,pages={pages},n={n},seed=1"), trace)
        exp_file = tmp / "exp.toml"
        policies = "".join(f'[[policy]]\nname = "{p}"\n\n' for p in POLICIES)
        exp_file.write_text(f'name = "dask-bench"\nsizes = {sizes(pages)}\n[[trace]]\npath = "{trace}"\n\n{policies}')
        exp = experiment.load(exp_file)
        cells = len(exp.cells)
        print(f"{cells} cells ({len(POLICIES)} policies x 16 sizes), {n:,} references, {os.cpu_count()} cores")
        clusters = {}
        for w in args.workers:
            t0 = time.perf_counter()
            clusters[w] = LocalCluster(
                n_workers=w, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            )
            print(f"LocalCluster({w} workers) started in {time.perf_counter() - t0:.1f} s")
        walls: dict[str, list[float]] = {"1 process": [], **{f"dask {w} workers": [] for w in args.workers}}
        reference = None
        try:
            for rep in range(args.repeats):
                for label in walls:
                    store = Store(tmp / f"store-{rep}-{label.replace(' ', '-')}")
                    t0 = time.perf_counter()
                    if label == "1 process":
                        df = sweep.sweep(exp, store, workers=1, progress=False, max_cells_per_task=args.cells_per_task)
                    else:
                        w = int(label.split()[1])
                        df = sweep.sweep(
                            exp,
                            store,
                            scheduler=clusters[w].scheduler_address,
                            progress=False,
                            max_cells_per_task=args.cells_per_task,
                        )
                    walls[label].append(time.perf_counter() - t0)
                    on_disk = pd.concat([pd.read_parquet(p) for p in store.parts()])
                    assert len(on_disk) == cells and on_disk["cell_key"].is_unique, f"{label}: not exactly once"
                    if reference is None:
                        reference = comparable(df)
                    else:
                        pd.testing.assert_frame_equal(reference, comparable(df))
                    print(f"  repeat {rep + 1} {label}: {walls[label][-1]:.1f} s", flush=True)
        finally:
            for c in clusters.values():
                c.close()
        base = statistics.median(walls["1 process"])
        print(f"\n| run | wall s (median of {args.repeats}) | M instance-refs/s | speed-up |")
        print("|---|---|---|---|")
        for label, ws in walls.items():
            m = statistics.median(ws)
            print(f"| {label} | {m:.1f} | {cells * n / m / 1e6:.1f} | {base / m:.2f}x |")
        print(f"\nload average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")


if __name__ == "__main__":
    main()
