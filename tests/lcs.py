"""Runs libCacheSim (pip package ``libcachesim``, a test dependency only) on exactly the page
sequence tierlab replays: the trace is expanded by tierlab's own reader into one object per page
and written as an oracleGeneral file (24-byte ``<IQIq>`` records with next-access times, which
libCacheSim's Belady needs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tierlab


def page_sequence(trace: tierlab.Trace) -> np.ndarray:
    """Page numbers of every page reference, in order (requests expanded into pages)."""
    parts = []
    for b in trace.batches():
        acc = b["event"] == 255
        page, npages = b["page"][acc], b["npages"][acc].astype(np.int64)
        if len(page) and (npages == 1).all():
            parts.append(page)
            continue
        starts = np.repeat(page, npages)
        offsets = np.arange(npages.sum()) - np.repeat(np.cumsum(npages) - npages, npages)
        parts.append(starts + offsets.astype(np.uint64))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def write_oracle_general(pages: np.ndarray, out: Path) -> Path:
    n = len(pages)
    _, inverse = np.unique(pages, return_inverse=True)
    nxt = np.full(n, -1, dtype=np.int64)
    last = np.full(inverse.max() + 1 if n else 0, -1, dtype=np.int64)
    # Next access position per reference, one backward pass (vectorised by sorting).
    order = np.lexsort((np.arange(n), inverse))
    same = inverse[order[1:]] == inverse[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    del last
    rec = np.zeros(n, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
    rec["t"] = np.arange(n, dtype=np.uint64) % (1 << 32)
    rec["id"] = pages
    rec["sz"] = 1
    rec["nx"] = nxt
    rec.tofile(out)
    return out


LCS_CLASSES = {"fifo": "FIFO", "lru": "LRU", "clock": "Clock", "opt": "Belady"}


def lcs_misses(oracle_file: Path, n: int, policy: str, size: int) -> int:
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle_file), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, LCS_CLASSES[policy])(cache_size=size)
    miss_ratio, _ = cache.process_trace(reader)
    return round(miss_ratio * n)
