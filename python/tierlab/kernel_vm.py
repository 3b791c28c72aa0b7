"""Kernel-check against another kernel, booted under QEMU: Debian's packaged 6.1 and 6.12 (with
MGLRU), or any ``vmlinuz``.

The method (docs/kernel-check.md, "Kernels under QEMU"):

- **The kernel** comes from Debian's ``linux-image-*`` package (``apt-get download``, unpacked
  with ``dpkg-deb -x``) and is cached under ``~/.cache/tierlab/kernels`` (``$TIERLAB_CACHE``;
  ``tierlab kernel-check --clear-kernel-cache`` removes it): ``tierlab.kernel_image``. QEMU and a
  static busybox come from ``apt-get install qemu-system-x86 busybox-static xz-utils`` (run by
  this module as root when they are missing).
- **The driver** is the host's own (``kernel/driver.rs``) built as a static program (the
  ``kernel_vm_driver`` example of tierlab-core, ``-C target-feature=+crt-static``) and cached
  under ``~/.cache/tierlab/vm-driver-target``, a directory per source tree; it reads the cell's
  native trace, the same file tierlab replays, so both sides see one reference sequence whatever
  produced it.
- **The VM** boots from an initramfs built for the cell in a temporary directory: busybox, the
  driver, the trace, the brd module (and zram's, when asked), and an ``/init`` script that mounts
  cgroup v2 and tracefs, loads brd (a RAM disk of the data file's size: read and written with
  buffered I/O it gives page-cache pages with no file system), sets ``lru_gen/enabled``, makes a
  ``memory.max`` group at the cell's limit (``memory.swap.max`` 0 for file cells; for a swap
  cell its device: zram0, swap on one more brd disk, or zswap in front of it with
  ``memory.zswap.max``; ``vm.page-cluster`` 0), enables the page-cache tracepoints, drops
  caches and runs the driver; after it, prints the group's ``memory.pressure`` (and zswap's
  debugfs counters) and takes the swap device down. The driver prints its snapshots and
  the trace counts as JSON between markers on the serial console; the VM powers off.
  ``qemu-system-x86_64 -machine q35,accel=tcg -cpu max -smp 1``, niced, dies with its parent
  (``PR_SET_PDEATHSIG``); the temporary directory is removed afterwards, also on error and
  Ctrl-C, and a later run removes what a killed one left (:func:`cleanup_stale`).
- **Memory tiering** (``--fast-node``): a CPU-less second NUMA node, slower in QEMU's HMAT, that
  6.12 puts in a lower memory tier; ``/init`` turns on demotion and ``numa_balancing=2`` and each
  cell records the kernel's promotions and demotions beside ``tpp``'s (:func:`numa_tier_args`,
  :func:`tiered_spec`; docs/kernel-check.md, "Memory tiering under QEMU").

Cost: the first use of a kernel downloads its package (~70-110 MB) and unpacks its modules
(~100 MB cached); the first build of the driver compiles tierlab-core once (minutes). A cell
boots in ~5 s and runs at TCG's speed (about 10-20x slower than the host).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tierlab import _core
from tierlab import kernel as kc
from tierlab.kernel_image import (
    KernelImage,
    _builtin,
    _cached_packages,
    cache_dir,
    fetch_kernel,
    kernel_cache,
    module_chain,
)

PAGE = kc.PAGE
HOST_PACKAGES = ["qemu-system-x86", "busybox-static", "xz-utils"]
QEMU = "qemu-system-x86_64"
BUSYBOX = Path("/bin/busybox")
VM_PREFIX = f"{kc.PREFIX}-vm-"
BEGIN, END, ERROR = "TIERLAB-VM-BEGIN", "TIERLAB-VM-END", "TIERLAB-VM-ERROR: "
#: the page-cache tracepoints counted inside the VM (the host's, without the inode filter)
TRACE_EVENTS = list(kc.TRACE_EVENTS)
#: An opt-in diagnostic: with ``TIERLAB_VM_RECLAIM_TRACE=1`` and ``--keep-traces DIR`` the VM
#: also records memory-cgroup reclaim's tracepoints, and each cell's lines are written beside its
#: kept trace (``CELL.vmscan``; the driver's snapshots in ``CELL.driver.json``): every charge's
#: reclaim (begin/end, pages reclaimed) and its ``shrink_inactive_list`` / ``shrink_active_list``
#: calls (pages scanned, reclaimed, activated and kept, priority, list), the per-reclaim sequence
#: to set beside a model's.
RECLAIM_TRACE_ENV = "TIERLAB_VM_RECLAIM_TRACE"
RECLAIM_EVENTS = [
    "vmscan/mm_vmscan_memcg_reclaim_begin",
    "vmscan/mm_vmscan_memcg_reclaim_end",
    "vmscan/mm_vmscan_lru_shrink_inactive",
    "vmscan/mm_vmscan_lru_shrink_active",
]
RECLAIM_MARK = "TIERLAB-VM-VMSCAN"


# ---------------------------------------------------------------------------------------------
# what the host needs


def missing_features() -> list[str]:
    """What this machine lacks for a kernel under QEMU that a root run cannot install itself."""
    missing = []
    root = os.geteuid() == 0
    if not root:
        if shutil.which(QEMU) is None:
            missing.append(f"{QEMU} (apt-get install qemu-system-x86, as root)")
        if not BUSYBOX.exists():
            missing.append("a static busybox (apt-get install busybox-static, as root)")
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        missing.append("apt-get and dpkg-deb (the kernels are Debian packages)")
    if shutil.which("cargo") is None:
        missing.append("cargo (the in-VM driver is built from tierlab's source)")
    return missing


def ensure_host_tools(progress=None) -> None:
    """Installs QEMU, busybox-static and xz-utils with apt-get when missing (root only)."""
    if shutil.which(QEMU) and BUSYBOX.exists():
        return
    if os.geteuid() != 0:
        raise kc.KernelCheckUnavailable("kernel-check --kernel needs: " + "; ".join(missing_features()))
    if progress:
        progress("installing " + " ".join(HOST_PACKAGES))
    r = subprocess.run(
        ["apt-get", "install", "-y", "-q", *HOST_PACKAGES],
        capture_output=True,
        text=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )
    if r.returncode != 0 or not shutil.which(QEMU):
        raise kc.KernelCheckUnavailable(f"apt-get install {' '.join(HOST_PACKAGES)} failed: {r.stderr.strip()[-400:]}")


# ---------------------------------------------------------------------------------------------
# the driver, built static


def repo_root() -> Path:
    """tierlab's source tree: the one this module was installed from in place (pip install -e .),
    else the clone the command runs in (pip install . from a clone, then run from it)."""
    here, cwd = Path(__file__).resolve(), Path.cwd().resolve()
    for p in [*here.parents, cwd, *cwd.parents]:
        if (p / "Cargo.toml").exists() and (p / "crates" / "tierlab-core").is_dir():
            return p
    raise kc.KernelCheckUnavailable(
        "the in-VM driver is built from tierlab's source tree: run kernel-check --kernel from a clone of tierlab"
    )


def driver_target(root: Path) -> Path:
    """Where the static driver of the source tree ``root`` is built: one directory per tree under
    ``~/.cache/tierlab/vm-driver-target``, so that runs from two clones never boot each other's
    driver."""
    return cache_dir() / "vm-driver-target" / hashlib.sha256(str(root).encode()).hexdigest()[:12]


def driver_exe(target: Path) -> Path:
    return target / "x86_64-unknown-linux-gnu" / "debug" / "examples" / "kernel_vm_driver"


def build_driver(progress=None) -> Path:
    """Builds (or reuses) the static ``kernel_vm_driver`` and returns its path."""
    root = repo_root()
    target = driver_target(root)
    if progress:
        progress("building the static in-VM driver (cargo; the first build takes minutes)")
    env = {**os.environ, "RUSTFLAGS": "-C target-feature=+crt-static", "CARGO_TARGET_DIR": str(target)}
    r = subprocess.run(
        [
            "nice",
            "-n",
            "10",
            "cargo",
            "build",
            "--quiet",
            "-p",
            "tierlab-core",
            "--example",
            "kernel_vm_driver",
            "--target",
            "x86_64-unknown-linux-gnu",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    exe = driver_exe(target)
    if r.returncode != 0 or not exe.exists():
        raise kc.KernelCheckUnavailable(f"building the in-VM driver failed: {r.stderr.strip()[-800:]}")
    return exe


# ---------------------------------------------------------------------------------------------
# the initramfs


def write_cpio(entries: list[tuple[str, int, bytes]], out: Path) -> None:
    """An uncompressed initramfs (cpio "newc"): entries are (path, mode, data); directories have
    stat.S_IFDIR in their mode and empty data."""
    with open(out, "wb") as f:

        def put(name: str, mode: int, data: bytes, ino: int) -> None:
            nb = name.encode() + b"\0"
            fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0]
            hdr = b"070701" + b"".join(b"%08x" % v for v in fields)
            f.write(hdr + nb + b"\0" * (-(len(hdr) + len(nb)) % 4))
            f.write(data + b"\0" * (-len(data) % 4))

        for i, (name, mode, data) in enumerate(entries, 1):
            put(name, mode, data, i)
        put("TRAILER!!!", 0, b"", 0)


INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s /bin
fail() {{ echo "{error}$*"; poweroff -f; }}
mount -t tracefs nodev /sys/kernel/tracing || fail "tracefs"
mount -t cgroup2 none /sys/fs/cgroup || fail "cgroup2"
{insmods}
[ -b /dev/ram0 ] || fail "no /dev/ram0 (brd)"
{lru_gen}
echo 60 > /proc/sys/vm/swappiness
echo 0 > /proc/sys/vm/page-cluster
{tiers}
Z=/sys/module/zswap/parameters
[ -w $Z/enabled ] && echo N > $Z/enabled
{swap_init}
echo +memory > /sys/fs/cgroup/cgroup.subtree_control || fail "memory controller"
T=/sys/kernel/tracing
echo 0 > $T/tracing_on; echo {buffer_kb} > $T/buffer_size_kb
for e in {events}; do echo 1 > $T/events/$e/enable || fail "tracepoint $e"; done
{flush_probe}
echo "lru_gen=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null) release=$(uname -r)"
{cells}
poweroff -f
"""

