"""3L-Cache (tierlab.learned.ThreeLCache, Zhou et al. FAST 2025) in Python on LightGBM.

- Before its first model it evicts the LRU object: hand-worked evictions, and the built-in ``lru``'s
  misses on real traces (sprite cut just before the first model; cloudPhysicsIO, where the
  defaults never train, also pip libcachesim's ``ThreeLCache`` exactly).
- Training samples and labels (re-request, leaving the history window, thinning after a model)
  on a hand-worked request sequence with scripted draws.
- Candidate selection (the sampling pointer from the LRU end with its frequency filter, new
  objects' quick demotion, one prediction serving ``len // eviction_rate`` evictions, stale
  heap entries skipped) on a hand-worked state with a stub model.
- Invariants and repeatability; names, parameters and errors.
- Learning helps on the scan + Zipf trace of tests/test_learned.py, and (TIERLAB_SLOW=1) agrees
  with pip libcachesim's ThreeLCache within 0.01 in miss ratio at four sizes on its 300,000-
  reference version.
- Object-size mode: hand-worked LRU-by-bytes victims and byte quick demotion, invariants on a
  sized trace, exact agreement with the built-in ``lru`` and pip libcachesim's ThreeLCache (sizes
  not ignored) on cloudPhysicsIO at four byte sizes (no model), and agreement within 0.02 (byte
  objective) and 0.005 (object objective) on a sized scan + Zipf trace where both train.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from test_learned import recording as recording_of

import tierlab
from tierlab.interop import write_oracle_general
from tierlab.learned import ThreeLCache, resolve

from conftest import scan_zipf_pages, trace_path, write_pages

pytest.importorskip("lightgbm")


def recording(**params):
    """A ThreeLCache class with ``params`` whose objects are kept in ``cls.made``."""
    return recording_of(ThreeLCache, **params)


class Script:
    """Scripted draws: ``randrange`` returns the next of ``ints``, ``random`` the next of ``floats``."""

    def __init__(self, ints=(), floats=()):
        self.ints, self.floats = list(ints), list(floats)

    def randrange(self, n):
        v = self.ints.pop(0)
        assert 0 <= v < n, (v, n)
        return v

    def random(self):
        return self.floats.pop(0)


class AgeModel:
    """A stand-in for the LightGBM model: predicts log(3 x age), so the oldest candidate is evicted
    and, with objective byte-miss-ratio, a heap value is 3 x (now - last) + now = 4 now - 3 last
    (no ties in the hand-worked cases below)."""

    def predict(self, x, num_threads=1):
        return np.log(3 * x[:, 0])


def request(p: ThreeLCache, page: int, seq: int):
    """One reference through the callbacks as tierlab makes them; returns the victim or None."""
    if page in p._res_pos:
        p.on_hit(page, seq, 0, 1)
        return None
    victim = p.evict(page, seq, 0, 1) if len(p._res) == p.capacity else None
    p.on_miss(page, seq, 0, 1)
    return victim


def test_lru_before_the_first_model_hand_worked(tmp_path):
    p = ThreeLCache(3)
    victims = [request(p, page, seq) for seq, page in enumerate([1, 2, 3, 1, 4, 2, 5, 1, 3])]
    # LRU: 1 2 3 | hit 1 -> 2 3 1 | 4 evicts 2 | 2 evicts 3 | 5 evicts 1 | 1 evicts 4 | 3 evicts 2
    assert victims == [None, None, None, None, 2, 3, 1, 4, 2]
    assert p.lru_order() == [5, 1, 3] and p.models == 0
    # The evicted objects' metadata stay in the window (3 x (2 - 1) + 2 = 5 entries), in order.
    assert [p._outq[s] for s in range(p._out_front, p._out_end)] == [2, 3, 1, 4, 2]
    f = write_pages(tmp_path / "t.trace", np.array([1, 2, 3, 1, 4, 2, 5, 1, 3], dtype=np.uint64))
    df = tierlab.run(f, policies=["3lcache", "lru"], sizes=[3])
    assert df["misses"].tolist() == [8, 8]


def test_is_lru_until_its_first_model_on_sprite():
    trace = trace_path("lirs/sprite.trace.gz")
    cls = recording(batch_size=2048)
    df = tierlab.run(trace, policies=[cls, "lru"], sizes=[500], limit=40_000)
    (p,) = cls.made
    assert p.models >= 1, "3L-Cache must train on sprite with 2,048 samples per model"
    s = p.trained_at[0]
    part = tierlab.run(trace, policies=[ThreeLCache.with_params(batch_size=2048), "lru"], sizes=[500], limit=s)
    assert part["misses"].iloc[0] == part["misses"].iloc[1] > 0, s
    assert df["misses"].iloc[0] != df["misses"].iloc[1]  # the model is used


@pytest.mark.parametrize("size", [490, 4897])
def test_never_trains_on_cloudphysics_with_defaults_so_equals_lru_and_libcachesim(size):
    """65,536 labels per model: cloudPhysicsIO (113,872 references) never gets a model, in tierlab
    or in pip libcachesim, so both are LRU: exact agreement."""
    lcs = pytest.importorskip("libcachesim")
    oracle = trace_path("libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    cls = recording()
    df = tierlab.run(oracle, policies=[cls, "lru"], sizes=[size])
    assert cls.made[0].models == 0
    ours, lru = df["misses"].astype(int).tolist()
    assert ours == lru
    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
    ratio, _ = lcs.ThreeLCache(size).process_trace(reader)
    assert round(ratio * int(df["accesses"].iloc[0])) == ours


def test_training_samples_and_labels_hand_worked():
    # Capacity 2, hsw 2: the window holds 2 x 1 + 2 = 4 out-of-cache entries. batch_size 2: a
    # model after the second label.
    p = ThreeLCache(2, batch_size=2)
    p._rng = Script(ints=[2, 0, 3, 2, 1, 2])
    for seq, page in enumerate([1, 2, 3]):  # 3 evicts 1 (LRU): sampling starts with the next request
        request(p, page, seq)
    assert p._sampling and p._meta[1][4] == 0  # 1 is in the queue's slot 0
    request(p, 2, 3)  # hit; draw 2 of 3 (2 resident + 1 queued): slot 0, object 1, sampled at 3
    assert p._meta[1][3] == 3 and p._labels == []
    assert request(p, 1, 4) == 3  # 1 requested again: labelled log1p(4 - 3); draw 0: resident 2 sampled at 4
    assert p._labels == [math.log1p(1)]
    # Features at the sample's time: age 3 - 0, no past gaps (0), size 1, one request.
    assert p._rows == [[3, 0, 0, 0, 1, 1]]
    assert p._meta[1][5:] == [4, 0, 0] and p._meta[1][1] == 2  # its gap (4) and count after the request
    assert request(p, 4, 5) == 2  # draw 3 of 4: slot 1, object 3, sampled at 5
    assert p._meta[3][3] == 5
    assert request(p, 5, 6) == 1  # draw 2 of 5: slot 0, object 1's dead entry (readmitted): no sample
    assert request(p, 6, 7) == 4  # draw 1: resident 5 sampled at 7; the window is full (4 entries): slot 0 (dead) goes
    assert p._meta[5][3] == 7 and p._out_front == 1 and p.models == 0
    # Draw 2: slot 1's object 3 (already sampled). Slot 1 leaves the window: 3's sample at 5 is
    # labelled B + age = 0 + (8 - 2), and 3 is forgotten; the second label trains the first model.
    request(p, 7, 8)
    assert 3 not in p._meta and p.models == 1 and p.trained_at == [8]
    assert p._boundary == [6, 6]  # B for later labels: the largest age seen before this model
    assert p._labels == [] and p._rows == []
    # With a model, a sample is kept with probability 1/4: 2 (sampled at 4, queued) is requested
    # again at 9 and its label is dropped (draw 0.9), though its sample is cleared.
    p._rng = Script(ints=[0, 0], floats=[0.9])
    request(p, 2, 9)
    assert p._labels == [] and p._meta[2][3] == -1
    # Kept (draw 0.1): 5, sampled at 7, requested at 10.
    p._rng = Script(ints=[0], floats=[0.1])
    p._meta[5][3] = 7
    request(p, 5, 10)
    assert p._labels == [math.log1p(3)]


def fill_200(**params):
    """200 objects, 5 and 6 requested twice (202 references), then the stub model; returns the
    policy and its rankings."""
    ranks = []

    class Seen(ThreeLCache):
        def _predict(self, cands):
            ranks.append(list(cands))
            super()._predict(cands)

    p = Seen(200, **params)
    for seq, page in enumerate([*range(10), 5, 6, *range(10, 200)]):
        request(p, page, seq)
    p.booster = AgeModel()  # from here on: new objects are tracked and evictions ranked
    return p, ranks


def test_candidate_selection_hand_worked():
    p, ranks = fill_200()
    assert p.lru_order()[:12] == [0, 1, 2, 3, 4, 7, 8, 9, 5, 6, 10, 11]
    victims = [request(p, 1000 + i, 202 + i) for i in range(9)]
    # sample_rate = int(1% of 200 + eviction_rate 2) = 4; the walk's first 200 x 1% + 2 = 4
    # positions are taken unconditionally, later ones only if requested once (sample_boundary 1).
    assert p.sample_rate == 4
    assert ranks == [
        [0, 1, 2, 3],  # at 202 (values 808 - 3k): evicts 0, then 1 at 203: 4 // 2 evictions per ranking
        [4, 7, 8, 9],  # at 204 (816 - 3k): 4 (804), then the earlier ranking's 2 (802)
        [10, 11, 12, 13],  # 5 and 6 skipped (requested twice); at 206: 3 (799), 7 (795) (10: 788)
        [1000, 1001, 14, 15, 16, 17],  # 6 new objects > 2% of 200: the oldest two first; 8, 9, 10
    ]
    assert victims == [0, 1, 4, 2, 3, 7, 8, 9, 10]
    assert p.predict_calls == 4 and p.evict_nums == 0


def test_hit_makes_a_heap_entry_stale():
    p, ranks = fill_200()
    assert request(p, 1000, 202) == 0
    assert request(p, 1, 203) is None  # a hit on the heap's next: its entry is stale
    assert 1 not in p._pred
    assert request(p, 1001, 204) == 2  # 1 (805) skipped; no new ranking (2 evictions per ranking)
    assert ranks == [[0, 1, 2, 3]] and 1 in p._res_pos


def test_candidate_selection_object_objective_samples_every_object():
    p, ranks = fill_200(objective="object-miss-ratio")
    for i in range(6):
        request(p, 1000 + i, 202 + i)
    assert ranks[2] == [5, 6, 10, 11]  # no frequency filter with object-miss-ratio


def test_stale_heap_falls_back_to_a_new_ranking_then_lru():
    p = ThreeLCache(3)
    for seq, page in enumerate([1, 2, 3]):
        request(p, page, seq)
    p.booster = AgeModel()
    p._pred = {1: 99}  # a heap whose only entry is stale
    p._heap = [(-1.0, 1, 1)]
    p.evict_nums = 1
    assert p._choose() == 1  # ranked again: sample_rate 1 (3 objects), the walk's first object
    p._pred, p._heap, p._ptr = {}, [], None
    p._rank = lambda: 0  # a ranking that finds nothing: the LRU object
    assert p._choose() == p._head == 1


def test_invariants_and_repeatability(tmp_path):
    pages = scan_zipf_pages(n=20_000)
    f = write_pages(tmp_path / "sz.trace", pages)
    cls = recording(batch_size=1024, seed=3)
    df = tierlab.run(f, policies=[cls, cls], sizes=[300])
    a, b = cls.made
    assert a.models == b.models >= 2
    assert df["misses"].iloc[0] == df["misses"].iloc[1]
    assert (df["hits"] + df["misses"] == df["accesses"]).all() and int(df["accesses"].iloc[0]) == 20_000
    for p in (a, b):
        assert len(p._res) == len(p.lru_order()) == len(set(p.lru_order())) == 300
        live = [s for s in range(p._out_front, p._out_end) if p._meta.get(p._outq[s], [0] * 5)[4] == s]
        assert p._out_end - p._out_front <= 300 * (p.hsw - 1) + 2
        assert len(live) + len(p._res) == len(p._meta)  # remembered: resident or live in the window
    x = a._features(a._res, a._now)
    assert (a.booster.predict(x) == b.booster.predict(x)).all()
    other = tierlab.run(f, policies=[ThreeLCache.with_params(batch_size=1024, seed=4)], sizes=[300])
    assert other["misses"].iloc[0] != df["misses"].iloc[0]  # the seed matters


def test_tiny_caches_train_and_run(tmp_path):
    """1 to 5 pages, both objectives, a model every 256 labels: no error, every reference counted."""
    f = write_pages(tmp_path / "sz.trace", scan_zipf_pages(n=10_000))
    for objective in ("byte-miss-ratio", "object-miss-ratio"):
        cls = recording(batch_size=256, objective=objective)
        df = tierlab.run(f, policies=[cls], sizes=[1, 2, 3, 5])
        assert (df["hits"] + df["misses"] == 10_000).all()
        assert min(p.models for p in cls.made) >= 5
        assert all(p.predict_calls > 0 for p in cls.made)


def test_beats_lru_on_scan_plus_zipf(tmp_path):
    f = write_pages(tmp_path / "scan_zipf.trace", scan_zipf_pages())
    df = tierlab.run(f, policies=["3lcache(batch_size=4096)", "lru"], sizes=[500])
    ours, lru = df["misses"].tolist()
    assert ours < 0.95 * lru, (ours, lru)


def test_names_params_and_errors(tmp_path):
    cls = resolve("3lcache(batch_size=100, objective=object-miss-ratio)")
    assert issubclass(cls, ThreeLCache)
    assert cls.params == {"batch_size": 100, "objective": "object-miss-ratio"}
    assert issubclass(resolve("threelcache"), ThreeLCache)
    assert resolve({"name": "3lcache", "hsw": 3}).params == {"hsw": 3}
    with pytest.raises(tierlab.ConfigError, match="unknown parameter"):
        resolve("3lcache(window=3)")
    bad = [
        ({"batch_size": 0}, "batch_size must be an integer of at least 1"),
        ({"eviction_rate": 1.5}, "eviction_rate must be an integer"),
        ({"hsw": 4, "max_hsw": 3}, "max_hsw"),
        ({"label_probability": 0}, r"label_probability must be in \(0, 1\]"),
        ({"objective": "bytes"}, "objective must be one of"),
        ({"sample_boundary": -1}, "sample_boundary must be an integer of at least 0"),
    ]
    for params, msg in bad:
        with pytest.raises(tierlab.ConfigError, match=msg):
            ThreeLCache(10, **params)
    names = tierlab.policies()
    assert "3lcache" in names["name"].tolist()
    f = write_pages(tmp_path / "t.trace", np.array([1, 2, 3, 1, 2, 4, 1], dtype=np.uint64))
    df = tierlab.run(f, policies=["3lcache(hsw=3)", "threelcache"], sizes=[2])
    assert df["policy"].tolist() == ["3lcache", "3lcache"]
    assert df["label"].tolist() == ["3lcache(hsw=3)", "3lcache"]
    assert json.loads(df["params"].iloc[0]) == {**ThreeLCache.defaults, "hsw": 3}
    with pytest.raises(tierlab.ConfigError, match="batch_size"):
        tierlab.run(f, policies=["3lcache(batch_size=0)"], sizes=[2])


# pip libcachesim's ThreeLCache (objective byte-miss-ratio by default, and object-miss-ratio) on
# the 300,000-reference scan + Zipf trace of tests/test_learned.py, unit sizes (oracleGeneral via
# tierlab.interop). Both train one model there (labels are thinned to 1/4 after it, so a second
# would need about 4 x 65,536 more events). Measured 2026-11-27 (docs/policies.md has the table):
# with seed 1 tierlab is within 0.0045 of libCacheSim at every size and objective; the tolerance,
# 0.01, was fixed after that first measurement (half the LRB comparison's 0.02). Seeds 2 and 3,
# run afterwards, stay within it at 250 to 1,000 pages; at 2,000 pages the seeds split (0.48 to
# 0.54: the one model decides), so there libCacheSim's single draw (its generator is not seeded
# from outside) is only required to lie within the seeds' range widened by 0.01. About 12 minutes
# under load.
PIP_TABLE = {  # size: (LRU, ThreeLCache byte-miss-ratio, object-miss-ratio), pip libcachesim 0.3.5
    250: (0.7204, 0.6550, 0.6501),
    500: (0.6714, 0.6109, 0.6051),
    1000: (0.6240, 0.5731, 0.5653),
    2000: (0.5804, 0.5087, 0.5419),
}


@pytest.mark.skipif(not os.environ.get("TIERLAB_SLOW"), reason="slow (minutes): set TIERLAB_SLOW=1")
@pytest.mark.parametrize("size", sorted(PIP_TABLE))
def test_agrees_with_libcachesim_in_distribution(tmp_path, size):
    import libcachesim as lcs

    pages = scan_zipf_pages(n=300_000)
    oracle = str(write_oracle_general(pages, tmp_path / "scan_zipf.oracleGeneral.bin"))

    def pip(cache):
        reader = lcs.TraceReader(oracle, lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
        return cache.process_trace(reader)[0]

    lru = pip(lcs.LRU(size))
    theirs = [pip(lcs.ThreeLCache(size)), pip(lcs.ThreeLCache(size, objective="object-miss-ratio"))]
    assert lru == pytest.approx(PIP_TABLE[size][0], abs=1e-4)
    assert theirs == pytest.approx(list(PIP_TABLE[size][1:]), abs=1e-4)
    cls = recording()
    objectives = ["byte-miss-ratio", "object-miss-ratio"]
    specs = [cls.with_params(seed=s, objective=o) for o in objectives for s in (1, 2, 3)]
    df = tierlab.run(write_pages(tmp_path / "sz.trace", pages), policies=specs, sizes=[size], threads=2)
    assert [p.models for p in cls.made] == [1] * 6
    ours = df["miss_ratio"].astype(float).to_numpy().reshape(2, 3)  # objective x seed
    assert (ours < lru - 0.03).all()  # all learn
    for row, t in zip(ours, theirs, strict=True):
        assert abs(row[0] - t) <= 0.01, (size, ours, theirs)  # seed 1, the default
        if size < 2000:
            assert (abs(row - t) <= 0.01).all(), (size, ours, theirs)
        else:
            assert row.min() - 0.01 <= t <= row.max() + 0.01, (size, ours, theirs)
    if size == 2000:
        assert ours.max() - ours.min() > 0.03  # the seeds split here


# --- object-size mode ---------------------------------------------------------------------------


def request_sized(p: ThreeLCache, page: int, size: int, seq: int, held: dict):
    """One request as tierlab makes it in object-size mode (``held``: resident sizes as tierlab
    keeps them); returns the victims."""
    if size > p.capacity:
        return []
    if page in held:
        p.on_hit(page, seq, 0, size)
        return []
    victims = []
    while sum(held.values()) + size > p.capacity:
        v = p.evict(page, seq, 0, size)
        victims.append(v)
        del held[v]
    p.on_miss(page, seq, 0, size)
    held[page] = size
    return victims


OBJ_REQS = [(1, 4), (2, 3), (3, 2), (1, 4), (4, 5), (5, 6), (2, 3), (6, 1), (7, 11), (1, 4), (3, 3)]


def test_object_mode_lru_by_bytes_before_the_first_model_hand_worked(tmp_path):
    p = ThreeLCache(10)
    held: dict = {}
    victims = [request_sized(p, k, s, seq, held) for seq, (k, s) in enumerate(OBJ_REQS)]
    # 1(4) 2(3) 3(2): 9 bytes | hit 1 -> 2 3 1 | 4(5): 9 + 5 > 10, evicts 2 (6 left), then 3 (4
    # left) | 5(6): 4 1 -> evicts 1, then 4 | 2(3), 6(1): 10 bytes, no eviction | 7(11) is larger
    # than the cache: bypassed | 1(4): evicts 5 (4 left), 8 | 3, now 3 bytes: 11 > 10, evicts 2.
    assert victims == [[], [], [], [], [2, 3], [1, 4], [], [], [], [5], [2]]
    assert p.lru_order() == [6, 1, 3] and p._used == 8 == sum(held.values())
    assert [p._meta[k][2] for k in p.lru_order()] == [1, 4, 3]  # the size feature: bytes as admitted
    # The window counts objects: at 2's request (6) 1 resident + 2 = 3 entries [2, 3, 1, 4] are too
    # many and 2's (live) entry leaves; then 5 and 2 are evicted ([3, 1, 4, 5, 2]; 1's is dead).
    assert [p._outq[s] for s in range(p._out_front, p._out_end)] == [3, 1, 4, 5, 2]
    assert p._out_front == 1 and p._meta[1][4] == -1 and p.models == 0
    ids = np.array([k for k, _ in OBJ_REQS], dtype=np.uint64)
    f = write_oracle_general(ids, tmp_path / "t.oracleGeneral.bin", sizes=[s for _, s in OBJ_REQS])
    specs = ["3lcache", "lru", "3lcache(objective=object-miss-ratio)"]
    df = tierlab.run(f, policies=specs, sizes=[10], object_sizes=True)
    # Misses: every request but the hit on 1 at 3 (the too-large 7 counts as one, 11 bytes).
    assert df["misses"].tolist() == [10] * 3 and df["too_large"].tolist() == [1] * 3
    assert df["byte_misses"].tolist() == [46 - 4] * 3


def test_object_mode_quick_demotion_counts_bytes():
    """reserved_space is a share of the resident bytes: one new object of 50 bytes in a cache of
    2,000 bytes (200 objects of 10) is above 2% (39 bytes after the evictions), so the next
    ranking demotes it first; in page mode one new object among 200 is below 2% (4 objects)."""
    ranks = []

    class Seen(ThreeLCache):
        def _predict(self, cands):
            ranks.append(list(cands))
            super()._predict(cands)

    p = Seen(2000)
    held: dict = {}
    for seq, page in enumerate([*range(10), 5, 6, *range(10, 200)]):
        request_sized(p, page, 10, seq, held)
    p.booster = AgeModel()
    assert request_sized(p, 1000, 50, 202, held) == [0, 1, 2, 3, 4]  # three rankings of 4
    assert p._new == [1000] and p._new_bytes == 50 and p._used == 2000
    assert ranks == [[0, 1, 2, 3], [4, 7, 8, 9], [10, 11, 12, 13]]
    # 1001: the 2,000 bytes are full again; the second ranking's 7 is next in the heap.
    assert request_sized(p, 1001, 10, 203, held) == [7] and len(ranks) == 3
    # 1002: a new ranking. New objects: 60 bytes > 2% of 1,990 (39): 1000 (50) is demoted, and
    # 10 bytes stay; the walk goes on below 20% (its next four). 8 (784) still tops 1000 (210).
    assert request_sized(p, 1002, 10, 204, held) == [8]
    assert ranks[3] == [1000, 14, 15, 16, 17]
    assert p._new[p._new_front :] == [1001, 1002] and p._new_bytes == 20
    # Page mode: two new objects are below 2% of 200 objects (4): the ranking is the walk alone.
    q, ranks2 = fill_200()
    assert [request(q, 1000 + i, 202 + i) for i in range(3)] == [0, 1, 4]
    assert ranks2 == [[0, 1, 2, 3], [4, 7, 8, 9]] and q._new == [1000, 1001, 1002]


def sized_scan_zipf(path, n: int) -> tuple[str, int]:
    """The scan + Zipf trace of tests/test_learned.py with a size per object (log-uniform, 512 B to
    64 KiB, seed 11); returns the oracleGeneral file and the distinct objects' bytes."""
    pages = scan_zipf_pages(n=n)
    osz = (2 ** np.random.default_rng(11).uniform(9, 16, size=int(pages.max()) + 1)).astype(np.uint32)
    return str(write_oracle_general(pages, path, sizes=osz[pages])), int(osz[np.unique(pages)].sum())


