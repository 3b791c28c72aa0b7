"""Differential testing of tierlab against pip libcachesim on generated traces, for as long as
asked: traces of many shapes (Zipf of several skews, uniform, scans, loops, Zipf mixed with a
scan, phase changes, bursts, tiny footprints), each through every deterministic policy and
admission pair of the conformance tests at cache sizes from one object to beyond the footprint,
in page and object-size mode (tests/differential.py has the generator and the cells). Prints the
cells run, the shapes and every disagreement as one line that reproduces it.

    python benches/differential.py --cells 100000             # until 100,000 cells have run
    python benches/differential.py --seconds 600 --seed 5000  # for ten minutes from seed 5000
    python benches/differential.py --cell 1:page:2q:2 --shrink  # one cell, its trace shrunk

Each trace seed draws its shape and parameters; its cells are the policies x ``--sizes`` cache
sizes per mode. The short round in CI is tests/test_differential_libcachesim.py.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import differential as d  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=int, default=10_000, help="stop after this many cells (default 10,000)")
    ap.add_argument("--seconds", type=float, help="stop after this many seconds")
    ap.add_argument("--seed", type=int, default=0, help="first trace seed (default 0)")
    ap.add_argument("--sizes", type=int, default=4, help="cache sizes per trace and mode (default 4)")
    ap.add_argument("--policies", nargs="+", help="only these tierlab specs (default: every pair)")
    ap.add_argument("--cell", help="re-run one cell SEED:MODE:SPEC:SIZE")
    ap.add_argument("--shrink", action="store_true", help="shrink the trace of each disagreement")
    args = ap.parse_args()
    tmp = d.tmpdir()
    try:
        if args.cell:
            bad = d.run_cell(args.cell)
            if bad is None:
                print(f"agree: {args.cell}")
                return 0
            print(bad.line())
            if args.shrink:
                ids, sizes = d.shrink(bad, tmp)
                print(f"shrunk to {len(ids)} requests: ids {ids.tolist()} sizes {sizes.tolist()}")
            return 1
        start = time.monotonic()
        cells, traces, disagreements = 0, 0, []
        shapes: collections.Counter = collections.Counter()
        seed = args.seed
        while cells < args.cells and (args.seconds is None or time.monotonic() - start < args.seconds):
            c, bad = d.run_trace(seed, args.policies, args.sizes, tmp)
            cells += c
            traces += 1
            shapes[d.make_trace(seed).shape] += 1
            for b in bad:
                print(b.line(), flush=True)
                if args.shrink:
                    ids, sizes = d.shrink(b, tmp)
                    print(f"  shrunk to {len(ids)} requests: ids {ids.tolist()} sizes {sizes.tolist()}", flush=True)
            disagreements += bad
            seed += 1
            if traces % 100 == 0:
                note = f"... {cells:,} cells, {traces:,} traces, {len(disagreements)} disagreements"
                print(note, file=sys.stderr, flush=True)
        took = time.monotonic() - start
        print(
            f"cells run: {cells:,} on {traces:,} traces (seeds {args.seed}..{seed - 1}) in {took:,.0f} s; "
            f"shapes: {', '.join(f'{k} {v}' for k, v in sorted(shapes.items()))}; "
            f"disagreements: {len(disagreements)}"
        )
        by = collections.Counter((b.spec, b.mode) for b in disagreements)
        for (spec, mode), k in sorted(by.items()):
            print(f"  {spec} ({mode}): {k}")
        return 1 if disagreements else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
