"""kernel-check --fast-node (6.12's memory tiering under QEMU): the topology QEMU is given, what
/init sets, how the cell's counts are read and how tpp is set up for the cell. No root or VM."""

import subprocess

import pytest

from tierlab import kernel as kc
from tierlab import kernel_vm as kv


def test_node_0_gets_the_fast_share_and_node_1_the_rest_ten_times_slower():
    args = kv.numa_tier_args(900, 300)
    assert args[:4] == [
        "-object",
        "memory-backend-ram,size=300M,id=m0",
        "-object",
        "memory-backend-ram,size=600M,id=m1",
    ]
    nodes = [a for a in args if a.startswith("node,")]
    assert nodes == ["node,nodeid=0,cpus=0,memdev=m0", "node,nodeid=1,memdev=m1,initiator=0"]
    lat = {a.split("target=")[1][0]: a.split("latency=")[1] for a in args if "access-latency" in a}
    assert lat == {"0": "10", "1": "100"}
    with pytest.raises(kc.KernelCheckUnavailable, match="--fast-node 900 MiB: expected less than the VM's 900"):
        kv.numa_tier_args(900, 900)


def test_tpp_gets_the_cell_s_fast_tier_and_one_second_of_references_per_scan_pass():
    # 600,000 references in 2.5 s: 240,000 a second, the kernel's 1000 ms minimum scan period
    assert kv.tiered_spec("tpp", 14850, 600_000, 2.5) == "tpp(fast_pages=14850,scan_period=240000)"
    assert kv.tiered_spec("tpp(demote_watermark=0.05)", 100, 1000, 1.0) == (
        "tpp(demote_watermark=0.05,fast_pages=100,scan_period=1000)"
    )
    assert kv.tiered_spec("tpp(fast_pages=7)", 100, 1000, 1.0) == "tpp(fast_pages=7,scan_period=1000)"
    assert kv.tiered_spec("linux-two-list", 100, 1000, 1.0) == "linux-two-list"
    assert kv.system_for("tpp(fast_pages=7)") == kv.TIERED_SYSTEM and kv.system_for("mglru") is None


def test_node_0_s_free_memory_is_read_from_the_console_for_its_cell():
    console = (
        "TIERLAB-VM-NODE0 0 Node 0 MemFree:          59400 kB\n"
        "TIERLAB-VM-CELL 0\n"
        "TIERLAB-VM-NODE0 1 Node 0 MemFree:          1000 kB\n"
    )
    assert kv.cell_extras(console, 0)["node0_free_kb"] == 59400
    assert kv.cell_extras(console, 1)["node0_free_kb"] == 1000
    assert kv.cell_extras("TIERLAB-VM-CELL 0\n", 0)["node0_free_kb"] is None


def test_init_turns_tiering_on_and_prints_node_0_before_each_driver(tmp_path):
    if not kv.BUSYBOX.exists():
        pytest.skip("busybox-static not installed")
    driver = tmp_path / "driver"
    driver.write_bytes(b"\x7fELF")
    mods = tmp_path / "modules"
    (mods / "kernel").mkdir(parents=True)
    (mods / "kernel" / "brd.ko").write_bytes(b"\x7fELF\x00depends=\x00")
    (mods / "modules.builtin").write_text("")
    kernel = kv.KernelImage("fake", "6.12.0", tmp_path / "vmlinuz", mods)
    cells = [kv.VmCell(tmp_path / f"{i}.tlt", 10, 100, 64 << 20, "brd") for i in range(2)]
    for c in cells:
        c.trace.write_bytes(b"t")
    inits = {}
    for tiers in (False, True):
        out = tmp_path / f"{tiers}.cpio"
        kv.build_initramfs(out, kernel, driver, cells, None, 4096, tiers=tiers)
        d = tmp_path / f"x{tiers}"
        d.mkdir()
        with open(out, "rb") as f:
            subprocess.run([str(kv.BUSYBOX), "cpio", "-i", "-d"], stdin=f, cwd=d, check=True, capture_output=True)
        inits[tiers] = (d / "init").read_text()
    assert "demotion_enabled" not in inits[False] and "TIERLAB-VM-NODE0" not in inits[False]
    init = inits[True]
    assert "echo 1 > /sys/kernel/mm/numa/demotion_enabled" in init
    assert "echo 2 > /proc/sys/kernel/numa_balancing" in init
    for i in range(2):
        node0 = init.index(f"TIERLAB-VM-NODE0 {i}")
        assert init.index("drop_caches", init.index(f"C=/sys/fs/cgroup/kc{i}")) < node0 < init.index(f"/refs{i}.tlt")


def test_fast_node_without_a_kernel_is_refused_with_one_line():
    with pytest.raises(kc.KernelCheckUnavailable, match="--fast-node boots a kernel under QEMU: give --kernel"):
        kc.kernel_check(workloads=["loop_read"], limits_mib=[16], fast_node_mib=300)


def test_a_tiered_cell_sets_tpp_beside_the_kernel_s_promotions_and_demotions(tmp_path, monkeypatch):
    """kernel_check's replay of a --fast-node cell, with the VM replaced by the counts it would
    report: tpp runs on two tiers with the cell's fast tier and scan period and its counters are
    set beside the kernel's; linux-two-list has no promotions and gets no such rows."""
    import json

    from tierlab import _core, api
    from tierlab.kernel_image import KernelImage

    spec = "zipf:kind=anon,alpha=0.9,pages=2000,n=20000,write=0.3,seed=1"
    counts = {"misses": 1990, "swap_ins": 0, "swap_outs": 0, "pages_dirtied": 0, "fast_free_pages": 500}
    counts |= {"promotions": 40, "demotions": 300, "promote_candidates": 90, "numa_hint_faults": 900}
    seen = {}

    class Runner:
        kernel = KernelImage("fake", "6.12.0", tmp_path / "vmlinuz", None)

        def run_cells(self, cells, keeps, lru_gen, progress=None, fast_node_mib=None):
            seen["fast_node_mib"] = fast_node_mib
            out = []
            for c, trace in zip(cells, keeps, strict=True):
                info = json.loads(_core.kernel_references(json.dumps(c.spec()), str(trace)))
                ready = {"release": "6.12.0", "references": info["references"]}  # as kernel_vm._result gives
                out.append(kc.CellResult(c, c.spec(), 2500, dict(counts), ready, 2.0, trace))
            return out

    monkeypatch.setattr(kv, "prepare", lambda kernel, workdir, progress=None: Runner())
    df = kc.kernel_check(
        traces=[spec],
        limits_mib=[64],
        swap=["zram"],
        policies=["tpp", "linux-two-list"],
        kernel="x",
        fast_node_mib=300,
        keep_traces=tmp_path / "k",
    )
    assert seen["fast_node_mib"] == 300
    tpp_spec = df.attrs["cells"][0]["policy_specs"][0]
    assert tpp_spec == "tpp(fast_pages=500,scan_period=10000)"  # 20,000 references in 2 s
    (trace,) = (tmp_path / "k").glob("*.tlt")
    want = api.run(str(trace), policies=[tpp_spec], sizes=[2500], system=kv.TIERED_SYSTEM).iloc[0]
    got = df.set_index(["policy", "metric"])
    assert got.loc[("tpp", "promotions"), "kernel"] == 40 and got.loc[("tpp", "demotions"), "kernel"] == 300
    assert got.loc[("tpp", "promotions"), "model"] == want["ctr_promotions"]
    assert got.loc[("tpp", "demotions"), "model"] == want["ctr_demotions"]
    assert set(df[df["policy"] == "linux-two-list"]["metric"]) == {"misses", "swap_ins", "swap_outs"}