def test_object_mode_invariants_on_a_sized_trace(tmp_path):
    f, footprint = sized_scan_zipf(tmp_path / "sz.oracleGeneral.bin", 30_000)
    cap = footprint // 10
    cls = recording(batch_size=1024)
    specs = [cls, cls.with_params(objective="object-miss-ratio")]
    df = tierlab.run(f, policies=[*specs, "lru"], sizes=[cap], object_sizes=True, threads=2)
    assert (df["hits"] + df["misses"] == df["accesses"]).all() and (df["accesses"] == 30_000).all()
    assert (df["byte_accesses"] == df["byte_accesses"].iloc[0]).all()
    for p in cls.made:
        assert p.capacity == cap and p.models >= 2 and p.predict_calls > 0
        order = p.lru_order()
        assert len(order) == len(set(order)) == len(p._res)
        assert p._used == sum(p._meta[k][2] for k in order) <= cap  # resident bytes within capacity
        assert p._used > cap - 65536  # full but for less than the largest object
        assert p._new_bytes == sum(p._new_sizes[p._new_front :])
        live = [s for s in range(p._out_front, p._out_end) if p._meta.get(p._outq[s], [0] * 5)[4] == s]
        # The window counts objects; a miss may evict several while a request drops at most one
        # entry, so it can run past (hsw - 1) x resident + 2 (as in the authors' code), not far.
        assert p._out_end - p._out_front <= 1.2 * (len(p._res) * (p.hsw - 1) + 2)
        assert len(live) + len(p._res) == len(p._meta)
        sizes = p._features(p._res, p._now)[:, 1 + p.n_past]
        assert sizes.min() >= 512 and len(np.unique(sizes)) > 20  # the size feature holds bytes
    assert df["misses"].iloc[0] != df["misses"].iloc[2]  # the models are used


