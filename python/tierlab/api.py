"""The Python API: run traces through policies and get pandas DataFrames."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pandas as pd

from tierlab import _core, cache, values
from tierlab import learned as _learned
from tierlab.pypolicy import is_python_policy

#: A policy: a name, a spec string such as ``"clock(bits=2)"``, a dict ``{"name": ..., **params}``,
#: or a :class:`tierlab.PythonPolicy` subclass (a policy written in Python).
PolicyLike = Union[str, dict, type]
#: A size: pages (int), bytes with a unit (``"4MiB"``, ``"512KB"``), or a fraction of the trace's
#: footprint (``"10%"`` or a float in (0, 1]).
SizeLike = Union[int, float, str]


@dataclass(frozen=True)
class Trace:
    """A trace to replay: a file (format guessed from its name unless given) with format options,
    or a generator spec such as ``"zipf:alpha=1.0,pages=1000000,n=10000000,seed=1"``."""

    path: str
    format: str | None = None
    options: dict = field(default_factory=dict)

    @classmethod
    def of(cls, trace: TraceLike, format: str | None = None, options: dict | None = None) -> Trace:
        if isinstance(trace, Trace):
            return trace
        return cls(str(trace), format, dict(options or {}))

    def to_json(self) -> str:
        return json.dumps({"path": self.path, "format": self.format, "options": self.options})

    @property
    def name(self) -> str:
        return Path(self.path).name if not _is_generator(self.path) else self.path

    def page_size(self) -> int:
        """The trace's page size in bytes (opens the trace, reads nothing)."""
        return int(self.batches(1).page_size())

    def batches(self, batch: int = 1 << 20):
        """Iterates over the trace's records as dicts of numpy arrays."""
        return _core.TraceBatches(self.to_json(), batch)


TraceLike = Union[str, os.PathLike, Trace]


def _is_generator(path: str) -> bool:
    return re.match(r"^[a-z_]+:", path) is not None and not Path(path).exists()


def _resolve(size: SizeLike, unit: str, footprint: Callable[[], int], page_size: int | None) -> int:
    """Turns a size into ``unit`` (pages when ``page_size`` is given, else bytes); see
    :func:`tierlab.values.parse_size`."""
    return values.parse_size(size, page_size=page_size, footprint=footprint, unit=unit)


def resolve_size(size: SizeLike, page_size: int, footprint_pages: Callable[[], int]) -> int:
    """Turns a size into pages. Fractions of the footprint round to the nearest page (at least 1)."""
    return _resolve(size, "pages", footprint_pages, page_size)


def resolve_sizes(
    trace: Trace, sizes: Iterable[SizeLike], limit: int | None = None, progress: bool | Callable[[int], Any] = False
) -> list[int]:
    """Resolves every size of ``sizes`` to pages for ``trace``. The footprint (one pass over the
    trace, shown as :func:`info` shows it when ``progress`` is given) is computed only if a size is
    a share of it, and once per trace content (:func:`tierlab.cache.footprint`: kept across calls
    and runs while the file's bytes stay the same)."""
    known: dict[str, int] = {}

    def compute() -> int:
        return int(info(trace, limit=limit, progress=progress, label="footprint of")["distinct_pages"])

    def footprint() -> int:
        if "n" not in known:
            known["n"] = cache.footprint(trace.path, trace.format, trace.options, limit, compute)
        return known["n"]

    page_size = trace.page_size()
    return [resolve_size(s, page_size, footprint) for s in sizes]


def resolve_object_size(size: SizeLike, footprint_bytes: Callable[[], int]) -> int:
    """Turns a size into bytes for object-size mode: a plain number is bytes, a unit scales it
    (``"64MiB"``), a share (``"10%"`` or a float in (0, 1]) is of the bytes of the distinct
    objects (each counted at the size of its first request)."""
    return _resolve(size, "bytes", footprint_bytes, None)


