"""Held-out kernel-check workloads: four generator specs written after the Linux models were fixed.

Each is a ``phases``/``mix`` generator spec (docs/formats.md) that ``tierlab kernel-check --trace``
runs like any user's workload, so no driver code is involved. Sizes are stated relative to the
cgroup limit ``L`` in 4 KiB pages (``limit_mib * 256``) like the built-in presets, and a spec is
instantiated for one limit: ``heldout_spec("db_lookup_scan", 16)``. Every component's ``start`` is
given (relative to its parent's, so each phase's ``mix`` has ``start=0``): the phases share pages.
The specs and their sizes were fixed before any of them was run against a kernel or a model;
docs/kernel-check.md ("Held-out workloads") states them and the results. Building a spec costs
nothing; the trace it names is generated as it is read.
"""

from __future__ import annotations

#: The held-out workloads, in the order the docs list them.
HELDOUT = ["db_lookup_scan", "shifting_hot", "heap_wave", "two_procs"]

#: The seed every held-out spec uses (the components' seeds derive from it and their position).
SEED = 1


def _pages(limit_pages: int, share: float) -> int:
    return max(1, round(limit_pages * share))


def _db_lookup_scan(lp: int) -> str:
    """A database-like mix (file pages): 6 periods, each 1.25 L references drawn from an index of
    0.4 L pages (Zipf(0.9) point lookups, 10% writes; weight 0.5), a range scan over the next 0.5 L
    pages of a 3 L-page table (weight 0.45, read once each: the scan ends when its pages are done)
    and row lookups over the whole table (Zipf(0.6), 30% writes; weight 0.05)."""
    index, table, rng = _pages(lp, 0.4), _pages(lp, 3.0), _pages(lp, 0.5)
    t0 = lp
    periods = []
    for k in range(6):
        periods.append(
            f"mix(0.5*zipf(alpha=0.9,pages={index},start=0,write=0.1)"
            f"+0.45*scan(pages={rng},start={t0 + k * rng})"
            f"+0.05*zipf(alpha=0.6,pages={table},start={t0},write=0.3),n={_pages(lp, 1.25)},start=0)"
        )
    return "phases:" + "+".join(periods) + f",seed={SEED}"


def _shifting_hot(lp: int) -> str:
    """A working set that shifts phase (file reads): 8 phases of L references; in phase k, 90% go to
    a hot set of 0.5 L pages starting at page k x 0.25 L (Zipf(0.9), rank 1 at its first page), so
    each phase keeps half of the previous hot set, and 10% are uniform over 2 L other pages."""
    hot, step, bg = _pages(lp, 0.5), _pages(lp, 0.25), _pages(lp, 2.0)
    bg0 = 3 * lp
    phases = [
        f"mix(0.9*zipf(alpha=0.9,pages={hot},start={k * step})+0.1*zipf(alpha=0,pages={bg},start={bg0}),n={lp},start=0)"
        for k in range(8)
    ]
    return "phases:" + "+".join(phases) + f",seed={SEED}"


#: heap_wave's anonymous heap in each phase, in L: it grows, then shrinks.
HEAP_WAVE = [0.3, 0.6, 0.9, 1.2, 1.2, 0.9, 0.6, 0.3]


def _heap_wave(lp: int) -> str:
    """An anonymous heap that grows and then shrinks beside a file read stream (mixed): 8 phases of
    L references; in each, 60% go to an anonymous heap whose size follows ``HEAP_WAVE`` (the same
    pages from page 0 on, Zipf(0.6), 40% stores) and 40% to a sequential read stream of the next
    0.35 L pages of a file (each read once; the stream ends when its pages are done)."""
    stream = _pages(lp, 0.35)
    f0 = 2 * lp
    phases = [
        f"mix(0.6*zipf(kind=anon,alpha=0.6,pages={_pages(lp, h)},start=0,write=0.4)"
        f"+0.4*scan(pages={stream},start={f0 + k * stream}),n={lp},start=0)"
        for k, h in enumerate(HEAP_WAVE)
    ]
    return "phases:" + "+".join(phases) + f",seed={SEED}"


def _two_procs(lp: int) -> str:
    """Two processes' working sets in alternating bursts (mixed): 16 bursts of 0.5 L references,
    alternately from an anonymous set of 0.7 L pages (Zipf(0.9), 30% stores; first) and a file of
    1.5 L pages (Zipf(0.9) reads)."""
    anon, file, burst = _pages(lp, 0.7), _pages(lp, 1.5), _pages(lp, 0.5)
    bursts = [
        f"zipf(kind=anon,alpha=0.9,pages={anon},start=0,write=0.3,n={burst})"
        if k % 2 == 0
        else f"zipf(alpha=0.9,pages={file},start={lp},n={burst})"
        for k in range(16)
    ]
    return "phases:" + "+".join(bursts) + f",seed={SEED}"


_BUILDERS = {
    "db_lookup_scan": _db_lookup_scan,
    "shifting_hot": _shifting_hot,
    "heap_wave": _heap_wave,
    "two_procs": _two_procs,
}


def heldout_spec(name: str, limit_mib: int) -> str:
    """The generator spec of held-out workload ``name`` at a ``limit_mib`` MiB limit."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown held-out workload '{name}'; known: {', '.join(HELDOUT)}")
    if limit_mib < 1:
        raise ValueError(f"held-out workload limit {limit_mib} MiB: expected at least 1")
    return _BUILDERS[name](limit_mib * 256)
