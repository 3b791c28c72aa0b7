"""Progress of the footprint pass (`tierlab info`, a share of the footprint in `tierlab run`): the
same display as a replay, by compressed bytes read, and nothing when stderr is not a terminal."""

from __future__ import annotations

import gzip
import subprocess
import sys
import time

import numpy as np
import pytest

from tierlab import api

REFS = 2_000_000


@pytest.fixture(scope="module")
def gz_trace(tmp_path_factory):
    """A gzip-compressed text trace long enough for several reports (about a second to read)."""
    path = tmp_path_factory.mktemp("progress") / "big.trace.gz"
    pages = np.random.default_rng(7).integers(0, 200_000, REFS)
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write("\n".join(map(str, pages.tolist())))
        f.write("\n")
    return path, len(np.unique(pages))


def recording_bar(monkeypatch):
    """Replaces the progress display by one that records (description, completed, total) at each
    report, after the real display has taken it."""
    seen = []

    class Recording(api._RichProgress):
        def __call__(self, done):
            super().__call__(done)
            task = self._p.tasks[0]
            seen.append((task.description, task.completed, task.total, time.perf_counter()))

    monkeypatch.setattr(api, "_RichProgress", Recording)
    return seen


def test_info_reports_compressed_bytes_read_growing_to_the_whole_file(gz_trace, monkeypatch):
    path, distinct = gz_trace
    seen = recording_bar(monkeypatch)
    t0 = time.perf_counter()
    inf = api.info(path, progress=True)
    elapsed = time.perf_counter() - t0
    assert inf["page_refs"] == REFS and inf["distinct_pages"] == distinct
    size = path.stat().st_size
    shares = [done / total for _, done, total, _ in seen]
    assert all(total == size for _, _, total, _ in seen)
    assert len(shares) >= 2, seen
    assert shares == sorted(shares) and shares[0] < shares[-1] == 1.0
    # At most every 100 ms, plus the last report.
    assert len(seen) <= elapsed / 0.1 + 2


def test_a_share_of_the_footprint_shows_its_pass_before_the_replay(gz_trace, monkeypatch):
    path, distinct = gz_trace
    seen = recording_bar(monkeypatch)
    df = api.run(path, policies=["lru"], sizes=["10%"], progress=True)
    assert int(df["size_pages"].iloc[0]) == round(distinct * 0.1)
    footprint = [(done, total) for desc, done, total, _ in seen if desc == "footprint of big.trace.gz"]
    assert len(footprint) >= 2 and footprint[-1][0] == footprint[-1][1] == path.stat().st_size
    assert [d for d, _ in footprint] == sorted(d for d, _ in footprint)
    # The replay's own display follows it.
    assert seen[-1][0] == "big.trace.gz"


def test_a_callable_hook_gets_growing_reference_counts_ending_at_the_total():
    n = 300_000
    seen = []
    inf = api.info(f"zipf:alpha=0.9,pages=5000,n={n},seed=2", progress=seen.append)
    assert inf["page_refs"] == n
    assert seen and seen == sorted(set(seen)) and seen[-1] == n
    seen.clear()
    api.info(f"zipf:alpha=0.9,pages=5000,n={n},seed=2", limit=1000, progress=seen.append)
    assert seen[-1] == 1000


def test_an_exception_from_the_hook_stops_the_pass(gz_trace):
    path, _ = gz_trace

    def stop(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        api.info(path, progress=stop)


@pytest.mark.parametrize("argv", [["info"], ["run", "-s", "10%"]])
def test_nothing_on_stderr_when_it_is_not_a_terminal(gz_trace, argv):
    path, _ = gz_trace
    cmd = [sys.executable, "-m", "tierlab", argv[0], str(path), *argv[1:]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "big.trace.gz" in proc.stdout


def test_in_80_columns_the_numbers_stay_whole():
    from io import StringIO

    from rich.console import Console

    bar = api._RichProgress("footprint of a_rather_long_trace_name_exec.csv.gz", total=10_000_000)
    try:
        bar(3_759_465)
        out = StringIO()
        Console(file=out, width=80).print(bar._p.make_tasks_table(bar._p.tasks))
    finally:
        bar.close()
    line = out.getvalue().rstrip("\n")
    assert len(line) <= 80 and "\n" not in line, line
    numbers = line.split("━")[-1].split("╸")[-1]
    assert "37.6%" in numbers and "3,759,465 refs" in numbers and "M refs/s" in numbers and "ETA" in numbers
    assert "…" not in line[line.index("37.6%") :], line
