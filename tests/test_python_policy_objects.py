"""Policies written in Python (tierlab.PythonPolicy) in object-size mode: the same replay loop and
byte accounting as the built-in object-size policies. The 20-line ``PyLru`` gives the built-in
``lru``'s object and byte misses on cloudPhysicsIO with sizes; hand-worked traces check the
eviction of several objects for one, the bypass of objects larger than the cache (no callback),
the size an object keeps on a hit whose request gives another size, and the error for a victim
that is not resident; LRB runs with its size feature in bytes."""

from __future__ import annotations

import numpy as np
import pytest

import tierlab
from tierlab.cli import main
from tierlab.pypolicy import PyLru, PythonPolicy

from conftest import calls, trace_path

ORACLE = "libcachesim/cloudPhysicsIO.oracleGeneral.bin"
ORACLE_RECORD = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])


def write_objects(path, reqs) -> str:
    """An oracleGeneral trace of ``(object, size)`` requests, request ``i`` at time ``i``."""
    rec = np.zeros(len(reqs), dtype=ORACLE_RECORD)
    rec["time"] = np.arange(len(reqs))
    rec["id"] = [o for o, _ in reqs]
    rec["size"] = [s for _, s in reqs]
    rec["next"] = -1
    p = path / "t.oracleGeneral.bin"
    p.write_bytes(rec.tobytes())
    return str(p)


class Logged(PythonPolicy):
    """FIFO (``lru=False``) or LRU through the callbacks, logging every call in ``log``."""

    request_info = True
    lru = False
    log: list = []

    def __init__(self, capacity):
        super().__init__(capacity)
        self.order: dict[int, None] = {}
        type(self).log.clear()
        type(self).capacity_seen = capacity

    def on_hit(self, page, seq, time, size):
        self.log.append(("hit", page, seq, size))
        if self.lru:
            self.order[page] = self.order.pop(page)

    def on_miss(self, page, seq, time, size):
        self.log.append(("miss", page, seq, size))
        self.order[page] = None

    def evict(self, page, seq, time, size):
        self.log.append(("evict", page, seq, size))
        victim = next(iter(self.order))
        del self.order[victim]
        return victim


def counts(df, i=0):
    r = df.iloc[i]
    return int(r["hits"]), int(r["misses"]), int(r["byte_misses"]), int(r["too_large"])


def test_python_lru_equals_builtin_lru_with_object_sizes():
    trace = trace_path(ORACLE)
    # 64 KiB: the requests of 68 KiB (the largest here) are larger than the cache.
    sizes = ["64KiB", 3_000_000, "64MiB", "10%"]
    df = tierlab.run(trace, policies=[PyLru, "lru"], sizes=sizes, object_sizes=True, threads=2)
    assert df["policy"].tolist() == ["pylru"] * 4 + ["lru"] * 4
    py, builtin = df.iloc[:4].reset_index(drop=True), df.iloc[4:].reset_index(drop=True)
    assert (py["object_sizes"] == 1).all()
    assert py["size_bytes"].tolist() == builtin["size_bytes"].tolist()
    assert py["size_bytes"].iloc[:3].tolist() == [65536, 3_000_000, 64 * 2**20]
    for col in ["misses", "byte_misses", "too_large", "hits", "evictions", "byte_accesses", "resident_at_end"]:
        assert py[col].tolist() == builtin[col].tolist(), col
    assert py["too_large"].iloc[0] > 0 and py["too_large"].iloc[2] == 0
    assert py["misses"].iloc[0] > py["misses"].iloc[1] > py["misses"].iloc[2] > 0
    assert (py["byte_miss_ratio"] != py["miss_ratio"]).all()


def test_several_objects_are_evicted_for_one_big_one(tmp_path):
    # 10 bytes, FIFO: a(4) b(3) c(2) use 9; d(8) evicts a, then b, and fits (2 + 8); c hits.
    f = write_objects(tmp_path, [(1, 4), (2, 3), (3, 2), (4, 8), (3, 2)])
    df = tierlab.run(f, policies=[Logged, "fifo"], sizes=[10], object_sizes=True)
    assert counts(df, 0) == counts(df, 1) == (1, 4, 17, 0)
    assert Logged.capacity_seen == 10  # bytes
    assert Logged.log == calls(
        "miss 1 0 4", "miss 2 1 3", "miss 3 2 2", "evict 4 3 8", "evict 4 3 8", "miss 4 3 8", "hit 3 4 2"
    )
    assert df["evictions"].tolist() == [2, 2]


def test_an_object_larger_than_the_cache_is_bypassed_without_a_callback(tmp_path):
    # 10 bytes: e(11) is larger than the cache: a miss, counted too_large, no callback, a stays.
    f = write_objects(tmp_path, [(1, 4), (5, 11), (1, 4), (5, 10), (1, 4)])
    df = tierlab.run(f, policies=[Logged, "fifo"], sizes=[10], object_sizes=True)
    assert counts(df, 0) == counts(df, 1) == (1, 4, 29, 1)
    assert [c[:3] for c in Logged.log] == calls("miss 1 0", "hit 1 2", "evict 5 3", "miss 5 3", "evict 1 4", "miss 1 4")


