"""beladysize and flashprob against pip libcachesim's BeladySize and FlashProb (default
parameters: 128 samples; p = 0.2, ram 5%). Each draws from its own random-number generator, so
they can agree only in distribution: on cloudPhysicsIO (oracleGeneral form) at four sizes in
page (unit-size) mode and four byte sizes in object-size mode, the mean of tierlab's misses over
5 seeds is within 1% of the requests of libCacheSim's count, and in object-size mode the mean
byte misses within 1% of the requested bytes (bounds fixed before looking at the counts, as for
lruprob). Different seeds give different counts (at one size at least) and a seed repeats
exactly.

Exact agreement is checked elsewhere: flashprob(p=1.0), which draws nothing, in
crates/tierlab-core/tests/libcachesim_{,sketch_}conformance.rs; beladysize(samples=0) with unit
sizes equals opt (unit tests in beladysize.rs)."""

from __future__ import annotations

import statistics

import pytest

import tierlab

from conftest import trace_path

ORACLE = "libcachesim/cloudPhysicsIO.oracleGeneral.bin"
LCS = {"beladysize": "BeladySize", "flashprob": "FlashProb"}
UNIT_SIZES = [490, 2449, 4897, 12244]
BYTE_SIZES = [65536, 2029770, 20297697, 202976973]


def lcs_counts(policy: str, size: int, unit: bool) -> tuple[int, int]:
    import libcachesim as lcs

    params = lcs.ReaderInitParam(ignore_obj_size=unit)
    # A fresh reader per run; never close() it (double free).
    reader = lcs.TraceReader(str(trace_path(ORACLE)), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    sizes = [r.obj_size for r in lcs.TraceReader(str(trace_path(ORACLE)), lcs.TraceType.ORACLE_GENERAL_TRACE, params)]
    ratio, byte_ratio = getattr(lcs, LCS[policy])(size).process_trace(reader)
    return round(ratio * len(sizes)), round(byte_ratio * sum(sizes))


@pytest.mark.parametrize("unit", [True, False], ids=["unit", "object"])
@pytest.mark.parametrize("policy", list(LCS))
def test_agrees_with_libcachesim_in_distribution(policy, unit):
    sizes = UNIT_SIZES if unit else BYTE_SIZES
    specs = [f"{policy}(seed={s})" for s in range(1, 6)]
    df = tierlab.run(trace_path(ORACLE), policies=specs, sizes=sizes, object_sizes=not unit, threads=2)
    n = int(df["accesses"].iloc[0])
    nbytes = int(df["byte_accesses"].iloc[0])
    col = "size_pages" if unit else "size_bytes"
    spread = []
    for size in sizes:
        rows = df[df[col] == size]
        ours = rows["misses"].astype(int).tolist()
        spread.append(len(set(ours)))
        want, want_bytes = lcs_counts(policy, size, unit)
        assert abs(statistics.mean(ours) - want) < 0.01 * n, (policy, size, ours, want)
        if not unit:
            ours_bytes = rows["byte_misses"].astype(int).tolist()
            assert abs(statistics.mean(ours_bytes) - want_bytes) < 0.01 * nbytes, (policy, size, ours_bytes, want_bytes)
    # The draws matter (at a large cache few evictions remain, so some sizes may not spread).
    assert max(spread) > 1, f"{policy}: every seed gave the same counts at every size"
    again = tierlab.run(trace_path(ORACLE), policies=specs[:1], sizes=sizes, object_sizes=not unit)
    assert again["misses"].tolist() == df[df["policy"] == policy].iloc[: len(sizes)]["misses"].tolist()
