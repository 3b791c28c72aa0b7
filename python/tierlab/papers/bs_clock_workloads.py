"""The BS-CLOCK paper's workloads and constants (papers/bs-clock-flash-buffer.md), for
:mod:`tierlab.papers.bs_clock`.

The workloads. The paper replays three "before-cache" traces from a Nexus One (web browsing: mostly
small random reads and writes; video streaming: almost only writes; mixed apps: both, Table 2).
:func:`generate_mobile_block` writes a deterministic Android block trace (the csv of the
``android`` reader: ``proces,device,rw_flag,sector,size,timestamp``, 512-byte sectors) that mimics
app-execution block I/O with four kinds of activity on a laid-out file system:

- *launch*: an app reads a few of its files front to back in 16-128 KB requests (read-ahead);
- *db*: a SQLite-style transaction reads and rewrites 1-4 random 4 KB pages of a hot database
  (Zipf-popular) and appends the rewritten pages plus a header to its journal, which restarts
  at the journal's first page each transaction (the same pages are dirtied again and again);
- *burst*: a download or media cache writes a new file sequentially, 64 KB-2 MB in 4-64 KB
  requests; half the appends start by rewriting the previous append's last (partly filled) page;
- *meta*: a 4 KB file-system metadata write at one of a few thousand random places.

The three workloads weight these as the paper's three traces are described: ``web`` (many db
transactions and small bursts, reads about a third of the requests), ``video`` (long write bursts,
almost no reads) and ``mixed`` (launches, transactions and bursts).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

#: Table 3: the maximum number of pages of one bulk write.
SEQ_DIRTIED_PAGES = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
#: Section 4.1: a 4 MB buffer of 4 KB pages.
BUFFER_PAGES = 1024
CARDS = {"samsung": "microsd-samsung-c10", "sandisk": "microsd-sandisk-c10"}
WORKLOADS = ["web", "video", "mixed"]
#: The paper's average I/O time reductions over its two cards (section V) and Table 5's hit ratios.
PAPER_REDUCTION = {"web": 43.4, "video": 87.2, "mixed": 66.4}
PAPER_REDUCTION_CARD = {
    ("web", "samsung"): 60.8,
    ("video", "samsung"): 85.6,
    ("mixed", "samsung"): 67.6,
    ("web", "sandisk"): 25.9,
    ("video", "sandisk"): 88.7,
    ("mixed", "sandisk"): 65.3,
}
#: Table 5: Spatial Clock's hit ratio at the 4 MB buffer, a stated property of each workload.
PAPER_TABLE5_SPATIAL_CLOCK_HIT = {"web": 0.93, "video": 0.287, "mixed": 0.759}
#: Table 4: pages written to flash (BS-CLOCK, Spatial Clock).
PAPER_TABLE4 = {"web": (5_391, 3_856), "video": (275_744, 275_557), "mixed": (44_632, 43_921)}

#: Activity weights (launch, db, burst, meta) and burst length range (KB) per workload.
_MIX = {
    "web": dict(weights=(0.10, 0.55, 0.20, 0.15), burst_kb=(16, 256)),
    "video": dict(weights=(0.02, 0.03, 0.90, 0.05), burst_kb=(256, 2048)),
    "mixed": dict(weights=(0.30, 0.35, 0.25, 0.10), burst_kb=(64, 1024)),
}

SECTORS_PER_PAGE = 8
#: Request sizes (pages) of a launch's read-ahead and of a burst's appends, drawn uniformly. An index
#: from ``rng.integers`` draws exactly what ``rng.choice`` would, several times faster.
READ_AHEAD_PAGES = (4, 8, 16, 32)
APPEND_PAGES = (1, 2, 4, 8, 16)
#: Burst files a rewrite may pick from (``generate_mobile_block(rewrite_share=...)``).
RECENT_BURSTS = 16

#: Table 2: read and write operations of each workload (one page each: the paper's before-cache
#: trace is "(operation, page number)" pairs, Section IV).
PAPER_TABLE2 = {"web": (23_383, 47_346), "video": (67, 387_701), "mixed": (134_910, 105_796)}
#: Table 2: the share of writes among each workload's I/O operations (page requests).
PAPER_WRITE_SHARE = {w: writes / (reads + writes) for w, (reads, writes) in PAPER_TABLE2.items()}
#: Sensitivity of the I/O time reduction to the write share (issue 16): the share of activities
#: that are app launches (the generator's read-only activity) is swept over 0-90%, the other
#: activities keeping their workload's relative weights; the figure's x axis is the write share of
#: page requests that results. The range is all the generator can do (no launches: writes and the
#: transactions' reads only; 90%: mostly reads), not fitted to the paper's points.
LAUNCH_SHARES = (0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9)


def _weights(workload: str, launch_share: float | None) -> tuple[float, ...]:
    w = _MIX[workload]["weights"]
    if launch_share is None:
        return w
    if not 0.0 <= launch_share < 1.0:
        raise ValueError(f"launch_share must be in [0, 1), got {launch_share}")
    rest = sum(w[1:])
    return (launch_share, *(x * (1.0 - launch_share) / rest for x in w[1:]))


def _cdf(pop: np.ndarray) -> np.ndarray:
    """The cumulative distribution ``rng.choice(len(pop), p=pop)`` looks its uniform draws up in."""
    cdf = pop.cumsum()
    cdf /= cdf[-1]
    return cdf


def generate_mobile_block(
    path: str | Path,
    workload: str,
    n_ops: int,
    seed: int = 1,
    launch_share: float | None = None,
    rewrite_share: float = 0.0,
) -> Path:
    """Writes a synthetic Android block trace (gzip csv, ``android`` format) of ``n_ops``
    activities of ``workload`` (``web``, ``video`` or ``mixed``); see the module docs.
    ``launch_share`` replaces the workload's share of launch activities (the other activities
    keep their relative weights); None keeps the workload's mix. ``rewrite_share`` is the share of
    bursts that rewrite one of the last :data:`RECENT_BURSTS` burst files in place (a browser or
    media cache file overwritten) instead of writing a new file; 0 (the default) draws nothing
    more, so the traces of earlier versions are unchanged."""
    if not 0.0 <= rewrite_share <= 1.0:
        raise ValueError(f"rewrite_share must be in [0, 1], got {rewrite_share}")
    if workload not in _MIX:
        raise ValueError(f"workload must be one of {', '.join(_MIX)}, got {workload!r}")
    rng = np.random.default_rng(seed)
    mix = dict(_MIX[workload], weights=_weights(workload, launch_share))
    page = 4096 // 512

    # File-system layout (in 4 KB pages): app files, databases with journals, metadata places.
    n_files = 400
    file_pages = np.clip(rng.lognormal(mean=3.0, sigma=1.2, size=n_files).astype(int), 1, 2048)
    file_start = rng.integers(0, 2_000_000, size=n_files)
    n_db = 40
    db_pages = rng.integers(64, 2048, size=n_db)
    db_start = 2_100_000 + np.arange(n_db) * 4096
    journal_start = db_start + 2560
    db_pop = 1.0 / np.arange(1, n_db + 1) ** 1.1
    db_pop /= db_pop.sum()
    file_pop = 1.0 / np.arange(1, n_files + 1) ** 0.9
    file_pop /= file_pop.sum()
    # ``rng.choice(n, size, p=pop)`` draws ``rng.random(size)`` and looks each draw up in the
    # normalised cumulative sum of ``pop``: the same draws and indices, without recomputing and
    # checking the distribution at every call (a fifth of the generator's time).
    db_cdf, file_cdf = (_cdf(pop) for pop in (db_pop, file_pop))
    meta_places = rng.integers(2_500_000, 2_600_000, size=3000)
    next_new = 3_000_000  # new files are appended here
    bursts: list[tuple[int, int]] = []  # (first page, pages) of the last burst files

    rows: list[str] = []
    t = 1000.0

    def emit(op: str, first_page: int, pages: int, proc: str) -> None:
        nonlocal t
        t += float(rng.exponential(0.002))
        rows.append(f"{proc},8388608,{op},{first_page * page},{pages * page},{t:.6f}")

    kinds = rng.choice(4, size=n_ops, p=np.array(mix["weights"]))
    for k in kinds:
        if k == 0:  # launch: read files front to back with read-ahead sized requests
            for f in file_cdf.searchsorted(rng.random(int(rng.integers(2, 6))), side="right"):
                pos, end = int(file_start[f]), int(file_start[f] + file_pages[f])
                while pos < end:
                    n = min(READ_AHEAD_PAGES[rng.integers(len(READ_AHEAD_PAGES))], end - pos)
                    emit("R", pos, n, "app-1001")
                    pos += n
        elif k == 1:  # db transaction: read, rewrite pages, journal from its start
            d = int(db_cdf.searchsorted(rng.random(), side="right"))
            m = int(rng.integers(1, 5))
            # Pages of a database are skewed too: B-tree roots and hot rows.
            pages = (db_pages[d] * rng.power(0.25, size=m)).astype(int)
            for p in pages:
                emit("R", int(db_start[d] + p), 1, "db-1002")
            for j in range(m + 1):
                emit("W", int(journal_start[d] + j), 1, "db-1002")
            for p in np.sort(pages):
                emit("W", int(db_start[d] + p), 1, "db-1002")
        elif k == 2:  # burst: a file written sequentially in small requests
            rewrite = rewrite_share > 0.0 and bursts and rng.random() < rewrite_share
            if rewrite:  # an earlier cache file overwritten in place
                first, total = bursts[int(rng.integers(len(bursts)))]
            else:  # a new file
                lo, hi = mix["burst_kb"]
                first, total = next_new, int(rng.integers(lo, hi + 1)) // 4
            pos = first
            while pos < first + total:
                n = min(APPEND_PAGES[rng.integers(len(APPEND_PAGES))], first + total - pos)
                # Half the appends end in a partly filled page that the next append rewrites.
                start = pos - 1 if pos > first and rng.random() < 0.5 else pos
                emit("W", start, pos + n - start, "dl-1003")
                pos += n
            if not rewrite:
                bursts = [*bursts[-(RECENT_BURSTS - 1) :], (first, total)]
                next_new += total + int(rng.integers(0, 64))
        else:  # metadata write
            emit("W", int(meta_places[rng.integers(len(meta_places))]), 1, "fs-1004")

    path = Path(path)
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write("proces,device,rw_flag,sector,size,timestamp\n")
        f.write("\n".join(rows))
        f.write("\n")
    return path


#: The paper-described workloads' unstated properties, swept (issue 16 scope 2): the mean length of
#: a run of new pages written one after another, from single random pages to 64-page (256 KB) files.
PAPER_RUN_PAGES = (1, 2, 4, 16, 64)
#: Reuse draws from the pages of the last ``PAPER_REUSE_WINDOW`` references: half the 4 MB buffer,
#: so a reuse hits under any recency policy (our choice; the paper gives hit ratios, not distances).
PAPER_REUSE_WINDOW = BUFFER_PAGES // 2


def generate_paper_described(
    path: str | Path, workload: str, run_pages: float, seed: int = 1, head: int | None = None
) -> Path:
    """Writes the workload as the paper describes it (``android`` csv): Table 2's numbers of read
    and write operations of one 4 KB page each, in random order; Table 5's Spatial Clock hit ratio
    as the share of operations that reuse a page among the last :data:`PAPER_REUSE_WINDOW`
    references (reading or rewriting it); every other operation touches a new page: a read at a
    random place (web: "small files read at random", Section IV), a write that continues the
    current run of new pages with probability ``1 - 1/run_pages`` and otherwise starts a new run
    elsewhere (``run_pages`` is not stated: :data:`PAPER_RUN_PAGES` sweeps it). ``head`` keeps only
    the first ``head`` operations of that trace (the same draws; None: all)."""
    if run_pages < 1:
        raise ValueError(f"run_pages must be >= 1, got {run_pages}")
    n_reads, n_writes = PAPER_TABLE2[workload]
    reuse = PAPER_TABLE5_SPATIAL_CLOCK_HIT[workload]
    rng = np.random.default_rng(seed)
    n = n_reads + n_writes
    is_write = np.zeros(n, dtype=bool)
    is_write[rng.choice(n, size=n_writes, replace=False)] = True
    reused = rng.random(n) < reuse
    back = rng.integers(1, PAPER_REUSE_WINDOW + 1, size=n)
    jump = rng.random(n) < 1.0 / run_pages
    pages = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    copy = reused & (idx >= back)  # a reuse: the page of the operation `back` earlier
    # New writes continue the current run, or start one (the first, or on a jump) at the next
    # region; runs start 16 MB apart.
    writes = np.flatnonzero(~copy & is_write)
    start = jump[writes]
    start[:1] = True
    k = np.arange(len(writes))
    pages[writes] = ((np.cumsum(start) - 1) << 12) + k - np.maximum.accumulate(np.where(start, k, 0))
    # New reads at random places, drawn one by one in trace order.
    reads = np.flatnonzero(~copy & ~is_write)
    pages[reads] = [(1 << 30) + int(rng.integers(0, 1 << 24)) for _ in range(len(reads))]
    # A reuse takes the page of the first operation of its chain of reuses that is not one.
    reuses = np.flatnonzero(copy)
    src = reuses - back[reuses]
    while (more := copy[src]).any():
        src[more] -= back[src[more]]
    pages[reuses] = pages[src]
    t = 1000.0 + np.cumsum(rng.exponential(0.002, size=n))
    path = Path(path)
    end = n if head is None else min(head, n)
    sectors = pages * SECTORS_PER_PAGE
    # Formatted as pandas' to_csv(float_format="%.6f") would, a row per operation, without its
    # per-value overhead (several seconds per trace); written a block of rows at a time, so the
    # text and Python objects of a whole workload (some 60 MB on video) are never held at once.
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write("proces,device,rw_flag,sector,size,timestamp\n")
        for lo in range(0, end, _ROWS_PER_WRITE):
            hi = min(lo + _ROWS_PER_WRITE, end)
            f.write(
                "".join(
                    f"app-1001,8388608,{'W' if w else 'R'},{sector},{SECTORS_PER_PAGE},{ts:.6f}\n"
                    for w, sector, ts in zip(
                        is_write[lo:hi].tolist(), sectors[lo:hi].tolist(), t[lo:hi].tolist(), strict=True
                    )
                )
            )
    return path


#: Rows of a generated trace formatted and written at once.
_ROWS_PER_WRITE = 1 << 15


def _head(trace: Path, lines: int) -> Path:
    """Keeps the header and the first ``lines`` records of a gzip csv trace (in place)."""
    with gzip.open(trace, "rt") as f:
        head = [next(f) for _ in range(lines + 1)]
    with gzip.open(trace, "wt", compresslevel=1) as f:
        f.writelines(head)
    return trace


def write_share(trace: str | Path) -> float:
    """Share of written pages among the pages a generated trace requests (Table 2's measure)."""
    df = pd.read_csv(trace, usecols=["rw_flag", "size"])
    pages = df["size"] / SECTORS_PER_PAGE
    return float(pages[df["rw_flag"] == "W"].sum() / pages.sum())
