"""Ground truth: run a workload against the real Linux kernel in a memory cgroup, count what the
kernel did, replay the same page references through tierlab's policies, and put both side by side.

The method (docs/kernel-check.md): a native driver (``tierlab._core.kernel_drive``, a forked child
that makes raw system calls only) joins a fresh memory cgroup (v1) at a given limit and issues the
workload's references, pread/pwrite of 4 KiB pages of a data file and loads/stores of pages of an
anonymous mapping; the same references are written as a native trace. The kernel's counts come from
its own tracepoints (page-cache insertions and deletions, pages dirtied, filtered to the data file's
inode, in a private trace instance) and counters (the cgroup's memory.stat, /proc/vmstat's
pswpin/pswpout). The page capacity tierlab simulates is derived from the cgroup's own accounting:
the limit, less the usage charged when the driver is ready, less the kernel memory the run charged
(page tables, page-cache tree nodes): never guessed, never fitted.

Everything a run sets up (cgroup, trace instance, swap file, zram device, vm.page-cluster) is torn
down afterwards, also on error, Ctrl-C and SIGTERM; a run that was killed outright is cleaned up by
the next one (``cleanup_stale``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tierlab import _core

PAGE = 4096
CGROUP_ROOT = Path("/sys/fs/cgroup/memory")
TRACEFS = Path("/sys/kernel/tracing")
ZRAM = Path("/sys/block/zram0")
PAGE_CLUSTER = Path("/proc/sys/vm/page-cluster")
ZSWAP_ENABLED = Path("/sys/module/zswap/parameters/enabled")
DEBUGFS = Path("/sys/kernel/debug")
#: Names of everything a run creates start with this, so a later run can find leftovers.
PREFIX = "tierlab-kcheck"
#: Where a run notes the system settings it changed (zram, page-cluster) until it restores them.
STATE_FILE = Path("/run") / f"{PREFIX}-state.json"
DEFAULT_WORKDIR = Path("/var/tmp") / PREFIX


class KernelCheckUnavailable(RuntimeError):
    """The machine lacks what a kernel check needs; the message names each missing feature."""


# ---------------------------------------------------------------------------------------------
# workloads


@dataclass(frozen=True)
class Cell:
    """One cell of the check: a workload at a memory limit, with a swap device or none.

    A built-in workload is named (``WORKLOADS``); a user's workload is ``workload="trace"`` with
    ``trace`` a file tierlab reads (``trace_format`` and ``trace_options`` as for ``tierlab run``)
    or a generator spec, its first ``max_refs`` page references when given."""

    workload: str
    limit_mib: int
    # None, "file", "zram" or "zswap" (zswap in front of a swap file); under QEMU "brd" (a RAM disk)
    swap: str | None = None
    scale: float = 1.0  # multiplies the number of references (a quick run uses less)
    seed: int = 1
    trace: str | None = None
    trace_format: str | None = None
    trace_options: tuple = ()  # (key, value) pairs
    max_refs: int | None = None

    @property
    def name(self) -> str:
        what = self.workload if self.trace is None else _trace_label(self.trace)
        return f"{what}@{self.limit_mib}MiB" + (f"+{self.swap}" if self.swap else "")

    def spec(self) -> dict:
        """The workload's parameters, in pages, stated relative to the limit (docs/kernel-check.md)."""
        if self.workload == "trace":
            if not self.trace:
                raise ValueError("a trace cell needs a trace (a file or a generator spec)")
            return {
                "workload": "trace",
                "trace": self.trace,
                "format": self.trace_format,
                "options": dict(self.trace_options),
                "max_refs": self.max_refs,
            }
        lp = self.limit_mib * (1 << 20) // PAGE
        n = lambda k: max(1, int(k * lp * self.scale))  # noqa: E731 - references scale together
        w = self.workload
        if w == "zipf_read":
            return {"workload": w, "file_pages": 4 * lp, "refs": n(16), "alpha": 0.99, "seed": self.seed}
        if w == "hot_scan":
            periods = max(2, round(4 * self.scale))  # a scan between hot phases needs two
            return {
                "workload": w,
                "hot_pages": lp // 4,
                "scan_pages": 2 * lp,
                "hot_refs": 4 * lp,
                "periods": periods,
                "seed": self.seed,
            }
        if w == "loop_read":
            loop = lp + lp // 10
            return {"workload": w, "loop_pages": loop, "refs": max(2 * loop, n(5.5))}
        if w == "mixed_read_write":
            return {
                "workload": w,
                "file_pages": 4 * lp,
                "refs": n(16),
                "alpha": 0.99,
                "write_share": 0.3,
                "seed": self.seed,
            }
        if w == "anon_zipf":
            return {
                "workload": w,
                "anon_pages": lp + lp // 2,
                "refs": n(8),
                "alpha": 0.99,
                "write_share": 0.3,
                "seed": self.seed,
            }
        if w == "anon_loop":
            loop = lp + lp // 10
            return {
                "workload": w,
                "anon_pages": loop,
                "refs": max(2 * loop, n(4)),
                "write_share": 0.3,
                "seed": self.seed,
            }
        if w == "mixed_zipf":
            return {
                "workload": w,
                "file_pages": 2 * lp,
                "anon_pages": 3 * lp // 4,
                "refs": n(12),
                "anon_share": 0.5,
                "alpha": 0.99,
                "write_share": 0.3,
                "seed": self.seed,
            }
        if w == "mixed_scan":
            return {
                "workload": w,
                "anon_pages": 3 * lp // 4,
                "scan_pages": 2 * lp,
                "hot_refs": 2 * lp,
                "periods": max(2, round(4 * self.scale)),
                "alpha": 0.99,
                "write_share": 0.3,
                "seed": self.seed,
            }
        if w == "app_switch":
            return {
                "workload": w,
                "apps": 4,
                "file_pages_per_app": 2 * lp // 5,
                "anon_pages_per_app": 3 * lp // 10,
                "phases": max(4, round(12 * self.scale)),
                "phase_refs": lp,
                "anon_share": 0.5,
                "alpha": 0.99,
                "write_share": 0.3,
                "seed": self.seed,
            }
        raise ValueError(f"unknown kernel-check workload '{w}'; known: {', '.join(WORKLOADS)}")


