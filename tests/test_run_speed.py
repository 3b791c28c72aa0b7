"""What makes `tierlab reproduce` fast without changing a figure: a replay priced under device
variants equals separate replays (issue 38, scope 1), generated workloads are cached across runs
by content (scope 3), so is a trace's footprint, and papers run side by side with their results in order (scope 2)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import tierlab
from tierlab import _core, cache, papers
from tierlab.papers import bs_clock_workloads, emram_swap, harness, progress

TRACE = (
    "mix:0.7*zipf(alpha=0.9,pages=3000,write=0.3,seed=1)"
    "+0.3*zipf(alpha=0.7,pages=2000,kind=anon,write=0.4,seed=2),n=30000,seed=3"
)
SYSTEM = {"tiers": ["dram"], "file_store": "flash-ufs31", "swap": "emram-swap"}


def test_variants_price_one_replay_as_separate_runs(tmp_path):
    slow_flash = papers.device_variant(
        "flash-ufs31", tmp_path / "f.toml", "test", **{"read.random_setup_ns": 123456.7, "read.per_page_ns": 3.3}
    )
    other = {"tiers": ["dram"], "file_store": "ufs", "swap": "zram"}
    pols, sizes = ["clock", "four-area"], [0.05, 0.2]
    both = tierlab.run(TRACE, pols, sizes, SYSTEM, variants=[{"device_files": [slow_flash]}, {"system": other}])
    assert list(both["variant"].unique()) == [0, 1, 2]
    for k, (system, files) in enumerate([(SYSTEM, []), (SYSTEM, [slow_flash]), (other, [])]):
        alone = tierlab.run(TRACE, pols, sizes, system, device_files=files)
        got = both[both.variant == k].drop(columns="variant").reset_index(drop=True)
        cols = [c for c in alone.columns if c not in ("policy_seconds", "accesses_per_second")]
        pd.testing.assert_frame_equal(got[cols], alone[cols], check_exact=True)
    # The variants do price differently.
    io = both.groupby("variant")["io_time_ns"].sum()
    assert io[0] != io[1] and io[0] != io[2]


def test_a_variant_may_change_costs_only():
    with pytest.raises(_core.TierlabError, match="pricing variant 1: having a swap device"):
        tierlab.run(TRACE, ["clock"], [100], SYSTEM, variants=[{"system": {**SYSTEM, "swap": None}}])


def test_priced_sweeps_equal_a_sweep_per_device_file(tmp_path):
    traces = emram_swap.shipped_traces()[:1]
    variants, _ = emram_swap.device_variants(tmp_path)
    files = [[variants[0][2]], [variants[-1][2]]]
    main, *priced = emram_swap.priced_sweeps(traces, files, limit=200_000, policies=("clock", "four-area"))
    pd.testing.assert_frame_equal(main, emram_swap.sweep(traces, limit=200_000, policies=("clock", "four-area")))
    for f, got in zip(files, priced, strict=True):
        want = emram_swap.sweep(traces, limit=200_000, policies=("clock", "four-area"), device_files=f)
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_generated_workloads_are_cached_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(tmp_path / "cache"))
    calls = []

    def make(path, workload, n_ops, seed=1, launch_share=None, rewrite_share=0.0):
        calls.append((workload, n_ops, seed))
        return bs_clock_workloads.generate_mobile_block(path, workload, n_ops, seed, launch_share, rewrite_share)

    make.__module__ = bs_clock_workloads.__name__
    a = cache.generated(make, tmp_path / "a.csv.gz", "web", 50, seed=3)
    # The same arguments, a default spelled out: copied from the cache, not made again.
    b = cache.generated(make, tmp_path / "b.csv.gz", "web", 50, seed=3, rewrite_share=0.0)
    assert len(calls) == 1
    assert gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes())
    cache.generated(make, tmp_path / "c.csv.gz", "web", 50, seed=4)
    assert len(calls) == 2
    assert cache.clear() > 0
    cache.generated(make, tmp_path / "d.csv.gz", "web", 50, seed=3)
    assert len(calls) == 3


def test_progress_reports_shares_only_when_installed():
    seen = []
    progress.expect(4)
    progress.step()  # nobody listening: nothing happens
    progress.install(lambda key, share: seen.append((key, share)), "p")
    progress.expect(4)
    progress.step()
    progress.step(3)
    progress.install(None)
    assert seen == [("p", 0.25), ("p", 1.0)]


def test_papers_side_by_side_come_back_in_order(tmp_path):
    shown = []
    done = harness.run_papers(
        ["android-lmk", "hybrid-dram-pcm"], True, tmp_path, jobs=2, show=lambda k, s, t: shown.append((k, s, t))
    )
    assert [k for k, _, _ in done] == ["android-lmk", "hybrid-dram-pcm"]
    assert all(res is not None for _, res, _ in done), [info for _, res, info in done if res is None]
    ends = {k: t for k, s, t in shown if t is not None}
    assert set(ends) == {"android-lmk", "hybrid-dram-pcm"} and all(t > 0 for t in ends.values())
    assert any(k == "hybrid-dram-pcm" and 0 < s < 1 for k, s, t in shown)


def test_the_parent_runs_one_lane_and_a_worker_the_other(tmp_path):
    """Every process of a run counts towards its memory: with two lanes, the process that starts
    the papers runs one of them itself (its module imported here) and one worker process the other
    (its module never imported here); each paper's progress still reaches ``show``."""
    code = f"""
import json, pathlib, sys
from tierlab.papers import harness
seen = {{}}
def show(key, share, seconds):
    seen.setdefault(key, []).append(seconds)
done = harness.run_papers(["android-lmk", "hybrid-dram-pcm"], True, pathlib.Path({str(tmp_path)!r}), 2, show)
here = [k for k in ("android_lmk", "hybrid_dram_pcm") if "tierlab.papers." + k in sys.modules]
from multiprocessing import resource_tracker
tracker = resource_tracker._resource_tracker._pid is not None
print(json.dumps({{"seen": seen, "ok": [res is not None for _, res, _ in done], "here": here, "tracker": tracker}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["ok"] == [True, True]
    assert len(got["here"]) == 1, got["here"]
    assert not got["tracker"], "a run started multiprocessing's resource tracker (a third process)"
    assert set(got["seen"]) == {"android-lmk", "hybrid-dram-pcm"}
    for key, ends in got["seen"].items():
        assert ends[-1] is not None and ends[-1] > 0, (key, ends)


def test_a_worker_returns_values_and_errors_runs_without_pyarrow_and_reports_its_end():
    """The worker runs pandas without pyarrow (34 MiB less): pyarrow cannot be imported there,
    while it can here; an exception comes back as itself, a value that does not pickle as an error
    that says so, and a worker that ended is an error."""
    import importlib
    import math

    importlib.import_module("pyarrow")
    w = harness.Worker()
    try:
        assert w.call(math.factorial, 5) == 120
        with pytest.raises(ImportError, match="pyarrow"):
            w.call(importlib.import_module, "pyarrow")
        # pandas imports there; a module does not pickle, which comes back as an error saying so.
        with pytest.raises(RuntimeError, match="cannot pickle 'module'"):
            w.call(importlib.import_module, "pandas")
        with pytest.raises(ValueError):
            w.call(math.factorial, -1)
        with pytest.raises(EOFError):
            w.call(os._exit, 3)
    finally:
        w.close()
    assert w.proc.returncode == 3


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc")
def test_large_blocks_freed_by_a_paper_run_go_back_to_the_system():
    """After ``large_blocks_mapped`` a freed 2 MiB block's pages leave the process even once a
    larger block was freed before (glibc's default would then serve 2 MiB blocks from the heap and
    keep their pages); checked against the default in a second process."""
    code = """
