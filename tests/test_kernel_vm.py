"""kernel-check under QEMU (tierlab.kernel_vm; docs/kernel-check.md, "Kernels under QEMU").

The VM cells run where QEMU is installed, the run is root, and the kernel and the static driver are
already cached (a first run of ``tierlab kernel-check --kernel debian:6.12`` downloads and builds
them); otherwise they are skipped with the reason, so the suite never waits for a download.
"""

from __future__ import annotations

import json
import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tierlab import kernel as kc
from tierlab import kernel_image
from tierlab import kernel_vm as kv

# Read at import, before the session's private cache (conftest) is set: the kernel and the static
# driver the skip check found are the user's, and the VM cells must run with those, not build and
# download them again into an empty cache.
USER_CACHE = kernel_image.cache_dir()
WHY = kv.unavailable_without_download("debian:6.12")
needs_vm = pytest.mark.skipif(WHY is not None, reason=f"kernel-check under QEMU skipped: {WHY}")


@pytest.fixture(autouse=True)
def _user_kernel_cache(monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(USER_CACHE))


def test_initramfs_is_a_newc_archive_busybox_lists(tmp_path):
    if not kv.BUSYBOX.exists():
        pytest.skip("busybox-static not installed")
    out = tmp_path / "i.cpio"
    kv.write_cpio([("bin", 0o40755, b""), ("bin/x", 0o100755, b"abc"), ("init", 0o100644, b"hello\n")], out)
    r = subprocess.run([str(kv.BUSYBOX), "cpio", "-t"], stdin=open(out, "rb"), capture_output=True, text=True)
    assert r.stdout.split() == ["bin", "bin/x", "init"], r.stderr
    d = tmp_path / "x"
    d.mkdir()
    subprocess.run([str(kv.BUSYBOX), "cpio", "-i", "-d"], stdin=open(out, "rb"), cwd=d, check=True)
    assert (d / "init").read_bytes() == b"hello\n" and (d / "bin" / "x").read_bytes() == b"abc"


def test_modules_come_with_their_dependencies_first(tmp_path):
    mods = tmp_path / "kernel" / "drivers"
    mods.mkdir(parents=True)
    ko = lambda deps: b"\x7fELF junk\x00depends=" + deps + b"\x00vermagic=6.12\x00"  # noqa: E731
    (mods / "zram.ko.xz").write_bytes(lzma.compress(ko(b"lz4_compress,zsmalloc"), format=lzma.FORMAT_XZ))
    (mods / "lz4_compress.ko").write_bytes(ko(b""))
    (mods / "zsmalloc.ko.xz").write_bytes(lzma.compress(ko(b"lz4_compress"), format=lzma.FORMAT_XZ))
    chain = kv.module_chain(tmp_path, "zram")
    assert [n for n, _ in chain] == ["lz4_compress", "zsmalloc", "zram"]
    assert chain[-1][1] == ko(b"lz4_compress,zsmalloc")
    with pytest.raises(kc.KernelCheckUnavailable, match="module brd not found"):
        kv.module_chain(tmp_path, "brd")


def test_bare_model_names_mean_the_configuration_the_driver_runs():
    pols = kv.vm_policies(["mglru", "linux-two-list", "lru"])
    assert pols["mglru"] == "mglru(file_access='read',reclaim_batch=32,writeback='flusher')"
    assert pols["linux-two-list"] == kc.DEFAULT_POLICIES["linux-two-list"]
    assert pols["lru"] == "lru"
    # mglru follows the kernel's MGLRU: 6.1-6.11; 6.12 and 6.13 (6.1's rules but for dirty file
    # pages); 6.14 on, after the "rework refs" series
    v612 = kv.vm_policies(["mglru"], "6.12.117+deb12-amd64")["mglru"]
    assert v612 == "mglru(file_access='read',reclaim_batch=32,writeback='flusher',version='6.12')"
    assert kv.vm_policies(None, "6.1.0-56-amd64")["mglru"].endswith("version='6.1')")
    assert kv.vm_policies(None, "6.11.9")["mglru"].endswith("version='6.1')")
    assert kv.vm_policies(None, "6.13.1")["mglru"].endswith("version='6.12')")
    assert kv.vm_policies(None, "6.14.2")["mglru"].endswith("version='6.14')")
    on_61 = kv.vm_policies(None, "6.1.0-56-amd64")["linux-two-list"]
    assert on_61 == kc.DEFAULT_POLICIES["linux-two-list"][:-1] + ",version='6.1')"
    assert kv.vm_policies(None, "6.12.100+deb12-amd64")["linux-two-list"] == kc.DEFAULT_POLICIES["linux-two-list"]