#: The built-in workloads (presets); the anonymous and mixed ones run with each swap device.
FILE_WORKLOADS = ["zipf_read", "hot_scan", "loop_read", "mixed_read_write"]
ANON_WORKLOADS = ["anon_zipf", "anon_loop", "mixed_zipf", "mixed_scan", "app_switch"]
WORKLOADS = FILE_WORKLOADS + ANON_WORKLOADS


def _trace_label(trace: str) -> str:
    name = Path(trace).name if Path(trace).exists() or "/" in trace else trace
    return name if len(name) <= 40 else name[:37] + "..."


def standard_cells(limits_mib: Sequence[int] = (32, 64), scale: float = 1.0) -> list[Cell]:
    """The table of docs/kernel-check.md: every file workload at each limit, and each anonymous or
    mixed workload with a swap file and with zram at each limit."""
    return cells_for(None, limits_mib, ("file", "zram"), scale)


def trace_footprint(trace: str, trace_format: str | None = None, options: dict | None = None, max_refs=None) -> dict:
    """Reads a trace as kernel-check would and returns its ``file_pages``, ``anon_pages`` and
    ``references`` (no root needed)."""
    cell = Cell(
        "trace",
        0,
        trace=trace,
        trace_format=trace_format,
        trace_options=tuple((options or {}).items()),
        max_refs=max_refs,
    )
    fd, tmp = tempfile.mkstemp(prefix=f"{PREFIX}-", suffix=".tlt")
    os.close(fd)
    try:
        return json.loads(_core.kernel_references(json.dumps(cell.spec()), tmp))
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


#: How the file pages of a trace were referenced, by format, and the linux-two-list
#: ``file_access`` that models it (see the policy's doc): system-call reads and writes of an
#: unmapped page cache for block and file-system traces; mapped executable text and data for
#: memory traces captured from programs (lackey, tierlab capture).
FILE_ACCESS_BY_FORMAT = {
    "lackey": "exec",
    "tlpages": "exec",
    "addr": "exec",
    "vfs": "read",
    "blkparse": "read",
    "msr": "read",
    "spc": "read",
    "vscsi": "read",
    "android": "read",
}


def touched_anon_pages(trace: Path) -> int:
    """The anonymous pages a cell's written trace references: its first touches. A workload need not
    touch every page of its mapping (``app_switch`` at a reduced scale launches fewer apps than it
    maps), and a page never touched is never charged or faulted."""
    return int(trace_footprint(str(trace))["anon_pages"])