def object_footprint(trace: Trace, limit: int | None = None, progress: bool | Callable[[int], Any] = False) -> int:
    """Bytes of the distinct objects of ``trace`` (each at the size of its first request); the
    pass is shown as :func:`run` shows a replay when ``progress`` is given."""
    import numpy as np

    ids = np.empty(0, dtype=np.uint64)
    sizes = np.empty(0, dtype=np.uint64)
    seen = 0
    with _progress(progress, trace, limit, "footprint of") as callback:
        for b in trace.batches():
            acc = b["event"] == 255
            bid, bsize = b["page"][acc], b["size"][acc].astype(np.uint64)
            if limit is not None:
                bid, bsize = bid[: max(0, limit - seen)], bsize[: max(0, limit - seen)]
            seen += len(bid)
            # Earlier batches first, so np.unique's first index keeps the first request's size.
            ids, first = np.unique(np.concatenate([ids, bid]), return_index=True)
            sizes = np.concatenate([sizes, bsize])[first]
            if callback is not None:
                callback(seen)
            if limit is not None and seen >= limit:
                break
    return int(sizes.sum())


def parse_policy(policy: PolicyLike) -> dict:
    """Normalises a policy to ``{"name": ..., "params": {...}}`` (validated by the core)."""
    if isinstance(policy, dict):
        if "name" not in policy:
            raise _core.ConfigError(f"policy {policy!r}: a dict policy needs a 'name' key")
        params = {k: v for k, v in policy.items() if k != "name"}
        if "params" in params and len(params) == 1 and isinstance(params["params"], dict):
            params = params["params"]
        for k, v in params.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise _core.ConfigError(f"policy {values.show(policy['name'])}: {k} = {v} is not a finite number")
        return {"name": policy["name"], "params": params}
    return json.loads(_core.parse_policy(str(policy)))


def info(
    trace: TraceLike,
    *,
    format: str | None = None,
    options: dict | None = None,
    limit: int | None = None,
    progress: bool | Callable[[int], Any] = False,
    label: str | None = None,
) -> dict:
    """Summary of a trace: requests, page references, footprint, mixes, apps, reuse.

    One pass over the trace, with the GIL released; ``progress`` shows it as :func:`run` shows a
    replay (``True``: a bar on stderr, its description ``label`` and the trace's name; a callable:
    called with the page references read so far, at most every 100 ms)."""
    t = Trace.of(trace, format, options)
    limit = values.optional_count(limit, "limit")
    with _progress(progress, t, limit, label) as callback:
        return json.loads(_core.trace_info(t.to_json(), limit, callback))


def policies() -> pd.DataFrame:
    """Registered policies with family, summary, default parameters and whether they have an
    object-size mode (``object_sizes``), then the learned policies written in Python
    (:mod:`tierlab.learned`, which need the ``learned`` extra; their rows take ``object_sizes`` from
    the class, ``PythonPolicy.object_sizes``, which is what ``run`` allows)."""
    return pd.DataFrame(json.loads(_core.policies()) + _learned.POLICY_INFO)


def admissions() -> pd.DataFrame:
    """Admission policies (``-p 'lru+bloom'``, ``{"name": "lru", "admit": "bloom"}``) with
    summary and default parameters."""
    return pd.DataFrame(json.loads(_core.admissions()))


def devices(device_files: Sequence[str | os.PathLike] = ()) -> pd.DataFrame:
    """Device presets (and devices from TOML files), one row per device."""
    devs = json.loads(_core.devices([str(f) for f in device_files]))
    return pd.json_normalize(devs)


def _system_json(system: str | dict | None) -> str:
    if system is None:
        return "{}"
    if isinstance(system, str):
        # A single device name: a one-tier system on it.
        return json.dumps({"tiers": [system]})
    return json.dumps(system)