def test_a_hit_with_another_size_keeps_the_admitted_size(tmp_path):
    # 10 bytes: a(4), then a as 9 bytes hits and still counts 4, so b(6) fits with no eviction;
    # c(1) then evicts a. on_hit gets the request's size (9). As the built-in fifo and lru.
    f = write_objects(tmp_path, [(1, 4), (1, 9), (2, 6), (3, 1), (2, 6)])
    df = tierlab.run(f, policies=[Logged, "fifo", "lru"], sizes=[10], object_sizes=True)
    assert counts(df, 0) == counts(df, 1) == counts(df, 2) == (2, 3, 11, 0)
    assert Logged.log == calls("miss 1 0 4", "hit 1 1 9", "miss 2 2 6", "evict 3 3 1", "miss 3 3 1", "hit 2 4 6")
    # An object admitted small and re-requested larger than the cache is still a hit.
    f = write_objects(tmp_path, [(1, 4), (1, 50), (2, 6)])
    df = tierlab.run(f, policies=[Logged, "lru"], sizes=[10], object_sizes=True)
    assert counts(df, 0) == counts(df, 1) == (1, 2, 10, 0)


def test_random_sized_traces_agree_with_builtin_fifo_and_lru(tmp_path):
    rng = np.random.default_rng(3)
    objs = rng.integers(0, 40, 3000)
    sizes = rng.integers(1, 100, 3000)  # sizes change between requests of an object
    f = write_objects(tmp_path, list(zip(objs.tolist(), sizes.tolist(), strict=True)))

    class LoggedLru(Logged):
        lru = True

    caps = [50, 500, 1500]
    df = tierlab.run(f, policies=[Logged, LoggedLru, "fifo", "lru"], sizes=caps, object_sizes=True)
    got = [counts(df, i) for i in range(len(df))]
    assert got[:6] == got[6:]
    assert got[0][3] > 0 and got[2][0] > 0


def test_a_victim_that_is_not_resident_is_a_clean_error(tmp_path):
    class Wrong(PyLru):
        name = None  # the class name

        def evict(self, page):
            return 999

    f = write_objects(tmp_path, [(1, 6), (2, 6)])
    with pytest.raises(tierlab.PolicyError, match=r"policy 'Wrong': evict\(object 2\).*999, which is not resident"):
        tierlab.run(f, policies=[Wrong], sizes=[10], object_sizes=True)

    class NotInt(PyLru):
        name = None

        def evict(self, page):
            return "one"

    with pytest.raises(tierlab.PolicyError, match=r"policy 'NotInt': evict\(object 2\).*as an int") as e:
        tierlab.run(f, policies=[NotInt], sizes=[10], object_sizes=True)
    assert isinstance(e.value.__cause__, TypeError)

    class Raises(PyLru):
        name = None

        def on_hit(self, page):
            raise KeyError(page)

    f = write_objects(tmp_path, [(1, 6), (1, 6)])
    with pytest.raises(tierlab.PolicyError, match=r"policy 'Raises': on_hit\(object 1\)") as e:
        tierlab.run(f, policies=[Raises], sizes=[10], object_sizes=True)
    assert isinstance(e.value.__cause__, KeyError)


def test_a_page_mode_only_class_is_refused_and_listed_so():
    class PagesOnly(PyLru):
        name = None
        object_sizes = False

    with pytest.raises(tierlab.ConfigError, match="policy 'PagesOnly' .*page mode only"):
        tierlab.run(trace_path(ORACLE), policies=["lru", PagesOnly], sizes=["1MiB"], object_sizes=True)
    # Page mode still runs it.
    df = tierlab.run(trace_path(ORACLE), policies=[PagesOnly, "lru"], sizes=[100], limit=5000)
    assert df["misses"].iloc[0] == df["misses"].iloc[1]


def test_policies_lists_learned_object_size_support_from_the_class():
    df = tierlab.policies().set_index("name")
    assert bool(df.loc["lru", "object_sizes"]) and not bool(df.loc["car", "object_sizes"])
    from tierlab import learned

    for row in learned.POLICY_INFO:
        cls = learned.POLICIES[row["name"]]
        assert bool(df.loc[row["name"], "object_sizes"]) == cls.object_sizes, row["name"]
    assert bool(df.loc["lrb", "object_sizes"])
    assert bool(df.loc["glcache", "object_sizes"]) and bool(df.loc["3lcache", "object_sizes"])


def test_lrb_runs_in_object_mode_with_sizes_as_its_feature():
    pytest.importorskip("lightgbm")
    from tierlab.learned import Lrb

    made = []

    class Kept(Lrb.with_params(memory_window=20_000, training_samples=4_096)):
        def __init__(self, capacity, **kw):
            super().__init__(capacity, **kw)
            made.append(self)

    trace = trace_path(ORACLE)
    df = tierlab.run(trace, policies=[Kept, "lru"], sizes=["5MiB"], object_sizes=True, limit=40_000, threads=2)
    (lrb,) = made
    assert lrb.capacity == 5 * 2**20
    assert lrb.models >= 1
    # The size feature holds the objects' bytes (page mode: all 1).
    remembered = lrb._table[: len(lrb._keys), lrb._c_size]
    assert remembered.min() >= 512 and len(np.unique(remembered)) > 5
    assert df["misses"].iloc[0] != df["misses"].iloc[1]
    assert df["byte_accesses"].iloc[0] == df["byte_accesses"].iloc[1]
    # Before its first model LRB is LRU, in object-size mode as in page mode.
    s = lrb.trained_at[0]
    part = tierlab.run(
        trace,
        policies=[Lrb.with_params(memory_window=20_000, training_samples=4_096), "lru"],
        sizes=["5MiB"],
        object_sizes=True,
        limit=s,
    )
    assert counts(part, 0) == counts(part, 1)
    assert part["misses"].iloc[0] > 0


def test_cli_runs_lrb_in_object_mode(capsys):
    pytest.importorskip("lightgbm")
    args = ["run", str(trace_path(ORACLE)), "--object-sizes", "-p", "lru", "-p", "lrb", "-s", "5MiB", "-q"]
    assert main([*args, "--limit", "20000"]) == 0
    out = capsys.readouterr().out
    assert "object requests" in out and "lrb" in out