#: One cell: a fresh memory.max group and RAM disk, its swap device (anonymous and mixed cells),
#: an empty trace, caches dropped, the driver; then the group's own memory.pressure and zswap's
#: debugfs counters, and the swap device taken down.
CELL = """C=/sys/fs/cgroup/kc{i}
mkdir $C && echo {limit} > $C/memory.max || fail "memory.max"
{flush_filter}
{data_disk}
{swap_on}
echo 0 > $T/tracing_on; echo > $T/trace; echo 1 > $T/tracing_on
sync; echo 3 > /proc/sys/vm/drop_caches
{node0}
echo "TIERLAB-VM-CELL {i}"
{zswap_pre}
{lru_gen_pre}/driver /refs{i}.tlt /dev/ram{i} $C {anon_pages} 0 || fail "cell {i}"
{reclaim_lines}
{lru_gen_post}echo "TIERLAB-VM-PSI {i} $(tr '\\n' ' ' < $C/memory.pressure)"
{zswap_post}
{swap_off}
rmdir $C
"""

#: The kernel's memory-cgroup statistics flushes (docs/kernel-check.md, method item 6), where the
#: kernel has no ``memcg:memcg_flush_stats`` tracepoint (before 6.11: Debian's 6.1 and 6.12): a
#: kprobe on ``cgroup_rstat_flush``, whose argument's cgroup id comes from BTF
#: (CONFIG_PROBE_EVENTS_BTF_ARGS). Up to 6.15 every controller shares one rstat tree, so any flush
#: of the cell's group or of the root flushes its memory statistics too. The buffer is stamped
#: with CLOCK_MONOTONIC, which the driver reads every 256 references. Where the probe cannot be
#: set, nothing is recorded and the replay reads the statistics as they are.
FLUSH_PROBE = (
    "echo mono > $T/trace_clock\n"
    "FLUSH=0\n"
    "echo 'p:tierlab/memcg_flush cgroup_rstat_flush id=cgrp->kn->id' >> $T/kprobe_events 2>/dev/null && FLUSH=1\n"
    'echo "flush_probe=$FLUSH"'
)
FLUSH_FILTER = (
    'if [ $FLUSH = 1 ]; then echo "id == $(stat -c %i /sys/fs/cgroup) || id == $(stat -c %i $C)" '
    '> $T/events/tierlab/memcg_flush/filter && echo 1 > $T/events/tierlab/memcg_flush/enable || fail "flush probe"; fi'
)