def two_list_for(trace: str, trace_format: str | None = None) -> tuple[str, str]:
    """The linux-two-list configuration that matches how ``trace``'s file pages were referenced,
    and why; for a format that does not say (csv, txt, native, generators...) the reason names
    the choice to make. kernel-check itself always replays file pages with pread/pwrite, so the
    row it compares is ``file_access='read'`` whatever the trace."""
    fmt = (
        trace_format
        or json.loads(_core.trace_info(json.dumps({"path": trace, "format": None, "options": {}}), 1))["format"]
    )
    fa = FILE_ACCESS_BY_FORMAT.get(fmt)
    if fa == "exec":
        return ("linux-two-list", f"{fmt}: file pages are mapped text and data (linux-two-list's default)")
    if fa == "read":
        return (
            "linux-two-list(file_access='read')",
            f"{fmt}: file pages are read and written through system calls (file_access='read')",
        )
    return (
        "linux-two-list",
        f"{fmt}: the format does not say how its file pages were referenced; pass "
        "file_access='read' for read()/write(), 'mapped' for mapped data, 'exec' (the default) for text",
    )


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


def _ensure_tracefs() -> None:
    if (TRACEFS / "instances").is_dir():
        return
    subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=False, capture_output=True)
    if not (TRACEFS / "instances").is_dir():
        raise KernelCheckUnavailable(f"tracefs could not be mounted at {TRACEFS}")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


# ---------------------------------------------------------------------------------------------
# set-up and tear-down, each a context manager that undoes itself


def _load_state() -> dict:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return {}


def _save_state(state: dict) -> None:
    if state:
        STATE_FILE.write_text(json.dumps(state))
    else:
        with contextlib.suppress(FileNotFoundError):
            STATE_FILE.unlink()


def _rmdir_retrying(path: Path) -> None:
    """Removes a cgroup or trace-instance directory, waiting up to 2.5 s for what still holds it
    (exiting tasks, readers of the trace) to let go; raises if it never does."""
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.05)
    path.rmdir()


def _remove_cgroup(path: Path) -> None:
    if not path.exists():
        return
    with contextlib.suppress(OSError):
        _write(path / "memory.force_empty", "0")
    _rmdir_retrying(path)


def _swapoff(dev: str) -> None:
    if any(line.split()[0] == dev for line in Path("/proc/swaps").read_text().splitlines()[1:] if line.strip()):
        subprocess.run(["swapoff", dev], check=True, capture_output=True)


def cleanup_stale(workdir: Path = DEFAULT_WORKDIR) -> list[str]:
    """Removes what an earlier run that was killed outright left behind; returns what it removed."""
    removed = []
    if CGROUP_ROOT.exists():
        for cg in CGROUP_ROOT.glob(f"{PREFIX}-*"):
            _remove_cgroup(cg)
            removed.append(str(cg))
    inst = TRACEFS / "instances"
    if inst.is_dir():
        for t in inst.glob(f"{PREFIX}-*"):
            _rmdir_retrying(t)
            removed.append(str(t))
    if Path("/proc/swaps").exists():
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            dev = line.split()[0] if line.strip() else ""
            if dev.startswith(str(workdir)) or Path(dev).name.startswith(PREFIX):
                _swapoff(dev)
                with contextlib.suppress(FileNotFoundError):
                    Path(dev).unlink()
                removed.append(dev)
    state = _load_state()
    if state.get("zram"):
        _swapoff("/dev/zram0")
        _write(ZRAM / "reset", "1")
        removed.append("/dev/zram0 (reset)")
    if "page_cluster" in state:
        _write(PAGE_CLUSTER, str(state["page_cluster"]))
        removed.append(f"vm.page-cluster restored to {state['page_cluster']}")
    if "zswap_enabled" in state:
        _write(ZSWAP_ENABLED, state["zswap_enabled"])
        removed.append(f"zswap enabled restored to {state['zswap_enabled']}")
    if state.get("debugfs_mounted"):
        subprocess.run(["umount", str(DEBUGFS)], check=False, capture_output=True)
        removed.append(f"{DEBUGFS} unmounted")
    _save_state({})
    for f in workdir.glob(f"{PREFIX}-swap-*") if workdir.exists() else []:
        f.unlink()
        removed.append(str(f))
    return removed