def cloudphysics_sizes():
    ref = json.loads((Path(__file__).parent / "reference" / "libcachesim_object_counts.json").read_text())
    n, nbytes = ref["totals"]["oracleGeneral.bin"]
    return n, nbytes, [round(f * ref["distinct_bytes"]) for f in (0.01, 0.05, 0.10, 0.25)]


def test_object_mode_never_trains_on_cloudphysics_so_equals_lru_and_libcachesim():
    """Object-size mode at 1%, 5%, 10% and 25% of the distinct bytes: no model with the defaults
    (in tierlab or pip libcachesim), so object and byte misses equal the built-in object-size
    ``lru``'s and pip libcachesim's ``ThreeLCache`` (both objectives, sizes not ignored) exactly."""
    lcs = pytest.importorskip("libcachesim")
    oracle = str(trace_path("libcachesim/cloudPhysicsIO.oracleGeneral.bin"))
    n, nbytes, sizes = cloudphysics_sizes()
    cls = recording()
    specs = [cls, "lru", cls.with_params(objective="object-miss-ratio")]
    df = tierlab.run(oracle, policies=specs, sizes=sizes, object_sizes=True, threads=2)
    assert [p.models for p in cls.made] == [0] * 8
    got = {(r.label, r.size_bytes): (r.misses, r.byte_misses) for r in df.itertuples()}
    for size in sizes:
        lru = got[("lru", size)]
        assert got[("3lcache", size)] == got[("3lcache(objective=object-miss-ratio)", size)] == lru
        for objective in ("byte-miss-ratio", "object-miss-ratio"):
            reader = lcs.TraceReader(oracle, lcs.TraceType.ORACLE_GENERAL_TRACE)
            ratio, byte_ratio = lcs.ThreeLCache(size, objective=objective).process_trace(reader)
            assert (round(ratio * n), round(byte_ratio * nbytes)) == lru, (size, objective)


