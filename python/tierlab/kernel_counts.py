"""The kernel's counts of a kernel-check cell and their arithmetic.

Reads the private trace instance's page-cache insertions and deletions (pages by folio order) and
pages dirtied (include/trace/events/filemap.h, writeback.h) and checks no event was lost;
parses ``key value`` counters (the cgroup's memory.stat, /proc/vmstat), zram's ``mm_stat``
(Documentation/admin-guide/blockdev/zram.rst), zswap's debugfs counters (mm/zswap.c) and the
memory pressure stall totals (/proc/pressure/memory); and derives from them the pages a cell's
group holds for the workload (its charge stock included), the swap counts of a zswap cell and the
kernel's zram pool against tierlab's compressed-swap accounting.

Cost: one pass over the trace buffer (about 80 bytes an event, at most three events a
reference); the rest is a few small reads and dict arithmetic per cell.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Sequence
from pathlib import Path

from tierlab.kernel_host import DEBUGFS, PAGE


def _stat(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


#: MEMCG_CHARGE_BATCH (include/linux/memcontrol.h): the pages a charge takes from the group's
#: counter at once, the rest kept in the CPU's charge stock
MEMCG_CHARGE_BATCH = 64


def cell_capacity(limit: int, ready: dict, done: dict, stock_returned: bool = False) -> tuple[int, int]:
    """The pages a cell's group holds for the workload, from its own accounting, and the pages of
    its charge stock at the driver's ready snapshot; ``ready`` and ``done`` are the driver's
    snapshots (``usage_bytes``, ``kmem_bytes``, ``memory_stat``).

    The limit, less what the group has charged when the driver is ready, less the kernel memory
    the run charged (page tables, page-cache tree nodes), plus the charge stock the ready usage
    includes: ``try_charge_memcg`` (mm/memcontrol.c, 6.1 to 6.18) takes MEMCG_CHARGE_BATCH (64)
    pages from the counter and keeps what the charge did not use in the CPU's stock
    (``refill_stock``), which later charges of the same group consume first (``consume_stock``).
    So memory.current (v1: memory.usage_in_bytes) counts pages the workload has yet to use: in a
    fresh group the driver's first charge leaves 62 or 63 pages there. The stock is the usage less
    what memory.stat says the group holds (anon + file + sock, and the kernel memory; v1: rss +
    cache, and memory.kmem.usage_in_bytes), at most one batch (the driver is pinned to one CPU);
    reclaim starts only once the stock is used up (a charge consumes the stock before it tries the
    counter). ``stock_returned``: the driver returned the stock before its ready snapshot (the VM's
    ``drain_charge_stock``), so there is none; what the usage holds beyond memory.stat then is the
    child's own pages, which memory.stat's per-CPU batches have not yet counted."""
    stock = 0
    if not stock_returned:
        st = _stat(ready["memory_stat"])
        held = st.get("anon", st.get("rss", 0)) + st.get("file", st.get("cache", 0)) + st.get("sock", 0)
        held += ready["kmem_bytes"]
        stock = min(MEMCG_CHARGE_BATCH, max(0, ready["usage_bytes"] - held) // PAGE)
    kmem_growth = max(0, done["kmem_bytes"] - ready["kmem_bytes"])
    return (limit - ready["usage_bytes"] - kmem_growth) // PAGE + stock, stock


def _pages(line: str) -> int:
    """Pages of the folio an add/delete event names (2^order; order 0 where not printed)."""
    return 1 << (int(line.rsplit("order=", 1)[1].split()[0]) if "order=" in line else 0)


def _timestamp_ns(line: str, event: str) -> int:
    """The timestamp of a trace line (``... [001] ..... 43158.212047: event: ...``) in ns."""
    stamp = line[: line.index(f" {event}:")].rsplit(None, 1)[1].rstrip(":")
    sec, _, frac = stamp.partition(".")
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


def _read_trace(inst: Path, offsets: list[int] | None = None, flushes_ns: list[int] | None = None) -> dict[str, int]:
    """Counts the instance's events (pages, by folio order) and checks none was lost; appends the
    page index of every insertion, in order, to ``offsets`` when given, and the time (ns, the
    instance's clock) of every statistics flush to ``flushes_ns``."""
    lost = 0
    for stats in (inst / "per_cpu").glob("cpu*/stats"):
        s = dict(line.split(":", 1) for line in stats.read_text().splitlines() if ":" in line)
        lost += int(s.get("overrun", "0").strip()) + int(s.get("dropped events", "0").strip() or 0)
    if lost:
        raise RuntimeError(f"the trace buffer lost {lost} events; raise buffer_kb")
    counts = {"insertions": 0, "deletions": 0, "dirtied": 0, "large_folios": 0}
    with open(inst / "trace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            if "mm_filemap_add_to_page_cache:" in line:
                pages = _pages(line)
                counts["insertions"] += pages
                if offsets is not None:
                    first = int(line.rsplit("ofs=", 1)[1].split()[0]) // PAGE
                    offsets.extend(range(first, first + pages))
                counts["large_folios"] += pages > 1
            elif "mm_filemap_delete_from_page_cache:" in line:
                counts["deletions"] += _pages(line)
            elif "writeback_dirty_folio:" in line:
                counts["dirtied"] += 1
            elif "memcg_flush_stats:" in line and flushes_ns is not None:
                flushes_ns.append(_timestamp_ns(line, "memcg_flush_stats"))
    return counts


def reference_at(t: int, progress_ns: Sequence[int], every: int, references: int) -> int | None:
    """The reference index from which an event at time ``t`` (ns, the driver's clock) takes effect,
    from the driver's progress clock (``progress_ns[k]``: before reference ``k * every``; the last
    entry: after the last reference): an event during reference m (the window's references taken
    as evenly spread over it) applies from reference m + 1; one before the first reference from 0;
    None for one after the last reference or without a clock."""
    if len(progress_ns) < 2 or t >= progress_ns[-1]:
        return None
    if t < progress_ns[0]:
        return 0
    k = bisect.bisect_right(progress_ns, t) - 1
    first = k * every
    span = min(every, references - first)
    width = progress_ns[k + 1] - progress_ns[k]
    idx = first + (t - progress_ns[k]) * span // max(width, 1) + 1
    return idx if idx < references else None


def flush_references(flushes_ns: Sequence[int], progress_ns: Sequence[int], every: int, references: int) -> list[int]:
    """The reference indices before which the kernel's statistics flushes took effect
    (:func:`reference_at` of each); one after the last reference is dropped. Ascending, repeats
    merged."""
    out: list[int] = []
    for t in sorted(flushes_ns):
        idx = reference_at(t, progress_ns, every, references)
        if idx is not None and (not out or out[-1] != idx):
            out.append(idx)
    return out


def written_references(
    writes: Sequence[Sequence[int]], progress_ns: Sequence[int], every: int, references: int
) -> list[list[int]]:
    """The kernel's writes of file pages, ``[time_ns, first_page, pages]`` each (the block layer's
    write requests to the cell's data disk), as ``[reference, first_page, pages]``: written back
    before that reference (:func:`reference_at`), in time order, those after the last reference
    dropped, and a request that continues the previous one's pages before the same reference
    merged into it (mglru's ``written_at``)."""
    out: list[list[int]] = []
    for t, first, pages in sorted(writes):
        idx = reference_at(t, progress_ns, every, references)
        if idx is None or pages <= 0:
            continue
        if out and out[-1][0] == idx and out[-1][1] + out[-1][2] == first:
            out[-1][2] += pages
        else:
            out.append([idx, first, pages])
    return out


def parse_mm_stat(text: str) -> dict[str, int]:
    """zram's ``mm_stat`` (Documentation/admin-guide/blockdev/zram.rst: orig_data_size,
    compr_data_size, mem_used_total in bytes, then mem_limit, mem_used_max, same_pages,
    pages_compacted, huge_pages) as the pool the swapped pages hold: ``zram_pages`` stored
    (uncompressed size / page), ``zram_compr_bytes``, and ``zram_pool_pages`` (mem_used_total, the
    RAM the pool takes, in pages, rounded up), ``zram_same_pages`` and ``zram_huge_pages``."""
    f = [int(x) for x in text.split()]
    if len(f) < 8:
        raise ValueError(f"mm_stat: expected at least 8 fields, got {len(f)}: {text!r}")
    return {
        "zram_pages": f[0] // PAGE,
        "zram_compr_bytes": f[1],
        "zram_pool_pages": -(-f[2] // PAGE),
        "zram_same_pages": f[5],
        "zram_huge_pages": f[7],
    }


def zram_accounting(kernel: dict[str, int]) -> dict[str, float]:
    """The kernel's zram pool against tierlab's accounting for the same pages: N pages stored at
    the measured ratio r = N pages / compressed bytes free N - pool pages in the kernel; tierlab's
    model frees N - ceil(N / r) (the compressed bytes, rounded up to pages) and never more than
    N (1 - 1/r). ``kernel_freed <= model_freed`` holds when zsmalloc's pool is no smaller than the
    compressed data, which the model assumes."""
    n = kernel.get("zram_pages", 0)
    if not n:
        return {}
    compr = kernel["zram_compr_bytes"]
    ratio = n * PAGE / compr if compr else float("inf")
    model_pool = -(-compr // PAGE)
    return {
        "pages": n,
        "ratio": ratio,
        "kernel_pool_pages": kernel["zram_pool_pages"],
        "model_pool_pages": model_pool,
        "kernel_freed": n - kernel["zram_pool_pages"],
        "model_freed": n - model_pool,
        "bound": n * (1 - 1 / ratio) if compr else float(n),
    }


def _zswap_stats() -> dict[str, int]:
    """zswap's debugfs counters (empty where not readable)."""
    out = {}
    d = DEBUGFS / "zswap"
    for f in d.iterdir() if d.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            out[f.name] = int(f.read_text().strip())
    return out


def zswap_counts(vm0: dict, vm1: dict, zs0: dict, zs1: dict) -> dict[str, int]:
    """A zswap cell's counts from /proc/vmstat and zswap's debugfs counters before and after.

    A page zswap stores is not written to the device (``zswpout``, no ``pswpout``); a load from it
    is no ``pswpin`` (``zswpin``); a page zswap writes back to the device (``zswpwb``) is counted in
    ``pswpout`` as well, so the pages that left memory are ``zswpout + pswpout - zswpwb``."""
    d = {k: vm1.get(k, 0) - vm0.get(k, 0) for k in ("zswpout", "zswpin", "zswpwb", "pswpout", "pswpin")}
    return {
        "swap_outs": d["pswpout"] + d["zswpout"] - d["zswpwb"],
        "swap_ins": d["pswpin"] + d["zswpin"],
        "zswap_stored": d["zswpout"],
        "zswap_loads": d["zswpin"],
        "zswap_written_back": d["zswpwb"],
        # pages sent to the device uncompressed (a rejection or the group's memory.zswap.max)
        "zswap_to_device": d["pswpout"] - d["zswpwb"],
        "zswap_rejected": sum(zs1.get(k, 0) - zs0.get(k, 0) for k in zs1 if k.startswith("reject_")),
        "zswap_pool_limit_hit": zs1.get("pool_limit_hit", 0) - zs0.get("pool_limit_hit", 0),
    }


def _psi_totals() -> dict[str, int]:
    """/proc/pressure/memory's cumulative some/full stall (µs); empty without PSI."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/pressure/memory").read_text().splitlines():
            kind, *fields = line.split()
            out[kind] = int(dict(f.split("=") for f in fields)["total"])
    return out
