"""Speed of a policy written in Python (``tierlab.PythonPolicy``) against the built-in ``lru``: the
20-line ``PyLru`` of tests/test_python_policy.py on a real trace, at two sizes, in the same run.

    python benches/python_policy.py                       # lirs/sprite.trace.gz, 3 repeats
    TIERLAB_SHARED=/work/shared python benches/python_policy.py --repeats 5

Rates are references per second of ``policy_seconds`` (CPU time of the replay loop of one instance,
which for a Python policy includes the Python callbacks it runs under the GIL), medians over
``--repeats``; ``x lru`` is the Python policy's median rate over ``lru``'s median rate at the same
size. Both give the same misses (checked here too).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
from pathlib import Path

import tierlab
from tierlab.pypolicy import PyLru

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TIERLAB_SHARED", REPO.parent / "shared"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default=str(SHARED / "traces/lirs/sprite.trace.gz"))
    ap.add_argument("--sizes", nargs="+", default=["1%", "10%"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rates: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    misses: dict[tuple[str, str], int] = {}
    for _ in range(args.repeats):
        for size in args.sizes:
            for policy in ["lru", PyLru]:
                df = tierlab.run(args.trace, policies=[policy], sizes=[size], threads=1)
                row = df.iloc[0]
                key = (str(row["policy"]), size)
                rates[key].append(float(row["accesses"]) / float(row["policy_seconds"]))
                misses[key] = int(row["misses"])
    print(f"{'policy':8} {'size':>6} {'misses':>9} {'M refs/s':>9} {'x lru':>8}")
    for size in args.sizes:
        base = statistics.median(rates[("lru", size)])
        for name in ["lru", "pylru"]:
            r = statistics.median(rates[(name, size)])
            print(f"{name:8} {size:>6} {misses[(name, size)]:>9} {r / 1e6:>9.3f} {r / base:>8.4f}")
        assert misses[("lru", size)] == misses[("pylru", size)], "PyLru and lru differ"
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