@contextlib.contextmanager
def memory_cgroup(limit_bytes: int) -> Iterator[Path]:
    path = CGROUP_ROOT / f"{PREFIX}-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    try:
        _write(path / "memory.limit_in_bytes", str(limit_bytes))
        yield path
    finally:
        _remove_cgroup(path)


#: The tracepoints read, with the filter field naming the data file's inode.
TRACE_EVENTS = {
    "filemap/mm_filemap_add_to_page_cache": "i_ino",
    "filemap/mm_filemap_delete_from_page_cache": "i_ino",
    "writeback/writeback_dirty_folio": "ino",
}


@contextlib.contextmanager
def trace_instance(inode: int, buffer_kb: int) -> Iterator[Path]:
    """A private tracefs instance recording the events above for one inode (its own buffer, so the
    global trace is untouched; removing the instance disables its events)."""
    _ensure_tracefs()
    path = TRACEFS / "instances" / f"{PREFIX}-{os.getpid()}"
    path.mkdir()
    try:
        _write(path / "buffer_size_kb", str(buffer_kb))
        for ev, fld in TRACE_EVENTS.items():
            d = path / "events" / ev
            if not d.exists():
                raise KernelCheckUnavailable(f"tracepoint {ev} (kernel built without it?)")
            _write(d / "filter", f"{fld} == {inode}")
            _write(d / "enable", "1")
        _write(path / "tracing_on", "1")
        yield path
    finally:
        with contextlib.suppress(OSError):
            _write(path / "tracing_on", "0")
        _rmdir_retrying(path)


@contextlib.contextmanager
def page_cluster(value: int) -> Iterator[None]:
    """Sets vm.page-cluster (swap readahead) for the run and restores it."""
    old = int(PAGE_CLUSTER.read_text())
    state = _load_state()
    state.setdefault("page_cluster", old)
    _save_state(state)
    _write(PAGE_CLUSTER, str(value))
    try:
        yield
    finally:
        _write(PAGE_CLUSTER, str(old))
        state = _load_state()
        state.pop("page_cluster", None)
        _save_state(state)


