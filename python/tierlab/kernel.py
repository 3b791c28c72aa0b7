"""Ground truth: run a workload against the real Linux kernel in a memory cgroup, count what the
kernel did, replay the same page references through tierlab's policies, and put both side by side.

The method (docs/kernel-check.md): a native driver (``tierlab._core.kernel_drive``, a forked child
that makes raw system calls only) joins a fresh memory cgroup (v1) at a given limit and issues the
workload's references, pread/pwrite of 4 KiB pages of a data file and loads/stores of pages of an
anonymous mapping; the same references are written as a native trace. The kernel's counts come from
its own tracepoints (page-cache insertions and deletions, pages dirtied, filtered to the data file's
inode, in a private trace instance) and counters (the cgroup's memory.stat, /proc/vmstat's
pswpin/pswpout); where the kernel has the ``memcg_flush_stats`` tracepoint, the flushes of the
group's statistics too, placed among the references by the driver's CLOCK_MONOTONIC progress stamps
and replayed as linux-two-list's ``stats_flush_at``. The page capacity tierlab simulates is derived
from the cgroup's own accounting: the limit, less the usage charged when the driver is ready, less
the kernel memory the run charged (page tables, page-cache tree nodes), plus the per-CPU charge
stock the ready usage holds (:func:`tierlab.kernel_counts.cell_capacity`): never guessed, never
fitted.

Everything a run sets up (cgroup, trace instance, swap file, zram device, vm.page-cluster) is torn
down afterwards, also on error, Ctrl-C and SIGTERM; a run that was killed outright is cleaned up by
the next one (``cleanup_stale``).

The parts: ``tierlab.kernel_workloads`` (the workloads and cells), ``tierlab.kernel_host`` (the
set-up and tear-down), ``tierlab.kernel_counts`` (the kernel's counts and their arithmetic) and
``tierlab.kernel_report`` (the table, figures and HTML page); this module runs a cell and the
whole check, and offers all their names (``__all__``). Cost: the driver's run and tierlab's replay
of each cell, one ``api.run`` per cell over the listed policies; a zswap cell replays them once more
recording their swap requests, which go through the zswap model (:func:`zswap_model`); a swap
cell under QEMU with file reads replays once more at an unlimited size (its first file reads, for
the lmkd model's refaults in :func:`psi_model`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tierlab import _core
from tierlab.kernel_counts import (
    _psi_totals,
    _read_trace,
    _stat,
    _zswap_stats,
    cell_capacity,
    flush_references,
    parse_mm_stat,
    written_references,
    zram_accounting,
    zswap_counts,
)
from tierlab.kernel_host import (
    CGROUP_ROOT,
    DEBUGFS,
    DEFAULT_WORKDIR,
    PAGE,
    PAGE_CLUSTER,
    PREFIX,
    STATE_FILE,
    TRACE_EVENTS,
    TRACEFS,
    ZRAM,
    ZSWAP_ENABLED,
    KernelCheckUnavailable,
    _drop_caches,
    _fs_type,
    _sigterm_as_interrupt,
    _write,
    cleanup_stale,
    flushes_recorded,
    host_run_lock,
    memory_cgroup,
    page_cluster,
    swap_device,
    trace_instance,
    zswap_on,
)
from tierlab.kernel_report import error_figure, psi_summary, summary, write_report
from tierlab.kernel_workloads import (
    ANON_WORKLOADS,
    FILE_ACCESS_BY_FORMAT,
    FILE_WORKLOADS,
    WORKLOADS,
    Cell,
    _trace_label,
    cells_for,
    kernel_version,
    standard_cells,
    touched_anon_pages,
    trace_footprint,
    two_list_for,
    two_list_version,
)

#: What ``tierlab.kernel`` offers: the check, and the names of the modules it is built from.
__all__ = [
    "ANON_WORKLOADS",
    "CGROUP_ROOT",
    "DEBUGFS",
    "DEFAULT_POLICIES",
    "DEFAULT_WORKDIR",
    "FILE_ACCESS_BY_FORMAT",
    "FILE_WORKLOADS",
    "METRICS",
    "PAGE",
    "PAGE_CLUSTER",
    "PREFIX",
    "STATE_FILE",
    "SYNC_SWAP_DEVICES",
    "SYNC_SWAP_POLICIES",
    "TRACEFS",
    "TRACE_EVENTS",
    "TWO_LIST_NAME",
    "WORKLOADS",
    "ZRAM",
    "ZSWAP_ENABLED",
    "Cell",
    "CellResult",
    "KernelCheckUnavailable",
    "cell_capacity",
    "cells_for",
    "cleanup_stale",
    "host_policies",
    "host_run_lock",
    "kernel_version",
    "error_figure",
    "kernel_check",
    "kept_trace",
    "memory_cgroup",
    "missing_features",
    "page_cluster",
    "parse_mm_stat",
    "psi_model",
    "psi_summary",
    "run_cell",
    "standard_cells",
    "summary",
    "swap_device",
    "touched_anon_pages",
    "trace_footprint",
    "trace_instance",
    "two_list_for",
    "two_list_for_release",
    "two_list_version",
    "write_report",
    "written_references",
    "zram_accounting",
    "zswap_counts",
    "zswap_on",
]


# ---------------------------------------------------------------------------------------------
# what the machine must have


def missing_features(swap: set[str] | None = None) -> list[str]:
    """What this machine lacks for a kernel check (empty when everything is there)."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (kernel-check creates memory cgroups and drops caches; run it as root)")
    if not (CGROUP_ROOT / "memory.limit_in_bytes").exists():
        missing.append(f"memory cgroup v1 mounted at {CGROUP_ROOT}")
    # tracefs need not be mounted yet (trace_instance mounts it), only present
    if not TRACEFS.is_dir():
        missing.append(f"tracefs ({TRACEFS})")
    swap = swap or set()
    if swap:
        for tool in ("mkswap", "swapon", "swapoff"):
            if not any((Path(d) / tool).exists() for d in ("/sbin", "/usr/sbin", "/bin", "/usr/bin")):
                missing.append(f"the {tool} command (util-linux)")
        if not Path("/proc/swaps").exists():
            missing.append("swap support in the kernel (/proc/swaps)")
    if "zram" in swap and not ZRAM.exists():
        missing.append(f"a zram device ({ZRAM}; modprobe zram)")
    if "zswap" in swap and not ZSWAP_ENABLED.exists():
        missing.append(f"zswap ({ZSWAP_ENABLED}; a kernel with CONFIG_ZSWAP)")
    return missing


