"""kernel-check under QEMU (tierlab.kernel_vm; docs/kernel-check.md, "Kernels under QEMU").

The VM cells run where QEMU is installed, the run is root, and the kernel and the static driver are
already cached (a first run of ``tierlab kernel-check --kernel debian:6.12`` downloads and builds
them); otherwise they are skipped with the reason, so the suite never waits for a download.
"""

from __future__ import annotations

import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tierlab import kernel as kc
from tierlab import kernel_vm as kv

WHY = kv.unavailable_without_download("debian:6.12")
needs_vm = pytest.mark.skipif(WHY is not None, reason=f"kernel-check under QEMU skipped: {WHY}")


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
    assert pols["mglru"] == "mglru(file_access='read',reclaim_batch=32)"
    assert pols["linux-two-list"] == kc.DEFAULT_POLICIES["linux-two-list"]
    assert pols["lru"] == "lru"


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
    once and at most once a reference; the reference trace tierlab replays is the one the VM read."""
    df = kc.kernel_check(
        workloads=["loop_read"], limits_mib=[16], policies=["mglru"], scale=0.25, workdir=tmp_path,
        kernel="debian:6.12", keep_traces=tmp_path / "traces",
    )  # fmt: skip
    cell = df.attrs["cells"][0]
    loop, refs = cell["params"]["loop_pages"], cell["params"]["refs"]
    assert loop <= cell["kernel_misses"] <= refs
    assert cell["release"].startswith("6.12") and 0 < cell["capacity_pages"] < 16 * 256
    assert df["references"].iloc[0] == refs
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
    assert kv._cached_packages("debian:6.12") == ["linux-image-6.12.1+deb12-amd64"]
    removed = kv.clear_kernel_cache()
    assert sorted(removed) == [str(tmp_path / "kernels"), str(tmp_path / "vm-driver-target")]
    assert [p.name for p in tmp_path.iterdir()] == ["other"]
    assert "not cached" in (kv.unavailable_without_download("debian:6.12") or "not cached")