@contextlib.contextmanager
def swap_device(kind: str, size_bytes: int, workdir: Path) -> Iterator[str]:
    """A swap file on the work directory's file system, or zram0, enabled for the run."""
    if kind == "file":
        path = workdir / f"{PREFIX}-swap-{os.getpid()}"
        try:
            with open(path, "wb") as f:
                chunk = b"\0" * (1 << 20)
                for _ in range(-(-size_bytes // len(chunk))):
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(path, 0o600)
            subprocess.run(["mkswap", str(path)], check=True, capture_output=True)
            subprocess.run(["swapon", str(path)], check=True, capture_output=True)
            yield str(path)
        finally:
            with contextlib.suppress(subprocess.CalledProcessError, FileNotFoundError):
                _swapoff(str(path))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    elif kind == "zram":
        if int((ZRAM / "disksize").read_text()) != 0:
            raise KernelCheckUnavailable("zram0 is already set up by someone else (its disksize is not 0)")
        state = _load_state()
        state["zram"] = True
        _save_state(state)
        try:
            _write(ZRAM / "disksize", str(size_bytes))
            subprocess.run(["mkswap", "/dev/zram0"], check=True, capture_output=True)
            subprocess.run(["swapon", "/dev/zram0"], check=True, capture_output=True)
            yield "/dev/zram0"
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):
                _swapoff("/dev/zram0")
            _write(ZRAM / "reset", "1")
            state = _load_state()
            state.pop("zram", None)
            _save_state(state)
    else:
        raise ValueError(f"swap must be 'file' or 'zram', got '{kind}'")


@contextlib.contextmanager
def zswap_on() -> Iterator[None]:
    """zswap enabled for the run (and debugfs mounted, for its statistics), both restored after."""
    old = ZSWAP_ENABLED.read_text().strip()
    state = _load_state()
    state.setdefault("zswap_enabled", old)
    mounted = not (DEBUGFS / "zswap").is_dir()
    if mounted:
        state["debugfs_mounted"] = True
    _save_state(state)
    try:
        if mounted:
            subprocess.run(["mount", "-t", "debugfs", "none", str(DEBUGFS)], check=False, capture_output=True)
        _write(ZSWAP_ENABLED, "Y")
        yield
    finally:
        _write(ZSWAP_ENABLED, old)
        if mounted:
            subprocess.run(["umount", str(DEBUGFS)], check=False, capture_output=True)
        state = _load_state()
        state.pop("zswap_enabled", None)
        state.pop("debugfs_mounted", None)
        _save_state(state)


def _zswap_stats() -> dict[str, int]:
    """zswap's debugfs counters (empty where not readable)."""
    out = {}
    d = DEBUGFS / "zswap"
    for f in d.iterdir() if d.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            out[f.name] = int(f.read_text().strip())
    return out


def zswap_counts(vm0: dict, vm1: dict, zs0: dict, zs1: dict) -> dict[str, int]:
    """A zswap cell's counts from /proc/vmstat and zswap's debugfs counters before and after.

    A page zswap stores is not written to the device (``zswpout``, no ``pswpout``); a load from it
    is no ``pswpin`` (``zswpin``); a page zswap writes back to the device (``zswpwb``) is counted in
    ``pswpout`` as well, so the pages that left memory are ``zswpout + pswpout - zswpwb``."""
    d = {k: vm1.get(k, 0) - vm0.get(k, 0) for k in ("zswpout", "zswpin", "zswpwb", "pswpout", "pswpin")}
    return {
        "swap_outs": d["pswpout"] + d["zswpout"] - d["zswpwb"],
        "swap_ins": d["pswpin"] + d["zswpin"],
        "zswap_stored": d["zswpout"],
        "zswap_loads": d["zswpin"],
        "zswap_written_back": d["zswpwb"],
        "zswap_rejected": sum(zs1.get(k, 0) - zs0.get(k, 0) for k in zs1 if k.startswith("reject_")),
        "zswap_pool_limit_hit": zs1.get("pool_limit_hit", 0) - zs0.get("pool_limit_hit", 0),
    }


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM tears down like Ctrl-C does."""

    def handler(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt("SIGTERM")

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


# ---------------------------------------------------------------------------------------------
# reading what the kernel did


def _stat(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _pages(line: str) -> int:
    """Pages of the folio an add/delete event names (2^order; order 0 where not printed)."""
    return 1 << (int(line.rsplit("order=", 1)[1].split()[0]) if "order=" in line else 0)


def _read_trace(inst: Path, offsets: list[int] | None = None) -> dict[str, int]:
    """Counts the instance's events (pages, by folio order) and checks none was lost; appends the
    page index of every insertion, in order, to ``offsets`` when given."""
    lost = 0
    for stats in (inst / "per_cpu").glob("cpu*/stats"):
        s = dict(line.split(":", 1) for line in stats.read_text().splitlines() if ":" in line)
        lost += int(s.get("overrun", "0").strip()) + int(s.get("dropped events", "0").strip() or 0)
    if lost:
        raise RuntimeError(f"the trace buffer lost {lost} events; raise buffer_kb")
    counts = {"insertions": 0, "deletions": 0, "dirtied": 0, "large_folios": 0}
    with open(inst / "trace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            if "mm_filemap_add_to_page_cache:" in line:
                pages = _pages(line)
                counts["insertions"] += pages
                if offsets is not None:
                    first = int(line.rsplit("ofs=", 1)[1].split()[0]) // PAGE
                    offsets.extend(range(first, first + pages))
                counts["large_folios"] += pages > 1
            elif "mm_filemap_delete_from_page_cache:" in line:
                counts["deletions"] += _pages(line)
            elif "writeback_dirty_folio:" in line:
                counts["dirtied"] += 1
    return counts


def _fs_type(path: Path) -> str:
    best, fstype = "", "?"
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        mnt = left.split()[4]
        if str(path).startswith(mnt) and len(mnt) > len(best):
            best, fstype = mnt, right.split()[0]
    return fstype


def _drop_caches() -> None:
    os.sync()
    _write(Path("/proc/sys/vm/drop_caches"), "3")


# ---------------------------------------------------------------------------------------------
# one cell


def parse_mm_stat(text: str) -> dict[str, int]:
    """zram's ``mm_stat`` (Documentation/admin-guide/blockdev/zram.rst: orig_data_size,
    compr_data_size, mem_used_total in bytes, then mem_limit, mem_used_max, same_pages,
    pages_compacted, huge_pages) as the pool the swapped pages hold: ``zram_pages`` stored
    (uncompressed size / page), ``zram_compr_bytes``, and ``zram_pool_pages`` (mem_used_total, the
    RAM the pool takes, in pages, rounded up), ``zram_same_pages`` and ``zram_huge_pages``."""
    f = [int(x) for x in text.split()]
    if len(f) < 8:
        raise ValueError(f"mm_stat: expected at least 8 fields, got {len(f)}: {text!r}")
    return {
        "zram_pages": f[0] // PAGE,
        "zram_compr_bytes": f[1],
        "zram_pool_pages": -(-f[2] // PAGE),
        "zram_same_pages": f[5],
        "zram_huge_pages": f[7],
    }


def zram_accounting(kernel: dict[str, int]) -> dict[str, float]:
    """The kernel's zram pool against tierlab's accounting for the same pages: N pages stored at
    the measured ratio r = N pages / compressed bytes free N - pool pages in the kernel; tierlab's
    model frees N - ceil(N / r) (the compressed bytes, rounded up to pages) and never more than
    N (1 - 1/r). ``kernel_freed <= model_freed`` holds when zsmalloc's pool is no smaller than the
    compressed data, which the model assumes."""
    n = kernel.get("zram_pages", 0)
    if not n:
        return {}
    compr = kernel["zram_compr_bytes"]
    ratio = n * PAGE / compr if compr else float("inf")
    model_pool = -(-compr // PAGE)
    return {
        "pages": n,
        "ratio": ratio,
        "kernel_pool_pages": kernel["zram_pool_pages"],
        "model_pool_pages": model_pool,
        "kernel_freed": n - kernel["zram_pool_pages"],
        "model_freed": n - model_pool,
        "bound": n * (1 - 1 / ratio) if compr else float(n),
    }


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


def _psi_totals() -> dict[str, int]:
    """/proc/pressure/memory's cumulative some/full stall (µs); empty without PSI."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/pressure/memory").read_text().splitlines():
            kind, *fields = line.split()
            out[kind] = int(dict(f.split("=") for f in fields)["total"])
    return out


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
        inst = stack.enter_context(trace_instance(inode, buffer_kb))
        _drop_caches()
        psi0, zs0 = _psi_totals(), _zswap_stats()
        out = json.loads(_core.kernel_drive(json.dumps(spec), str(trace_path), str(data), str(cg), False, 0))
        psi1, zs1 = _psi_totals(), _zswap_stats()
        offsets: list[int] = []
        counts = _read_trace(inst, offsets)
    # zram's pool as the driver read it after the last reference, the child still alive.
    zram = parse_mm_stat(out["done"]["zram_mm_stat"]) if cell.swap == "zram" else {}
    ready, done = out["ready"], out["done"]
    ms0, ms1 = _stat(ready["memory_stat"]), _stat(done["memory_stat"])
    vm0, vm1 = _stat(ready["vmstat"]), _stat(done["vmstat"])
    kmem_growth = max(0, done["kmem_bytes"] - ready["kmem_bytes"])
    capacity = (limit - ready["usage_bytes"] - kmem_growth) // PAGE
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
        "data_file_pages": file_pages,
    }
    with contextlib.suppress(FileNotFoundError):
        data.unlink()
    psi = {k: psi1[k] - psi0.get(k, 0) for k in psi1}
    return CellResult(cell, spec, int(capacity), kernel, readyd, float(out["seconds"]), trace_path, offsets, psi)


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