def run(
    trace: TraceLike,
    policies: Iterable[PolicyLike] = ("lru",),
    sizes: Iterable[SizeLike] = ("10%",),
    system: str | dict | None = None,
    *,
    format: str | None = None,
    options: dict | None = None,
    device_files: Sequence[str | os.PathLike] = (),
    threads: int | None = None,
    limit: int | None = None,
    progress: bool | Callable[[int], Any] = False,
    object_sizes: bool = False,
    variants: Sequence[dict] = (),
) -> pd.DataFrame:
    """Replays ``trace`` once through every (policy, size) pair and returns one row per pair.

    ``policies`` holds names or specs of registered policies and/or :class:`tierlab.PythonPolicy`
    subclasses (policies written in Python, one object per size; see docs/policies.md). The
    learned policies of :mod:`tierlab.learned` (``"lrb"``, ``"lrb(memory_window=20000)"``) are
    Python policies too and need the ``learned`` extra (LightGBM).

    ``object_sizes=True`` is object-size mode: every request is one object of the size the trace
    gives (oracleGeneral, csv with a size column, vscsi), sizes are bytes (``"64MiB"``, ``10**9``,
    ``"10%"`` of the distinct objects' bytes), only policies with an object-size variant run
    (``policies()["object_sizes"]``; Python policies unless their class sets ``object_sizes =
    False``, built with the capacity in bytes), and ``byte_misses``/``byte_miss_ratio`` count
    object bytes.

    ``system`` is a dict ``{"tiers": [...], "file_store": ..., "swap": ..., "write_miss_fetch": ...}``
    of device names (see :func:`devices`); default: DRAM over an NVMe file store and swap.

    ``variants`` prices the same replay on further systems: each a dict ``{"system": ...,
    "device_files": [...]}`` (both optional: the run's system, no more files; its files are read
    after ``device_files``) that may differ from ``system`` in device costs only. No policy sees
    device costs, so its decisions, and every count, are those of the run; the rows then carry a
    ``variant`` column, 0 for ``system`` and k for ``variants[k - 1]``, the rows of each in turn.
    The native call releases the GIL; Ctrl-C raises KeyboardInterrupt within a fraction of a second.
    """
    t = Trace.of(trace, format, options)
    limit = values.optional_count(limit, "limit")
    threads = values.optional_count(threads, "threads", maximum=4096)
    # Learned policies written in Python ("lrb", "lrb(memory_window=...)") become their classes.
    # A single string is one policy (one size), not its characters.
    given = [_learned.resolve(p) or p for p in values.as_list(policies, "policies")]
    pols = [None if is_python_policy(p) else parse_policy(p) for p in given]
    size_list = values.as_list(sizes, "sizes")
    if object_sizes:
        for cls in given:
            if is_python_policy(cls) and not cls.object_sizes:
                raise _core.ConfigError(
                    f"run: policy '{cls.policy_name()}' (written in Python) runs in page mode only "
                    "(its class sets object_sizes = False); run it with object_sizes=False"
                )
        cache: dict[str, int] = {}

        def footprint_bytes() -> int:
            if "n" not in cache:
                cache["n"] = object_footprint(t, limit, progress)
            return cache["n"]

        pages = [resolve_object_size(s, footprint_bytes) for s in size_list]
    else:
        pages = resolve_sizes(t, size_list, limit, progress)
    instances = [{"policy": p["name"], "params": p["params"], "size": n} for p in pols if p for n in pages]
    # Policies written in Python: one object per size; the core returns their rows last.
    external = [(cls.policy_name(), n, cls(n)) for cls in given if is_python_policy(cls) for n in pages]
    requested = [str(s) for p in pols if p for s in size_list] + [str(s) for p in pols if p is None for s in size_list]
    # Row k of the core's output is row order[k] of the user's policies x sizes.
    order = [i * len(size_list) + j for i, p in enumerate(pols) if p for j in range(len(size_list))] + [
        i * len(size_list) + j for i, p in enumerate(pols) if p is None for j in range(len(size_list))
    ]
    with _progress(progress, t, limit) as callback:
        out = json.loads(
            _core.run(
                t.to_json(),
                json.dumps(instances),
                _system_json(system),
                [str(f) for f in device_files],
                threads or min(len(instances) + len(external), os.cpu_count() or 1),
                limit,
                callback,
                object_sizes,
                external,
                [
                    (_system_json(v.get("system", system)), [str(f) for f in v.get("device_files", ())])
                    for v in variants
                ],
            )
        )
    if variants:
        frames = [pd.DataFrame(r) for r in [out["rows"], *out["variant_rows"]]]
        return pd.concat(
            [_frame(f, out, t, requested, external, order).assign(variant=k) for k, f in enumerate(frames)],
            ignore_index=True,
        )
    return _frame(pd.DataFrame(out["rows"]), out, t, requested, external, order)


def _frame(df: pd.DataFrame, out: dict, t: Trace, requested: list, external: list, order: list) -> pd.DataFrame:
    """The core's rows of one pricing of a run as :func:`run` returns them."""
    if df.empty:
        return df
    df.insert(0, "trace", t.name)
    df.insert(3, "size", requested)
    if external:
        # The core returns the Python policies' rows last, in order: their params and labels.
        ext = df.index[len(df) - len(external) :]
        if "params" in df.columns:
            df.loc[ext, "params"] = [
                json.dumps(type(o).policy_params(), separators=(",", ":"), sort_keys=True) for _, _, o in external
            ]
        if "label" in df.columns:
            df.loc[ext, "label"] = [type(o).policy_label() for _, _, o in external]
        df.index = order
        df = df.sort_index().reset_index(drop=True)
    df.attrs["meta"] = out["meta"]
    return df


