"""libCacheSim's miss counts on the shared traces (the reference for
crates/tierlab-core/tests/libcachesim_conformance.rs).

Every trace is turned into libCacheSim's oracleGeneral binary format (24-byte
little-endian `<IQIq>` records: time, object id, size, next access) with unit
object sizes, so that cache sizes count objects (pages):

- lirs/*.trace.gz: one block per line, one request per line;
- arc/OLTP.lis.zst: `START COUNT _ _` expanded into COUNT consecutive blocks,
  as tierlab's ArcReader + engine do;
- libcachesim/cloudPhysicsIO.txt: one object id per line.

Sizes: 5 per trace, fractions of the number of distinct pages (see SIZES).
Miss counts are `round(miss_ratio * n_requests)` from `process_trace`.

Run: python3 tests/reference/libcachesim_counts.py  (writes libcachesim_counts.json
next to this file; needs `pip install libcachesim` 0.3.x). With `--policies NAME...` only
those policies are run and merged into the existing JSON (every other cell is kept as it is).
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import libcachesim as lcs

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent.parent.parent.parent / "shared" / "traces"
if not TRACES.exists():
    TRACES = Path("/work/shared/traces")

# Fractions of the distinct-page count used as cache sizes.
FRACTIONS = [0.01, 0.05, 0.1, 0.25, 0.5]
MIN_SIZE = 10

POLICIES = {
    "fifo": lambda n: lcs.FIFO(n),
    "lru": lambda n: lcs.LRU(n),
    "clock": lambda n: lcs.Clock(n),
    "2q": lambda n: lcs.TwoQ(n),
    "arc": lambda n: lcs.ARC(n),
    "lirs": lambda n: lcs.LIRS(n),
    "s3fifo": lambda n: lcs.S3FIFO(n),
    "sieve": lambda n: lcs.Sieve(n),
    "lfu": lambda n: lcs.LFU(n),
    "opt": lambda n: lcs.Belady(n),
    # Added with issue 18 (each runs in tierlab as the spec in libcachesim_conformance.rs).
    "slru": lambda n: lcs.SLRU(n),
    "gdsf": lambda n: lcs.GDSF(n),
    "size": lambda n: lcs.Size(n),
    "mq": lambda n: lcs.MQ(n),
    "clock2qplus": lambda n: lcs.Clock2QPlus(n),
    # Issue 18, sketch/oracle/flash slice.
    "wtinylfu": lambda n: lcs.WTinyLFU(n),
    # p = 1 draws no random number, so it can match exactly (default p = 0.2: in distribution,
    # tests/test_beladysize_flashprob_libcachesim.py).
    "flashprob": lambda n: lcs.FlashProb(n, disk_admit_prob=1.0),
}

# Sizes libCacheSim refuses (it exits): FlashProb with a DRAM share of 0 (below 20 pages at
# its ram-size-ratio 0.05). Their cells are null; tierlab runs them but has nothing to match.
REFUSED = {"flashprob": lambda n: int(n * 0.05) <= 0}


def read_lirs(path: Path) -> list[int]:
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s == "*":
                # Phase separators inside cs and 2_pools: skipped, as tierlab's
                # LirsReader skips them.
                continue
            out.append(int(s))
    return out


def read_arc(path: Path) -> list[int]:
    out = []
    text = subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout.decode()
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        start, count = int(f[0]), int(f[1])
        out.extend(range(start, start + count))
    return out


def read_txt(path: Path) -> list[int]:
    with open(path) as f:
        return [int(s) for s in (line.strip() for line in f) if s]


def write_oracle(ids: list[int], path: str) -> None:
    nxt = [-1] * len(ids)
    last: dict[int, int] = {}
    for i in range(len(ids) - 1, -1, -1):
        nxt[i] = last.get(ids[i], -1)
        last[ids[i]] = i
    rec = struct.Struct("<IQIq")
    with open(path, "wb") as f:
        f.write(b"".join(rec.pack(i, obj, 1, nxt[i]) for i, obj in enumerate(ids)))


def traces() -> list[tuple[str, list[int]]]:
    out = []
    for p in sorted((TRACES / "lirs").glob("*.trace.gz")):
        out.append((f"lirs/{p.name}", read_lirs(p)))
    out.append(("arc/OLTP.lis.zst", read_arc(TRACES / "arc" / "OLTP.lis.zst")))
    out.append(
        (
            "libcachesim/cloudPhysicsIO.txt",
            read_txt(TRACES / "libcachesim" / "cloudPhysicsIO.txt"),
        )
    )
    return out


def sizes_for(distinct: int) -> list[int]:
    return sorted({max(MIN_SIZE, round(f * distinct)) for f in FRACTIONS})


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", nargs="+", choices=sorted(POLICIES), help="only these, merged")
    args = ap.parse_args()
    out = HERE / "libcachesim_counts.json"
    only = args.policies
    result = {
        "generator": "tests/reference/libcachesim_counts.py",
        "libcachesim_version": getattr(lcs, "__version__", "?"),
        "traces": {},
    }
    if only:
        result = json.loads(out.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        for name, ids in traces():
            path = os.path.join(tmp, "t.oracleGeneral.bin")
            write_oracle(ids, path)
            distinct = len(set(ids))
            entry = {"requests": len(ids), "distinct": distinct, "sizes": sizes_for(distinct), "misses": {}}
            if only:
                entry = result["traces"][name]
            for pol, make in POLICIES.items():
                if only and pol not in only:
                    continue
                row = []
                for size in entry["sizes"]:
                    if pol in REFUSED and REFUSED[pol](int(size)):
                        row.append(None)
                        continue
                    # A fresh reader per run; never close() it (double free).
                    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
                    cache = make(int(size))
                    ratio, _ = cache.process_trace(reader)
                    row.append(round(ratio * len(ids)))
                entry["misses"][pol] = row
            result["traces"][name] = entry
            print(name, len(ids), distinct, entry["sizes"], file=sys.stderr)
    out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
