"""Reference LRU miss counts from libCacheSim (pip package `libcachesim`) for
tests/readers.rs::libcachesim_lru_agreement.

Unit object size (`ignore_obj_size=True`): every request is one object of size
1, so a cache of N holds N objects, which is what tierlab's object addressing
(one page per request keyed by the object id) counts. Regenerate with

    python3 crates/tierlab-core/tests/reference/libcachesim_lru.py

and paste the printed numbers into the Rust test if they change.
"""

import pathlib
import sys

import libcachesim as lcs

TRACE = pathlib.Path(__file__).resolve().parents[5] / "shared/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin"
SIZES = [100, 1000, 10000]


def lru_misses(trace: pathlib.Path, size: int) -> tuple[int, int]:
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    reader = lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    cache = lcs.LRU(cache_size=size)
    requests = misses = 0
    for req in reader:
        requests += 1
        if not cache.get(req):
            misses += 1
    return requests, misses


def main() -> None:
    trace = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else TRACE
    for size in SIZES:
        requests, misses = lru_misses(trace, size)
        print(f"size={size} requests={requests} lru_misses={misses}")


if __name__ == "__main__":
    main()
