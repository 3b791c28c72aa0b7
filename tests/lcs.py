"""libCacheSim (pip ``libcachesim``, a test dependency only) on exactly the page sequence tierlab
replays, exported with :mod:`tierlab.interop`."""

from __future__ import annotations

from pathlib import Path

from tierlab.interop import page_sequence, write_oracle_general

__all__ = ["lcs_misses", "page_sequence", "write_oracle_general"]

LCS_CLASSES = {"fifo": "FIFO", "lru": "LRU", "clock": "Clock", "opt": "Belady"}


def lcs_misses(oracle_file: Path, n: int, policy: str, size: int) -> int:
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle_file), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, LCS_CLASSES[policy])(cache_size=size)
    miss_ratio, _ = cache.process_trace(reader)
    return round(miss_ratio * n)
