"""Throughput of tierlab's policies side by side with libCacheSim on the same trace, in the same
run, alternating, several times; plus the machine's floor (one random read-modify-write per
access into a table the size of the page-id space), over packed ids and over the engine's own
reference stream.

    python benches/throughput.py                       # 10M-access Zipf(1.0) over 1M pages, 10% cache
    python benches/throughput.py --n 1000000 --repeats 3 --policies lru clock

tierlab is timed two ways: ``policy`` (the replay loop alone) and ``wall`` (the whole Python call:
opening and decoding the trace, assigning dense ids, building the result table). libCacheSim is
timed over ``process_trace`` after its reader is open, which includes reading its memory-mapped
binary records as it goes. So ``ratio`` compares replay loops (tierlab decodes a trace once for
every instance of a run, so in a sweep decoding is shared), and ``wall ratio`` charges tierlab's
whole single-policy call against libCacheSim's loop. Medians are printed; the machine is noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from zipf_trace import zipf_trace

import tierlab
from tierlab import _core

#: tierlab policy spec run for a policy name, where the default differs from libCacheSim's
#: algorithm (LIRS: libCacheSim demotes differently, see policy/classic/lirs.rs)
SPEC = {"lirs": "lirs(libcachesim=true)"}

#: tierlab policy -> libcachesim class (and its parameters, matched to ours)
PEERS = {
    "fifo": ("FIFO", {}),
    "lru": ("LRU", {}),
    "clock": ("Clock", {}),
    "arc": ("ARC", {}),
    "2q": ("TwoQ", {}),
    "s3fifo": ("S3FIFO", {}),
    "sieve": ("Sieve", {}),
    "lirs": ("LIRS", {}),
}


def time_tierlab(trace: str, policy: str, size: int) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    df = tierlab.run(trace, policies=[SPEC.get(policy, policy)], sizes=[size], threads=1)
    wall = time.perf_counter() - t0
    return float(df["policy_seconds"].iloc[0]), wall, int(df["misses"].iloc[0])


def time_libcachesim(oracle: Path, policy: str, size: int, n: int) -> tuple[float, int]:
    import libcachesim as lcs

    cls, params = PEERS[policy]
    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, cls)(cache_size=size, **params)
    t0 = time.perf_counter()
    mr, _ = cache.process_trace(reader)
    return time.perf_counter() - t0, round(mr * n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000, help="accesses")
    ap.add_argument("--pages", type=int, default=1_000_000, help="distinct pages of the Zipf generator")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--cache", type=float, default=0.1, help="cache size as a fraction of --pages")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--policies", nargs="+", default=list(PEERS))
    ap.add_argument("--json", help="also write the results as JSON here")
    args = ap.parse_args()

    known = set(tierlab.policies()["name"])
    policies = [p for p in args.policies if p in known]
    with tempfile.TemporaryDirectory() as tmp:
        spec, native, pages, oracle = zipf_trace(Path(tmp), args.alpha, args.pages, args.n)
        n = len(pages)
        size = int(args.cache * args.pages)
        trace_json = tierlab.Trace.of(native).to_json()
        floor = statistics.median(_core.bench_floor(trace_json, args.repeats))
        floor_refs = statistics.median(_core.bench_floor(trace_json, args.repeats, over_refs=True))
        print(f"trace: {spec} ({n:,} accesses, {len(np.unique(pages)):,} distinct), cache {size:,} pages")
        print(
            f"floor: {n / floor / 1e6:.1f} M accesses/s over packed u32 ids; "
            f"{n / floor_refs / 1e6:.1f} M/s over the engine's reference batches (ids + flags columns)\n"
        )
        rows = []
        header = (
            f"{'policy':8} {'tierlab M/s':>12} {'(wall)':>8} {'libCacheSim M/s':>16} {'ratio':>6} {'(wall)':>6} "
            f"{'floor/tierlab':>13} {'misses equal':>12}"
        )
        print(header)
        for p in policies:
            ours, walls, theirs = [], [], []
            m_ours = m_theirs = None
            for _ in range(args.repeats):  # alternate, so drift hits both alike
                sec, wall, m_ours = time_tierlab(str(native), p, size)
                ours.append(sec)
                walls.append(wall)
                if p in PEERS:
                    lsec, m_theirs = time_libcachesim(oracle, p, size, n)
                    theirs.append(lsec)
            r = {
                "policy": p,
                "tierlab_maps": n / statistics.median(ours) / 1e6,
                "tierlab_wall_maps": n / statistics.median(walls) / 1e6,
                "libcachesim_maps": n / statistics.median(theirs) / 1e6 if theirs else None,
                "floor_maps": n / floor / 1e6,
                "floor_refs_maps": n / floor_refs / 1e6,
                "misses": m_ours,
                "libcachesim_misses": m_theirs,
            }
            r["ratio"] = r["tierlab_maps"] / r["libcachesim_maps"] if theirs else None
            r["wall_ratio"] = r["tierlab_wall_maps"] / r["libcachesim_maps"] if theirs else None
            rows.append(r)
            lc = f"{r['libcachesim_maps']:16.2f}" if theirs else f"{'-':>16}"
            ratio = f"{r['ratio']:6.2f} {r['wall_ratio']:6.2f}" if theirs else f"{'-':>6} {'-':>6}"
            print(
                f"{p:8} {r['tierlab_maps']:12.2f} {r['tierlab_wall_maps']:8.2f} {lc} {ratio} "
                f"{r['floor_maps'] / r['tierlab_maps']:13.2f} {str(m_ours == m_theirs):>12}"
            )
        # The leanest CLOCK and LRU (same misses, no sink): what those policies can do here.
        for p in ("clock", "lru"):
            secs, misses = _core.bench_kernel(trace_json, p, size, args.repeats)
            kernel = n / statistics.median(secs) / 1e6
            print(f"kernel:{p:6} {kernel:8.2f} M/s, floor/kernel {n / floor / 1e6 / kernel:.2f}, misses {misses:,}")
            rows.append({"policy": f"kernel:{p}", "tierlab_maps": kernel, "misses": misses})
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
