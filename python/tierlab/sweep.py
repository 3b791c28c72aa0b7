"""Running a sweep: one pass per (trace, system) group feeds every policy instance of the group;
groups run on local processes (default, all cores) or on a Dask distributed cluster; finished
groups land in the :class:`~tierlab.store.Store` as they complete."""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import pandas as pd

from tierlab import _core
from tierlab.experiment import Cell, Experiment
from tierlab.store import Store

__all__ = ["Store", "run_group", "sweep", "default_store", "TIMING_COLUMNS"]

#: Columns that measure the machine, not the simulation: excluded when comparing runs.
TIMING_COLUMNS = ("policy_seconds", "accesses_per_second", "elapsed_s")


def run_group(cells: list[Cell], threads: int = 1) -> pd.DataFrame:
    """Replays one trace once for all ``cells`` (same trace, system, limit) and returns their rows."""
    first = cells[0]
    instances = [{"policy": c.policy, "params": c.params, "size": c.size_pages} for c in cells]
    t0 = time.perf_counter()
    out = json.loads(
        _core.run(
            first.trace.to_json(),
            json.dumps(instances),
            json.dumps(first.system),
            list(first.devices),
            threads,
            first.limit,
            None,
        )
    )
    elapsed = time.perf_counter() - t0
    df = pd.DataFrame(out["rows"])
    df.insert(0, "cell_key", [c.key for c in cells])
    df.insert(1, "trace", first.trace_label)
    df.insert(2, "system", first.system_label)
    df.insert(5, "size", [c.size for c in cells])
    df["trace_checksum"] = first.trace_checksum
    df["elapsed_s"] = elapsed
    return df


def _groups(cells: Iterable[Cell]) -> list[list[Cell]]:
    groups: dict[tuple, list[Cell]] = defaultdict(list)
    for c in cells:
        groups[c.group()].append(c)
    return list(groups.values())


def _split(group: list[Cell], max_cells: int) -> list[list[Cell]]:
    return [group[i : i + max_cells] for i in range(0, len(group), max_cells)]


def sweep(
    exp: Experiment,
    store: Store,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    max_cells_per_task: int = 64,
) -> pd.DataFrame:
    """Runs the cells of ``exp`` missing from ``store`` and returns every cell's row."""
    done = store.keys()
    todo = [c for c in exp.cells if c.key not in done]
    tasks = [part for g in _groups(todo) for part in _split(g, max_cells_per_task)]
    cores = workers or os.cpu_count() or 1
    bar = _Bar(len(exp.cells), len(exp.cells) - len(todo), enabled=progress)
    try:
        if not tasks:
            pass
        elif scheduler:
            _run_dask(tasks, store, scheduler, bar)
        elif cores == 1 or len(tasks) == 1:
            for t in tasks:
                _land(store, run_group(t, threads=cores), bar)
        else:
            # Processes across groups; threads across a group's instances with what is left.
            procs = min(cores, len(tasks))
            threads = max(1, cores // procs)
            with ProcessPoolExecutor(max_workers=procs, initializer=_die_with, initargs=(os.getpid(),)) as pool:
                pending = {pool.submit(run_group, t, threads) for t in tasks}
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        _land(store, f.result(), bar)
    finally:
        bar.close()
    keys = {c.key for c in exp.cells}
    df = store.load()
    return df[df["cell_key"].isin(keys)].reset_index(drop=True) if not df.empty else df


def _die_with(parent: int) -> None:
    """Worker initializer: the worker ends when ``parent`` does, SIGKILL included (a killed
    parent cannot tell its pool to stop). Linux: PR_SET_PDEATHSIG; elsewhere a thread polls
    the parent's pid once a second."""
    import signal
    import threading

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    # The parent may have died before the signal was set up.
    if os.getppid() != parent:
        os._exit(1)


def _land(store: Store, rows: pd.DataFrame, bar: _Bar) -> None:
    store.write(rows)
    bar.advance(len(rows), int(rows["accesses"].sum()))


def _run_dask(tasks: list[list[Cell]], store: Store, scheduler: str, bar: _Bar) -> None:
    from dask.distributed import Client, as_completed

    with Client(scheduler) as client:
        futures = [client.submit(run_group, t, 1, pure=False) for t in tasks]
        for fut in as_completed(futures):
            _land(store, fut.result(), bar)


class _Bar:
    """Cells done, accesses per second and ETA."""

    def __init__(self, total: int, done: int, enabled: bool):
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.accesses = 0
        if not enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.p = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cells"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        )
        self.task = self.p.add_task("sweep", total=total, completed=done, rate="")
        self.p.start()

    def advance(self, cells: int, accesses: int) -> None:
        self.accesses += accesses
        if self.enabled:
            rate = self.accesses / max(time.perf_counter() - self.t0, 1e-9)
            self.p.update(self.task, advance=cells, rate=f"{rate / 1e6:.2f} M accesses/s")

    def close(self) -> None:
        if self.enabled:
            self.p.stop()


def default_store(exp: Experiment, root: str | Path = "results") -> Store:
    return Store(Path(root) / exp.name)