#: kernel count -> tierlab result column
METRICS = {
    "misses": "misses",
    "pages_written": "file_pages_written",
    "swap_ins": "swap_pages_read",
    "swap_outs": "swap_pages_written",
    # zswap's stores: the model's swap-outs, each stored, since the pool stays below
    # max_pool_percent of RAM (zswap_check_limits) and the shrinker is off (docs/kernel-check.md)
    "zswap_stored": "swap_pages_written",
}


def _for_device(spec: str, swap: str | None) -> str:
    """linux-two-list and mglru set up for the cell's swap device: on a synchronous device (zram,
    brd) a swap-in frees the page's slot (``sync_swap``, the policies' doc); zswap's loads are
    exclusive (``zswap_load`` frees the entry and marks the folio dirty), so a page swapped in from
    zswap is written again too. A property of the device the run set up, not a fit."""
    name = next((n for n in SYNC_SWAP_POLICIES if spec == n or spec.startswith(n + "(")), None)
    if swap not in SYNC_SWAP_DEVICES or name is None or "sync_swap" in spec:
        return spec
    if spec == name:
        return f"{name}(sync_swap=true)"
    if spec.endswith(")"):
        inner = spec[len(name) + 1 : -1].strip()
        return f"{name}({inner + ',' if inner else ''}sync_swap=true)"
    return spec


