"""tierlab against libCacheSim's C ``cachesim`` on the same oracleGeneral trace: FIFO, LRU, CLOCK,
ARC, 2Q, S3-FIFO, SIEVE, LIRS and LFU one at a time on one thread, then a 16-size sweep of a few
policies with both using two threads. Runs alternate (tierlab, cachesim, tierlab, ...); medians.

    python benches/cachesim.py --cachesim /work/libcachesim-build/bin/cachesim
    TIERLAB_CACHESIM=/path/to/cachesim python benches/cachesim.py --repeats 3

Nothing of libCacheSim is vendored; build ``cachesim`` beside the project (never inside it)::

    git clone https://github.com/1a1a11a/libCacheSim ../libCacheSim
    sudo apt-get install -y cmake libglib2.0-dev libzstd-dev
    mkdir ../libcachesim-build && cd ../libcachesim-build
    cmake -DCMAKE_BUILD_TYPE=Release ../libCacheSim && make cachesim    # -> bin/cachesim

Without a binary (no ``--cachesim``, no ``TIERLAB_CACHESIM``) the script says so and exits.

What is timed. cachesim runs as a child process; its ``cpu`` is the child's user + system CPU time
(reading the memory-mapped trace, building the cache, the simulation), its ``wall`` the process's
wall time. Its main thread waits for the simulating threads in 2-second sleeps, so with several
caches its wall time is rounded up to the next 2 s: read the CPU column for single runs. tierlab's
``loop`` is ``policy_seconds`` (CPU time of the replay loop), ``cpu`` the whole ``tierlab.run``
call's CPU time (all threads: opening, decoding, dense ids, replay, results), ``wall`` its wall
time. ``cs own`` is the throughput cachesim prints for a single cache (its simulation loop alone,
as it times it). The 16-size sweep compares wall times (both use two threads) and CPU times. Miss ratios are
compared as cachesim prints them (4 decimals).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from zipf_trace import file_trace, zipf_trace

import tierlab

#: tierlab policy -> (tierlab spec, cachesim algorithm)
PEERS = {
    "fifo": ("fifo", "fifo"),
    "lru": ("lru", "lru"),
    "clock": ("clock", "clock"),
    "arc": ("arc", "arc"),
    "2q": ("2q", "twoq"),
    "s3fifo": ("s3fifo", "s3fifo"),
    "sieve": ("sieve", "sieve"),
    "lirs": ("lirs(libcachesim=true)", "lirs"),
    "lfu": ("lfu", "lfu"),
}

#: The sampling policies (issue 18), on request (``--policies hyperbolic lhd beladysize``): both
#: sides sample at random, with different generators and (for libCacheSim) non-uniform draws from
#: hash buckets, so their miss ratios agree in distribution, not to 4 decimals (``~`` in the
#: table; tests/reference/libcachesim_sampled_counts.json holds the tolerance). Their eviction
#: reads its samples at random places, the cost issue 17's third-of-LRU rule runs into, and this
#: is the one outside measure of it: the same policy, the same samples per eviction, in C.
SAMPLED = {
    "hyperbolic": ("hyperbolic", "hyperbolic"),
    "lhd": ("lhd", "lhd"),
    "beladysize": ("beladysize", "beladySize"),
}

BUILD = """no cachesim binary: pass --cachesim PATH or set TIERLAB_CACHESIM. To build one beside the
project (nothing of libCacheSim goes into this repository):
    git clone https://github.com/1a1a11a/libCacheSim ../libCacheSim
    apt-get install -y cmake libglib2.0-dev libzstd-dev
    mkdir ../libcachesim-build && cd ../libcachesim-build
    cmake -DCMAKE_BUILD_TYPE=Release ../libCacheSim && make cachesim   # binary: bin/cachesim"""