#: The cell's data disk, before the driver opens it: no readahead at all (``read_ahead_kb`` 0, so
#: the file's ``ra_pages`` is 0), and its write requests recorded. POSIX_FADV_RANDOM, which the
#: driver sets, stops only the synchronous readahead: PG_readahead is PG_reclaim's bit, so a read of
#: a dirty page that reclaim passed over (PG_reclaim set, ``shrink_folio_list``) starts an
#: asynchronous readahead (``filemap_readahead`` -> ``page_cache_async_ra``, which returns early only
#: without ``ra_pages``) of pages the workload never asked for: in 6.12's MGLRU, whose flusher
#: may not run for a whole cell, `mixed_read_write@16MiB` read 9,779 pages for 5,479 read misses.
#: The writes (the flusher's and the final sync's, ``block:block_bio_queue`` filtered to writes of
#: this disk; ``dev`` is the kernel's dev_t, major << 20 | minor) are mglru's ``written_at``.
DATA_DISK = (
    'echo 0 > /sys/block/ram{i}/queue/read_ahead_kb || fail "read_ahead_kb"\n'
    "W=$T/events/block/block_bio_queue\n"
    "if [ -d $W ]; then D=$(cat /sys/block/ram{i}/dev); "
    'echo "dev == $(( ${{D%:*}} * 1048576 + ${{D#*:}} )) && rwbs ~ \\"*W*\\"" > $W/filter '
    '&& echo 1 > $W/enable || fail "write requests"; fi'
)

#: The swap device of one cell, by kind (docs/kernel-check.md, "Kernels under QEMU"): zram0 sized
#: for the cell, or a brd RAM disk (/dev/ram{swap_disk}) with zswap in front of it or not. A swap
#: cell's group keeps memory.swap.max at its default (max); a file cell's is 0.
SWAP_ON = {
    None: "[ -e $C/memory.swap.max ] && echo 0 > $C/memory.swap.max",
    "zram": (
        'echo {swap_bytes} > /sys/block/zram0/disksize || fail "zram disksize"\n'
        'mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 || fail "swapon zram0"'
    ),
    "brd": 'mkswap /dev/ram{swap_disk} >/dev/null && swapon /dev/ram{swap_disk} || fail "swapon ram{swap_disk}"',
    "zswap": (
        'echo Y > $Z/enabled || fail "zswap enabled"\n'
        'echo {zswap_max} > $C/memory.zswap.max || fail "memory.zswap.max"\n'
        'mkswap /dev/ram{swap_disk} >/dev/null && swapon /dev/ram{swap_disk} || fail "swapon ram{swap_disk}"'
    ),
}
SWAP_OFF = {
    None: "",
    "zram": 'swapoff /dev/zram0 || fail "swapoff zram0"\necho 1 > /sys/block/zram0/reset',
    "brd": 'swapoff /dev/ram{swap_disk} || fail "swapoff ram{swap_disk}"',
    "zswap": 'swapoff /dev/ram{swap_disk} || fail "swapoff ram{swap_disk}"\necho N > $Z/enabled',
}
ZSWAP_STATS = "echo \"TIERLAB-VM-ZSWAP {i} {when} $(cd /sys/kernel/debug/zswap && grep -r . . | tr '\\n' ' ')\""
#: the swap devices a cell can have under QEMU
VM_SWAP = ("zram", "brd", "zswap")
#: memory.zswap.max of a zswap cell, as a share of its memory.max: small, so that the cell's
#: pool reaches it (the workload's pages compress about 90:1) and zswap must reject or write back
ZSWAP_MAX_SHARE = 1 / 256

#: ``--fast-node``: 6.12's memory tiering on a CPU-less second NUMA node. QEMU gives the VM an
#: HMAT (``-machine hmat=on``) in which node 1 has ten times node 0's latency and a tenth of its
#: bandwidth, so the kernel puts it in a lower memory tier (mm/memory-tiers.c: node 0 in
#: memory_tier4, node 1 in memory_tier450 on 6.12); /init turns on demotion
#: (/sys/kernel/mm/numa/demotion_enabled: kswapd demotes from node 0 to node 1 instead of
#: reclaiming) and ``numa_balancing=2`` (NUMA_BALANCING_MEMORY_TIERING: hint faults on the slow
#: node promote hot pages).
TIERS_INIT = (
    '[ -w /sys/kernel/mm/numa/demotion_enabled ] || fail "no /sys/kernel/mm/numa/demotion_enabled"\n'
    'echo 1 > /sys/kernel/mm/numa/demotion_enabled || fail "demotion_enabled"\n'
    'echo 2 > /proc/sys/kernel/numa_balancing || fail "numa_balancing=2 (memory tiering)"'
)
#: node 0's free memory right before the driver starts: the fast tier the workload has
TIERS_NODE0 = 'echo "TIERLAB-VM-NODE0 {i} $(grep MemFree /sys/devices/system/node/node0/meminfo)"'
#: the kernel's promotion and demotion counters (/proc/vmstat)
DEMOTE_COUNTERS = ("pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged")


def numa_tier_args(total_mib: int, fast_mib: int) -> list[str]:
    """QEMU's arguments for a VM of ``total_mib`` MiB split into node 0 (the CPU, ``fast_mib``) and
    a CPU-less node 1 (the rest) that the HMAT makes ten times slower."""
    if not 0 < fast_mib < total_mib:
        raise kc.KernelCheckUnavailable(
            f"--fast-node {fast_mib} MiB: expected less than the VM's {total_mib} MiB (node 1 gets the rest)"
        )
    lb = "hmat-lb,initiator=0,hierarchy=memory,target="
    return [
        "-object", f"memory-backend-ram,size={fast_mib}M,id=m0",
        "-object", f"memory-backend-ram,size={total_mib - fast_mib}M,id=m1",
        "-numa", "node,nodeid=0,cpus=0,memdev=m0",
        "-numa", "node,nodeid=1,memdev=m1,initiator=0",
        "-numa", f"{lb}0,data-type=access-latency,latency=10",
        "-numa", f"{lb}0,data-type=access-bandwidth,bandwidth=10G",
        "-numa", f"{lb}1,data-type=access-latency,latency=100",
        "-numa", f"{lb}1,data-type=access-bandwidth,bandwidth=1G",
    ]  # fmt: skip


#: the tiered policies (docs/tiered.md) and the two-tier system they are replayed on under
#: ``--fast-node``: the presets of local and remote DRAM (device/presets_tiered.rs); only the counts
#: are compared, not time
TIERED_POLICIES = ("tpp", "nomad", "ssp", "memtis")
TIERED_SYSTEM = {"tiers": ["nomad-local-dram", "nomad-remote-dram"]}


