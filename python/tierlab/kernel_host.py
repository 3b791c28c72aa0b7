"""The host side of a kernel check: what it sets up and tears down, each a context manager that
undoes itself.

A memory cgroup (v1, ``memory.limit_in_bytes``), a private tracefs instance recording the
page-cache tracepoints for the data file's inode only (include/trace/events/filemap.h,
writeback.h), a swap file or zram0 (Documentation/admin-guide/blockdev/zram.rst), zswap enabled
with debugfs mounted for its counters (mm/zswap.c), and vm.page-cluster (swap readahead, 0 for the
run). Each system setting changed is noted in ``STATE_FILE`` until it is restored, so a run that
was killed outright is cleaned up by the next one (``cleanup_stale``); SIGTERM tears down as
Ctrl-C does.

Cost: a handful of sysfs/procfs writes and a few ``mkswap``/``swapon``/``swapoff`` calls per cell,
plus writing the swap file (1.25 times the cell's anonymous pages, and 16 MiB) to the work
directory; a removal waits at most 2.5 s for a cgroup or trace instance to be let go.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

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
#: Held (flock) for a whole host run: the counters it reads (/proc/vmstat, zram0) and the settings it
#: changes (page-cluster, zswap) are the machine's, so two runs at once would count each other's
#: pages and undo each other's settings. The kernel drops the lock when its holder dies.
LOCK_FILE = Path("/run") / f"{PREFIX}.lock"


class KernelCheckUnavailable(RuntimeError):
    """The machine lacks what a kernel check needs; the message names each missing feature."""


def _ensure_tracefs() -> None:
    if (TRACEFS / "instances").is_dir():
        return
    subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=False, capture_output=True)
    if not (TRACEFS / "instances").is_dir():
        raise KernelCheckUnavailable(f"tracefs could not be mounted at {TRACEFS}")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _load_state() -> dict:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return {}


def _save_state(state: dict) -> None:
    """Notes the settings this run changed, with its pid (so no other run restores them while it
    lives); no settings left: no file."""
    state = {k: v for k, v in state.items() if k != "pid"}
    if state:
        STATE_FILE.write_text(json.dumps({**state, "pid": os.getpid()}))
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


def _owner_alive(pid: object) -> bool:
    """Whether ``pid`` (a run's, from a name or the state file) is another process still running."""
    try:
        n = int(str(pid))
    except ValueError:
        return False
    return n != os.getpid() and Path(f"/proc/{n}").exists()


def _named_owner(name: str) -> str:
    """The pid in a name this module gives (``PREFIX-<pid>-...``, ``PREFIX-swap-<pid>``)."""
    parts = name[len(PREFIX) + 1 :].split("-")
    return parts[1] if parts[0] == "swap" and len(parts) > 1 else parts[0]


@contextlib.contextmanager
def host_run_lock(progress=None) -> Iterator[None]:
    """Holds :data:`LOCK_FILE` for a host run; a second run waits for the first, saying so."""
    import fcntl

    with open(LOCK_FILE, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            if progress:
                progress(f"waiting for the kernel-check run of pid {holder}: the host's counters are shared")
            fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        try:
            yield
        finally:
            f.truncate(0)


def cleanup_stale(workdir: Path = DEFAULT_WORKDIR) -> list[str]:
    """Removes what an earlier run that was killed outright left behind; returns what it removed.
    What belongs to a run that is still alive (its pid is in the names and the state file) is left
    alone."""
    removed = []
    if CGROUP_ROOT.exists():
        for cg in CGROUP_ROOT.glob(f"{PREFIX}-*"):
            if not _owner_alive(_named_owner(cg.name)):
                _remove_cgroup(cg)
                removed.append(str(cg))
    inst = TRACEFS / "instances"
    if inst.is_dir():
        for t in inst.glob(f"{PREFIX}-*"):
            if not _owner_alive(_named_owner(t.name)):
                _rmdir_retrying(t)
                removed.append(str(t))
    if Path("/proc/swaps").exists():
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            dev = line.split()[0] if line.strip() else ""
            if (dev.startswith(str(workdir)) or Path(dev).name.startswith(PREFIX)) and not _owner_alive(
                _named_owner(Path(dev).name)
            ):
                _swapoff(dev)
                with contextlib.suppress(FileNotFoundError):
                    Path(dev).unlink()
                removed.append(dev)
    state = _load_state()
    if _owner_alive(state.get("pid", "")):
        return removed
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
        if _owner_alive(_named_owner(f.name)):
            continue
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
#: The memory cgroup statistics flush (include/trace/events/memcg.h, Linux 6.11 and later): every
#: call of ``__mem_cgroup_flush_stats``, with the flushed group's cgroup id, and whether it flushed
#: (``force``, or ``needs_flush``: enough updates pending). Recorded where the kernel has it.
FLUSH_EVENT = "memcg/memcg_flush_stats"


def flush_event_filter(memcg_ids: Sequence[int]) -> str:
    """The filter keeping the flushes that reach a group: those of the group or an ancestor
    (``css_rstat_flush`` flushes the subtree), given by cgroup id, that did flush."""
    ids = " || ".join(f"id == {i}" for i in memcg_ids)
    return f"({ids}) && (force == 1 || needs_flush == 1)"


@contextlib.contextmanager
def trace_instance(inode: int, buffer_kb: int, memcg_ids: Sequence[int] = ()) -> Iterator[Path]:
    """A private tracefs instance recording the events above for one inode (its own buffer, so the
    global trace is untouched; removing the instance disables its events), stamped with
    CLOCK_MONOTONIC (``trace_clock`` mono, the driver's progress clock). With ``memcg_ids`` (the
    cell's group and its ancestors) it also records the flushes of their statistics, where the
    kernel has :data:`FLUSH_EVENT`."""
    _ensure_tracefs()
    path = TRACEFS / "instances" / f"{PREFIX}-{os.getpid()}"
    path.mkdir()
    try:
        _write(path / "buffer_size_kb", str(buffer_kb))
        with contextlib.suppress(OSError):
            _write(path / "trace_clock", "mono")
        for ev, fld in TRACE_EVENTS.items():
            d = path / "events" / ev
            if not d.exists():
                raise KernelCheckUnavailable(f"tracepoint {ev} (kernel built without it?)")
            _write(d / "filter", f"{fld} == {inode}")
            _write(d / "enable", "1")
        d = path / "events" / FLUSH_EVENT
        if memcg_ids and d.exists():
            _write(d / "filter", flush_event_filter(memcg_ids))
            _write(d / "enable", "1")
        _write(path / "tracing_on", "1")
        yield path
    finally:
        with contextlib.suppress(OSError):
            _write(path / "tracing_on", "0")
        _rmdir_retrying(path)


def flushes_recorded(inst: Path) -> bool:
    """Whether the instance records the statistics flushes (the kernel has the event, enabled)."""
    with contextlib.suppress(OSError):
        return (inst / "events" / FLUSH_EVENT / "enable").read_text().strip() == "1"
    return False


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