# pip libcachesim 0.3.5's ThreeLCache with sizes on the sized scan + Zipf trace (300,000 requests,
# 5,000 objects, 65,501,104 distinct bytes), at 5%, 10%, 20% and 40% of the distinct bytes: (LRU,
# ThreeLCache byte-miss-ratio, object-miss-ratio), each (miss ratio, byte miss ratio); pip's run is
# deterministic (three runs alike). Both train one model there (pip exposes no batch_size).
# Measured 2026-11-27, tierlab seed 1 against pip (docs/policies.md has the table): object-miss-
# ratio within 0.003 everywhere; byte-miss-ratio within 0.003 at 10% and 20%, 0.013 (5%, lower
# here; seeds 2 and 3 also 0.013 to 0.015 lower) and 0.016 (40%, higher here; seeds 2 and 3 lie
# on both sides of pip's value: 0.4976 and 0.4887 against 0.4896). The tolerances were fixed after
# that measurement: 0.005 for object-miss-ratio, 0.02 for byte-miss-ratio.
PIP_SIZED = {
    0.05: ((0.7231, 0.7544), (0.6787, 0.6929), (0.5781, 0.7117)),
    0.10: ((0.6738, 0.6938), (0.6163, 0.6236), (0.5057, 0.6512)),
    0.20: ((0.6256, 0.6342), (0.5701, 0.5729), (0.4176, 0.5767)),
    0.40: ((0.5810, 0.5829), (0.4896, 0.4875), (0.3571, 0.4845)),
}