def _fake_kernel(tmp_path: Path) -> kv.KernelImage:
    """A kernel whose modules tree holds brd, zram and zram's dependency (no real code)."""
    mods = tmp_path / "modules"
    (mods / "kernel").mkdir(parents=True)
    ko = lambda deps: b"\x7fELF\x00depends=" + deps + b"\x00"  # noqa: E731
    (mods / "kernel" / "brd.ko").write_bytes(ko(b""))
    (mods / "kernel" / "zsmalloc.ko").write_bytes(ko(b""))
    (mods / "kernel" / "zram.ko").write_bytes(ko(b"zsmalloc"))
    (mods / "modules.builtin").write_text("")
    return kv.KernelImage("fake", "6.12.0", tmp_path / "vmlinuz", mods)


def _init_of(tmp_path: Path, cells: list[kv.VmCell], reclaim_trace: bool = False) -> str:
    if not kv.BUSYBOX.exists():
        pytest.skip("busybox-static not installed")
    driver = tmp_path / "driver"
    driver.write_bytes(b"\x7fELF")
    for c in cells:
        c.trace.write_bytes(b"t")
    out = tmp_path / "i.cpio"
    kv.build_initramfs(out, _fake_kernel(tmp_path), driver, cells, None, 4096, reclaim_trace=reclaim_trace)
    d = tmp_path / "x"
    d.mkdir()
    subprocess.run([str(kv.BUSYBOX), "cpio", "-i", "-d"], stdin=open(out, "rb"), cwd=d, check=True, capture_output=True)
    return (d / "init").read_text()


def test_swap_cells_get_their_device_and_the_host_s_settings_in_the_vm(tmp_path):
    """The /init of a file cell, a zram cell, a brd cell and a zswap cell: swap readahead off and
    swappiness 60 for all; memory.swap.max 0 only for the file cell; zram loaded after zsmalloc and
    sized by the host's rule; the brd and zswap cells swap on the extra RAM disk; zswap enabled
    with memory.zswap.max at its share of the limit, its counters read around the driver, and off
    again after; every device taken down after its cell."""
    lim = 16 << 20
    cells = [
        kv.VmCell(tmp_path / "a.tlt", 100, 0, lim),
        kv.VmCell(tmp_path / "b.tlt", 0, 1000, lim, "zram"),
        kv.VmCell(tmp_path / "c.tlt", 10, 1000, lim, "brd"),
        kv.VmCell(tmp_path / "d.tlt", 10, 1000, lim, "zswap"),
    ]
    init = _init_of(tmp_path, cells)
    assert "echo 0 > /proc/sys/vm/page-cluster" in init and "echo 60 > /proc/sys/vm/swappiness" in init
    assert init.index("insmod /lib/modules/zsmalloc.ko") < init.index("insmod /lib/modules/zram.ko num_devices=1")
    swap_pages = cells[1].swap_bytes // 4096
    assert cells[1].swap_bytes == 1000 * 4096 * 5 // 4 + (16 << 20)
    assert f"insmod /lib/modules/brd.ko rd_nr=5 rd_size={swap_pages * 4} max_part=0" in init
    per_cell = init.split("C=/sys/fs/cgroup/kc")[1:]
    assert "memory.swap.max" in per_cell[0] and all("memory.swap.max" not in c for c in per_cell[1:])
    assert f"echo {cells[1].swap_bytes} > /sys/block/zram0/disksize" in per_cell[1]
    assert "swapoff /dev/zram0" in per_cell[1] and "zram0/reset" in per_cell[1]
    assert "swapon /dev/ram4" in per_cell[2] and "swapoff /dev/ram4" in per_cell[2]
    assert f"echo {lim // 256} > $C/memory.zswap.max" in per_cell[3] and "echo N > $Z/enabled" in per_cell[3]
    assert per_cell[3].count("TIERLAB-VM-ZSWAP 3") == 2 and "TIERLAB-VM-ZSWAP" not in per_cell[2]
    assert all("memory.pressure" in c for c in per_cell)
    assert "mount -t debugfs" in init


