"""libCacheSim's miss counts for its randomised policies Hyperbolic, LHD, LeCaR and Cacheus (the
reference for crates/tierlab-core/tests/libcachesim_sampled.rs).

These policies draw from libCacheSim's own generator (a thread-local LCG that is never reseeded
between runs, so a run's counts depend on what ran before it in the process), so tierlab can
agree with them only in distribution. Each cell of a trace below SHORT requests is run REPEATS
times in a row (on short traces one run's miss ratio moves by several points: LeCaR on cpp at 61
pages gave 5,400 to 6,169 misses of 9,047 in 8 runs), the others once (Cacheus alone takes
about 5 s per 100,000 requests); every count is kept and the test compares with their mean.

- `unit`: the traces and cache sizes of libcachesim_counts.py (unit object sizes, sizes in
  objects), all four policies.
- `object`: cloudPhysicsIO in its three size-carrying forms with object sizes and the byte cache
  sizes of libcachesim_object_counts.py, for the size-aware Hyperbolic and LHD; counts are
  `[object misses, byte misses]`.

Run: python3 tests/reference/libcachesim_sampled_counts.py  (writes
libcachesim_sampled_counts.json next to this file; needs `pip install libcachesim` 0.3.x).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import libcachesim as lcs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import libcachesim_counts as unit_ref  # noqa: E402
import libcachesim_object_counts as obj_ref  # noqa: E402

REPEATS = 5
SHORT = 60_000
POLICIES = {
    "hyperbolic": lcs.Hyperbolic,
    "lhd": lcs.LHD,
    "lecar": lcs.LeCaR,
    "cacheus": lcs.Cacheus,
}
OBJECT_POLICIES = ["hyperbolic", "lhd"]


def unit_cells() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ids in unit_ref.traces():
            path = os.path.join(tmp, "t.oracleGeneral.bin")
            unit_ref.write_oracle(ids, path)
            distinct = len(set(ids))
            sizes = unit_ref.sizes_for(distinct)
            entry = {"requests": len(ids), "distinct": distinct, "sizes": sizes, "misses": {}}
            for pol, make in POLICIES.items():
                row = []
                for size in sizes:
                    runs = []
                    for _ in range(REPEATS if len(ids) < SHORT else 1):
                        reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
                        ratio, _ = make(int(size)).process_trace(reader)
                        runs.append(round(ratio * len(ids)))
                    row.append(runs)
                entry["misses"][pol] = row
            out[name] = entry
            print(name, len(ids), distinct, sizes, file=sys.stderr)
    return out


def object_cells() -> dict:
    reqs = obj_ref.oracle_requests()
    distinct: dict[int, int] = {}
    for o, s in reqs:
        distinct[o] = s
    footprint = sum(distinct.values())
    sizes = [obj_ref.TINY] + [round(f * footprint) for f in obj_ref.FRACTIONS]
    out: dict = {"trace": "libcachesim/cloudPhysicsIO", "sizes": sizes, "forms": {}}
    for suffix in obj_ref.FORMS:
        sz = [r.obj_size for r in obj_ref.reader(suffix)]
        n, nbytes = len(sz), sum(sz)
        cells = {}
        for pol in OBJECT_POLICIES:
            cells[pol] = [[obj_ref.counts(POLICIES[pol], size, suffix, n, nbytes)] for size in sizes]
        out["forms"][suffix] = {"totals": [n, nbytes], "misses": cells}
        print(suffix, n, nbytes, file=sys.stderr)
    return out


def main() -> None:
    result = {
        "generator": "tests/reference/libcachesim_sampled_counts.py",
        "libcachesim_version": getattr(lcs, "__version__", "?"),
        "repeats": REPEATS,
        "unit": unit_cells(),
        "object": object_cells(),
    }
    (HERE / "libcachesim_sampled_counts.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