TWO_LIST_NAME = "linux-two-list"
#: the swap devices on which a swap-in frees the page's slot or entry: zram and brd are
#: synchronous block devices (QUEUE_FLAG_SYNCHRONOUS in 6.1's zram.c and brd.c,
#: BLK_FEAT_SYNCHRONOUS in 6.12's), so do_swap_page reads around the swap cache and frees the slot;
#: zswap's loads are exclusive
SYNC_SWAP_DEVICES = ("zram", "brd", "zswap")
#: the models with a ``sync_swap`` setting
SYNC_SWAP_POLICIES = ("linux-two-list", "mglru")


def cells_for(
    workloads: Sequence[str] | None = None,
    limits_mib: Sequence[int] = (32, 64),
    swap: Sequence[str] = ("file", "zram"),
    scale: float = 1.0,
    seed: int = 1,
    traces: Sequence[str] = (),
    trace_format: str | None = None,
    trace_options: dict | None = None,
    max_refs: int | None = None,
) -> list[Cell]:
    """The cells of a check: each file workload at each limit; each anonymous or mixed workload at
    each limit with each swap device; each trace (a file or a generator spec) at each limit, with
    each swap device when it has anonymous pages. With traces and no ``workloads``, only the
    traces run."""
    cells = []
    for w in workloads if workloads is not None else ([] if traces else WORKLOADS):
        if w not in WORKLOADS:
            raise ValueError(f"unknown kernel-check workload '{w}'; known: {', '.join(WORKLOADS)}")
        for m in limits_mib:
            if w in ANON_WORKLOADS:
                cells += [Cell(w, int(m), s, scale, seed) for s in swap]
            else:
                cells.append(Cell(w, int(m), None, scale, seed))
    opts = tuple((trace_options or {}).items())
    for t in traces:
        anon = trace_footprint(t, trace_format, trace_options, max_refs)["anon_pages"]
        for m in limits_mib:
            for s in swap if anon else [None]:
                cells.append(Cell("trace", int(m), s, 1.0, seed, str(t), trace_format, opts, max_refs))
    return cells