LINE = re.compile(r"(\S+) cache size\s+(\d+),\s+(\d+) req, miss ratio ([0-9.]+)(?:, throughput ([0-9.]+) MQPS)?")


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_cachesim(binary: str, oracle: Path, algos: list[str], sizes: list[int], threads: int, cwd: str):
    """(cpu seconds, wall seconds, {(algo, size): miss ratio}, cachesim's own throughput in M/s or
    None: it prints one for a single cache)"""
    args = [
        binary,
        str(oracle),
        "oracleGeneral",
        ",".join(algos),
        ",".join(str(s) for s in sizes),
        "--ignore-obj-size",
        "1",
        "--num-thread",
        str(threads),
    ]
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, cwd=cwd, check=True)
    wall, cpu = time.perf_counter() - t0, child_cpu() - c0
    ratios, own = {}, None
    for m in LINE.finditer(out.stdout + out.stderr):
        ratios[(m.group(1).lower(), int(m.group(2)))] = float(m.group(4))
        own = float(m.group(5)) if m.group(5) else None
    return cpu, wall, ratios, own


def run_tierlab(native: str, specs: list[str], sizes: list[int], threads: int):
    """(loop seconds summed over instances, cpu seconds, wall seconds, misses per (spec, size))"""
    c0, t0 = self_cpu(), time.perf_counter()
    df = tierlab.run(native, policies=specs, sizes=sizes, threads=threads)
    wall, cpu = time.perf_counter() - t0, self_cpu() - c0
    # Rows come policy by policy, each at every size, in the order asked.
    keys = [(s, z) for s in specs for z in sizes]
    misses = dict(zip(keys, (int(m) for m in df["misses"]), strict=True))
    return float(df["policy_seconds"].sum()), cpu, wall, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cachesim", default=os.environ.get("TIERLAB_CACHESIM"), help="path of libCacheSim's cachesim")
    ap.add_argument("--n", type=int, default=10_000_000, help="accesses")
    ap.add_argument("--pages", type=int, default=1_000_000, help="distinct pages of the Zipf generator")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--trace", help="a trace file tierlab reads (e.g. a real one), instead of the Zipf generator")
    ap.add_argument(
        "--cache", type=float, default=0.1, help="cache size: a fraction of --pages (of distinct pages with --trace)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--policies", nargs="+", default=list(PEERS), choices=list(PEERS) + list(SAMPLED))
    ap.add_argument("--sweep-policies", nargs="*", default=["lru", "s3fifo", "lirs"], choices=list(PEERS))
    ap.add_argument("--sweep-threads", type=int, default=2)
    ap.add_argument("--json", help="also write the results as JSON here")
    args = ap.parse_args()
    if not args.cachesim or not Path(args.cachesim).is_file():
        print(BUILD if not args.cachesim else f"{args.cachesim}: not a file\n{BUILD}")
        sys.exit(0)

    out: dict = {"single": [], "sweep": None}
    with tempfile.TemporaryDirectory() as tmp:
        if args.trace:
            spec, native, pages, oracle = file_trace(Path(tmp), args.trace)
            footprint = len(np.unique(pages))
        else:
            spec, native, pages, oracle = zipf_trace(Path(tmp), args.alpha, args.pages, args.n)
            footprint = args.pages
        n = len(pages)
        size = max(1, int(args.cache * footprint))
        print(f"trace: {spec} ({n:,} accesses), cache {size:,} pages, {args.repeats} repeats, medians\n")
        print(
            f"{'policy':8} {'tierlab loop':>12} {'cpu':>7} {'wall':>7} {'cachesim cpu':>13} {'wall':>7} "
            f"{'loop/cs cpu':>11} {'cpu/cpu':>7} {'wall/wall':>9} {'miss ratio':>13} {'cs own M/s':>9}"
        )
        for p in args.policies:
            t_spec, c_algo = PEERS[p] if p in PEERS else SAMPLED[p]
            tl, tc, tw, cc, cw, co = [], [], [], [], [], []
            m_ours, r_theirs = None, None
            for _ in range(args.repeats):
                loop, cpu, wall, m = run_tierlab(str(native), [t_spec], [size], 1)
                tl.append(loop)
                tc.append(cpu)
                tw.append(wall)
                m_ours = next(iter(m.values()))
                cpu, wall, ratios, own = run_cachesim(args.cachesim, oracle, [c_algo], [size], 1, tmp)
                cc.append(cpu)
                cw.append(wall)
                if own:
                    co.append(own)
                r_theirs = next(iter(ratios.values()), None)
            med = {k: statistics.median(v) for k, v in dict(tl=tl, tc=tc, tw=tw, cc=cc, cw=cw).items()}
            ours = round(m_ours / n, 4)
            same = "=" if r_theirs is not None and abs(ours - r_theirs) < 1e-9 else "!="
            same = "~" if p in SAMPLED else same
            row = {"policy": p, **{k: n / v / 1e6 for k, v in med.items()}, "miss_ratio": ours, "cachesim": r_theirs}
            row["cs_own"] = statistics.median(co) if co else None
            out["single"].append(row)
            print(
                f"{p:8} {row['tl']:10.1f} M {row['tc']:6.1f}M {row['tw']:6.1f}M {row['cc']:11.1f} M {row['cw']:6.1f}M "
                f"{med['cc'] / med['tl']:11.2f} {med['cc'] / med['tc']:7.2f} {med['cw'] / med['tw']:9.2f} "
                f"{ours:.4f}{same}{r_theirs} {row['cs_own'] or float('nan'):9.2f}"
            )
        if args.sweep_policies:
            sizes = sorted({max(1, int(footprint * 0.5 ** (k / 2))) // 1 for k in range(1, 17)})
            while len(sizes) < 16:
                sizes.append(sizes[-1] + 1)
            specs = [PEERS[p][0] for p in args.sweep_policies]
            algos = [PEERS[p][1] for p in args.sweep_policies]
            tc, tw, cc, cw = [], [], [], []
            mism: dict[str, int] = {}
            for _ in range(args.repeats):
                _, cpu, wall, m = run_tierlab(str(native), specs, sizes, args.sweep_threads)
                tc.append(cpu)
                tw.append(wall)
                cpu, wall, ratios, _ = run_cachesim(args.cachesim, oracle, algos, sizes, args.sweep_threads, tmp)
                cc.append(cpu)
                cw.append(wall)
                mism = {
                    a: sum(
                        1
                        for z in sizes
                        if ratios.get((a, z)) is None or abs(round(m[(sp, z)] / n, 4) - ratios[(a, z)]) > 1e-9
                    )
                    for sp, a in zip(specs, algos, strict=True)
                }
            inst = len(specs) * len(sizes)
            med = {k: statistics.median(v) for k, v in dict(tc=tc, tw=tw, cc=cc, cw=cw).items()}
            print(
                f"\nsweep: {', '.join(args.sweep_policies)} x {len(sizes)} sizes ({sizes[0]:,}..{sizes[-1]:,} pages) "
                f"= {inst} caches, {args.sweep_threads} threads each"
            )
            print(
                f"tierlab  wall {med['tw']:7.2f} s  cpu {med['tc']:7.2f} s  ({inst * n / med['tw'] / 1e6:.1f} M "
                f"instance-refs/s wall)\ncachesim wall {med['cw']:7.2f} s  cpu {med['cc']:7.2f} s  "
                f"({inst * n / med['cw'] / 1e6:.1f} M/s wall)\nwall ratio (cachesim/tierlab) "
                f"{med['cw'] / med['tw']:.2f}, cpu ratio {med['cc'] / med['tc']:.2f}; "
                f"miss ratios differing (4 decimals): {sum(mism.values())} of {inst} ({mism})"
            )
            out["sweep"] = {"sizes": sizes, "policies": args.sweep_policies, **med, "mismatches": mism}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
