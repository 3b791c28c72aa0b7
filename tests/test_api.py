"""The Python API's contract: rows, sizes, policy specs, counters that add up."""

from __future__ import annotations

import numpy as np
import pytest

import tierlab
from tierlab.api import resolve_size


def test_resolve_size_units_and_fractions():
    fp = lambda: 1000  # noqa: E731
    assert resolve_size(123, 4096, fp) == 123
    assert resolve_size("4MiB", 4096, fp) == 1024
    assert resolve_size("4 MB", 4096, fp) == 976
    assert resolve_size("10%", 4096, fp) == 100
    assert resolve_size(0.25, 4096, fp) == 250
    assert resolve_size("0.01%", 4096, fp) == 1  # at least one page


def test_policy_spec_forms_are_equivalent(tmp_path):
    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(i % 37) for i in range(2000)))
    a = tierlab.run(f, policies=["clock(bits=2)"], sizes=[10])
    b = tierlab.run(f, policies=[{"name": "clock", "bits": 2}], sizes=[10])
    assert a["misses"].tolist() == b["misses"].tolist()
    assert a["params"].iloc[0] == '{"bits":2}'


def test_counters_add_up(tmp_path):
    f = tmp_path / "t.trace"
    rng = np.random.default_rng(7)
    f.write_text("\n".join(map(str, rng.zipf(1.3, 5000) % 500)))
    df = tierlab.run(f, policies=["fifo", "lru", "clock", "opt"], sizes=[1, 10, 100, 1000])
    assert (df["hits"] + df["misses"] == df["accesses"]).all()
    assert (df["hits"] == df[[c for c in df.columns if c.startswith("hits_") and "tier" not in c]].sum(axis=1)).all()
    assert (df["resident_at_end"] <= df["size_pages"]).all()
    # Every miss is a file read here (a read-only block trace): pages read = misses.
    assert (df["file_pages_read"] == df["misses"]).all()
    # A cache that holds the whole footprint misses only on first touches.
    full = df[df["size_pages"] == 1000]
    assert (full["misses"] == full["distinct_pages"]).all()


def test_dirty_pages_are_written_back_once(tmp_path):
    # VFS-style trace of the lirs format can't carry writes; use an address trace via the python
    # API once the readers land. Here: a hand-made trace through the native generator is not yet
    # available, so check the accounting invariant on reads: no write-backs without writes.
    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(i % 50) for i in range(1000)))
    df = tierlab.run(f, policies=["lru", "fifo"], sizes=[10])
    assert (df["dirty_evictions"] == 0).all() and (df["file_pages_written"] == 0).all()
    assert (df["evictions"] == df["misses"] - df["resident_at_end"]).all()


def test_benchmark_kernels_miss_as_the_policies_do():
    """The throughput harness's CLOCK and LRU kernels (its bound against the floor) make the
    policies' decisions: the same misses as `tierlab.run` at every size."""
    from tierlab import _core

    spec = "zipf:alpha=0.9,pages=2000,n=30000,seed=3"
    trace_json = tierlab.Trace.of(spec).to_json()
    sizes = [1, 50, 700]
    df = tierlab.run(spec, policies=["clock", "lru"], sizes=sizes)
    for policy in ("clock", "lru"):
        for size in sizes:
            secs, misses = _core.bench_kernel(trace_json, policy, size, 1)
            row = df[(df["policy"] == policy) & (df["size_pages"] == size)]
            assert misses == int(row["misses"].iloc[0]), (policy, size)
            assert len(secs) == 1 and secs[0] >= 0
    with pytest.raises(ValueError, match="'clock' or 'lru'"):
        _core.bench_kernel(trace_json, "arc", 10)


def test_progress_total_comes_from_a_native_traces_trailer(tmp_path):
    from tierlab import api

    out = tmp_path / "z.tlt"
    tierlab.convert.convert(tierlab.Trace.of("zipf:alpha=1.0,pages=500,n=12345,seed=3"), out)
    assert api._expected_refs(api.Trace.of(out), None) == 12345
    assert api._expected_refs(api.Trace.of(out), 100) == 100
    # Unknown without reading the whole input: no total (a spinner, no ETA) unless a limit.
    text = tmp_path / "t.trace"
    text.write_text("1\n2\n3\n")
    assert api._expected_refs(api.Trace.of(text), None) is None
    assert api._expected_refs(api.Trace.of(text), 7) == 7
    seen = []
    tierlab.run(out, policies=["lru"], sizes=[50], progress=seen.append)
    assert all(0 < n <= 12345 for n in seen)
