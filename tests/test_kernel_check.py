"""tierlab kernel-check: linux-two-list against the real kernel of this machine (docs/kernel-check.md).

The kernel cells need root, memory cgroup v1, tracefs, swap and zram0; where one is missing they are
skipped with the missing feature named (CI prints skip reasons). On the project's machines they run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tierlab import api, kernel_host
from tierlab import kernel as kc
from tierlab.kernel_counts import _timestamp_ns

MISSING = kc.missing_features({"file", "zram"})
needs_kernel = pytest.mark.skipif(bool(MISSING), reason="kernel-check needs: " + "; ".join(MISSING))
TWO_LIST = "linux-two-list"


def _nothing_left(workdir: Path) -> list[str]:
    """What a run may have left behind: cgroups, trace instances, swap, zram, page-cluster, files."""
    left = [str(p) for p in kc.CGROUP_ROOT.glob(f"{kc.PREFIX}-*")]
    left += [str(p) for p in (kc.TRACEFS / "instances").glob(f"{kc.PREFIX}-*")]
    swaps = Path("/proc/swaps").read_text().splitlines()[1:]
    left += [s.split()[0] for s in swaps if kc.PREFIX in s or "zram" in s]
    if kc.ZRAM.exists() and int((kc.ZRAM / "disksize").read_text()) != 0:
        left.append("zram0 still sized")
    if kc.STATE_FILE.exists():
        left.append(str(kc.STATE_FILE))
    left += [str(p) for p in workdir.glob(f"{kc.PREFIX}-swap-*")]
    return left


def test_missing_features_are_named(monkeypatch, tmp_path):
    monkeypatch.setattr(kc, "CGROUP_ROOT", tmp_path / "no-memory-cgroup")
    monkeypatch.setattr(kc, "ZRAM", tmp_path / "no-zram")
    missing = kc.missing_features({"zram"})
    assert any("memory cgroup v1" in m for m in missing)
    assert any("zram" in m for m in missing)
    with pytest.raises(kc.KernelCheckUnavailable, match="memory cgroup v1"):
        kc.kernel_check(workloads=["zipf_read"], limits_mib=[16], workdir=tmp_path)


def test_bare_names_mean_the_configured_rows_on_the_host_too():
    pols = kc.host_policies(["linux-two-list", "linux-two-list()", "lru"])
    assert pols["linux-two-list"] == kc.DEFAULT_POLICIES["linux-two-list"] != "linux-two-list"
    assert pols["linux-two-list()"] == "linux-two-list()"
    assert pols["lru"] == "lru"
    assert kc.host_policies(None) == kc.DEFAULT_POLICIES


def test_cells_and_workload_parameters_are_stated():
    cells = kc.cells_for(limits_mib=[32, 64])
    # four file workloads at two limits; five anonymous or mixed ones at two limits x two swaps
    assert len(cells) == 4 * 2 + 5 * 2 * 2
    assert {c.swap for c in cells if c.workload in kc.ANON_WORKLOADS} == {"file", "zram"}
    # every workload's sizes are relative to the limit: doubling it doubles every page count
    for w in kc.WORKLOADS:
        a, b = kc.Cell(w, 32).spec(), kc.Cell(w, 64).spec()
        for k, v in a.items():
            if k.endswith("pages") or k.endswith("_per_app"):
                assert b[k] in (2 * v, 2 * v + 1), (w, k)
    spec = kc.Cell("hot_scan", 32).spec()
    lp = 32 * 256
    assert spec["hot_pages"] == lp // 4 and spec["scan_pages"] == 2 * lp and spec["periods"] >= 2
    loop = kc.Cell("loop_read", 32).spec()
    assert lp < loop["loop_pages"] <= lp * 1.1
    with pytest.raises(ValueError, match="unknown kernel-check workload"):
        kc.cells_for(workloads=["nope"])


@needs_kernel
def test_two_list_predicts_the_kernel_within_5_percent(tmp_path):
    df = kc.kernel_check(
        workloads=["zipf_read", "hot_scan", "anon_zipf"],
        limits_mib=[16],
        swap=["zram"],
        scale=0.5,
        workdir=tmp_path,
    )
    print(kc.summary(df).to_string())
    two = df[df["policy"] == TWO_LIST]
    assert set(two["metric"]) == {"misses", "swap_ins", "swap_outs"}
    bad = two[(two["error"].abs() > 0.05) & (two["kernel"] >= 200)]
    assert bad.empty, bad.to_string()
    # The scan: two-list's active list protects the hot set, as the kernel's does; LRU and CLOCK
    # lose it on every scan.
    scan = df[(df["workload"] == "hot_scan") & (df["metric"] == "misses")].set_index("policy")["error"].abs()
    assert scan[TWO_LIST] < scan["lru"] and scan[TWO_LIST] < scan["clock"]
    # The capacity comes from the cgroup's accounting, below the limit.
    for c in df.attrs["cells"]:
        assert 0 < c["capacity_pages"] < 16 * 256
    # Where the kernel has the flush tracepoint, each cell's flushes are recorded and replayed.
    if (kc.TRACEFS / "events" / kernel_host.FLUSH_EVENT).is_dir():
        for c in df.attrs["cells"]:
            flushes, refs = c["kernel_stats_flushes"], df[df["cell"] == c["cell"]]["references"].iloc[0]
            assert flushes == sorted(set(flushes)) and all(0 <= i < refs for i in flushes)
        assert two["policy_spec"].str.contains("stats_flush_at=").all()
    assert _nothing_left(tmp_path) == []


@needs_kernel
def test_an_interrupted_run_leaves_nothing_behind(tmp_path):
    """Ctrl-C in the middle of a cell with swap on zram: everything is torn down."""
    code = (
        "from tierlab import kernel as kc\n"
        f"kc.kernel_check(workloads=['anon_zipf','zipf_read'], limits_mib=[64], swap=['zram','file'], "
        f"scale=8, workdir={str(tmp_path)!r})\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    # wait until the run has set things up (a cgroup of ours exists), then interrupt it
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(kc.CGROUP_ROOT.glob(f"{kc.PREFIX}-*")):
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0 and "KeyboardInterrupt" in err, err[-2000:]
    assert _nothing_left(tmp_path) == []


@needs_kernel
def test_a_live_run_is_left_alone_and_a_second_run_waits_for_it(tmp_path):
    """What a run still alive owns (its pid is in the names) survives another run's clean-up, what a
    dead one left is removed; and while one run holds the host, a second cannot take it."""
    live = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = [kc.CGROUP_ROOT / f"{kc.PREFIX}-{live.pid}-1", kc.CGROUP_ROOT / f"{kc.PREFIX}-{dead.pid}-1"]
    swapfiles = [tmp_path / f"{kc.PREFIX}-swap-{live.pid}", tmp_path / f"{kc.PREFIX}-swap-{dead.pid}"]
    try:
        for d in mine:
            d.mkdir()
        for f in swapfiles:
            f.write_bytes(b"")
        removed = kc.cleanup_stale(tmp_path)
        assert mine[0].is_dir() and swapfiles[0].exists()
        assert not mine[1].exists() and not swapfiles[1].exists()
        assert str(mine[1]) in removed and str(swapfiles[1]) in removed
        probe = (
            "import fcntl, sys\n"
            f"f = open({str(kernel_host.LOCK_FILE)!r}, 'a+')\n"
            "try:\n    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
        )
        with kc.host_run_lock():
            assert subprocess.run([sys.executable, "-c", probe]).returncode == 3
        assert subprocess.run([sys.executable, "-c", probe]).returncode == 0
    finally:
        live.kill()
        live.wait()
        for d in mine:
            if d.exists():
                d.rmdir()


@needs_kernel
def test_a_driver_killed_mid_run_is_reported_not_waited_for(tmp_path):
    """The driver child SIGKILLed while it issues references (as the cgroup's OOM killer would):
    the run fails at once naming the signal, and leaves nothing behind."""
    code = (
        "from tierlab import kernel as kc\n"
        f"kc.kernel_check(workloads=['anon_zipf'], limits_mib=[64], swap=['zram'], scale=8, "
        f"policies=['lru'], workdir={str(tmp_path)!r})\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline, pids = time.monotonic() + 60, []
    while time.monotonic() < deadline and not pids:
        for procs in kc.CGROUP_ROOT.glob(f"{kc.PREFIX}-*/cgroup.procs"):
            pids += [int(x) for x in procs.read_text().split()]
        time.sleep(0.05)
    assert pids, "the driver never joined its cgroup"
    time.sleep(0.3)
    os.kill(pids[0], signal.SIGKILL)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=60)
        raise
    assert p.returncode != 0 and "killed by SIGKILL" in err, err[-2000:]
    assert _nothing_left(tmp_path) == []


@needs_kernel
@pytest.mark.parametrize("swap", ["file", "zswap"])
def test_a_killed_run_is_cleaned_up_by_the_next(tmp_path, swap):
    """SIGKILL leaves things behind; the next run's cleanup_stale removes them (zswap's setting and
    the debugfs mount too)."""
    if swap == "zswap" and not kc.ZSWAP_ENABLED.exists():
        pytest.skip("kernel without zswap")
    zswap_before = kc.ZSWAP_ENABLED.read_text() if kc.ZSWAP_ENABLED.exists() else None
    debugfs_before = (kc.DEBUGFS / "zswap").is_dir()
    code = (
        "from tierlab import kernel as kc\n"
        f"kc.kernel_check(workloads=['anon_zipf'], limits_mib=[64], swap=[{swap!r}], scale=8, "
        f"workdir={str(tmp_path)!r})\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(kc.CGROUP_ROOT.glob(f"{kc.PREFIX}-*")):
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    kc.cleanup_stale(tmp_path)
    assert _nothing_left(tmp_path) == []
    if zswap_before is not None:
        assert kc.ZSWAP_ENABLED.read_text() == zswap_before
    assert (kc.DEBUGFS / "zswap").is_dir() == debugfs_before


def test_mm_stat_is_read_as_the_pool_of_the_swapped_pages():
    # 1000 pages stored (4,096,000 B) compressed to 1,365,334 B (ratio 3.0), the pool using
    # 1,400,000 B (342 pages rounded up); same_pages 10, huge_pages 2.
    k = kc.parse_mm_stat("4096000 1365334 1400000 0 1400000 10 0 2 0\n")
    assert k == {
        "zram_pages": 1000,
        "zram_compr_bytes": 1365334,
        "zram_pool_pages": 342,
        "zram_same_pages": 10,
        "zram_huge_pages": 2,
    }
    a = kc.zram_accounting(k)
    # The model: 1,365,334 B = 333.3 pages -> 334 pages of pool, 666 freed <= 1000 (1 - 1/3).
    assert (a["model_pool_pages"], a["model_freed"], a["kernel_freed"]) == (334, 666, 658)
    assert abs(a["ratio"] - 3.0) < 1e-5 and a["model_freed"] <= a["bound"] + 1e-9
    assert a["kernel_freed"] <= a["model_freed"]
    with pytest.raises(ValueError, match="mm_stat"):
        kc.parse_mm_stat("1 2 3")
    assert kc.zram_accounting({"zram_pages": 0}) == {}


def test_capacity_counts_the_charge_stock_the_ready_usage_holds():
    # mixed_zipf@16MiB+zram on Debian's 6.1 (cgroup v2): when the driver is ready memory.current is
    # one charge batch (64 pages) while memory.stat holds 2 kernel pages and no anon or file page,
    # so 62 pages sit in the CPU's charge stock; the run charges 25 more kernel pages. The group
    # then holds 4096 - 64 - 25 + 62 = 4069 pages of the workload (at the end: 4037 anon and file
    # pages, 32 freed by the last reclaim's overshoot).
    page = kc.PAGE
    ready = {"usage_bytes": 64 * page, "kmem_bytes": 2 * page, "memory_stat": f"anon 0\nfile 0\nkernel {2 * page}\n"}
    done = {"usage_bytes": 4064 * page, "kmem_bytes": 27 * page, "memory_stat": ""}
    assert kc.cell_capacity(16 << 20, ready, done) == (4069, 62)
    # cgroup v1 (the host): rss + cache, kernel memory from memory.kmem.usage_in_bytes; a usage
    # below what memory.stat holds (a stale stat) is no stock, and the stock is at most one batch.
    v1 = {"usage_bytes": 100 * page, "kmem_bytes": 3 * page, "memory_stat": f"cache {5 * page}\nrss {2 * page}\n"}
    assert kc.cell_capacity(1 << 20, v1, {**v1, "kmem_bytes": 13 * page}) == (256 - 100 - 10 + 64, 64)
    low = {**v1, "usage_bytes": 6 * page}
    assert kc.cell_capacity(1 << 20, low, low) == (250, 0)
    # Under QEMU the driver returned the stock first: the ready usage's 2 pages beyond memory.stat
    # are the child's stack, not yet in memory.stat's counts, and are not added back.
    drained = {**ready, "usage_bytes": 4 * page}
    assert kc.cell_capacity(16 << 20, drained, done) == (4096 - 4 - 25 + 2, 2)
    assert kc.cell_capacity(16 << 20, drained, done, stock_returned=True) == (4096 - 4 - 25, 0)


@needs_kernel
def test_zram_pool_frees_no_more_than_the_model(tmp_path):
    """On this kernel: after an anonymous workload swapped to zram, the pool holds at least the
    compressed bytes, so the kernel frees no more than tierlab's N - ceil(compressed / page)."""
    res = kc.run_cell(kc.Cell("anon_zipf", 16, "zram", 0.5, 1), tmp_path)
    if res.trace is not None:
        res.trace.unlink(missing_ok=True)
    a = kc.zram_accounting(res.kernel)
    print(a)
    assert a["pages"] > 0
    assert a["kernel_freed"] <= a["model_freed"] <= a["bound"] + 1e-9
    assert _nothing_left(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# any workload: a trace or a generator spec


SHIPPED = Path(kc.__file__).parent / "data" / "captured" / "sqlite-txn.tlp.zst"


def _records(path: str, fmt: str | None = None, limit: int | None = None):
    """(page, op, kind) of the page accesses of a trace, in order (requests of one page here), the
    first ``limit`` of them when given."""
    from tierlab import api

    out = []
    for b in api.Trace.of(path, fmt).batches(1 << 16):
        acc = b["event"] == 255
        assert (b["npages"][acc] == 1).all()
        out += zip(b["page"][acc].tolist(), b["op"][acc].tolist(), b["kind"][acc].tolist(), strict=True)
        if limit is not None and len(out) >= limit:
            return out[:limit]
    return out


@pytest.mark.parametrize(
    "trace,max_refs",
    [
        (
            "mix:0.6*zipf(alpha=0.9,pages=3000,write=0.2,layout=scrambled)+0.4*zipf(kind=anon,pages=900,write=1.0)"
            ",n=30000,seed=5",
            None,
        ),
        (str(SHIPPED), 40_000),
    ],
)
def test_the_replayed_references_are_the_trace_s(tmp_path, trace, max_refs):
    """The references kernel-check drives and replays are the trace's, in its order: one page to one
    page per kind (numbered in first-reference order), the same reads and writes but an anonymous
    page's first reference, which is a store; a trace with nothing to change replays count for count
    as the user's own trace does."""
    from tierlab import api

    out = tmp_path / "refs.tlt"
    cell = kc.Cell("trace", 16, trace=trace, max_refs=max_refs)
    info = json.loads(kc._core.kernel_references(json.dumps(cell.spec()), str(out)))
    orig = _records(trace, limit=max_refs)
    mine = _records(str(out), "native")
    assert len(orig) == len(mine) == info["references"]
    ids: dict = {}
    seen_anon = set()
    for (p, op, kind), (q, op2, kind2) in zip(orig, mine, strict=True):
        assert kind == kind2
        assert ids.setdefault((kind, p), q) == q  # a function ...
        first_anon = kind == 1 and q not in seen_anon
        if kind == 1:
            seen_anon.add(q)
        assert op2 == (1 if first_anon else op)
    assert len(set(ids.values())) == len(ids)  # ... and one to one
    assert info["file_pages"] == sum(1 for k, _ in ids if k == 0)
    assert info["anon_pages"] == sum(1 for k, _ in ids if k == 1)
    # anonymous pages are numbered from 2^40, file pages from 0, each densely
    assert sorted(q for (k, _), q in ids.items() if k == 0) == list(range(info["file_pages"]))
    assert sorted(q for (k, _), q in ids.items() if k == 1) == [(1 << 40) + i for i in range(info["anon_pages"])]
    if max_refs is None:
        # every anonymous reference of the spec is a store, so nothing was changed: the models
        # replay the user's trace and the written one alike, count for count
        pols = ["linux-two-list(file_access='read',writeback='flusher',reclaim_batch=32)", "lru"]
        size = (info["file_pages"] + info["anon_pages"]) // 3
        cols = ["accesses", "misses", "swap_pages_read", "swap_pages_written", "file_pages_written"]
        a = api.run(str(out), policies=pols, sizes=[size])[cols]
        b = api.run(trace, policies=pols, sizes=[size])[cols]
        assert a.values.tolist() == b.values.tolist()
        assert list(a["accesses"]) == [len(orig)] * 2


def test_two_list_configuration_is_chosen_from_the_trace():
    spec, why = kc.two_list_for(str(SHIPPED))
    assert spec == "linux-two-list" and "mapped text" in why
    spec, why = kc.two_list_for("x.blkparse", "blkparse")
    assert "file_access='read'" in spec
    spec, why = kc.two_list_for("zipf:alpha=1.0,pages=10,n=10")
    assert "does not say" in why


@needs_kernel
def test_the_kernel_sees_the_trace_s_references(tmp_path):
    """Driven at a limit above its footprint, the kernel inserts the trace's file pages into the
    page cache in the order the trace first references them (exactly), and charges one page per
    anonymous page (up to the stat batching): the driver issued the trace's references."""
    trace = "mix:0.5*zipf(alpha=0.9,pages=2000,layout=scrambled)+0.5*zipf(kind=anon,pages=500,write=0.5),n=20000,seed=3"
    res = kc.run_cell(kc.Cell("trace", 64, "zram", trace=trace), tmp_path)
    refs = _records(str(res.trace), "native")
    res.trace.unlink()
    first: dict = {}
    for p, _, kind in refs:
        if kind == 0:
            first.setdefault(p, len(first))
    assert res.insertions == list(first)
    # memory.stat is flushed lazily (rstat, rate-limited): either snapshot may lag by up to a
    # per-CPU stat batch (MEMCG_CHARGE_BATCH, 64 pages)
    assert abs(res.kernel["anon_charged_pages"] - len({p for p, _, k in refs if k == 1})) <= 64
    assert res.kernel["swap_outs"] == 0
    assert _nothing_left(tmp_path) == []


@needs_kernel
def test_a_shipped_trace_runs_through_kernel_check(tmp_path):
    """The sqlite capture's first 200,000 page references (file and anonymous pages) in a 2 MiB
    cgroup with swap on zram: kernel and models side by side, and nothing left behind."""
    df = kc.kernel_check(traces=[str(SHIPPED)], max_refs=200_000, limits_mib=[2], swap=["zram"], workdir=tmp_path)
    print(kc.summary(df).to_string())
    cell = df.attrs["cells"][0]
    assert cell["cell"] == "sqlite-txn.tlp.zst@2MiB+zram"
    assert set(df["metric"]) >= {"misses", "swap_ins", "swap_outs"}
    info = kc.trace_footprint(str(SHIPPED), max_refs=200_000)
    k = df[df["metric"] == "misses"]["kernel"].iloc[0]
    assert k >= info["file_pages"] + info["anon_pages"]  # every page is brought in at least once
    assert 0 < cell["capacity_pages"] < 512
    assert _nothing_left(tmp_path) == []


def test_two_list_is_set_up_for_the_swap_device():
    two = kc.DEFAULT_POLICIES["linux-two-list"]
    assert kc._for_device(two, "zram") == two[:-1] + ",sync_swap=true)"
    assert kc._for_device("linux-two-list", "zswap") == "linux-two-list(sync_swap=true)"
    assert kc._for_device(two, "file") == two
    assert kc._for_device(two, None) == two
    assert kc._for_device("lru", "zram") == "lru"
    # mglru has the same setting; brd (a RAM disk under QEMU) is a synchronous device as zram is
    mg = "mglru(file_access='read',reclaim_batch=32)"
    assert kc._for_device(mg, "brd") == "mglru(file_access='read',reclaim_batch=32,sync_swap=true)"
    assert kc._for_device("mglru", "zram") == "mglru(sync_swap=true)"
    assert kc._for_device(mg, "file") == mg


def test_two_list_gets_the_kernel_s_statistics_flushes():
    two = kc.DEFAULT_POLICIES["linux-two-list"]
    assert kc._with_stats_flushes(two, [0, 4100]) == two[:-1] + ",stats_flush_at=[0,4100])"
    assert kc._with_stats_flushes("linux-two-list", []) == "linux-two-list(stats_flush_at=[])"
    # not recorded: the statistics read as they are
    assert kc._with_stats_flushes(two, None) == two
    # 6.1's rules flush on a threshold; other policies and a spec that sets it are left alone
    six_one = two[:-1] + ",version='6.1')"
    assert kc._with_stats_flushes(six_one, [7]) == six_one
    assert kc._with_stats_flushes("lru", [7]) == "lru"
    given = "linux-two-list(stats_flush_at=[3])"
    assert kc._with_stats_flushes(given, [7]) == given
    # the spec parses, and the model takes it
    spec = kc._with_stats_flushes(two, [5, 20])
    run = api.run("zipf:alpha=0.9,pages=50,n=400,seed=1", policies=[spec], sizes=[8])
    assert run["accesses"].iloc[0] == 400


def test_two_list_notes_reclaim_cost_as_the_kernel_release_does():
    assert kc.two_list_version("6.1.0-56-amd64") == "6.1"
    assert kc.two_list_version("6.12.100+deb12-amd64") is None
    assert kc.two_list_version("6.17.2") == "6.17"
    assert kc.two_list_version("6.18.44-fc-v595") == "6.17"
    assert kc.two_list_version("unknown") is None
    two = kc.DEFAULT_POLICIES["linux-two-list"]
    assert kc.host_policies(None, "6.18.44")["linux-two-list"] == two[:-1] + ",version='6.17')"
    assert kc.host_policies(["linux-two-list", "lru"], "6.12.1") == {"linux-two-list": two, "lru": "lru"}


def test_flushes_are_placed_among_the_references_by_the_driver_s_clock():
    # progress: references 0, 64, 128 start at 1000, 1640, 2920 ns; the last ended at 3000
    progress = [1000, 1640, 2920, 3000]
    # 500: before the first reference -> 0; 1000: during reference 0 -> 1; 1320: halfway through
    # references 0..63 -> during 32 -> 33; 2920: at the start of 128 -> 129; 3000 and later:
    # after the last (130 references) -> dropped; repeats merged, in time order
    got = kc.flush_references([1320, 500, 1000, 2920, 2919, 3000, 5000], progress, 64, 130)
    assert got == [0, 1, 33, 128, 129]
    # no clock: nothing placed
    assert kc.flush_references([10], [], 64, 100) == []


def test_the_kernel_s_writes_are_placed_among_the_references():
    # the same clock as above; writes [ns, first page, pages] in any order
    progress = [1000, 1640, 2920, 3000]
    writes = [[1320, 7, 1], [1000, 3, 2], [1320, 8, 2], [1320, 20, 1], [500, 1, 1], [3000, 9, 1]]
    got = kc.written_references(writes, progress, 64, 130)
    # 500 -> before reference 0; 1000 -> 1; the three at 1320 -> 33, the first two merged (7, then
    # 8-9: consecutive), 20 apart; 3000: after the last reference, dropped
    assert got == [[0, 1, 1], [1, 3, 2], [33, 7, 3], [33, 20, 1]]
    assert kc.written_references(writes, [], 64, 130) == []


def test_mglru_gets_the_kernel_s_writes_where_it_leaves_dirty_pages_to_the_flusher(tmp_path):
    mg = "mglru(file_access='read',reclaim_batch=32,writeback='flusher',version='6.12')"
    writes = [[3, 7, 1], [40, 2, 3]]
    spec = kc._with_file_writes(mg, writes)
    assert spec == mg[:-1] + ",written_at=[[3,7,1],[40,2,3]])"
    # not recorded, not the kernel's write-back, another policy: left alone
    assert kc._with_file_writes(mg, None) == mg
    assert kc._with_file_writes("mglru(file_access='read')", writes) == "mglru(file_access='read')"
    assert kc._with_file_writes("linux-two-list(writeback='flusher')", writes) == "linux-two-list(writeback='flusher')"
    # the CSV shows the writes as their count and pages; the kept writes make it whole again
    shown = kc.shown_spec(spec)
    assert shown == mg[:-1] + ",written_at=<2 writes, 4 pages>)"
    assert kc.shown_spec(mg) == mg
    trace = tmp_path / "cell.tlt"
    with pytest.raises(FileNotFoundError, match="cell.written.json"):
        kc.replayable_spec(shown, trace)
    trace.with_suffix(".written.json").write_text(json.dumps(writes))
    assert kc.replayable_spec(shown, trace) == spec
    assert kc.replayable_spec(mg, trace) == mg
    # the spec parses, and the model takes it: page 7 of a 50-page Zipf, written before reference 3
    run = api.run(
        "zipf:alpha=0.9,pages=50,n=400,seed=1,write=0.3", policies=[spec.replace("file_access='read',", "")], sizes=[8]
    )
    assert run["accesses"].iloc[0] == 400


def test_a_trace_line_s_time_is_read_in_ns():
    line = (
        "    kworker/u8:2-21882   [001] ..... 43158.212047: memcg_flush_stats: "
        "memcg_id=1 stats_updates=192 force=1 needs_flush=1"
    )
    assert _timestamp_ns(line, "memcg_flush_stats") == 43158_212047_000


@needs_kernel
@pytest.mark.skipif(not kc.ZSWAP_ENABLED.exists(), reason="kernel without zswap")
def test_zswap_stores_every_swap_out_and_is_restored(tmp_path):
    """A loop over 1.1x memory on zswap: every swap-out is stored (none to the device, none
    rejected or written back at this size), every swap-in an exclusive load, so each page swapped in
    is stored again (sync_swap); zswap's setting is restored and nothing is left behind."""
    before = kc.ZSWAP_ENABLED.read_text()
    df = kc.kernel_check(workloads=["anon_loop"], limits_mib=[16], swap=["zswap"], scale=0.5, workdir=tmp_path)
    cell = df.attrs["cells"][0]
    k = {m: cell[f"kernel_{m}"] for m in ("swap_outs", "zswap_stored", "zswap_rejected", "zswap_written_back")}
    assert k["zswap_stored"] == k["swap_outs"] > 0 and k["zswap_rejected"] == k["zswap_written_back"] == 0, k
    two = df[(df["policy"] == TWO_LIST) & (df["metric"] == "swap_outs")]
    assert abs(two["error"].iloc[0]) <= 0.05, two.to_string()
    assert cell["zswap_page_bytes"] == kc.PAGE  # cgroup v1: no memory.stat zswap to measure it
    assert kc.ZSWAP_ENABLED.read_text() == before
    assert _nothing_left(tmp_path) == []


def test_zswap_model_at_the_group_limit_splits_the_policy_s_swap_outs(tmp_path):
    """kernel-check's zswap rows replay the policy's own swap-outs and swap-ins through the zswap
    model: without a group limit every swap-out is stored (the model's swap-outs, as before); at a
    memory.zswap.max the pool cannot hold, every swap-out is either stored or sent to the device, a
    page written back was stored first, and the global pool rejects nothing. The compressed length
    per page is the kernel's memory.stat ``zswap`` over ``zswapped``."""
    from tierlab import api

    out = tmp_path / "refs.tlt"
    cell = kc.Cell("anon_zipf", 16, swap="zswap", scale=0.25)
    kc._core.kernel_references(json.dumps(cell.spec()), str(out))
    spec = kc._for_device("linux-two-list", "zswap")
    cap = 2000
    swap_outs = int(api.run(str(out), policies=[spec], sizes=[cap])["swap_pages_written"].iloc[0])
    assert swap_outs > 0
    assert kc.zswap_page_bytes({}) == kc.PAGE
    assert kc.zswap_page_bytes({"zswap_pool_bytes": 55_756, "zswapped_bytes": 1000 * kc.PAGE}) == 56
    free = kc.zswap_model(out, [spec], cap, {})[0]
    split = {k: free[k] for k in ("zswap_stored", "zswap_written_back", "zswap_to_device", "zswap_rejected")}
    assert split == {"zswap_stored": swap_outs, "zswap_written_back": 0, "zswap_to_device": 0, "zswap_rejected": 0}
    # what the PSI pricing reads: every swap-in is a pool load, nothing reaches the device
    assert free["zswap_device_reads"] == free["zswap_device_writes"] == 0 and free["zswap_pool_loads"] > 0
    kernel = {"zswap_max_bytes": 16 * kc.PAGE, "zswap_pool_bytes": 56_000, "zswapped_bytes": 1000 * kc.PAGE}
    lim = kc.zswap_model(out, [spec], cap, kernel)[0]
    assert lim["zswap_stored"] + lim["zswap_to_device"] == swap_outs, lim
    assert 0 < lim["zswap_written_back"] <= lim["zswap_stored"] and lim["zswap_to_device"] > 0, lim
    assert lim["zswap_rejected"] == 0
