"""Differential testing of tierlab against pip ``libcachesim`` on generated traces (the engine of
tests/test_differential_libcachesim.py and benches/differential.py).

A *cell* is (trace seed, mode, policy, cache size). The trace seed draws the trace's shape and
its parameters (``make_trace``): Zipf of several skews, uniform, scans, loops, a Zipf mixed with a
scan, phase changes between two Zipf sets, repeated bursts, footprints from one object to
thousands, and in object-size mode object sizes that are constant, uniform, heavy-tailed, or
placed at the edges of the cache's segments (a cache size divided by 1, 2, 4, 10, 100, plus or
minus one byte). Cache sizes (``cache_sizes``) are drawn from the sizes where a policy's
segments change (1 to 5 objects, 9 to 11, 19 to 21, 99 to 101, ...) and from fractions of the
footprint up to beyond it. Every cell runs once in tierlab (``tierlab.run`` on the trace written
as oracleGeneral) and once in libCacheSim (``process_trace`` on the same file); the object
misses (and, in object-size mode, the byte misses) must be equal.

``PAGE_POLICIES`` and ``OBJECT_POLICIES`` are the deterministic pairs of the conformance tests
(crates/tierlab-core/tests/libcachesim_conformance.rs, libcachesim_object_conformance.rs,
libcachesim_sketch_conformance.rs): tierlab spec -> libCacheSim constructor. A disagreement is
printed as one line that reproduces it (``benches/differential.py --cell SEED:MODE:SPEC:SIZE``),
and ``shrink`` cuts its trace down to a short one that still disagrees.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tierlab

BLOOM = "bloom"
SIZE_ADM = "size(threshold=16384)"


def _lcs():
    import libcachesim as lcs

    return lcs


# libCacheSim's hash table at its default 2^24 buckets takes 0.3 s to free; 2^12 (it grows as
# needed) keeps a cell in the milliseconds. The policies here never look at the table's order.
HASHPOWER = 12


def _mk(cls: str, **kw):
    return lambda n, **more: getattr(_lcs(), cls)(n, hashpower=HASHPOWER, **kw, **more)


# tierlab spec -> libCacheSim cache factory (size -> cache).
PAGE_POLICIES = {
    "fifo": _mk("FIFO"),
    "lru": _mk("LRU"),
    "clock": _mk("Clock"),
    "2q": _mk("TwoQ"),
    "arc": _mk("ARC"),
    "lirs(libcachesim=true)": _mk("LIRS"),
    "s3fifo": _mk("S3FIFO"),
    "sieve": _mk("Sieve"),
    "lfu": _mk("LFU"),
    "opt": _mk("Belady"),
    "slru(libcachesim=true)": _mk("SLRU"),
    "gdsf(libcachesim=true)": _mk("GDSF"),
    "size": _mk("Size"),
    "mq": _mk("MQ"),
    "clock2qplus": _mk("Clock2QPlus"),
    "wtinylfu(libcachesim=true)": _mk("WTinyLFU"),
    "flashprob(p=1.0)": _mk("FlashProb", disk_admit_prob=1.0),
}
OBJECT_POLICIES = {
    k: PAGE_POLICIES[k]
    for k in ["fifo", "lru", "clock", "opt", "s3fifo", "sieve", "lfu", "wtinylfu(libcachesim=true)", "flashprob(p=1.0)"]
}
ADMITTED = ["fifo", "lru", "clock", "sieve", "lfu", "s3fifo"]
ADMISSIONS = {
    BLOOM: lambda: _lcs().BloomFilterAdmissioner(),
    SIZE_ADM: lambda: _lcs().SizeAdmissioner(size_threshold=16384),
}
for _p in ADMITTED:
    for _a, _make_adm in ADMISSIONS.items():
        for _table in (PAGE_POLICIES, OBJECT_POLICIES):
            _table[f"{_p}+{_a}"] = lambda n, p=_p, m=_make_adm: PAGE_POLICIES[p](n, admissioner=m())


def refused(spec: str, size: int) -> bool:
    """Cells pip libcachesim 0.3.5 refuses (it aborts the process): S3-FIFO whose small FIFO
    (10% of the cache) is empty, W-TinyLFU at 4 objects or fewer, FlashProb with a DRAM share
    (5%) of 0. Measured, size by size, in a subprocess."""
    base = spec.split("+")[0]
    if base == "s3fifo":
        return int(size * 0.1) <= 0
    if base.startswith("wtinylfu"):
        return size <= 4
    if base.startswith("flashprob"):
        return int(size * 0.05) <= 0
    return False


def too_costly(spec: str, size: int, object_mode: bool) -> bool:
    """W-TinyLFU byte caches over 1 MiB: libCacheSim's counting Bloom filter takes about 14
    four-byte counters per byte of cache (58 MiB at 1 MiB)."""
    return object_mode and spec.startswith("wtinylfu") and size > (1 << 20)


SHAPES = ["zipf", "uniform", "scan", "loop", "mix", "phases", "burst", "tiny"]
SIZE_KINDS = ["const", "uniform", "heavy", "edges", "unit"]


@dataclass
class Trace:
    seed: int
    shape: str
    ids: np.ndarray  # uint64
    sizes: np.ndarray  # uint32, object sizes (object-size mode)
    size_kind: str
    base: int  # the byte size object sizes are placed around (edges)

    @property
    def distinct(self) -> int:
        return len(np.unique(self.ids))

    @property
    def footprint_bytes(self) -> int:
        _, first = np.unique(self.ids, return_index=True)
        return int(self.sizes[first].astype(np.int64).sum())

    def describe(self) -> str:
        return f"{self.shape} n={len(self.ids)} distinct={self.distinct} sizes={self.size_kind}"


def _zipf(rng, n_obj: int, alpha: float, n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n_obj + 1, dtype=np.float64) ** alpha
    p /= p.sum()
    perm = rng.permutation(n_obj)
    return perm[rng.choice(n_obj, size=n, p=p)]


def make_trace(seed: int, shape: str | None = None) -> Trace:
    """The trace of `seed` (its shape drawn from the seed unless given)."""
    rng = np.random.default_rng(seed)
    shape = shape or SHAPES[int(rng.integers(len(SHAPES)))]
    n = int(rng.choice([60, 200, 600, 1500, 3000]))
    n_obj = int(rng.choice([5, 20, 80, 300, 1200, 4000]))
    alpha = float(rng.choice([0.5, 0.8, 1.0, 1.2, 1.6]))
    if shape == "zipf":
        ids = _zipf(rng, n_obj, alpha, n)
    elif shape == "uniform":
        ids = rng.integers(0, n_obj, size=n)
    elif shape == "scan":
        span = max(1, n // int(rng.choice([1, 2, 3, 5])))
        ids = np.arange(n) % span
    elif shape == "loop":
        span = int(rng.choice([3, 10, 33, 100, 330]))
        ids = np.arange(n) % span
    elif shape == "mix":
        z = _zipf(rng, n_obj, alpha, n)
        s = n_obj + np.arange(n)
        ids = np.where(rng.random(n) < float(rng.choice([0.1, 0.3, 0.6])), s, z)
    elif shape == "phases":
        k = int(rng.choice([2, 3, 4]))
        parts = []
        for i in range(k):
            off = (i % 2) * n_obj
            parts.append(off + _zipf(rng, n_obj, alpha, n // k))
        ids = np.concatenate(parts)
    elif shape == "burst":
        base = _zipf(rng, n_obj, alpha, max(1, n // 4))
        ids = np.repeat(base, rng.integers(1, 6, size=len(base)))[:n]
    else:  # tiny
        ids = rng.integers(0, int(rng.integers(1, 9)), size=n)
    ids = ids.astype(np.uint64) + np.uint64(int(rng.choice([0, 1, 1 << 33])))
    kind = SIZE_KINDS[int(rng.integers(len(SIZE_KINDS)))]
    base = int(rng.choice([512, 4096, 10_000, 65_536]))
    uniq, inv = np.unique(ids, return_inverse=True)
    m = len(uniq)
    if kind == "const":
        per = np.full(m, base)
    elif kind == "uniform":
        per = rng.integers(1, 2 * base, size=m)
    elif kind == "heavy":
        per = np.minimum(rng.pareto(1.2, size=m) * base / 4 + 1, 1 << 24).astype(np.int64)
    elif kind == "edges":
        cands = [base // d + e for d in (1, 2, 4, 10, 100) for e in (-1, 0, 1)]
        per = rng.choice([c for c in cands if c > 0], size=m)
    else:
        per = np.ones(m, dtype=np.int64)
    sizes = per[inv].astype(np.uint32)
    return Trace(seed, shape, ids, sizes, kind, base)


EDGE_OBJECTS = [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 16, 19, 20, 21, 39, 40, 41, 99, 100, 101, 199, 200, 201]
FRACTIONS = [0.01, 0.05, 0.1, 0.25, 0.5, 0.9, 1.0, 1.5]


def cache_sizes(trace: Trace, object_mode: bool, k: int, rng) -> list[int]:
    """`k` cache sizes for `trace`: objects (page mode) or bytes (object-size mode)."""
    if object_mode:
        b, foot = trace.base, trace.footprint_bytes
        cands = [max(1, b * m + e) for m in (1, 2, 4, 10, 100) for e in (-1, 0, 1)]
        cands += [max(1, round(f * foot)) for f in FRACTIONS]
    else:
        d = trace.distinct
        cands = [s for s in EDGE_OBJECTS if s <= 2 * d + 2]
        cands += [max(1, round(f * d)) for f in FRACTIONS]
    cands = sorted(set(cands))
    return sorted(set(int(c) for c in rng.choice(cands, size=min(k, len(cands)), replace=False)))


def write_oracle(ids: np.ndarray, sizes: np.ndarray, path: Path) -> None:
    """oracleGeneral records (time = ordinal, next access = index of the next request to the same
    object or -1), what libCacheSim's Belady needs."""
    n = len(ids)
    nxt = np.full(n, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):
        k = int(ids[i])
        nxt[i] = last.get(k, -1)
        last[k] = i
    rec = np.zeros(n, dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")]))
    rec["t"] = np.arange(n)
    rec["id"] = ids
    rec["size"] = sizes
    rec["next"] = nxt
    rec.tofile(path)


def lcs_count(path: Path, spec: str, size: int, object_mode: bool, n: int, nbytes: int) -> tuple[int, int]:
    """libCacheSim's (misses, byte misses) of one cell."""
    lcs = _lcs()
    table = OBJECT_POLICIES if object_mode else PAGE_POLICIES
    params = lcs.ReaderInitParam(ignore_obj_size=not object_mode)
    # A fresh reader per run; never close() it (double free).
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    ratio, byte_ratio = table[spec](size).process_trace(reader)
    return round(ratio * n), round(byte_ratio * nbytes)


def tierlab_counts(path: Path, specs: list[str], sizes: list[int], object_mode: bool) -> dict:
    """tierlab's (misses, byte misses) per (spec, size), every cell in one replay."""
    df = tierlab.run(path, policies=specs, sizes=sizes, object_sizes=object_mode, threads=1)
    col = "size_bytes" if object_mode else "size_pages"
    return {(r.label, int(getattr(r, col))): (int(r.misses), int(r.byte_misses)) for r in df.itertuples()}


@dataclass
class Disagreement:
    seed: int
    mode: str
    spec: str
    size: int
    ours: tuple[int, int]
    theirs: tuple[int, int]
    shape: str

    def line(self) -> str:
        if self.mode == "object":
            o, t = self.ours, self.theirs
            counts = f"tierlab {o[0]} misses / {o[1]} bytes, libCacheSim {t[0]} / {t[1]}"
        else:
            counts = f"tierlab {self.ours[0]} misses, libCacheSim {self.theirs[0]}"
        return f"DISAGREE --cell {self.seed}:{self.mode}:{self.spec}:{self.size}  ({self.shape}) {counts}"


def run_trace(seed: int, policies: list[str] | None, sizes_per_mode: int, tmp: Path, modes=("page", "object")):
    """Every cell of trace `seed`: (cells run, disagreements)."""
    trace = make_trace(seed)
    rng = np.random.default_rng(seed + 1)
    path = tmp / f"d{seed}.oracleGeneral.bin"
    cells, bad = 0, []
    for mode in modes:
        obj = mode == "object"
        table = OBJECT_POLICIES if obj else PAGE_POLICIES
        specs = [p for p in (policies or table) if p in table]
        if not specs:
            continue
        sizes = np.ones(len(trace.ids), dtype=np.uint32) if not obj else trace.sizes
        write_oracle(trace.ids, sizes, path)
        n, nbytes = len(trace.ids), int(sizes.astype(np.int64).sum())
        cs = cache_sizes(trace, obj, sizes_per_mode, rng)
        groups: dict[tuple[int, ...], list[str]] = {}
        for spec in specs:
            ok = tuple(c for c in cs if not refused(spec, c) and not too_costly(spec, c, obj))
            if ok:
                groups.setdefault(ok, []).append(spec)
        for ok, group in groups.items():
            ours = tierlab_counts(path, group, list(ok), obj)
            for spec in group:
                for c in ok:
                    theirs = lcs_count(path, spec, c, obj, n, nbytes)
                    mine = ours[(spec, c)]
                    cells += 1
                    same = mine == theirs if obj else mine[0] == theirs[0]
                    if not same:
                        bad.append(Disagreement(seed, mode, spec, c, mine, theirs, trace.describe()))
    path.unlink(missing_ok=True)
    return cells, bad


def check_ids(ids: np.ndarray, sizes: np.ndarray, spec: str, size: int, obj: bool, tmp: Path) -> bool:
    """Whether tierlab and libCacheSim agree on this one cell of the given requests."""
    path = tmp / "shrink.oracleGeneral.bin"
    write_oracle(ids, sizes, path)
    ours = tierlab_counts(path, [spec], [size], obj)[(spec, size)]
    theirs = lcs_count(path, spec, size, obj, len(ids), int(sizes.astype(np.int64).sum()))
    return ours == theirs if obj else ours[0] == theirs[0]


def shrink(d: Disagreement, tmp: Path, budget: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """A short request sequence on which the cell of `d` still disagrees (delta debugging:
    drop chunks of halving length while the disagreement stays, then renumber the objects)."""
    t = make_trace(d.seed)
    obj = d.mode == "object"
    ids = t.ids.copy()
    sizes = t.sizes.copy() if obj else np.ones(len(ids), dtype=np.uint32)
    chunk = len(ids) // 2
    tries = 0
    while chunk >= 1 and tries < budget:
        i, progress = 0, False
        while i < len(ids) and tries < budget:
            keep = np.r_[0:i, min(len(ids), i + chunk) : len(ids)]
            if len(keep) == 0:
                i += chunk
                continue
            tries += 1
            if not check_ids(ids[keep], sizes[keep], d.spec, d.size, obj, tmp):
                ids, sizes, progress = ids[keep], sizes[keep], True
            else:
                i += chunk
        if not progress:
            chunk //= 2
    _, dense = np.unique(ids, return_inverse=True)
    dense = dense.astype(np.uint64) + np.uint64(1)
    if not check_ids(dense, sizes, d.spec, d.size, obj, tmp):
        ids = dense
    return ids, sizes


def run_cell(cell: str) -> Disagreement | None:
    """Re-runs one cell given as SEED:MODE:SPEC:SIZE; the disagreement or None."""
    seed, mode, rest = cell.split(":", 2)
    spec, size = rest.rsplit(":", 1)
    t = make_trace(int(seed))
    obj = mode == "object"
    sizes = t.sizes if obj else np.ones(len(t.ids), dtype=np.uint32)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.oracleGeneral.bin"
        write_oracle(t.ids, sizes, path)
        ours = tierlab_counts(path, [spec], [int(size)], obj)[(spec, int(size))]
        theirs = lcs_count(path, spec, int(size), obj, len(t.ids), int(sizes.astype(np.int64).sum()))
    same = ours == theirs if obj else ours[0] == theirs[0]
    return None if same else Disagreement(int(seed), mode, spec, int(size), ours, theirs, t.describe())


def tmpdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="tierlab-diff-", dir=os.environ.get("TMPDIR")))


__all__ = [
    "OBJECT_POLICIES",
    "PAGE_POLICIES",
    "Disagreement",
    "make_trace",
    "run_cell",
    "run_trace",
    "shrink",
]
