"""Speed of LRB (``tierlab.learned.Lrb``, Python on LightGBM) on a real trace: seconds per model
trained and references replayed per second, against the built-in ``lru`` in the same run.

    python benches/learned.py          # libcachesim/cloudPhysicsIO.oracleGeneral.bin, page mode
    python benches/learned.py --sizes 1% 10% --policies lrb "lrb(memory_window=32768, training_samples=16384)"
    python benches/learned.py --policies 3lcache "3lcache(batch_size=8192)"   # 3L-Cache (docs/policies.md)

Rates are references per second of ``policy_seconds`` (CPU time of the replay loop of one
instance, which for a Python policy includes its callbacks, feature building, LightGBM training
and prediction); one run each (a learned run takes minutes). ``train s`` is the median and the
maximum of the seconds each model took to train; ``models`` how many were trained.
"""

from __future__ import annotations

import os
import statistics

from shared_trace import trace_parser

import tierlab
from tierlab.learned import resolve


def main() -> None:
    ap = trace_parser(__doc__, "traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin", ["1%", "10%"])
    ap.add_argument("--policies", nargs="+", default=["lrb", "lrb(memory_window=32768, training_samples=16384)"])
    args = ap.parse_args()
    head = f"{'policy':52} {'size':>5} {'misses':>8} {'miss ratio':>10} {'K refs/s':>9} {'x lru':>8} {'models':>6}"
    print(head + "  train s")
    for size in args.sizes:
        base = tierlab.run(args.trace, policies=["lru"], sizes=[size], threads=1).iloc[0]
        lru_rate = float(base["accesses"]) / float(base["policy_seconds"])
        print(
            f"{'lru':52} {size:>5} {int(base['misses']):>8} {base['miss_ratio']:>10.4f} {lru_rate / 1e3:>9.1f} {1:>8}"
        )
        for spec in args.policies:
            cls = resolve(spec)

            class Kept(cls):
                made: list = []

                def __init__(self, capacity, **kw):
                    super().__init__(capacity, **kw)
                    type(self).made.append(self)

            row = tierlab.run(args.trace, policies=[Kept], sizes=[size], threads=1).iloc[0]
            rate = float(row["accesses"]) / float(row["policy_seconds"])
            made = Kept.made
            times = made[0].training_times
            train = f"{statistics.median(times):.2f} / {max(times):.2f}" if times else "-"
            print(
                f"{spec:52} {size:>5} {int(row['misses']):>8} {row['miss_ratio']:>10.4f} {rate / 1e3:>9.1f} "
                f"{rate / lru_rate:>8.4f} {made[0].models:>6}  {train}",
                flush=True,
            )
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