def system_for(spec: str) -> dict | None:
    """The system a policy is replayed on in a ``--fast-node`` cell: two tiers for a tiered policy,
    the default for the others."""
    return TIERED_SYSTEM if spec.split("(")[0].strip() in TIERED_POLICIES else None


def tiered_spec(spec: str, fast_pages: int, references: int, seconds: float) -> str:
    """``tpp`` set up for a ``--fast-node`` cell, unless the spec sets them: ``fast_pages`` node 0's
    free pages when the driver started, ``scan_period`` the references the driver issued in one
    second, the kernel's ``sysctl_numa_balancing_scan_period_min`` (1000 ms; kernel/sched/fair.c),
    at the cell's own rate (a scan pass covers the mapping: ``sysctl_numa_balancing_scan_size`` is
    256 MB). Other policies
    are replayed as given."""
    if not (spec == "tpp" or spec.startswith("tpp(")):
        return spec
    inner = spec[4:-1].strip() if spec.startswith("tpp(") else ""
    add = []
    if "fast_pages" not in inner:
        add.append(f"fast_pages={int(fast_pages)}")
    if "scan_period" not in inner:
        add.append(f"scan_period={max(1, round(references / max(seconds, 1e-9)))}")
    return f"tpp({','.join([p for p in [inner] if p] + add)})"


#: The opt-in generation diagnostic: with ``TIERLAB_VM_LRU_GEN=SECONDS`` in the environment, each
#: cell's run also records the memory cgroup's reclaims (``mm_vmscan_memcg_reclaim_begin/end`` and
#: each ``evict_folios`` batch's ``mm_vmscan_lru_shrink_inactive``: pages scanned and reclaimed, the
#: priority, anon or file) and, every SECONDS, ``/sys/kernel/debug/lru_gen`` (each generation's
#: sequence number, age and anon and file pages) written into the trace buffer, so that each record
#: sits among the page-cache insertions. ``/init`` prints them after the driver, each with the
#: insertions so far (the clock a model's replay can meet: the file misses), as
#: ``TIERLAB-VM-LRUGEN <cell> <insertions> B|E <nr_reclaimed>|S <fields>|G <lru_gen>`` lines, and
#: at the end ``<cell> end F <lru_gen_full>`` (per tier the refault controller's counts, and the
#: page-table walks' totals: PTEs seen, young, PMDs walked and carried in the Bloom filter); the
#: run writes each cell's lines beside its kept trace (``--keep-traces``) as ``<trace>.lru_gen``.
#: With ``TIERLAB_VM_LRU_GEN_FULL=1`` as well, each snapshot is the cell group's part of
#: ``lru_gen_full`` instead (the refault controller's counts per tier over the run; runs of spaces
#: squeezed, as a trace_marker write holds at most 4 KiB; slower to read, so fewer snapshots).
LRU_GEN_ENV = "TIERLAB_VM_LRU_GEN"
LRU_GEN_FULL_ENV = "TIERLAB_VM_LRU_GEN_FULL"
#: the reclaim diagnostic's events but shrink_active_list's (MGLRU has no active list)
LRU_GEN_EVENTS = [e for e in RECLAIM_EVENTS if e != "vmscan/mm_vmscan_lru_shrink_active"]
LRU_GEN_PRE = '(while :; do echo "LRUGEN $({source})" > $T/trace_marker 2>/dev/null; sleep {every}; done) & D=$!\n'
#: what each snapshot reads: lru_gen, or with LRU_GEN_FULL_ENV the cell group's lines of lru_gen_full
LRU_GEN_SOURCE = "tr '\\n' ' ' < /sys/kernel/debug/lru_gen"
LRU_GEN_FULL_SOURCE = "sed -n '/ \\/kc{i}$/,$p' /sys/kernel/debug/lru_gen_full | tr -s ' ' | tr '\\n' ' '"
#: the fields of mm_vmscan_lru_shrink_inactive the timeline keeps
LRU_GEN_FIELDS = "nr_scanned|nr_reclaimed|nr_activate_anon|nr_activate_file|nr_ref_keep|priority|flags"
LRU_GEN_POST = """kill $D; wait $D 2>/dev/null
awk -v P="TIERLAB-VM-LRUGEN {i}" -v F="^({fields})=" '/mm_filemap_add_to_page_cache:/ {{n++; next}}
/mm_vmscan_memcg_reclaim_begin:/ {{print P, n + 0, "B"; next}}
/mm_vmscan_memcg_reclaim_end:/ {{sub(/.*nr_reclaimed=/, ""); print P, n + 0, "E", $1; next}}
/mm_vmscan_lru_shrink_inactive:/ {{s = ""; for (k = 1; k <= NF; k++) if ($k ~ F) s = s " " $k
  print P, n + 0, "S" s; next}}
/LRUGEN/ {{sub(/.*LRUGEN/, ""); print P, n + 0, "G" $0}}' $T/trace
echo "TIERLAB-VM-LRUGEN {i} end F $(tr '\\n' ' ' < /sys/kernel/debug/lru_gen_full)"
"""


def lru_gen_every() -> float | None:
    """The diagnostic's interval in seconds (``TIERLAB_VM_LRU_GEN``), or None when it is off."""
    v = os.environ.get(LRU_GEN_ENV, "").strip()
    if not v:
        return None
    try:
        every = float(v)
    except ValueError:
        every = -1.0
    if not 0 < every <= 3600:
        raise kc.KernelCheckUnavailable(f"{LRU_GEN_ENV}={v!r}: expected seconds between snapshots, e.g. 0.5")
    return every


def lru_gen_source(i: int) -> str:
    """The command each snapshot of cell ``i`` reads (``LRU_GEN_FULL_ENV``: its group's part of
    ``lru_gen_full``; otherwise ``lru_gen``)."""
    full = os.environ.get(LRU_GEN_FULL_ENV, "").strip()
    if full not in ("", "0", "1"):
        raise kc.KernelCheckUnavailable(f"{LRU_GEN_FULL_ENV}={full!r}: expected 1 (or 0, off)")
    return LRU_GEN_FULL_SOURCE.format(i=i) if full == "1" else LRU_GEN_SOURCE


def lru_gen_timeline(console: str, i: int) -> list[str]:
    """Cell ``i``'s diagnostic lines (see ``LRU_GEN_ENV``), without their prefix."""
    tag = f"TIERLAB-VM-LRUGEN {i} "
    return [line[len(tag) :] for line in console.splitlines() if line.startswith(tag)]


