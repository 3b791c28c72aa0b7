"""LRB (tierlab.learned.Lrb, Song et al. NSDI 2020) in Python on LightGBM, and the
``request_info`` callbacks it runs on.

- Until its first model is trained LRB is LRU exactly (real trace, against the built-in ``lru``).
- On a trace where learning must help it misses less than LRU. The trace was fixed before any
  result was looked at: a loop over 4,000 pages (the scan, 8x the cache) interleaved 50/50 with
  Zipf(1.0) draws over 1,000 other pages (the hot set), 60,000 references, seed 7; cache 500
  pages; LRB with a memory window of 2,000 references (below the loop's period of 8,000, so scan
  pages are labelled "beyond the window") and 4,096 training samples per model.
- Seeded runs repeat exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import tierlab
from tierlab.learned import Lrb, resolve
from tierlab.pypolicy import PythonPolicy

from conftest import trace_path

pytest.importorskip("lightgbm")


def scan_zipf_pages(n=60_000, loop=4_000, hot=1_000, alpha=1.0, p_scan=0.5, seed=7) -> np.ndarray:
    """A looping scan over ``loop`` pages interleaved with Zipf(``alpha``) draws over ``hot`` others."""
    rng = np.random.default_rng(seed)
    w = np.arange(1, hot + 1, dtype=np.float64) ** -alpha
    hot_draws = rng.choice(hot, size=n, p=w / w.sum()) + loop
    is_scan = rng.random(n) < p_scan
    scan = (np.cumsum(is_scan) - 1) % loop
    return np.where(is_scan, scan, hot_draws).astype(np.uint64)


def write_pages(path, pages) -> str:
    path.write_text("\n".join(map(str, pages.tolist())) + "\n")
    return str(path)


def recording(**params):
    """An Lrb class with ``params`` whose objects are kept in ``cls.made`` (to read trained_at)."""
    base = Lrb.with_params(**params)

    class Recorded(base):
        made: list = []

        def __init__(self, capacity, **kw):
            super().__init__(capacity, **kw)
            Recorded.made.append(self)

    return Recorded


def test_request_info_callbacks_get_seq_time_and_size(tmp_path):
    seen = []

    class Fifo(PythonPolicy):
        request_info = True

        def __init__(self, capacity):
            super().__init__(capacity)
            self.q = []

        def on_hit(self, page, seq, time, size):
            seen.append(("hit", page, seq, size))

        def on_miss(self, page, seq, time, size):
            seen.append(("miss", page, seq, size))
            self.q.append(page)

        def evict(self, page, seq, time, size):
            seen.append(("evict", page, seq, size))
            return self.q.pop(0)

    f = write_pages(tmp_path / "t.trace", np.array([1, 2, 1, 3, 1], dtype=np.uint64))
    df = tierlab.run(f, policies=[Fifo, "fifo"], sizes=[2])
    assert df["misses"].tolist() == [4, 4]
    assert seen == [
        ("miss", 1, 0, 1),
        ("miss", 2, 1, 1),
        ("hit", 1, 2, 1),
        ("evict", 3, 3, 1),
        ("miss", 3, 3, 1),
        ("evict", 1, 4, 1),
        ("miss", 1, 4, 1),
    ]


def test_lrb_is_lru_until_its_first_model():
    trace = trace_path("lirs/sprite.trace.gz")
    sizes = [100, 500]
    cls = recording(memory_window=20_000, training_samples=8_192)
    df = tierlab.run(trace, policies=[cls, "lru"], sizes=sizes, threads=1)
    first = [m.trained_at[0] for m in cls.made]
    assert all(m.models >= 1 for m in cls.made), "LRB must train on sprite with these parameters"
    for size, s in zip(sizes, first, strict=True):
        # References 0 .. s-1 were decided without a model: exactly LRU's misses.
        part = tierlab.run(trace, policies=[Lrb.with_params(memory_window=20_000, training_samples=8_192), "lru"], sizes=[size], limit=s)
        assert part["misses"].iloc[0] == part["misses"].iloc[1], (size, s)
    # With the models the decisions change (the model is really used).
    assert df["misses"].tolist()[:2] != df["misses"].tolist()[2:]
    # With the defaults (128K samples per model) sprite is too short to train: LRU throughout.
    d = tierlab.run(trace, policies=["lrb", "lru"], sizes=[500])
    assert d["misses"].iloc[0] == d["misses"].iloc[1]


def test_lrb_beats_lru_on_scan_plus_zipf(tmp_path):
    f = write_pages(tmp_path / "scan_zipf.trace", scan_zipf_pages())
    spec = "lrb(memory_window=2000, training_samples=4096)"
    df = tierlab.run(f, policies=[spec, "lru"], sizes=[500])
    lrb, lru = df["misses"].tolist()
    assert lrb < lru, (lrb, lru)


def test_lrb_seeded_runs_repeat(tmp_path):
    f = write_pages(tmp_path / "scan_zipf.trace", scan_zipf_pages(n=30_000))
    specs = ["lrb(memory_window=2000, training_samples=2048, seed=3)"] * 2 + [
        "lrb(memory_window=2000, training_samples=2048, seed=4)"
    ]
    df = tierlab.run(f, policies=specs, sizes=[300])
    a, b, _ = df["misses"].tolist()
    assert a == b


def test_lrb_by_name_with_params_and_errors():
    cls = resolve("lrb(memory_window=100, seed=2)")
    assert issubclass(cls, Lrb) and cls.params == {"memory_window": 100, "seed": 2}
    assert resolve({"name": "lrb", "eviction_samples": 8}).params == {"eviction_samples": 8}
    assert resolve("lru") is None and resolve({"name": "lru"}) is None
    with pytest.raises(tierlab.ConfigError, match="unknown parameter"):
        resolve("lrb(window=3)")
    with pytest.raises(tierlab.ConfigError, match="at least 1"):
        Lrb(10, memory_window=0)
    assert "lrb" in tierlab.policies()["name"].tolist()


def test_lrb_without_lightgbm_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_lightgbm(name, *a, **k):
        if name == "lightgbm":
            raise ImportError("No module named 'lightgbm'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_lightgbm)
    with pytest.raises(ImportError, match=r"tierlab\[learned\]"):
        Lrb(10)