def test_the_statistics_flushes_are_probed_and_filtered_to_each_cell_s_group(tmp_path):
    """/init stamps the buffer with CLOCK_MONOTONIC and sets the kprobe on cgroup_rstat_flush once
    (failing softly: no probe, no flushes recorded); each cell, once its group exists and before
    the driver, filters the probe to its group's and the root's cgroup ids."""
    cells = [kv.VmCell(tmp_path / "a.tlt", 100, 0, 16 << 20), kv.VmCell(tmp_path / "b.tlt", 0, 1000, 16 << 20, "zram")]
    init = _init_of(tmp_path, cells)
    assert init.count("cgroup_rstat_flush") == 1 and "echo mono > $T/trace_clock" in init
    assert init.index("kprobe_events") < init.index("C=/sys/fs/cgroup/kc0")
    for c in init.split("C=/sys/fs/cgroup/kc")[1:]:
        assert c.index("mkdir $C") < c.index("memcg_flush/filter") < c.index("/driver")
        assert "id == $(stat -c %i /sys/fs/cgroup) || id == $(stat -c %i $C)" in c


def test_the_reclaim_trace_is_collected_only_when_asked(tmp_path):
    """With the diagnostic on, /init enables memcg reclaim's vmscan tracepoints and prints each
    cell's vmscan lines under its mark after the driver; the host writes them, and the driver's
    snapshots, beside the cell's kept trace. Off, neither is there."""
    on_dir, off_dir, kept = tmp_path / "on", tmp_path / "off", tmp_path / "kept"
    for d in (on_dir, off_dir, kept):
        d.mkdir()
    cells = [kv.VmCell(on_dir / "a.tlt", 0, 1000, 16 << 20, "zram"), kv.VmCell(on_dir / "b.tlt", 10, 0, 16 << 20)]
    on = _init_of(on_dir, cells, reclaim_trace=True)
    assert all(e in on for e in kv.RECLAIM_EVENTS)
    per_cell = on.split("C=/sys/fs/cgroup/kc")[1:]
    for i, c in enumerate(per_cell):
        assert f"{kv.RECLAIM_MARK} {i} mm_vmscan" in c and c.index("/driver") < c.index(kv.RECLAIM_MARK)
    off = _init_of(off_dir, cells)
    assert "vmscan" not in off and kv.RECLAIM_MARK not in off
    console = "\n".join(
        [
            "TIERLAB-VM-VMSCAN 0 mm_vmscan_memcg_reclaim_begin: order=0",
            "TIERLAB-VM-VMSCAN 1 mm_vmscan_memcg_reclaim_end: nr_reclaimed=40",
            "TIERLAB-VM-VMSCAN 0 mm_vmscan_memcg_reclaim_end: nr_reclaimed=33",
            "TIERLAB-VM-CELL 1",
        ]
    )
    kv.write_reclaim_traces(console, [{"ready": {"usage_bytes": 1}}, {}], [kept / "k0.tlt", None])
    assert (kept / "k0.vmscan").read_text() == (
        "mm_vmscan_memcg_reclaim_begin: order=0\nmm_vmscan_memcg_reclaim_end: nr_reclaimed=33\n"
    )
    assert json.loads((kept / "k0.driver.json").read_text()) == {"ready": {"usage_bytes": 1}}
    assert sorted(p.name for p in kept.iterdir()) == ["k0.driver.json", "k0.vmscan"]


