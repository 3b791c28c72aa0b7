"""Speed of a policy written in Python (``tierlab.PythonPolicy``) against the built-in ``lru``: the
20-line ``PyLru`` of tests/test_python_policy.py on a real trace, at two sizes, in the same run;
with ``--modes page object`` in page mode and in object-size mode on one trace with sizes.

    python benches/python_policy.py                       # lirs/sprite.trace.gz, 3 repeats
    TIERLAB_SHARED=/work/shared python benches/python_policy.py --repeats 5
    python benches/python_policy.py --modes page object \\
        --trace ../shared/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin --sizes 1% 10%

Rates are references per second of ``policy_seconds`` (CPU time of the replay loop of one instance,
which for a Python policy includes the Python callbacks it runs under the GIL), medians over
``--repeats``; ``x lru`` is the Python policy's median rate over ``lru``'s median rate at the same
size in the same mode. A size is pages in page mode and bytes in object-size mode (``"10%"``: of
the distinct pages, or of the distinct objects' bytes). Both policies give the same misses (and
byte misses) in each mode (checked here too).
"""

from __future__ import annotations

import collections
import os
import statistics

from shared_trace import trace_parser

import tierlab
from tierlab.pypolicy import PyLru


def main() -> None:
    ap = trace_parser(__doc__, "traces/lirs/sprite.trace.gz", ["1%", "10%"])
    ap.add_argument("--modes", nargs="+", choices=["page", "object"], default=["page"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rates: dict[tuple[str, str, str], list[float]] = collections.defaultdict(list)
    misses: dict[tuple[str, str, str], tuple[int, int]] = {}
    for _ in range(args.repeats):
        for mode in args.modes:
            for size in args.sizes:
                for policy in ["lru", PyLru]:
                    df = tierlab.run(
                        args.trace, policies=[policy], sizes=[size], threads=1, object_sizes=mode == "object"
                    )
                    row = df.iloc[0]
                    key = (mode, str(row["policy"]), size)
                    rates[key].append(float(row["accesses"]) / float(row["policy_seconds"]))
                    misses[key] = (int(row["misses"]), int(row["byte_misses"]))
    print(f"{'mode':6} {'policy':8} {'size':>6} {'misses':>9} {'byte misses':>14} {'M refs/s':>9} {'x lru':>8}")
    for mode in args.modes:
        for size in args.sizes:
            base = statistics.median(rates[(mode, "lru", size)])
            for name in ["lru", "pylru"]:
                r = statistics.median(rates[(mode, name, size)])
                m, b = misses[(mode, name, size)]
                print(f"{mode:6} {name:8} {size:>6} {m:>9} {b:>14} {r / 1e6:>9.3f} {r / base:>8.4f}")
            assert misses[(mode, "lru", size)] == misses[(mode, "pylru", size)], "PyLru and lru differ"
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