def _lru_gen_script(lru_gen: str | None) -> str:
    if lru_gen is None:
        return ""
    val = {"on": "y", "off": "n"}[lru_gen]
    return (
        f'[ -w /sys/kernel/mm/lru_gen/enabled ] || fail "no /sys/kernel/mm/lru_gen (kernel without MGLRU)"\n'
        f'echo {val} > /sys/kernel/mm/lru_gen/enabled || fail "lru_gen/enabled"'
    )


@dataclass(frozen=True)
class VmCell:
    """What one cell puts in the VM: its trace, the pages of its RAM disk and anonymous mapping,
    and its memory.max."""

    trace: Path
    file_pages: int
    anon_pages: int
    limit_bytes: int
    swap: str | None = None  # one of VM_SWAP, or None
    references: int = 0  # the page references of its trace (what the driver issues)

    @property
    def swap_bytes(self) -> int:
        """The swap device's size: the host's rule, 1.25 times the anonymous pages plus 16 MiB, so
        that swap stays below half full (``vm_swap_full`` would free slots on swap-in)."""
        anon = self.anon_pages * PAGE
        return anon + anon // 4 + (16 << 20)


def _stripped(exe: Path, tmp: Path) -> bytes:
    """The driver without its debug information (a tenth of the size: a smaller initramfs boots
    faster), when binutils' strip is there; as built otherwise."""
    if shutil.which("strip"):
        out = tmp / "driver.stripped"
        if subprocess.run(["strip", "-o", str(out), str(exe)], capture_output=True).returncode == 0:
            data = out.read_bytes()
            out.unlink()
            return data
    return exe.read_bytes()


