"""Sweeps: expansion, resumable store, Dask cluster equivalence, and the HTML report."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tierlab
from tierlab import experiment, sweep
from tierlab.store import Store
from tierlab.sweep import TIMING_COLUMNS


def _trace(path: Path, seed: int, n: int = 20000, pages: int = 3000) -> Path:
    rng = np.random.default_rng(seed)
    ids = (rng.zipf(1.2, n) - 1) % pages
    path.write_text("\n".join(map(str, ids)) + "\n")
    return path


def _experiment(tmp_path: Path, n_traces: int = 2, n: int = 20000) -> Path:
    for i in range(n_traces):
        _trace(tmp_path / f"t{i}.trace", seed=i, n=n)
    traces = "\n".join(f'[[trace]]\npath = "t{i}.trace"\n' for i in range(n_traces))
    exp = tmp_path / "exp.toml"
    exp.write_text(
        f'name = "unit"\nsizes = [50, "5%", "20%"]\n{traces}\n'
        '[[policy]]\nname = "lru"\n\n[[policy]]\nname = "clock"\nbits = [1, 2]\n\n[[policy]]\nname = "opt"\n'
    )
    return exp


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in TIMING_COLUMNS if c in df]).sort_values("cell_key").reset_index(drop=True)


def test_expansion_counts_and_keys(tmp_path):
    exp = experiment.load(_experiment(tmp_path))
    # 2 traces x (lru + clock x 2 bits + opt) x 3 sizes
    assert len(exp.cells) == 2 * 4 * 3
    assert len({c.key for c in exp.cells}) == len(exp.cells)
    assert {c.params.get("bits") for c in exp.cells if c.policy == "clock"} == {1, 2}


def test_experiment_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('sizes = [10]\nbogus = 1\n[[trace]]\npath = "x"\n[[policy]]\nname = "lru"\n')
    with pytest.raises(tierlab.ConfigError, match=r"bad\.toml: top level: unknown key\(s\) bogus; allowed: "):
        experiment.load(bad)
    bad.write_text('sizes = [10]\n[[trace]]\npath = "x"\nfromat = "lirs"\n[[policy]]\nname = "lru"\n')
    with pytest.raises(tierlab.ConfigError, match=r"trace\[0\]: unknown key\(s\) fromat"):
        experiment.load(bad)


def test_sweep_matches_direct_run_and_resumes(tmp_path):
    exp = experiment.load(_experiment(tmp_path))
    store = Store(tmp_path / "store")
    df = sweep.sweep(exp, store, workers=2, progress=False)
    assert len(df) == len(exp.cells) and df["cell_key"].is_unique
    direct = tierlab.run(tmp_path / "t0.trace", policies=["lru"], sizes=[50])
    row = df[(df["trace"] == "t0.trace") & (df["policy"] == "lru") & (df["size_pages"] == 50)]
    assert int(row["misses"].iloc[0]) == int(direct["misses"].iloc[0])
    parts = store.parts()
    again = sweep.sweep(exp, store, workers=2, progress=False)
    assert store.parts() == parts  # nothing recomputed
    pd.testing.assert_frame_equal(_comparable(df), _comparable(again))


def test_sweep_killed_midway_completes_exactly_once(tmp_path):
    exp_file = _experiment(tmp_path, n_traces=6, n=60000)
    results = tmp_path / "store"
    cmd = [
        sys.executable,
        "-m",
        "tierlab.cli",
        "sweep",
        str(exp_file),
        "--results",
        str(results),
        "--workers",
        "1",
        "-q",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(results.glob("part-*.parquet"))) < 2:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    assert proc.poll() is None, f"sweep ended before it could be killed: {proc.stderr.read().decode()}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = Store(results).load()
    exp = experiment.load(exp_file)
    assert 0 < len(partial) < len(exp.cells)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    final = Store(results).load()
    rows_on_disk = pd.concat([pd.read_parquet(p) for p in Store(results).parts()])
    assert len(rows_on_disk) == len(exp.cells) == len(final)
    assert rows_on_disk["cell_key"].is_unique
    fresh = sweep.sweep(exp, Store(tmp_path / "fresh"), workers=2, progress=False)
    pd.testing.assert_frame_equal(_comparable(final), _comparable(fresh))


def test_dask_local_cluster_gives_the_same_rows_exactly_once(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    exp = experiment.load(_experiment(tmp_path))
    local_store, dask_store = Store(tmp_path / "local"), Store(tmp_path / "dask")
    local = sweep.sweep(exp, local_store, workers=1, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        # Small tasks, so both workers get several and their parts land interleaved.
        remote = sweep.sweep(exp, dask_store, scheduler=cluster.scheduler_address, progress=False, max_cells_per_task=3)
        parts = dask_store.parts()
        # A second sweep over the same store computes nothing.
        again = sweep.sweep(exp, dask_store, scheduler=cluster.scheduler_address, progress=False)
    assert dask_store.parts() == parts
    assert len(parts) == len(exp.cells) // 3
    for store in (local_store, dask_store):
        on_disk = pd.concat([pd.read_parquet(p) for p in store.parts()])
        assert len(on_disk) == len(exp.cells) and on_disk["cell_key"].is_unique
    pd.testing.assert_frame_equal(_comparable(local), _comparable(remote))
    pd.testing.assert_frame_equal(_comparable(remote), _comparable(again))


def test_report_is_self_contained_html(tmp_path):
    exp = experiment.load(_experiment(tmp_path))
    store = Store(tmp_path / "store")
    sweep.sweep(exp, store, workers=1, progress=False)
    from tierlab.cli import main

    out = tmp_path / "r.html"
    assert main(["report", str(store.root), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("data:image/png;base64,") >= 2 and "<table" in text
    assert 'src="http' not in text