def test_the_generation_diagnostic_is_opt_in_and_prints_the_reclaims_on_the_insertion_clock(tmp_path, monkeypatch):
    """TIERLAB_VM_LRU_GEN: off by default; on, the reclaim tracepoints are enabled, lru_gen is
    written into the trace buffer every interval while the driver runs, and /init's awk turns the
    buffer into lines stamped with the page-cache insertions so far (run here with busybox on a
    hand-written buffer: two insertions, a reclaim of one 64-page file batch at priority 12, a
    snapshot, one more insertion)."""
    cells = [kv.VmCell(tmp_path / "a.tlt", 10, 100, 16 << 20, "zram")]
    monkeypatch.delenv(kv.LRU_GEN_ENV, raising=False)
    (tmp_path / "off").mkdir()
    init = _init_of(tmp_path / "off", cells)
    assert "lru_gen" not in init.split("C=/sys/fs/cgroup/kc")[1] and "mm_vmscan" not in init
    monkeypatch.setenv(kv.LRU_GEN_ENV, "0.25")
    init = _init_of(tmp_path, cells)
    assert all(e in init for e in kv.LRU_GEN_EVENTS) and "sleep 0.25" in init
    assert 'mount -t debugfs none /sys/kernel/debug || fail "debugfs"' in init
    cell = init.split("C=/sys/fs/cgroup/kc")[1]
    assert cell.index("& D=$!") < cell.index("/driver ") < cell.index("kill $D")
    awk = cell[cell.index("awk ") : cell.index("$T/trace\n") + len("$T/trace")]
    buf = tmp_path / "trace"
    buf.write_text(
        "# tracer: nop\n"
        " driver-9 [000] 1.0: mm_filemap_add_to_page_cache: dev 1:0 ino 0 pfn=0x1 ofs=0 order=0\n"
        " driver-9 [000] 1.1: mm_filemap_add_to_page_cache: dev 1:0 ino 0 pfn=0x2 ofs=4096 order=0\n"
        " driver-9 [000] 1.2: mm_vmscan_memcg_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
        " driver-9 [000] 1.3: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=64 nr_reclaimed=64 "
        "nr_dirty=0 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=0 nr_activate_file=0 "
        "nr_ref_keep=0 nr_unmap_fail=0 priority=12 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"
        " driver-9 [000] 1.4: mm_vmscan_memcg_reclaim_end: nr_reclaimed=64\n"
        " sh-3 [000] 1.5: tracing_mark_write: LRUGEN memcg 2 /kc0  node 0  5 120 10 0  6 80 3 2 \n"
        " driver-9 [000] 1.6: mm_filemap_add_to_page_cache: dev 1:0 ino 0 pfn=0x3 ofs=8192 order=0\n"
    )
    out = subprocess.run(
        [str(kv.BUSYBOX), "sh", "-c", awk.replace("$T/trace", str(buf))], capture_output=True, text=True, check=True
    ).stdout
    lines = kv.lru_gen_timeline(out + "TIERLAB-VM-LRUGEN 1 0 B\n", 0)
    assert lines == [
        "2 B",
        "2 S nr_scanned=64 nr_reclaimed=64 nr_activate_anon=0 nr_activate_file=0 nr_ref_keep=0 priority=12 "
        "flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC",
        "2 E 64",
        "2 G memcg 2 /kc0  node 0  5 120 10 0  6 80 3 2 ",
    ]
    monkeypatch.setenv(kv.LRU_GEN_ENV, "often")
    with pytest.raises(kc.KernelCheckUnavailable, match="TIERLAB_VM_LRU_GEN='often': expected seconds"):
        kv.lru_gen_every()