import ctypes, sys
from tierlab.papers import harness
if sys.argv[1] == "fixed":
    harness.large_blocks_mapped()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20
def block(n):
    p = libc.malloc(n)
    ctypes.memset(p, 1, n)
    return p
libc.free(block(16 << 20))  # glibc's default raises its threshold to this size (up to 32 MiB)
blocks = [block(2 << 20) for _ in range(50)]
keep = block(2 << 20)  # above the others in the heap, so that the heap's top does not shrink
before = rss()
for p in blocks:
    libc.free(p)
print(before - rss())
"""
    freed = {
        mode: int(subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True).stdout)
        for mode in ("default", "fixed")
    }
    if freed["default"] >= 90:
        pytest.skip(f"not glibc's default policy here (freed {freed})")
    assert freed["fixed"] >= 90, freed


def test_a_footprint_is_computed_once_per_trace_content(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(tmp_path / "cache"))
    cache.clear()
    passes = []
    info = tierlab.api.info

    def counted(*args, **kwargs):
        passes.append(args[0])
        return info(*args, **kwargs)

    monkeypatch.setattr(tierlab.api, "info", counted)
    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(i % 40) for i in range(2000)))  # 40 distinct pages
    assert tierlab.api.resolve_sizes(tierlab.api.Trace.of(f), ["50%", 0.25, 7]) == [20, 10, 7]
    tierlab.run(f, ["clock"], ["50%"])
    assert len(passes) == 1
    # Another limit is another entry.
    tierlab.run(f, ["clock"], ["50%"], limit=10)
    assert len(passes) == 2
    # Across runs: a new process finds the entry in the cache directory.
    cache._footprints.clear()
    assert tierlab.run(f, ["clock"], ["50%"])["size_pages"].tolist() == [20]
    assert len(passes) == 2
    # A changed file misses, even at the same size and modification time.
    stat = f.stat()
    f.write_text("\n".join(str(min(i % 40, 37)) for i in range(2000)))  # 38 distinct pages, same length
    os.utime(f, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert f.stat().st_size == stat.st_size
    assert tierlab.run(f, ["clock"], ["50%"])["size_pages"].tolist() == [19]
    assert len(passes) == 3


def test_a_corrupt_footprint_entry_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(tmp_path / "cache"))
    cache.clear()
    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(i % 40) for i in range(2000)))
    assert tierlab.run(f, ["clock"], ["50%"])["size_pages"].tolist() == [20]
    (entry,) = (tmp_path / "cache" / "footprints").iterdir()
    for bad in ("", "{not json", '{"distinct_pages": -3}', '{"distinct_pages": "20"}', "[1]", '{"other": 1}'):
        cache._footprints.clear()
        entry.write_text(bad)
        assert tierlab.run(f, ["clock"], ["50%"])["size_pages"].tolist() == [20]
    # Rewritten whole by the pass that replaced it.
    assert json.loads(entry.read_text())["distinct_pages"] == 40
    assert cache.clear() > 0 and not (tmp_path / "cache" / "footprints").exists()
