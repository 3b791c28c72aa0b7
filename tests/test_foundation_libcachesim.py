"""Issue 2's acceptance: LRU, FIFO and CLOCK miss counts equal libCacheSim's (unit object size)
on cloudPhysicsIO, OLTP and sprite at several sizes, and OPT is never beaten."""

from __future__ import annotations

import pytest

import tierlab

from conftest import trace_path
from lcs import lcs_misses, page_sequence, write_oracle_general

TRACES = {
    # cloudPhysicsIO.txt is libCacheSim's plain-text form: one object id per line, as LIRS traces.
    "cloudPhysicsIO": ("libcachesim/cloudPhysicsIO.txt", "lirs"),
    "OLTP": ("arc/OLTP.lis.zst", None),
    "sprite": ("lirs/sprite.trace.gz", None),
}
FRACTIONS = [0.005, 0.02, 0.1, 0.3]


@pytest.fixture(scope="module")
def oracle_files(tmp_path_factory):
    out = {}
    for name, (rel, fmt) in TRACES.items():
        t = tierlab.Trace.of(trace_path(rel), fmt)
        pages = page_sequence(t)
        f = write_oracle_general(pages, tmp_path_factory.mktemp(name) / f"{name}.oracleGeneral.bin")
        out[name] = (t, f, len(pages), len(set(pages.tolist())))
    return out


@pytest.mark.parametrize("name", list(TRACES))
def test_fifo_lru_clock_opt_match_libcachesim(oracle_files, name):
    trace, oracle, n, distinct = oracle_files[name]
    sizes = sorted({max(2, int(f * distinct)) for f in FRACTIONS})
    df = tierlab.run(trace, policies=["fifo", "lru", "clock", "opt"], sizes=sizes)
    assert (df["accesses"] == n).all()
    mismatches = []
    for _, row in df.iterrows():
        expected = lcs_misses(oracle, n, row["policy"], int(row["size_pages"]))
        if int(row["misses"]) != expected:
            mismatches.append((row["policy"], row["size_pages"], int(row["misses"]), expected))
    assert not mismatches, f"(policy, size, tierlab, libCacheSim): {mismatches}"


@pytest.mark.parametrize("name", list(TRACES))
def test_opt_is_never_beaten(oracle_files, name):
    trace, _, _, distinct = oracle_files[name]
    sizes = sorted({max(2, int(f * distinct)) for f in FRACTIONS + [0.001, 0.5]})
    pols = [p for p in tierlab.policies()["name"] if p != "opt"]
    df = tierlab.run(trace, policies=["opt", *pols], sizes=sizes)
    for size, group in df.groupby("size_pages"):
        opt = int(group.loc[group["policy"] == "opt", "misses"].iloc[0])
        others = group[group["policy"] != "opt"]
        assert (others["misses"] >= opt).all(), f"size {size}: {others[['policy', 'misses']]} vs OPT {opt}"
