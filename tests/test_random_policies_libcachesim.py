"""lruprob against pip libcachesim's LRUProb: the two draw from different generators, so they can
agree only in distribution. On sprite at three sizes, the mean of tierlab's misses over 5 seeds is
within 1% of the references of libCacheSim's count (a bound fixed before looking at the counts),
and tierlab's runs with different seeds differ (the draws matter) while the same seed repeats
exactly.

`random` is not compared here: the same check found tierlab's `random` 1.2% of the references
below libCacheSim's `Random` on sprite at 707 pages (mean 27,165 misses over 5 seeds, spread
27,009-27,377, against 28,735), a difference not explained yet (docs/policies.md)."""

from __future__ import annotations

import statistics

import pytest

import tierlab

from conftest import trace_path
from lcs import page_sequence, write_oracle_general

LCS = {"lruprob": "LRUProb"}


@pytest.fixture(scope="module")
def sprite(tmp_path_factory):
    t = tierlab.Trace.of(trace_path("lirs/sprite.trace.gz"))
    pages = page_sequence(t)
    f = write_oracle_general(pages, tmp_path_factory.mktemp("sprite") / "sprite.oracleGeneral.bin")
    return t, f, len(pages), len(set(pages.tolist()))


@pytest.mark.parametrize("policy", list(LCS))
def test_lruprob_agrees_with_libcachesim_in_distribution(sprite, policy):
    import libcachesim as lcs

    trace, oracle, n, distinct = sprite
    sizes = [int(f * distinct) for f in (0.02, 0.1, 0.3)]
    specs = [f"{policy}(seed={s})" for s in range(1, 6)]
    df = tierlab.run(trace, policies=specs, sizes=sizes)
    for size in sizes:
        ours = df[df["size_pages"] == size]["misses"].astype(int).tolist()
        assert len(set(ours)) > 1, f"{policy} at {size}: every seed gave {ours[0]}"
        reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
        ratio, _ = getattr(lcs, LCS[policy])(size).process_trace(reader)
        theirs = round(ratio * n)
        assert abs(statistics.mean(ours) - theirs) < 0.01 * n, (policy, size, ours, theirs)
    again = tierlab.run(trace, policies=specs[:1], sizes=sizes)
    assert again["misses"].tolist() == df.iloc[: len(sizes)]["misses"].tolist()