def test_the_generation_diagnostic_can_snapshot_the_group_s_lru_gen_full(tmp_path, monkeypatch):
    """TIERLAB_VM_LRU_GEN_FULL=1: each snapshot is the cell group's part of lru_gen_full (from its
    memcg line on; run here with busybox on a hand-written file), spaces squeezed, on one line."""
    cells = [kv.VmCell(tmp_path / "a.tlt", 10, 100, 16 << 20, "zram")] * 2
    monkeypatch.setenv(kv.LRU_GEN_ENV, "0.25")
    monkeypatch.setenv(kv.LRU_GEN_FULL_ENV, "1")
    init = _init_of(tmp_path, cells)
    cell1 = init.split("C=/sys/fs/cgroup/kc")[2]
    src = kv.lru_gen_source(1)
    assert src in cell1 and "/debug/lru_gen)" not in init
    full = tmp_path / "lru_gen_full"
    full.write_text(
        "memcg     1 /\n node     0\n           3      36500      0      0\n"
        "memcg     2 /kc1\n node     0\n           3       2800      5      6\n"
        "                     0        162r        837e          0p\n"
    )
    out = subprocess.run(
        [str(kv.BUSYBOX), "sh", "-c", src.replace("/sys/kernel/debug/lru_gen_full", str(full))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "memcg 2 /kc1  node 0  3 2800 5 6  0 162r 837e 0p "
    monkeypatch.setenv(kv.LRU_GEN_FULL_ENV, "yes")
    with pytest.raises(kc.KernelCheckUnavailable, match="TIERLAB_VM_LRU_GEN_FULL='yes': expected 1"):
        kv.lru_gen_source(0)


def test_a_cell_s_pressure_and_zswap_counters_are_read_from_the_console():
    console = "\n".join(
        [
            "TIERLAB-VM-ZSWAP 1 0 ./stored_pages:0 ./reject_reclaim_fail:2 ./pool_total_size:0 ",
            "TIERLAB-VM-PSI 0 some avg10=0.00 avg60=0.00 avg300=0.00 total=11 full avg10=0.00 total=7 ",
            "TIERLAB-VM-PSI 1 some avg10=1.50 avg60=0.20 avg300=0.00 total=12345 "
            "full avg10=1.00 avg60=0.10 avg300=0.00 total=6789 ",
            "TIERLAB-VM-ZSWAP 1 1 ./stored_pages:40 ./reject_reclaim_fail:9 ./pool_total_size:8192 ",
        ]
    )
    x = kv.cell_extras(console, 1)
    assert x["psi"] == {"some": 12345, "full": 6789}
    assert x["zswap"] == {
        0: {"stored_pages": 0, "reject_reclaim_fail": 2, "pool_total_size": 0},
        1: {"stored_pages": 40, "reject_reclaim_fail": 9, "pool_total_size": 8192},
    }
    assert kv.cell_extras(console, 0)["psi"] == {"some": 11, "full": 7}
    d = kc.zswap_counts(
        {"zswpout": 5, "pswpout": 1}, {"zswpout": 105, "zswpin": 30, "zswpwb": 20, "pswpout": 41, "pswpin": 4},
        x["zswap"][0], x["zswap"][1],
    )  # fmt: skip
    # 100 stored, 40 written to the device of which 20 were zswap's write-backs: 120 pages left memory
    assert d["swap_outs"] == 120 and d["swap_ins"] == 34 and d["zswap_written_back"] == 20
    assert d["zswap_to_device"] == 20  # the other 20 went there uncompressed
    assert d["zswap_rejected"] == 7


def test_swap_on_a_file_is_refused_under_qemu_and_brd_on_the_host(tmp_path):
    with pytest.raises(kc.KernelCheckUnavailable, match="--swap file under --kernel: expected zram, brd, zswap"):
        kc.kernel_check(workloads=["anon_zipf"], limits_mib=[16], swap=["file"], kernel="debian:6.12", workdir=tmp_path)
    with pytest.raises(kc.KernelCheckUnavailable, match="--swap brd .* is for cells under --kernel"):
        kc.kernel_check(workloads=["anon_zipf"], limits_mib=[16], swap=["brd"], workdir=tmp_path)


def test_a_bad_kernel_name_is_refused_plainly(tmp_path):
    with pytest.raises(kc.KernelCheckUnavailable, match="expected debian:6.1, debian:6.12 or the path"):
        kv.fetch_kernel(str(tmp_path / "no-such-vmlinuz"))


def test_stale_leftovers_of_a_dead_run_are_removed(tmp_path):
    """A killed run's directory, trace and any process still using the directory go; a live run's
    stay."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{kv.VM_PREFIX}{dead.pid}-abc"
    stale.mkdir()
    (stale / "initrd.cpio").write_bytes(b"x")
    trace = tmp_path / f"{kv.VM_PREFIX}{dead.pid}-t.tlt"
    trace.write_bytes(b"x")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(stale)])
    live = subprocess.Popen(["sleep", "60"])
    alive = tmp_path / f"{kv.VM_PREFIX}{live.pid}-def"
    alive.mkdir()
    try:
        removed = kv.cleanup_stale(tmp_path)
        assert holder.wait(timeout=10) == -signal.SIGKILL
        assert not stale.exists() and not trace.exists() and alive.exists()
        assert str(stale) in removed and f"pid {holder.pid}" in removed
    finally:
        for p in (holder, live):
            p.kill()
            p.wait()


def _vm_left(workdir: Path) -> list[str]:
    left = [str(p) for p in workdir.glob(f"{kv.VM_PREFIX}*")]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if kv.QEMU in cmd and str(workdir) in cmd:
            left.append(f"qemu pid {proc.name}")
    return left


@needs_vm
def test_a_quick_cell_runs_in_the_vm_and_counts_every_first_touch(tmp_path):
    """One loop_read cell on 6.12 under QEMU: the kernel inserted every page the loop reads at least
    once and at most once a reference; the reference trace tierlab replays is the one the VM read;
    the group's memory.current at ready is what the driver's child holds, not the 64-page batch
    (MEMCG_CHARGE_BATCH) its first charge took, whose unused part the driver returned; the
    kernel's statistics flushes are recorded."""
    df = kc.kernel_check(
        workloads=["loop_read"], limits_mib=[16], policies=["mglru"], scale=0.25, workdir=tmp_path,
        kernel="debian:6.12", keep_traces=tmp_path / "traces",
    )  # fmt: skip
    cell = df.attrs["cells"][0]
    loop, refs = cell["params"]["loop_pages"], cell["params"]["refs"]
    assert loop <= cell["kernel_misses"] <= refs
    assert cell["release"].startswith("6.12") and 0 < cell["capacity_pages"] < 16 * 256
    assert df["references"].iloc[0] == refs
    assert 0 < cell["usage_pages"] < 64
    # 6.12's statistics flushes, probed (cgroup_rstat_flush), placed among the references
    flushes = cell["kernel_stats_flushes"]
    assert flushes == sorted(set(flushes)) and all(0 <= i < refs for i in flushes)
    assert _vm_left(tmp_path) == []


@needs_vm
def test_anonymous_cells_swap_in_the_vm_as_the_models_predict(tmp_path):
    """anon_loop (a loop over 1.1 times memory) on zram and on brd under 6.12's MGLRU: every
    reference after the first pass misses in the kernel and in both models (the same swap-ins,
    exactly), and the synchronous devices' swap-ins free their slots, so the pages are written
    again (swap-outs within 5% of mglru's and linux-two-list's with sync_swap). The zram cell's
    pool, the group's memory.pressure beside the lmkd model's stall, and nothing left behind."""
    df = kc.kernel_check(
        workloads=["anon_loop"], limits_mib=[16], swap=["zram", "brd"], policies=["mglru", "linux-two-list"],
        scale=0.25, workdir=tmp_path, kernel="debian:6.12",
    )  # fmt: skip
    for cell in df.attrs["cells"]:
        assert cell["kernel_swap_ins"] > 1000 and cell["kernel_kswapd_scans"] == 0, cell
        assert "psi_some_us" in cell and cell["psi_full_us"] <= cell["psi_some_us"]
    zram = df.attrs["cells"][0]
    assert zram["kernel_zram_pages"] > 0 and zram["kernel_zram_pool_pages"] > 0
    ins = df[df["metric"] == "swap_ins"]
    assert (ins["model"] == ins["kernel"]).all(), ins
    outs = df[df["metric"] == "swap_outs"]
    assert (outs["error"].abs() <= 0.05).all(), outs
    # the lmkd model's stall beside the group's: one row per cell and policy, both sides > 0
    psi = kc.psi_summary(df)
    assert len(psi) == 4 and (psi[["kernel some ms", "model some ms", "model full ms"]] > 0).all().all(), psi
    assert _vm_left(tmp_path) == []


@needs_vm
@pytest.mark.parametrize("how", ["sigint", "kill-qemu", "kill-run"])
def test_an_interrupted_or_killed_vm_run_leaves_nothing(tmp_path, how):
    """Ctrl-C, a SIGKILLed QEMU, or a SIGKILLed run: no QEMU survives, no temporary file stays (the
    last after the next run's cleanup)."""
    code = (
        "from tierlab import kernel as kc\n"
        f"kc.kernel_check(workloads=['zipf_read'], limits_mib=[16], scale=4, workdir={str(tmp_path)!r}, "
        "kernel='debian:6.12')\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    qemu = []
    while time.monotonic() < deadline and not qemu:
        qemu = [x for x in _vm_left(tmp_path) if x.startswith("qemu")]
        time.sleep(0.2)
    assert qemu, "QEMU never started"
    time.sleep(1)
    if how == "sigint":
        p.send_signal(signal.SIGINT)
    elif how == "kill-qemu":
        os.kill(int(qemu[0].split()[-1]), signal.SIGKILL)
    else:
        os.kill(p.pid, signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0, err[-2000:]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(x.startswith("qemu") for x in _vm_left(tmp_path)):
        time.sleep(0.1)
    if how == "kill-run":
        kv.cleanup_stale(tmp_path)
    else:
        assert "KeyboardInterrupt" in err if how == "sigint" else "RuntimeError" in err, err[-2000:]
    assert _vm_left(tmp_path) == []


def test_the_kernel_cache_is_cleared_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(tmp_path))
    (tmp_path / "kernels" / "linux-image-6.12.1+deb12-amd64").mkdir(parents=True)
    (tmp_path / "kernels" / "linux-image-6.12.1+deb12-amd64" / "ready").write_text("x")
    (tmp_path / "vm-driver-target" / "debug").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    assert kernel_image._cached_packages("debian:6.12") == ["linux-image-6.12.1+deb12-amd64"]
    removed = kernel_image.clear_kernel_cache()
    assert sorted(removed) == [str(tmp_path / "kernels"), str(tmp_path / "vm-driver-target")]
    assert [p.name for p in tmp_path.iterdir()] == ["other"]
    assert "not cached" in (kv.unavailable_without_download("debian:6.12") or "not cached")


def test_each_data_disk_reads_nothing_ahead_and_records_its_writes(tmp_path):
    """Before its driver, each cell turns its data disk's readahead off (read_ahead_kb 0: no
    asynchronous readahead through PG_readahead, which is PG_reclaim's bit) and filters
    block_bio_queue to write requests of that disk, by the dev_t the kernel prints (major << 20 |
    minor, worked out by the VM's busybox sh from /sys/block/ramN/dev)."""
    cells = [kv.VmCell(tmp_path / "a.tlt", 100, 0, 16 << 20), kv.VmCell(tmp_path / "b.tlt", 10, 1000, 16 << 20, "brd")]
    init = _init_of(tmp_path, cells)
    for i, c in enumerate(init.split("C=/sys/fs/cgroup/kc")[1:]):
        assert c.index(f"echo 0 > /sys/block/ram{i}/queue/read_ahead_kb") < c.index("/driver")
        assert c.index("W=$T/events/block/block_bio_queue") < c.index("> $W/filter") < c.index("$W/enable")
        assert c.index("$W/enable") < c.index("/driver")
        assert f"D=$(cat /sys/block/ram{i}/dev)" in c
    line = next(x for x in init.splitlines() if "> $W/filter" in x)
    expr = line[line.index('echo "') : line.index(" > $W/filter")]
    r = subprocess.run([str(kv.BUSYBOX), "sh", "-c", f"D=1:3; {expr}"], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == 'dev == 1048579 && rwbs ~ "*W*"'


def test_the_driver_is_built_per_source_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("TIERLAB_CACHE", str(tmp_path))
    a, b = kv.driver_target(Path("/src/a")), kv.driver_target(Path("/src/b"))
    assert a != b and a.parent == b.parent == tmp_path / "vm-driver-target"
    assert kv.driver_target(Path("/src/a")) == a