def test_object_mode_agrees_with_libcachesim_where_both_train(tmp_path):
    lcs = pytest.importorskip("libcachesim")
    f, footprint = sized_scan_zipf(tmp_path / "sz.oracleGeneral.bin", 300_000)
    assert footprint == 65_501_104
    sizes = {share: round(share * footprint) for share in PIP_SIZED}

    def pip(cache):
        return cache.process_trace(lcs.TraceReader(f, lcs.TraceType.ORACLE_GENERAL_TRACE))

    cls = recording()
    specs = ["lru", cls, cls.with_params(objective="object-miss-ratio")]
    df = tierlab.run(f, policies=specs, sizes=list(sizes.values()), object_sizes=True, threads=2)
    assert [p.models for p in cls.made] == [1] * 8
    df["byte_miss_ratio"] = df["byte_misses"] / df["byte_accesses"]
    got = {(r.label, r.size_bytes): (r.miss_ratio, r.byte_miss_ratio) for r in df.itertuples()}
    for share, size in sizes.items():
        lru, by_bytes, by_objects = PIP_SIZED[share]
        assert pip(lcs.LRU(size)) == pytest.approx(lru, abs=1e-4)
        assert got[("lru", size)] == pytest.approx(lru, abs=1e-4)
        theirs = [pip(lcs.ThreeLCache(size)), pip(lcs.ThreeLCache(size, objective="object-miss-ratio"))]
        assert theirs == [pytest.approx(by_bytes, abs=1e-4), pytest.approx(by_objects, abs=1e-4)]
        ours_b, ours_o = got[("3lcache", size)], got[("3lcache(objective=object-miss-ratio)", size)]
        assert np.abs(np.subtract(ours_b, theirs[0])).max() <= 0.02, (share, ours_b, theirs[0])
        assert np.abs(np.subtract(ours_o, theirs[1])).max() <= 0.005, (share, ours_o, theirs[1])
        for ours in (ours_b, ours_o):  # all learn
            assert ours[0] < lru[0] - 0.03 and ours[1] < lru[1] - 0.03, (share, ours, lru)
