"""Exchange with other simulators: the page sequence tierlab replays, and libCacheSim's
oracleGeneral binary format (24-byte little-endian ``<u32 time, u64 id, u32 size, i64 next>``
records, with the position of each object's next request, which its Belady needs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tierlab.api import Trace


def page_sequence(trace: Trace) -> np.ndarray:
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


def next_access(pages: np.ndarray) -> np.ndarray:
    """Position of the next reference to the same page, -1 if none."""
    n = len(pages)
    nxt = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return nxt
    order = np.lexsort((np.arange(n), pages))
    same = pages[order[1:]] == pages[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    return nxt


def write_oracle_general(pages: np.ndarray, out: str | Path, sizes: np.ndarray | None = None) -> Path:
    """Writes one object per reference in libCacheSim's oracleGeneral format, at times 0, 1, 2,
    ...: ``pages`` are the objects' ids, ``sizes`` their sizes in bytes, one per reference
    (default 1: unit-size objects, one per page reference)."""
    n = len(pages)
    rec = np.zeros(n, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
    rec["t"] = np.arange(n, dtype=np.uint64) % (1 << 32)
    rec["id"] = pages
    rec["sz"] = 1 if sizes is None else sizes
    rec["nx"] = next_access(pages)
    rec.tofile(out)
    return Path(out)