# ---------------------------------------------------------------------------------------------
# one cell


@dataclass
class CellResult:
    cell: Cell
    spec: dict
    capacity_pages: int
    kernel: dict[str, int]
    ready: dict[str, int]
    seconds: float
    trace: Path | None = None
    #: page index of every page-cache insertion of the data file, in the kernel's order
    insertions: list[int] | None = None
    #: the system's memory pressure stall (/proc/pressure/memory totals, µs) during the references
    psi_us: dict[str, int] | None = None
    #: the reference indices before which the kernel flushed the group's statistics (None: not
    #: recorded; :func:`tierlab.kernel_counts.flush_references`)
    stats_flushes: list[int] | None = None
    #: the kernel's writes of the data file's pages, ``[reference, first_page, pages]`` (None: not
    #: recorded; :func:`tierlab.kernel_counts.written_references`)
    file_writes: list[list[int]] | None = None


#: The driver reads its clock before every PROGRESS_EVERY-th reference (a read of the vDSO's
#: CLOCK_MONOTONIC, tens of ns against a system call or a fault per reference), which places the
#: kernel's statistics flushes among the references to within that many.
PROGRESS_EVERY = 64


def run_cell(cell: Cell, workdir: Path = DEFAULT_WORKDIR, keep_trace: Path | None = None) -> CellResult:
    """Runs one cell against the kernel (no tierlab replay yet)."""
    spec = cell.spec()
    workdir.mkdir(parents=True, exist_ok=True)
    fstype = _fs_type(workdir.resolve())
    if fstype in ("tmpfs", "ramfs"):
        raise KernelCheckUnavailable(f"{workdir} is on {fstype}; the data file needs a disk file system")
    limit = cell.limit_mib << 20
    data = workdir / f"{PREFIX}-data"
    info = json.loads(_core.kernel_prepare(json.dumps(spec), str(data)))
    file_pages, anon_pages = info["file_pages"], info["anon_pages"]
    inode = os.stat(data).st_ino
    # ~80 bytes a trace line in the ring buffer; three events at most per reference
    buffer_kb = max(4096, info["references"] * 3 * 80 // 1024 + 1024)
    trace_path = keep_trace or Path(tempfile.mkstemp(prefix=f"{PREFIX}-", suffix=".tlt", dir=workdir)[1])
    with contextlib.ExitStack() as stack:
        stack.enter_context(_sigterm_as_interrupt())
        if cell.swap:
            anon_bytes = anon_pages * PAGE
            # Swap readahead off: every swap-in reads exactly the faulting page, as tierlab does.
            stack.enter_context(page_cluster(0))
            if cell.swap == "zswap":
                stack.enter_context(zswap_on())
            device = "file" if cell.swap == "zswap" else cell.swap
            stack.enter_context(swap_device(device, anon_bytes + anon_bytes // 4 + (16 << 20), workdir))
        cg = stack.enter_context(memory_cgroup(limit))
        if cell.swap:
            _write(cg / "memory.swappiness", "60")
        # the group's statistics are flushed with its own and the root's (its parent's) flushes
        memcg_ids = (os.stat(cg).st_ino, os.stat(CGROUP_ROOT).st_ino)
        inst = stack.enter_context(trace_instance(inode, buffer_kb, memcg_ids))
        _drop_caches()
        psi0, zs0 = _psi_totals(), _zswap_stats()
        out = json.loads(
            _core.kernel_drive(json.dumps(spec), str(trace_path), str(data), str(cg), False, 0, PROGRESS_EVERY)
        )
        psi1, zs1 = _psi_totals(), _zswap_stats()
        offsets: list[int] = []
        flushes_ns: list[int] | None = [] if flushes_recorded(inst) else None
        counts = _read_trace(inst, offsets, flushes_ns)
    stats_flushes = (
        None
        if flushes_ns is None
        else flush_references(flushes_ns, out["progress_ns"], PROGRESS_EVERY, out["references"])
    )
    # zram's pool as the driver read it after the last reference, the child still alive.
    zram = parse_mm_stat(out["done"]["zram_mm_stat"]) if cell.swap == "zram" else {}
    ready, done = out["ready"], out["done"]
    ms0, ms1 = _stat(ready["memory_stat"]), _stat(done["memory_stat"])
    vm0, vm1 = _stat(ready["vmstat"]), _stat(done["vmstat"])
    kmem_growth = max(0, done["kmem_bytes"] - ready["kmem_bytes"])
    capacity, stock = cell_capacity(limit, ready, done)
    dirty_end = (ms1.get("dirty", 0) + ms1.get("writeback", 0)) // PAGE
    kernel = {
        "misses": counts["insertions"],
        "evictions": counts["deletions"],
        "refaults_file": ms1.get("workingset_refault_file", 0) - ms0.get("workingset_refault_file", 0),
        "refaults_anon": ms1.get("workingset_refault_anon", 0) - ms0.get("workingset_refault_anon", 0),
        "pages_dirtied": counts["dirtied"],
        "pages_written": max(0, counts["dirtied"] - dirty_end),
        "swap_ins": vm1.get("pswpin", 0) - vm0.get("pswpin", 0),
        "swap_outs": vm1.get("pswpout", 0) - vm0.get("pswpout", 0),
        "major_faults": ms1.get("pgmajfault", 0) - ms0.get("pgmajfault", 0),
        "large_folios": counts["large_folios"],
    }
    if cell.swap == "zswap":
        kernel.update(zswap_counts(vm0, vm1, zs0, zs1))
    if anon_pages:
        # anonymous misses: the first touch of each page plus every swap-in (file misses are the
        # page-cache insertions)
        kernel["misses"] += touched_anon_pages(trace_path) + kernel["swap_ins"]
    kernel["anon_charged_pages"] = (ms1.get("rss", 0) - ms0.get("rss", 0)) // PAGE
    kernel.update(zram)
    readyd = {
        "usage_pages": ready["usage_bytes"] // PAGE,
        "kmem_growth_pages": kmem_growth // PAGE,
        "charge_stock_pages": stock,
        "data_file_pages": file_pages,
    }
    with contextlib.suppress(FileNotFoundError):
        data.unlink()
    psi = {k: psi1[k] - psi0.get(k, 0) for k in psi1}
    return CellResult(
        cell, spec, int(capacity), kernel, readyd, float(out["seconds"]), trace_path, offsets, psi, stats_flushes
    )


# ---------------------------------------------------------------------------------------------
# the whole check: kernel and tierlab side by side

#: label -> policy spec replayed beside the kernel. The first is linux-two-list set up as the
#: kernel-check drives the kernel: read()/write() on an unmapped page cache, dirty pages written by
#: the flusher, memory-cgroup reclaim rounds of SWAP_CLUSTER_MAX pages (docs/kernel-check.md);
#: the second is linux-two-list with its defaults, to show what those settings change. On zram
#: and zswap cells every linux-two-list row also gets ``sync_swap=true`` (``_for_device``).
DEFAULT_POLICIES: dict[str, str] = {
    "linux-two-list": "linux-two-list(file_access='read',writeback='flusher',reclaim_batch=32)",
    "linux-two-list (defaults)": "linux-two-list",
    "lru": "lru",
    "clock": "clock",
}


def host_policies(policies, release: str = "") -> dict[str, str]:
    """label -> spec for a check on the host: :data:`DEFAULT_POLICIES` by default; a bare name
    stands for its configured row there (as under QEMU, ``kernel_vm.vm_policies``), anything else
    (``linux-two-list()`` for the policy's own defaults) is replayed as given. ``release`` is the
    kernel's ``uname -r``: the configured linux-two-list row notes reclaim cost as that kernel
    does (:func:`tierlab.kernel_workloads.two_list_version`)."""
    conf = dict(DEFAULT_POLICIES)
    conf["linux-two-list"] = two_list_for_release(conf["linux-two-list"], release)
    if policies is None:
        return conf
    if isinstance(policies, dict):
        return dict(policies)
    return {str(p): conf.get(str(p), str(p)) for p in policies}


#: kernel count -> tierlab result column
METRICS = {
    "misses": "misses",
    "pages_written": "file_pages_written",
    "swap_ins": "swap_pages_read",
    "swap_outs": "swap_pages_written",
    # --fast-node cells: the tiered policies' counters
    "promotions": "ctr_promotions",
    "demotions": "ctr_demotions",
}

#: zswap's counts, from the policy's swap requests replayed through tierlab's zswap model
#: (:func:`zswap_model`)
ZSWAP_METRICS = ("zswap_stored", "zswap_written_back", "zswap_to_device", "zswap_rejected")


def zswap_page_bytes(kernel: dict) -> int:
    """The compressed length of one of the workload's pages, as the kernel measured it in this cell:
    the group's memory.stat ``zswap`` (bytes its entries charge, each its compressed length) over
    ``zswapped`` (the pages stored, in bytes), rounded to the byte. Without them (cgroup v1 on the
    host) a whole page, which changes nothing while no group limit applies and the global pool stays
    below max_pool_percent of RAM."""
    pages = kernel.get("zswapped_bytes", 0) // PAGE
    if not pages or not kernel.get("zswap_pool_bytes"):
        return PAGE
    return max(1, min(PAGE, round(kernel["zswap_pool_bytes"] / pages)))


def zswap_model(trace: Path, specs: Sequence[str], capacity: int, kernel: dict) -> list[dict[str, int]]:
    """Each policy's swap-outs and swap-ins on ``trace`` replayed through tierlab's zswap model
    (``mobile/compressed.rs``) at the cell's ``memory.zswap.max`` (``zswap_max_bytes`` in the kernel
    counts; none on the host), with each page compressing to :func:`zswap_page_bytes`: per policy
    the model's ``zswap_stored``, ``zswap_written_back``, ``zswap_to_device`` (sent to the device
    at the group's limit or rejected) and ``zswap_rejected`` (the global pool's rejections)."""
    cfg = {"enabled": True}
    if kernel.get("zswap_max_bytes") is not None:
        cfg["memcg_zswap_max_bytes"] = int(kernel["zswap_max_bytes"])
    total = os.sysconf("SC_PHYS_PAGES")  # MemTotal: the global pool's limit, not reached here
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}-zswap-") as tmp:
        outs = [str(Path(tmp) / f"{i}.after") for i in range(len(specs))]
        from tierlab import api

        _core.after_cache_traces(api.Trace.of(str(trace)).to_json(), list(specs), capacity, "{}", outs)
        out = []
        for o in outs:
            r = json.loads(_core.kernel_zswap_model(o, zswap_page_bytes(kernel), total, json.dumps(cfg)))
            st = r["stats"]
            out.append(
                {
                    "zswap_stored": st["stored"],
                    "zswap_written_back": st["written_back"],
                    "zswap_to_device": st["memcg_limit_rejected"] + st["rejected"],
                    "zswap_rejected": st["rejected"],
                    "zswap_pool_loads": st["pool_loads"],
                    "zswap_device_reads": r["device_reads"],
                    "zswap_device_writes": r["device_writes"],
                }
            )
    return out


#: The lmkd model's device for each swap device under QEMU (catalog names): zram compresses with
#: lz4 (the VM's zram default), brd is a RAM disk (a page copy, ``dram``), zswap is lzo (the
#: Debian kernel's CONFIG_ZSWAP_COMPRESSOR_DEFAULT) in front of brd. The data file is on brd too.
PSI_DEVICES = {"zram": ("zram", None), "brd": ("dram", None), "zswap": ("dram", "zram-lzo")}
PSI_FILE_DEVICE = "dram"
#: The share of reclaim the faulting task waits for: all of it, as memory.max reclaim runs in the
#: task that charges the page, inside psi_memstall_enter (6.12 mm/memcontrol.c, try_charge_memcg);
#: the mobile session's default 0.2 is a phone's kswapd running beside the app.
PSI_RECLAIM_STALL = 1.0
#: The lmkd model's scan cost per page (``[reclaim] scan_ns_per_page``'s default).
PSI_SCAN_NS = 1000.0


def psi_model(swap: str, row, zswap: dict | None, cold_file_reads: int) -> dict[str, float]:
    """The PSI stall (µs) the lmkd model (``mobile/lmkd.rs``, ``psi_stall``) prices for one
    policy's replay of a cell: its swap-ins (zswap: pool loads and device reads), its file
    refaults (pages read from the file again: its file reads less ``cold_file_reads``, the
    reads of an unlimited cache), its swap-outs (zswap: stores and device writes) and the pages
    it scanned (``ctr_scanned_*``, where the policy counts them), with the device times of
    :data:`PSI_DEVICES`. ``row`` is the policy's row of ``api.run``."""
    dev, pool = PSI_DEVICES[swap]
    # a policy without scan counters, replayed beside one with them, has NaN there
    scanned = sum(int(v) for k in ("ctr_scanned_anon", "ctr_scanned_file") if not pd.isna(v := row.get(k)))
    counts = {
        "refaults": max(0, int(row["file_pages_read"]) - cold_file_reads),
        "scanned": scanned,
    }
    if zswap is not None:
        counts.update(
            swap_ins=zswap["zswap_device_reads"],
            pool_loads=zswap["zswap_pool_loads"],
            swap_outs=zswap["zswap_device_writes"],
            pool_stores=zswap["zswap_stored"],
        )
    else:
        counts.update(swap_ins=int(row["swap_pages_read"]), swap_outs=int(row["swap_pages_written"]))
    some, full = json.loads(
        _core.kernel_psi_model(json.dumps(counts), dev, PSI_FILE_DEVICE, pool, PSI_SCAN_NS, PSI_RECLAIM_STALL)
    )
    return {"some_us": some / 1e3, "full_us": full / 1e3}


def _with_param(spec: str, names: Sequence[str], key: str, value: str) -> str:
    """``spec`` with ``key=value`` added when it names one of ``names`` and does not set ``key``."""
    name = next((n for n in names if spec == n or spec.startswith(n + "(")), None)
    if name is None or key in spec:
        return spec
    if spec == name:
        return f"{name}({key}={value})"
    if spec.endswith(")"):
        inner = spec[len(name) + 1 : -1].strip()
        return f"{name}({inner + ',' if inner else ''}{key}={value})"
    return spec


def two_list_for_release(spec: str, release: str) -> str:
    """A linux-two-list spec with the ``version`` whose reclaim-cost rules the kernel of ``uname -r``
    ``release`` follows (:func:`tierlab.kernel_workloads.two_list_version`; none for 6.12's)."""
    version = two_list_version(release)
    return spec if version is None else _with_param(spec, (TWO_LIST_NAME,), "version", f"'{version}'")


def _for_device(spec: str, swap: str | None) -> str:
    """linux-two-list and mglru set up for the cell's swap device: on a synchronous device (zram,
    brd) a swap-in frees the page's slot (``sync_swap``, the policies' doc); zswap's loads are
    exclusive (``zswap_load`` frees the entry and marks the folio dirty), so a page swapped in from
    zswap is written again too. A property of the device the run set up, not a fit."""
    if swap not in SYNC_SWAP_DEVICES:
        return spec
    return _with_param(spec, SYNC_SWAP_POLICIES, "sync_swap", "true")


def _with_stats_flushes(spec: str, flushes: list[int] | None) -> str:
    """linux-two-list with 6.12's rules given the kernel's statistics flushes of the cell
    (``stats_flush_at``, the policy's doc): from 6.8 reclaim reads the group's statistics as of the
    last flush. Measured per run, not fitted; 6.1 rules (``version='6.1'``) flush on a threshold
    and read them fresh, and a spec that sets ``stats_flush_at`` keeps it."""
    if flushes is None or "version='6.1'" in spec.replace('"', "'"):
        return spec
    return _with_param(spec, (TWO_LIST_NAME,), "stats_flush_at", "[" + ",".join(map(str, flushes)) + "]")


def _with_file_writes(spec: str, writes: list[list[int]] | None) -> str:
    """mglru with its flusher's writes as the kernel recorded them (``written_at``, the policy's
    doc: when the flusher runs is the kernel's scheduling and dirty limits, not reclaim's alone),
    where the spec asks for the kernel's write-back (``writeback='flusher'``) and does not give
    them. Measured per run, not fitted."""
    if writes is None or "writeback='flusher'" not in spec.replace('"', "'"):
        return spec
    return _with_param(spec, (MGLRU_NAME,), "written_at", json.dumps(writes, separators=(",", ":")))


def shown_spec(spec: str) -> str:
    """A replayed spec as the CSV and the report show it: mglru's recorded writes (``written_at``,
    thousands of numbers in a busy cell) as their count and pages (``written_at=<N writes, P
    pages>``); ``--keep-traces`` keeps them whole beside the cell's trace (``CELL.written.json``)."""
    m = re.search(r"written_at=(\[\]|\[\[.*?\]\])", spec)
    if not m:
        return spec
    writes = json.loads(m.group(1))
    short = f"written_at=<{len(writes)} writes, {sum(w[2] for w in writes)} pages>"
    return spec[: m.start()] + short + spec[m.end() :]


def replayable_spec(spec: str, trace: str | os.PathLike) -> str:
    """The spec :func:`shown_spec` summed up, whole again: ``written_at`` from the cell's kept
    writes beside its kept trace (``CELL.written.json``)."""
    m = re.search(r"written_at=<[^>]*>", spec)
    if not m:
        return spec
    kept = Path(trace).with_suffix(".written.json")
    if not kept.exists():
        raise FileNotFoundError(f"{kept}: the kernel's writes this spec replays ({m.group(0)}) are not kept")
    writes = json.dumps(json.loads(kept.read_text()), separators=(",", ":"))
    return spec[: m.start()] + f"written_at={writes}" + spec[m.end() :]


TWO_LIST_NAME = "linux-two-list"
MGLRU_NAME = "mglru"
#: the swap devices on which a swap-in frees the page's slot or entry: zram and brd are
#: synchronous block devices (QUEUE_FLAG_SYNCHRONOUS in 6.1's zram.c and brd.c,
#: BLK_FEAT_SYNCHRONOUS in 6.12's), so do_swap_page reads around the swap cache and frees the slot;
#: zswap's loads are exclusive
SYNC_SWAP_DEVICES = ("zram", "brd", "zswap")
#: the models with a ``sync_swap`` setting
SYNC_SWAP_POLICIES = ("linux-two-list", "mglru")


def _metrics_of(result: CellResult) -> list[str]:
    written = ["pages_written"] if result.kernel["pages_dirtied"] else []
    tiers = ["promotions", "demotions"] if "promotions" in result.kernel else []
    if result.cell.swap == "zswap":
        return ["misses", "swap_ins", "swap_outs", *ZSWAP_METRICS, *written]
    if tiers:
        return ["misses", "swap_ins", "swap_outs", *tiers, *written] if result.cell.swap else ["misses", *tiers]
    if result.cell.swap:
        return ["misses", "swap_ins", "swap_outs", *written]
    return ["misses", *written]


def kept_trace(directory: str | Path, cell_name: str) -> Path:
    """Where ``keep_traces=directory`` keeps a cell's reference trace: the cell's name, every
    character but letters, digits, '.', '_' and '-' made '-', with ``.tlt``."""
    return Path(directory) / f"{''.join(ch if ch.isalnum() or ch in '._-' else '-' for ch in cell_name)}.tlt"


def vm_default_cells(cells: Sequence[Cell]) -> list[Cell]:
    """The cells a check under QEMU runs when no workload is named: the built-in file cells (TCG is
    slow), and every trace cell, with its swap devices when the trace has anonymous pages."""
    return [c for c in cells if not c.swap or c.trace is not None]


def kernel_check(
    workloads: Sequence[str] | None = None,
    limits_mib: Sequence[int] = (32, 64),
    swap: Sequence[str] = ("file", "zram"),
    policies: dict[str, str] | Sequence[str] | None = None,
    scale: float = 1.0,
    seed: int = 1,
    workdir: str | os.PathLike = DEFAULT_WORKDIR,
    keep_traces: str | os.PathLike | None = None,
    progress=None,
    traces: Sequence[str | os.PathLike] = (),
    trace_format: str | None = None,
    trace_options: dict | None = None,
    max_refs: int | None = None,
    kernel: str | None = None,
    lru_gen: str | None = None,
    fast_node_mib: int | None = None,
) -> pd.DataFrame:
    """Runs each workload against the real kernel in a fresh memory cgroup at each limit, replays the
    same references through tierlab's policies at the capacity the cgroup's accounting gives, and
    returns one row per cell, policy and metric: the kernel's count, the policy's prediction and the
    relative error. Needs root, memory cgroup v1 and tracefs (and swap support and zram0 for the
    anonymous and mixed workloads); raises KernelCheckUnavailable naming what is missing.

    ``traces`` are a user's workloads: files tierlab reads (``trace_format``, ``trace_options`` as
    for ``tierlab run``) or generator specs (``"zipf:alpha=0.99,pages=20000,n=200000,seed=1"``),
    the first ``max_refs`` page references of each when given; they run through the same driver
    and counters as the built-in workloads (docs/kernel-check.md, "Any workload").

    ``df.attrs["cells"]`` holds each cell's workload parameters, derived capacity and every kernel
    count (refaults, evictions, pages dirtied, large folios, ...).

    ``kernel`` (``debian:6.1``, ``debian:6.12`` or a vmlinuz path) runs each cell in that kernel
    under QEMU instead (``tierlab.kernel_vm``; swap devices there: zram, brd, zswap), with
    ``lru_gen`` "on"/"off" setting MGLRU (None: the kernel's default). ``fast_node_mib`` boots it with
    that much memory on node 0 and the rest on a slower CPU-less node 1, 6.12's memory tiering on
    (``kernel_vm.numa_tier_args``; docs/kernel-check.md, "Memory tiering under QEMU"): each cell
    adds the kernel's promotions and demotions beside ``tpp``'s (``-p tpp``), whose fast tier and
    hint-scan period the cell gives (``kernel_vm.tiered_spec``)."""
    from tierlab import api

    pols = host_policies(policies, os.uname().release)
    cells = cells_for(
        workloads, limits_mib, swap, scale, seed, [str(t) for t in traces], trace_format, trace_options, max_refs
    )
    workdir = Path(workdir)
    # On the host, one run at a time: the counters it reads and the settings it changes are the
    # machine's (kernel_host.LOCK_FILE).
    with contextlib.ExitStack() as held:
        if kernel is not None:
            from tierlab import kernel_vm

            bad = sorted({c.swap for c in cells if c.swap and c.swap not in kernel_vm.VM_SWAP})
            if bad:
                raise KernelCheckUnavailable(
                    f"--swap {bad[0]} under --kernel: expected {', '.join(kernel_vm.VM_SWAP)} "
                    "(brd: swap on a RAM disk in the VM; the VM has no disk for a swap file)"
                )
            vm = kernel_vm.prepare(kernel, workdir, progress)
            pols = kernel_vm.vm_policies(policies, vm.kernel.release)
            if workloads is None:
                cells = vm_default_cells(cells)
        else:
            vm = None
            if fast_node_mib:
                raise KernelCheckUnavailable("--fast-node boots a kernel under QEMU: give --kernel too")
            needs = {c.swap for c in cells if c.swap}
            if "brd" in needs:
                raise KernelCheckUnavailable(
                    "--swap brd (a RAM disk) is for cells under --kernel; on the host: file, zram, zswap"
                )
            missing = missing_features(needs)
            if missing:
                raise KernelCheckUnavailable("kernel-check needs: " + "; ".join(missing))
            workdir.mkdir(parents=True, exist_ok=True)
            held.enter_context(host_run_lock(progress))
            cleanup_stale(workdir)
        rows, details = [], []
        keeps = [kept_trace(keep_traces, cell.name) if keep_traces else None for cell in cells]
        for keep in filter(None, keeps):
            keep.parent.mkdir(parents=True, exist_ok=True)
        # under QEMU every cell runs in one boot of the kernel, before the replays
        in_vm = vm.run_cells(cells, keeps, lru_gen, progress, fast_node_mib) if vm else None
        for i, (cell, keep) in enumerate(zip(cells, keeps, strict=True)):
            if progress:
                progress(f"[{i + 1}/{len(cells)}] {cell.name}")
            res = in_vm[i] if in_vm else run_cell(cell, workdir, keep)
            try:
                specs = [
                    _with_file_writes(
                        _with_stats_flushes(_for_device(p, cell.swap), res.stats_flushes), res.file_writes
                    )
                    for p in pols.values()
                ]
                if "fast_free_pages" in res.kernel:  # --fast-node; a tiered policy runs on two tiers
                    from tierlab import kernel_vm

                    refs = res.ready["references"]
                    specs = [kernel_vm.tiered_spec(p, res.kernel["fast_free_pages"], refs, res.seconds) for p in specs]
                    tr, cap = str(res.trace), [res.capacity_pages]
                    one = [api.run(tr, policies=[p], sizes=cap, system=kernel_vm.system_for(p)) for p in specs]
                    df = pd.concat(one, ignore_index=True)
                else:
                    df = api.run(str(res.trace), policies=specs, sizes=[res.capacity_pages])
                zs = zswap_model(res.trace, specs, res.capacity_pages, res.kernel) if cell.swap == "zswap" else None
                psi = None
                if vm and cell.swap in PSI_DEVICES and res.psi_us:
                    file_reads = df["file_pages_read"].astype(int)
                    cold = (
                        int(api.run(str(res.trace), policies=["lru"], sizes=["100%"])["file_pages_read"].iloc[0])
                        if file_reads.any()
                        else 0
                    )
                    psi = [
                        psi_model(cell.swap, row, zs[j] if zs else None, cold)
                        for j, (_, row) in enumerate(df.iterrows())
                    ]
            finally:
                if keep is None and res.trace is not None:
                    with contextlib.suppress(FileNotFoundError):
                        res.trace.unlink()
            if keep is not None and res.file_writes is not None:
                keep.with_suffix(".written.json").write_text(json.dumps(res.file_writes))
            shown = [shown_spec(s) for s in specs]
            details.append(
                {
                    "cell": cell.name,
                    "params": res.spec,
                    "capacity_pages": res.capacity_pages,
                    "policy_specs": shown,
                    "seconds": res.seconds,
                    **({"kernel_stats_flushes": res.stats_flushes} if res.stats_flushes is not None else {}),
                    **{f"kernel_{k}": v for k, v in res.kernel.items()},
                    **{f"psi_{k}_us": v for k, v in (res.psi_us or {}).items()},
                    **({"zswap_page_bytes": zswap_page_bytes(res.kernel)} if cell.swap == "zswap" else {}),
                    **({"psi_model_us": dict(zip(pols, psi, strict=True))} if psi else {}),
                    **res.ready,
                }
            )
            for j, (label, (_, row)) in enumerate(zip(pols, df.iterrows(), strict=True)):
                for metric in _metrics_of(res):
                    k = res.kernel[metric]
                    col = METRICS.get(metric)
                    if metric not in ZSWAP_METRICS and (col not in row or pd.isna(row[col])):
                        continue  # a counter this policy does not have (promotions of a one-tier policy)
                    m = zs[j][metric] if metric in ZSWAP_METRICS and zs else int(row[col])
                    rows.append(
                        {
                            **({"kernel_release": res.ready["release"]} if vm else {}),
                            "cell": cell.name,
                            "workload": cell.workload if cell.trace is None else _trace_label(cell.trace),
                            "limit_mib": cell.limit_mib,
                            "swap": cell.swap or "",
                            "capacity_pages": res.capacity_pages,
                            "references": int(row["accesses"]),
                            "metric": metric,
                            "kernel": k,
                            "policy": label,
                            "policy_spec": shown[j],
                            "model": m,
                            "error": (m - k) / k if k else float("nan"),
                            "params": json.dumps(res.spec),
                            **(
                                {
                                    "psi_some_us": res.psi_us.get("some"),
                                    "psi_full_us": res.psi_us.get("full"),
                                    "model_psi_some_us": psi[j]["some_us"],
                                    "model_psi_full_us": psi[j]["full_us"],
                                }
                                if psi
                                else {}
                            ),
                        }
                    )
        out = pd.DataFrame(rows)
        out.attrs["cells"] = details
        out.attrs["policies"] = dict(pols)
    return out