def build_initramfs(
    out: Path,
    kernel: KernelImage,
    driver: Path,
    cells: list[VmCell],
    lru_gen: str | None,
    buffer_kb: int,
    tiers: bool = False,
    reclaim_trace: bool = False,
) -> None:
    """The cells' initramfs: busybox, the driver, each cell's trace, brd and its dependencies, and
    an /init that runs the cells one after another (each on its own RAM disk, so no page cache or
    shadow entry of one cell meets the next) and powers off."""
    swaps = {c.swap for c in cells if c.swap}
    for c in cells:
        if c.swap and c.swap not in VM_SWAP:
            raise kc.KernelCheckUnavailable(
                f"swap '{c.swap}' under --kernel: expected {', '.join(VM_SWAP)} (brd: a RAM disk in the VM)"
            )
    # one RAM disk per cell for its data, and one more for the brd and zswap cells' swap
    swap_disk = len(cells)
    rd_pages = max([1, *(c.file_pages for c in cells)])
    rd_pages = max([rd_pages, *(c.swap_bytes // PAGE for c in cells if c.swap in ("brd", "zswap"))])
    wanted = [("brd", f"rd_nr={len(cells) + 1} rd_size={rd_pages * PAGE // 1024} max_part=0")]
    if "zram" in swaps:
        wanted.append(("zram", "num_devices=1"))
    mods: list[tuple[str, bytes]] = []
    lines = []
    for name, args in wanted:
        if _builtin(kernel, name):
            if name == "brd":
                continue  # built in: rd_nr and rd_size are boot parameters, not set here
            lines.append(f'[ -e /sys/block/{name}0 ] || fail "{name} built in without a device"')
            continue
        if kernel.modules is None:
            raise kc.KernelCheckUnavailable(f"{kernel.name}: no modules tree beside it, and {name} is not built in")
        have = {n for n, _ in mods}
        for n, data in module_chain(kernel.modules, name):
            if n in have:
                continue
            mods.append((n, data))
            extra = f" {args}" if n == name else ""
            lines.append(f'insmod /lib/modules/{n}.ko{extra} || fail "insmod {n}"')
    swap_init = ""
    if "zswap" in swaps:
        swap_init = (
            '[ -w $Z/enabled ] || fail "no zswap in this kernel"\n'
            'mount -t debugfs none /sys/kernel/debug || fail "debugfs"'
        )

    every = lru_gen_every()
    events = TRACE_EVENTS + (LRU_GEN_EVENTS if every else [])
    if every and not swap_init:
        swap_init = 'mount -t debugfs none /sys/kernel/debug || fail "debugfs"'

    def cell_script(i: int, c: VmCell) -> str:
        fill = {"swap_bytes": c.swap_bytes, "swap_disk": swap_disk, "zswap_max": int(c.limit_bytes * ZSWAP_MAX_SHARE)}
        zs = (lambda when: ZSWAP_STATS.format(i=i, when=when)) if c.swap == "zswap" else (lambda when: "")
        return CELL.format(
            i=i,
            limit=c.limit_bytes,
            flush_filter=FLUSH_FILTER,
            data_disk=DATA_DISK.format(i=i),
            anon_pages=c.anon_pages,
            swap_on=SWAP_ON[c.swap].format(**fill),
            swap_off=SWAP_OFF[c.swap].format(**fill),
            zswap_pre=zs(0),
            zswap_post=zs(1),
            node0=TIERS_NODE0.format(i=i) if tiers else "",
            reclaim_lines=f"sed -n 's/^.*mm_vmscan/{RECLAIM_MARK} {i} mm_vmscan/p' $T/trace" if reclaim_trace else "",
            lru_gen_pre=LRU_GEN_PRE.format(every=every, source=lru_gen_source(i)) if every else "",
            lru_gen_post=LRU_GEN_POST.format(i=i, fields=LRU_GEN_FIELDS) if every else "",
        )

    init = INIT.format(
        error=ERROR,
        insmods="\n".join(lines),
        lru_gen=_lru_gen_script(lru_gen),
        tiers=TIERS_INIT if tiers else "",
        swap_init=swap_init,
        buffer_kb=buffer_kb,
        flush_probe=FLUSH_PROBE,
        # the two diagnostics share tracepoints: each enabled once
        events=" ".join(dict.fromkeys(events + (RECLAIM_EVENTS if reclaim_trace else []))),
        cells="".join(cell_script(i, c) for i, c in enumerate(cells)),
    )
    d, x, r = stat.S_IFDIR | 0o755, stat.S_IFREG | 0o755, stat.S_IFREG | 0o644
    entries = [("bin", d, b""), ("lib", d, b""), ("lib/modules", d, b"")]
    entries += [("init", x, init.encode()), ("bin/busybox", x, BUSYBOX.read_bytes())]
    entries += [("driver", x, _stripped(driver, out.parent))]
    entries += [(f"refs{i}.tlt", r, c.trace.read_bytes()) for i, c in enumerate(cells)]
    entries += [(f"lib/modules/{n}.ko", r, data) for n, data in mods]
    write_cpio(entries, out)


# ---------------------------------------------------------------------------------------------
# running the VM


def _pdeathsig() -> None:
    """In the QEMU child before exec: die with the parent, at a lower priority."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    os.nice(10)


def cleanup_stale(workdir: Path = kc.DEFAULT_WORKDIR) -> list[str]:
    """Removes what a killed VM run left in ``workdir``: its temporary directory and trace files
    (named after its pid), and a QEMU still running from that directory (none should: QEMU dies
    with its parent). A run whose process is still alive is left alone."""
    removed = []
    if not workdir.exists():
        return removed
    for d in workdir.glob(f"{VM_PREFIX}*"):
        m = re.match(re.escape(VM_PREFIX) + r"(\d+)-", d.name)
        if m and int(m.group(1)) != os.getpid() and Path(f"/proc/{m.group(1)}").exists():
            continue  # its run is still alive
        if d.is_dir():
            for proc in Path("/proc").glob("[0-9]*"):
                with contextlib.suppress(OSError):
                    if str(d) in (proc / "cmdline").read_bytes().decode(errors="replace"):
                        os.kill(int(proc.name), signal.SIGKILL)
                        removed.append(f"pid {proc.name}")
            shutil.rmtree(d, ignore_errors=True)
        else:
            d.unlink(missing_ok=True)
        removed.append(str(d))
    return removed


def run_vm(
    kernel: KernelImage, initrd: Path, mem_mib: int, timeout: float, progress=None, fast_node_mib: int | None = None
) -> tuple[list[dict], str]:
    """Boots the kernel with the initramfs; returns each cell's JSON (in order) and the console
    (where :func:`cell_extras` finds each cell's memory.pressure and zswap counters). With
    ``fast_node_mib``, node 0 has that much of the memory and a slower CPU-less node 1 the rest
    (:func:`numa_tier_args`)."""
    machine = "q35,accel=tcg" + (",hmat=on" if fast_node_mib else "")
    cmd = [
        QEMU, "-machine", machine, "-cpu", "max", "-smp", "1", "-m", str(mem_mib),
        "-kernel", str(kernel.vmlinuz), "-initrd", str(initrd),
        "-append", "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check transparent_hugepage=never",
        "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot", "-nodefaults",
    ]  # fmt: skip
    if fast_node_mib:
        cmd += numa_tier_args(mem_mib, fast_node_mib)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=_pdeathsig
    )
    buf = b""
    try:
        t0 = time.monotonic()
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        seen = 0
        while True:
            chunk = proc.stdout.read()
            if chunk:
                buf += chunk
                if progress:
                    for m in re.findall(rb"TIERLAB-VM-CELL (\d+)", buf)[seen:]:
                        progress(f"  {kernel.name}: cell {int(m) + 1} running ({time.monotonic() - t0:.0f} s)")
                        seen += 1
            elif proc.poll() is not None:
                break
            else:
                time.sleep(0.1)
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"the VM ({kernel.name}) did not finish in {timeout:.0f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    text = buf.decode(errors="replace").replace("\r", "")
    lines = text.splitlines()
    for line in lines:
        if line.startswith(ERROR):
            raise RuntimeError(f"in the VM ({kernel.name}): {line[len(ERROR) :]}")
    out, body = [], None
    for line in lines:
        if line == BEGIN:
            body = []
        elif line == END and body is not None:
            out.append(json.loads("".join(body)))
            body = None
        elif body is not None:
            body.append(line)
    return out, text


def write_reclaim_traces(console: str, outs: list[dict], keep_traces: list[Path | None]) -> None:
    """The reclaim diagnostic's files (``RECLAIM_TRACE_ENV``): beside each kept trace, its cell's
    vmscan lines from the console (``CELL.vmscan``, the event name first) and the driver's JSON
    with its ready and done snapshots (``CELL.driver.json``)."""
    lines = console.splitlines()
    for i, keep in enumerate(keep_traces):
        if keep is None:
            continue
        mark = f"{RECLAIM_MARK} {i} "
        mine = [ln[len(mark) :] for ln in lines if ln.startswith(mark)]
        Path(keep).with_suffix(".vmscan").write_text("".join(ln + "\n" for ln in mine))
        if i < len(outs):
            Path(keep).with_suffix(".driver.json").write_text(json.dumps(outs[i]))


def cell_extras(console: str, i: int) -> dict:
    """What ``/init`` printed for cell ``i`` around the driver: the group's memory.pressure totals
    (``psi``: some/full, µs, from the group's creation to the driver's exit) and zswap's debugfs
    counters before and after (``zswap``: 0 and 1 -> name -> value); with ``--fast-node``, node 0's
    free memory before the driver started (``node0_free_kb``)."""
    out: dict = {"psi": {}, "zswap": {}, "node0_free_kb": None}
    for line in console.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[1] != str(i):
            continue
        if parts[0] == "TIERLAB-VM-PSI":
            for kind, rest in re.findall(r"(some|full) ([^sf]*)", " ".join(parts[2:])):
                m = re.search(r"total=(\d+)", rest)
                if m:
                    out["psi"][kind] = int(m.group(1))
        elif parts[0] == "TIERLAB-VM-NODE0":
            m = re.search(r"MemFree:\s*(\d+) kB", line)
            out["node0_free_kb"] = int(m.group(1)) if m else None
        elif parts[0] == "TIERLAB-VM-ZSWAP" and len(parts) >= 3:
            kv = {}
            for f in parts[3:]:
                name, _, val = f.removeprefix("./").partition(":")
                if val.lstrip("-").isdigit():
                    kv[name] = int(val)
            out["zswap"][int(parts[2])] = kv
    return out


def _result(
    cell: kc.Cell, spec: dict, vc: VmCell, out: dict, kernel: KernelImage, console: str, trace: Path, index: int
):
    """The kernel's counts of one cell, as :func:`tierlab.kernel.run_cell` gives them on the host
    (cgroup v2 names: ``file_dirty``/``file_writeback``; ``kernel`` is the kmem the run charged)."""
    counts = out["trace"]
    ready, done = out["ready"], out["done"]
    ms0, ms1 = kc._stat(ready["memory_stat"]), kc._stat(done["memory_stat"])
    vm0, vm1 = kc._stat(ready["vmstat"]), kc._stat(done["vmstat"])
    kmem_growth = max(0, done["kmem_bytes"] - ready["kmem_bytes"])
    # the driver returned the charge stock before its ready snapshot (kernel_vm_driver)
    capacity, stock = kc.cell_capacity(vc.limit_bytes, ready, done, stock_returned=True)
    dirty_end = (ms1.get("file_dirty", 0) + ms1.get("file_writeback", 0)) // PAGE
    delta = lambda d0, d1, k: d1.get(k, 0) - d0.get(k, 0)  # noqa: E731
    kernel_counts = {
        "misses": counts["insertions"],
        "evictions": counts["deletions"],
        "refaults_file": delta(ms0, ms1, "workingset_refault_file"),
        "refaults_anon": delta(ms0, ms1, "workingset_refault_anon"),
        "pages_dirtied": counts["dirtied"],
        "pages_written": max(0, counts["dirtied"] - dirty_end),
        "swap_ins": delta(vm0, vm1, "pswpin"),
        "swap_outs": delta(vm0, vm1, "pswpout"),
        "major_faults": delta(ms0, ms1, "pgmajfault"),
        "anon_charged_pages": delta(ms0, ms1, "anon") // PAGE,
        "large_folios": counts["large_folios"],
        "pgscan": delta(ms0, ms1, "pgscan"),
        "pgsteal": delta(ms0, ms1, "pgsteal"),
        # kswapd scans only under global pressure: nonzero means the VM itself ran short
        "kswapd_scans": delta(vm0, vm1, "pgscan_kswapd"),
    }
    extras = cell_extras(console, index)
    if vc.swap == "zswap":
        zs = extras["zswap"]
        kernel_counts.update(kc.zswap_counts(vm0, vm1, zs.get(0, {}), zs.get(1, {})))
        # the group's own zswap counters (memory.stat), beside the system-wide ones
        for k in ("zswpout", "zswpin", "zswpwb"):
            kernel_counts[f"cg_{k}"] = delta(ms0, ms1, k)
        kernel_counts["zswap_pool_bytes"] = ms1.get("zswap", 0)
        kernel_counts["zswapped_bytes"] = ms1.get("zswapped", 0)
        kernel_counts["zswap_max_bytes"] = int(vc.limit_bytes * ZSWAP_MAX_SHARE)  # memory.zswap.max
    if vc.swap == "zram":
        kernel_counts.update(kc.parse_mm_stat(done.get("zram_mm_stat", "")))
    if extras["node0_free_kb"] is not None:  # --fast-node: 6.12's memory tiering
        kernel_counts["fast_free_pages"] = extras["node0_free_kb"] * 1024 // PAGE
        kernel_counts["promotions"] = delta(vm0, vm1, "pgpromote_success")
        kernel_counts["promote_candidates"] = delta(vm0, vm1, "pgpromote_candidate")
        kernel_counts["demotions"] = sum(delta(vm0, vm1, k) for k in DEMOTE_COUNTERS)
        kernel_counts["numa_hint_faults"] = delta(vm0, vm1, "numa_hint_faults")
    if vc.anon_pages:
        kernel_counts["misses"] += kc.touched_anon_pages(trace) + kernel_counts["swap_ins"]
    m = re.search(r"lru_gen=(\S*) release=(\S+)", console)
    readyd = {
        "usage_pages": ready["usage_bytes"] // PAGE,
        "kmem_growth_pages": kmem_growth // PAGE,
        "charge_stock_pages": stock,
        # what memory.stat accounts at ready (memory.current less this: the per-CPU charge stock)
        "ready_stat_pages": sum(ms0.get(k, 0) for k in ("anon", "file", "kernel", "sock")) // PAGE,
        "data_file_pages": vc.file_pages,
        "references": vc.references,
        "kernel": kernel.name,
        "release": m.group(2) if m else kernel.release,
        "lru_gen": m.group(1) if m else "",
        "pressure_memory": done.get("pressure_memory", ""),
    }
    psi = extras["psi"] or None
    flushes = writes = None
    if "flushes_ns" in counts and out.get("progress_ns"):
        flushes = kc.flush_references(counts["flushes_ns"], out["progress_ns"], out["progress_every"], vc.references)
    if "written_ns" in counts and out.get("progress_ns"):
        writes = kc.written_references(counts["written_ns"], out["progress_ns"], out["progress_every"], vc.references)
    return kc.CellResult(
        cell, spec, int(capacity), kernel_counts, readyd, float(out["seconds"]), trace, None, psi, flushes, writes
    )


def run_cells(
    cells: list[kc.Cell], kernel: KernelImage, driver: Path, workdir: Path = kc.DEFAULT_WORKDIR,
    keep_traces: list[Path | None] | None = None, lru_gen: str | None = None, progress=None,
    fast_node_mib: int | None = None,
) -> list[kc.CellResult]:  # fmt: skip
    """Runs the cells in one boot of the kernel; each gives the same
    :class:`tierlab.kernel.CellResult` the host does, its trace kept (in ``keep_traces`` or a
    temporary file of ``workdir`` the caller removes) for the replay."""
    for c in cells:
        if c.swap and c.swap not in VM_SWAP:
            raise kc.KernelCheckUnavailable(
                f"{c.name}: swap '{c.swap}' under --kernel: expected {', '.join(VM_SWAP)} (brd: a RAM disk in the VM)"
            )
    keep_traces = keep_traces or [None] * len(cells)
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{VM_PREFIX}{os.getpid()}-", dir=workdir))
    traces: list[Path] = []
    try:
        specs, vcs, refs, total = [], [], 0, 0
        for cell, keep in zip(cells, keep_traces, strict=True):
            spec = cell.spec()
            path = keep or Path(tempfile.mkstemp(prefix=f"{VM_PREFIX}{os.getpid()}-", suffix=".tlt", dir=workdir)[1])
            traces.append(path)
            info = json.loads(_core.kernel_references(json.dumps(spec), str(path)))
            specs.append(spec)
            pages = (info["file_pages"], info["anon_pages"])
            vcs.append(VmCell(path, *pages, cell.limit_mib << 20, cell.swap, info["references"]))
            refs = max(refs, info["references"])
            total += info["references"]
        # ~120 bytes a trace line in the ring buffer; three events at most per reference
        buffer_kb = max(4096, refs * 3 * 120 // 1024 + 1024)
        every = lru_gen_every()
        if every:  # the reclaims (a few events per 32 pages) and the snapshots
            buffer_kb += refs * 120 // 1024 + 8192
        initrd = tmp / "initrd.cpio"
        reclaim_trace = os.environ.get(RECLAIM_TRACE_ENV) == "1"
        build_initramfs(
            initrd, kernel, driver, vcs, lru_gen, buffer_kb, tiers=bool(fast_node_mib), reclaim_trace=reclaim_trace
        )
        # The RAM disks keep every page written to them (brd frees nothing until unloaded), all
        # cells' together: room for all of them, so that the VM never reclaims globally and only
        # the cell's memory.max decides (kswapd_scans in the cell details is 0 when so).
        # The brd swap disk keeps what was swapped to it (no discard) and zram's pool what it
        # holds: room for the largest swap device too.
        disks = sum(v.file_pages for v in vcs) + max(v.anon_pages for v in vcs)
        disks += max([0, *(v.swap_bytes // PAGE for v in vcs if v.swap)])
        mem = 192 + initrd.stat().st_size // (1 << 20) + buffer_kb // 1024
        mem += disks * PAGE // (1 << 20) + max(c.limit_mib for c in cells)
        # TCG issues some thousands of 4 KiB reads a second on a loaded machine: a generous bound
        timeout = 300 + total / 500
        if progress:
            progress(f"booting {kernel.name} ({kernel.release}) under QEMU for {len(cells)} cell(s)")
        with kc._sigterm_as_interrupt():  # SIGTERM tears down as Ctrl-C does
            outs, console = run_vm(kernel, initrd, int(mem), timeout, progress, fast_node_mib)
        if len(outs) != len(cells):
            tail = "\n".join(console.splitlines()[-15:])
            n = f"{len(outs)} of {len(cells)}"
            raise RuntimeError(f"the VM ({kernel.name}) reported {n} cells; the console ends:\n{tail}")
        if reclaim_trace:
            write_reclaim_traces(console, outs, keep_traces)
        results = [
            _result(c, sp, vc, o, kernel, console, t, i)
            for i, (c, sp, vc, o, t) in enumerate(zip(cells, specs, vcs, outs, traces, strict=True))
        ]
        if every:
            for i, (t, keep) in enumerate(zip(traces, keep_traces, strict=True)):
                if keep is not None:
                    Path(f"{t}.lru_gen").write_text("\n".join(lru_gen_timeline(console, i)) + "\n")
        traces = []  # handed to the caller
        return results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for t, keep in zip(traces, keep_traces, strict=False):
            if keep is None:
                with contextlib.suppress(FileNotFoundError):
                    t.unlink()


# ---------------------------------------------------------------------------------------------
# the check's entry points

#: The models set up as the driver runs the kernel: read()/write() on an unmapped page cache and
#: memory-cgroup reclaim rounds of SWAP_CLUSTER_MAX pages (docs/kernel-check.md). A bare name
#: given with ``-p`` means this configuration under ``--kernel`` (mglru with the version of the
#: kernel's MGLRU: ``mglru_version``).
VM_POLICIES: dict[str, str] = {
    "mglru": "mglru(file_access='read',reclaim_batch=32,writeback='flusher')",
    "linux-two-list": kc.DEFAULT_POLICIES["linux-two-list"],
}


def mglru_version(release: str) -> str | None:
    """The ``version`` of the mglru model whose rules a kernel's MGLRU follows, from its ``uname
    -r``: ``6.1`` for 6.1 to 6.11, ``6.12`` for 6.12 and 6.13 (6.1's rules but for dirty file
    pages), ``6.14`` from 6.14 on (after the "rework refs" series), None when the release does not
    say (the model's default then)."""
    version = kc.kernel_version(release)
    if version is None:
        return None
    if version < (6, 12):
        return "6.1"
    return "6.12" if version < (6, 14) else "6.14"


def vm_policies(policies, release: str = "") -> dict[str, str]:
    """label -> spec for a check under QEMU: the configured models by default; a bare model name
    stands for its configuration above, anything else is replayed as given. ``release`` is the
    kernel's ``uname -r``: mglru follows its MGLRU's rules (:func:`mglru_version`), and
    linux-two-list notes reclaim cost as the kernel does (``kernel_workloads.two_list_version``:
    ``version='6.1'`` on 6.1, whose ``lru_note_cost`` counts no rotations)."""
    conf = dict(VM_POLICIES)
    version = mglru_version(release)
    if version is not None:
        conf["mglru"] = conf["mglru"][:-1] + f",version='{version}')"
    conf["linux-two-list"] = kc.two_list_for_release(conf["linux-two-list"], release)
    if policies is None:
        return conf
    if isinstance(policies, dict):
        return dict(policies)
    return {str(p): conf.get(str(p), str(p)) for p in policies}


@dataclass
class VmRunner:
    kernel: KernelImage
    driver: Path
    workdir: Path

    def run_cells(
        self, cells, keep_traces, lru_gen: str | None, progress=None, fast_node_mib: int | None = None
    ) -> list[kc.CellResult]:
        return run_cells(cells, self.kernel, self.driver, self.workdir, keep_traces, lru_gen, progress, fast_node_mib)


def prepare(kernel: str, workdir: Path, progress=None) -> VmRunner:
    """Everything a check under QEMU needs before its first cell: the host tools, the kernel, the
    static driver; and what a killed earlier run left, removed."""
    missing = missing_features()
    if missing:
        raise kc.KernelCheckUnavailable("kernel-check --kernel needs: " + "; ".join(missing))
    ensure_host_tools(progress)
    image = fetch_kernel(kernel, progress)
    driver = build_driver(progress)
    workdir.mkdir(parents=True, exist_ok=True)
    cleanup_stale(workdir)
    return VmRunner(image, driver, workdir)


def unavailable_without_download(kernel: str = "debian:6.12") -> str | None:
    """Why a quick VM cell cannot run here without downloading or building anything (None: it can):
    the test suite's gate, so CI never waits for a kernel package or a first driver build."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which(QEMU) is None or not BUSYBOX.exists():
        return f"{QEMU} or busybox-static not installed (apt-get install {' '.join(HOST_PACKAGES)})"
    if not any((kernel_cache() / p / "ready").exists() for p in _cached_packages(kernel)):
        return f"kernel {kernel} not cached (tierlab kernel-check --kernel {kernel} downloads it)"
    try:
        root = repo_root()
    except kc.KernelCheckUnavailable as e:
        return str(e)
    exe = driver_exe(driver_target(root))
    if not exe.exists():
        return "the static in-VM driver is not built (tierlab kernel-check --kernel builds it)"
    core = root / "crates" / "tierlab-core"
    newest = max(f.stat().st_mtime for f in [*core.rglob("*.rs"), core / "Cargo.toml", core.parents[1] / "Cargo.lock"])
    if newest > exe.stat().st_mtime:
        return "the static in-VM driver is older than tierlab-core's source (tierlab kernel-check --kernel rebuilds it)"
    return None
