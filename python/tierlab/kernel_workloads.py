"""The workloads of a kernel check: built-in ones stated relative to the memory limit, and a
user's traces, and the cells (workload, limit, swap device) a check runs.

A built-in workload's parameters are in pages, as multiples of the limit's pages
(docs/kernel-check.md, "Workloads"); the native driver (``tierlab._core.kernel_drive``) issues
them and writes the same references as a native trace. A user's trace or generator spec is read
as ``tierlab run`` reads it (``trace_footprint`` gives its file and anonymous pages without root).
``two_list_for`` names the linux-two-list ``file_access`` that matches how a trace's format
referenced its file pages.

Cost: building a cell is constant time; ``trace_footprint`` and ``touched_anon_pages`` read the
whole trace once (writing it as a temporary native trace).
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

from tierlab import _core
from tierlab.kernel_host import PAGE, PREFIX


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


def _is_file(trace: str) -> bool:
    try:
        return Path(trace).exists()
    except OSError:  # ENAMETOOLONG: a generator spec longer than a file name may be
        return False


def _trace_label(trace: str) -> str:
    name = Path(trace).name if "/" in trace or _is_file(trace) else trace
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


def kernel_version(release: str) -> tuple[int, int] | None:
    """(major, minor) of a kernel's ``uname -r``, or None when it does not start with them."""
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def two_list_version(release: str) -> str | None:
    """The ``version`` of linux-two-list whose reclaim-cost rules a kernel follows, from its ``uname
    -r``: ``6.1`` for 6.1.x (``lru_note_cost`` counts no rotations), ``6.17`` from 6.17 on (a note
    of no cost skips the decay), None (the model's 6.12 rules) in between or when the release does
    not say."""
    version = kernel_version(release)
    if version is None:
        return None
    if version == (6, 1):
        return "6.1"
    return "6.17" if version >= (6, 17) else None


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