def _metrics_of(result: CellResult) -> list[str]:
    written = ["pages_written"] if result.kernel["pages_dirtied"] else []
    if result.cell.swap == "zswap":
        return ["misses", "swap_ins", "swap_outs", "zswap_stored", *written]
    if result.cell.swap:
        return ["misses", "swap_ins", "swap_outs", *written]
    return ["misses", *written]


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
    ``lru_gen`` "on"/"off" setting MGLRU (None: the kernel's default)."""
    from tierlab import api

    pols = DEFAULT_POLICIES if policies is None else policies
    if not isinstance(pols, dict):
        pols = {str(p): str(p) for p in pols}
    cells = cells_for(
        workloads, limits_mib, swap, scale, seed, [str(t) for t in traces], trace_format, trace_options, max_refs
    )
    workdir = Path(workdir)
    if kernel is not None:
        from tierlab import kernel_vm

        bad = sorted({c.swap for c in cells if c.swap and c.swap not in kernel_vm.VM_SWAP})
        if bad:
            raise KernelCheckUnavailable(
                f"--swap {bad[0]} under --kernel: expected {', '.join(kernel_vm.VM_SWAP)} "
                "(brd: swap on a RAM disk in the VM; the VM has no disk for a swap file)"
            )
        pols, vm = kernel_vm.vm_policies(policies), kernel_vm.prepare(kernel, workdir, progress)
        if workloads is None:  # under QEMU the default is the file cells
            cells = [c for c in cells if not c.swap]
    else:
        vm = None
        needs = {c.swap for c in cells if c.swap}
        if "brd" in needs:
            raise KernelCheckUnavailable(
                "--swap brd (a RAM disk) is for cells under --kernel; on the host: file, zram, zswap"
            )
        missing = missing_features(needs)
        if missing:
            raise KernelCheckUnavailable("kernel-check needs: " + "; ".join(missing))
        workdir.mkdir(parents=True, exist_ok=True)
        cleanup_stale(workdir)
    rows, details = [], []
    keeps = [
        Path(keep_traces) / f"{''.join(ch if ch.isalnum() or ch in '._-' else '-' for ch in cell.name)}.tlt"
        if keep_traces
        else None
        for cell in cells
    ]
    for keep in filter(None, keeps):
        keep.parent.mkdir(parents=True, exist_ok=True)
    # under QEMU every cell runs in one boot of the kernel, before the replays
    in_vm = vm.run_cells(cells, keeps, lru_gen, progress) if vm else None
    for i, (cell, keep) in enumerate(zip(cells, keeps, strict=True)):
        if progress:
            progress(f"[{i + 1}/{len(cells)}] {cell.name}")
        res = in_vm[i] if in_vm else run_cell(cell, workdir, keep)
        try:
            specs = [_for_device(p, cell.swap) for p in pols.values()]
            df = api.run(str(res.trace), policies=specs, sizes=[res.capacity_pages])
        finally:
            if keep is None and res.trace is not None:
                with contextlib.suppress(FileNotFoundError):
                    res.trace.unlink()
        details.append(
            {
                "cell": cell.name,
                "params": res.spec,
                "capacity_pages": res.capacity_pages,
                "seconds": res.seconds,
                **{f"kernel_{k}": v for k, v in res.kernel.items()},
                **{f"psi_{k}_us": v for k, v in (res.psi_us or {}).items()},
                **res.ready,
            }
        )
        for label, (_, row) in zip(pols, df.iterrows(), strict=True):
            for metric in _metrics_of(res):
                k = res.kernel[metric]
                m = int(row[METRICS[metric]])
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
                        "model": m,
                        "error": (m - k) / k if k else float("nan"),
                        "params": json.dumps(res.spec),
                    }
                )
    out = pd.DataFrame(rows)
    out.attrs["cells"] = details
    out.attrs["policies"] = dict(pols)
    return out


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and metric: the kernel's count, then each policy's prediction and error."""
    wide = df.pivot_table(index=["cell", "metric"], columns="policy", values=["model", "error"], sort=False)
    kernel = df.groupby(["cell", "metric"], sort=False)["kernel"].first()
    out = pd.DataFrame({"kernel": kernel})
    for p in df["policy"].unique():
        out[p] = wide[("model", p)].astype(int)
        out[f"{p} error"] = wide[("error", p)]
    return out.reset_index()


def error_figure(df: pd.DataFrame, metric: str = "misses"):
    """Grouped bars: each policy's relative error against the kernel, per cell, with the 5% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = df[df["metric"] == metric]
    cells = list(dict.fromkeys(d["cell"]))
    pols = list(dict.fromkeys(d["policy"]))
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(cells) + 2), 4))
    width = 0.8 / max(1, len(pols))
    for j, p in enumerate(pols):
        e = d[d["policy"] == p].set_index("cell")["error"].reindex(cells) * 100
        ax.bar([i + j * width for i in range(len(cells))], e, width, label=p)
    ax.axhspan(-5, 5, color="0.9", zorder=0, label="within 5%")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cells))], cells, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{metric}: (model - kernel) / kernel, %")
    ax.set_title(f"tierlab vs the Linux kernel ({os.uname().release}): {metric}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_report(df: pd.DataFrame, out: str | os.PathLike) -> Path:
    """An HTML page: the error figures, the side-by-side table, and each cell's parameters."""
    import html

    import matplotlib.pyplot as plt

    from tierlab import report

    body = [
        "<p class='note'>Each cell ran against the real kernel in a fresh memory cgroup; the model ran the "
        "same page references at the capacity derived from the cgroup's accounting "
        "(docs/kernel-check.md).</p>"
    ]
    for metric in dict.fromkeys(df["metric"]):
        fig = error_figure(df, metric)
        body.append(f"<h2>{html.escape(metric)}</h2>{report.fig_to_img(fig)}")
        plt.close(fig)
    body.append("<h2>side by side</h2>" + report.table_html(summary(df), max_rows=1000))
    cells = pd.DataFrame(df.attrs.get("cells", []))
    if not cells.empty:
        cells["params"] = cells["params"].map(json.dumps)
        body.append("<h2>cells</h2>" + report.table_html(cells, max_rows=1000))
    path = Path(out)
    path.write_text(report.page("tierlab kernel-check", "\n".join(body)))
    return path