class _RichProgress:
    """Progress display for long runs, on stderr: references replayed and their rate, with a bar,
    the share done and the time remaining when the total is known, either in references (a
    native trace's trailer, a generator's ``n=``, ``limit``) or in bytes of the trace file read so
    far (compressed bytes for a compressed file: the position of the file the core has open,
    from ``/proc/self/fdinfo``, Linux)."""

    def __init__(self, label: str, total: int | None = None, path: str | None = None):
        import time

        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        self._file = None
        if total is None and path is not None and os.path.isfile(path) and os.path.isdir("/proc/self/fdinfo"):
            self._file = (os.path.realpath(path), os.path.getsize(path))
        self._fd: int | None = None
        known = total or (self._file[1] if self._file else None)
        # The numbers are never cut: in a narrow terminal the name and the bar give way.
        whole = lambda: Column(no_wrap=True)  # noqa: E731
        name = Column(no_wrap=True, overflow="ellipsis", ratio=2)
        columns = [SpinnerColumn(), TextColumn("[bold]{task.description}", table_column=name)]
        if known:
            columns += [
                BarColumn(bar_width=None, table_column=Column(ratio=1)),
                TextColumn("{task.percentage:>5.1f}%", table_column=whole()),
            ]
        columns += [
            TextColumn("{task.fields[refs]} refs", table_column=whole()),
            TextColumn("{task.fields[rate]}", table_column=whole()),
            TimeElapsedColumn(table_column=whole()),
        ]
        if known:
            columns += [TextColumn("ETA", table_column=whole()), TimeRemainingColumn(table_column=whole())]
        self._p = Progress(*columns, transient=True, expand=True, console=Console(stderr=True))
        self._task = self._p.add_task(label, total=known, rate="", refs="0")
        self._p.start()
        self._t0 = time.perf_counter()
        self._time = time.perf_counter

    def _file_position(self) -> int | None:
        """Bytes of the trace file the core has read (its open descriptor's offset)."""
        path, _ = self._file
        if self._fd is None:
            for fd in sorted(os.listdir("/proc/self/fd"), key=int, reverse=True):
                try:
                    if os.readlink(f"/proc/self/fd/{fd}") == path:
                        self._fd = int(fd)
                        break
                except OSError:
                    continue
            else:
                return None
        try:
            with open(f"/proc/self/fdinfo/{self._fd}") as f:
                return int(f.readline().split()[1])
        except (OSError, ValueError, IndexError):
            self._fd = None
            return None

    def __call__(self, done: int) -> None:
        dt = max(self._time() - self._t0, 1e-9)
        completed = done
        if self._file is not None:
            completed = self._file_position()
            if completed is None:
                completed = self._p.tasks[0].completed
        self._p.update(self._task, completed=completed, refs=f"{done:,}", rate=f"{done / dt / 1e6:.2f} M refs/s")

    def close(self) -> None:
        self._p.stop()


def _expected_refs(t: Trace, limit: int | None) -> int | None:
    """References a replay of ``t`` will make, when cheaply known: a native trace's access count
    from its trailer (one reference per access when each touches one page, as generated traces
    do), capped by ``limit``; else ``limit``; else None (no bar, no ETA)."""
    total = None
    if (t.format in (None, "native")) and t.path.endswith(".tlt") and hasattr(_core, "native_totals"):
        try:
            records, events, _ = _core.native_totals(t.path)
            total = records - events
        except (OSError, _core.TierlabError):
            total = None
    if total is None and _is_generator(t.path):
        m = re.search(r"(?:^|[,:])n=([0-9_]+)(?:,|$)", t.path)
        total = int(m.group(1).replace("_", "")) if m else None
    if limit is not None:
        total = limit if total is None else min(total, limit)
    return total


@contextlib.contextmanager
def _progress(progress, t: Trace, limit: int | None, label: str | None = None):
    """The callback a pass over ``t`` reports to (None for none): ``progress`` itself when it is
    callable, a :class:`_RichProgress` bar (closed on the way out) when it is True."""
    if progress is not True:
        yield progress if callable(progress) else None
        return
    bar = _RichProgress(
        f"{label} {t.name}" if label else t.name,
        _expected_refs(t, limit),
        None if _is_generator(t.path) else t.path,
    )
    try:
        yield bar
    finally:
        bar.close()
