"""libCacheSim's object and byte misses with object sizes for W-TinyLFU and FlashProb (the
reference for crates/tierlab-core/tests/libcachesim_sketch_conformance.rs).

The trace is ../shared/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin read by libCacheSim's
own reader with object sizes. Cache sizes are bytes: 64 KiB, 256 KiB, 1 MiB and 0.1% of the
bytes of the distinct objects (2,029,770). libCacheSim's WTinyLFU sizes its counting Bloom
filter by bytes of cache (about 14.4 four-byte counters per byte), so larger byte caches need
gigabytes (1% of the footprint: 292 million counters); these four sizes stay under 128 MiB.

- `wtinylfu`: `WTinyLFU` with its defaults (tierlab: `wtinylfu(libcachesim=true)`);
- `flashprob`: `FlashProb` with `disk_admit_prob=1.0`, the one setting that draws no random
  number (libCacheSim admits when `next_rand() % 1 == 0`), so it can match exactly (tierlab:
  `flashprob(p=1.0)`); the default p = 0.2 is compared in distribution by
  tests/test_beladysize_flashprob_libcachesim.py.

Counts are `round(ratio * n)` of `process_trace`'s (object miss ratio, byte miss ratio).

Run: python3 tests/reference/libcachesim_sketch_counts.py  (writes libcachesim_sketch_counts.json
next to this file; needs `pip install libcachesim` 0.3.x).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import libcachesim as lcs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import libcachesim_object_counts as obj_ref  # noqa: E402

POLICIES = {
    "wtinylfu": lambda n: lcs.WTinyLFU(n),
    "flashprob": lambda n: lcs.FlashProb(n, disk_admit_prob=1.0),
}


def main() -> None:
    reqs = obj_ref.oracle_requests()
    n = len(reqs)
    nbytes = sum(s for _, s in reqs)
    distinct = dict(reqs)
    sizes = [64 * 1024, 256 * 1024, 1024 * 1024, round(0.001 * sum(distinct.values()))]
    out: dict = {
        "generator": "tests/reference/libcachesim_sketch_counts.py",
        "libcachesim_version": getattr(lcs, "__version__", "?"),
        "trace": "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        "requests": n,
        "bytes": nbytes,
        "sizes": sizes,
        "misses": {},
    }
    for pol, make in POLICIES.items():
        out["misses"][pol] = [obj_ref.counts(make, size, "oracleGeneral.bin", n, nbytes) for size in sizes]
    (HERE / "libcachesim_sketch_counts.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
