"""GL-Cache (tierlab.learned.GlCache, Yang et al. FAST 2023) in Python on LightGBM.

- Segment bookkeeping, merges and the release of merged-out objects one per miss, worked by hand
  on a 17-reference trace (before any model), and the same count from pip libcachesim's GLCache.
- The utility label worked by hand (snapshot at the first eviction, skipped requests, distances).
- Before its first model GL-Cache's own (logical) misses equal pip libcachesim's GLCache exactly:
  on cloudPhysicsIO at four sizes with the defaults (which never train there: 7,200 s of trace
  against a retraining interval of one day) and on a generated trace for several segment sizes
  and merge widths.
- Trained (retrain_intvl=600 s), miss ratios within 0.01 of libCacheSim's (LightGBM is not
  XGBoost and the labels differ slightly: the class doc lists every known difference).
- Invariants, determinism, errors, and tierlab without LightGBM.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tierlab
from tierlab.interop import write_oracle_general
from tierlab.learned import GlCache, resolve
from tierlab.learned.glcache import FEATURES

from conftest import scan_zipf_pages, trace_path, write_pages

pytest.importorskip("lightgbm")

ORACLE = "libcachesim/cloudPhysicsIO.oracleGeneral.bin"
SIZES = [490, 2449, 4897, 12244]  # 1%, 5%, 10%, 25% of cloudPhysicsIO's 48,974 objects


def recording(**params):
    """A GlCache class with ``params`` whose objects are kept in ``cls.made``, and whose victims
    are kept in each object's ``victims``."""
    base = GlCache.with_params(**params)

    class Recorded(base):
        made: list = []

        def __init__(self, capacity, **kw):
            super().__init__(capacity, **kw)
            self.victims = []
            Recorded.made.append(self)

        def evict(self, page, seq, time_, size):
            v = super().evict(page, seq, time_, size)
            self.victims.append((seq, v))
            return v

    return Recorded


def lcs_misses(oracle, n: int, size: int, **params) -> int:
    """pip libcachesim's GLCache misses on the ``n`` unit-size requests of ``oracle``."""
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
    ratio, _ = lcs.GLCache(size, **params).process_trace(reader)
    return round(ratio * n)


def glcache_scan_zipf(n=20_000) -> np.ndarray:
    """The scan-and-Zipf workload of these tests: a smaller loop and hot set, fewer scans."""
    return scan_zipf_pages(n=n, loop=2_000, hot=500, p_scan=0.3, seed=11)


# The hand-worked trace: 10 pages fill a cache of 10 (segments of 4: [1 2 3 4] [5 6 7 8] [9 10]);
# hits on 1 and 6; then misses. Worked in the comments of the test below.
HAND = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 6, 11, 12, 4, 13, 14]


def test_hand_worked_segments_merges_and_release(tmp_path):
    cls = recording(segment_size=4, n_merge=2)
    df = tierlab.run(write_pages(tmp_path / "t.trace", HAND), policies=[cls], sizes=[10])
    (g,) = cls.made
    # seq 12 (11 misses, memory full): the first eviction. FIFO from the start of the log: merge
    # [1 2 3 4] and [5 6 7 8]; keep the 4 most recently requested (6 at 11, 1 at 10, 8 at 7,
    # 7 at 6) in log order as [1 6 7 8]; evict 2 3 4 5, released least recent first: 2.
    # seq 13 (12 misses): release 3. seq 14: 4 is still in memory: a hit in tierlab, a miss of
    # GL-Cache's cache, which writes 4 to a new segment (the open one [9 10 11 12] is full).
    # seq 15 (13 misses): 4 is back, so release 5. seq 16 (14 misses): nothing left to release;
    # the log is [1 6 7 8] [9 10 11 12] [4 13]: merge the first two (the cursor wrapped), keeping
    # 12 (at 13), 11 (12), 1 (10), 6 (11) as [1 6 11 12]; evict 7 8 9 10, release 7.
    assert g.victims == [(12, 2), (13, 3), (15, 5), (16, 7)]
    assert [s.objs for s in g._segments()] == [[1, 6, 11, 12], [4, 13, 14]]
    assert list(g._pending) == [8, 9, 10]
    assert df["misses"].iloc[0] == 14 and df["hits"].iloc[0] == 3
    assert g.pending_hits == 1 and g.logical_misses == 15
    assert g.models == 0
    # libCacheSim's GLCache with the same segments: the same 15 misses (its cache has no
    # released-but-resident objects, so 4 is a miss there).

    oracle = write_oracle_general(np.array(HAND, dtype=np.uint64), tmp_path / "t.oracleGeneral.bin")
    assert lcs_misses(oracle, len(HAND), 10, segment_size=4, n_merge=2) == 15


def test_hand_worked_utility_label(tmp_path):
    # HAND, then: 1 (in the merged segment), 2 (evicted and released: a ghost), 1 again, 6, 7, 8.
    pages = HAND + [1, 2, 1, 6, 7, 8]
    cls = recording(segment_size=4, n_merge=2)
    tierlab.run(write_pages(tmp_path / "t.trace", pages), policies=[cls], sizes=[10])
    (g,) = cls.made
    assert g._timed is False  # a text trace carries no times: the clock is the reference position
    x, y, valid = g.training_data()
    # The snapshot at the first eviction (seq 12): the segments [1 2 3 4] (row 0) and [5 6 7 8]
    # (row 1), not the open one. Features then: age in references (created at 0 and 4), mean size
    # 1, one hit and one active object each (1 at 10, 6 at 11), and the initial cache state
    # (request rate 1, miss ratio 0.5) set when each filled.
    assert list(FEATURES) == ["age", "mean_obj_size", "n_hit", "n_active", "req_rate", "miss_ratio"]
    assert x.tolist() == [[12, 1, 1, 1, 1.0, 0.5], [8, 1, 1, 1, 1.0, 0.5]]
    # Labels: each object counts once, at its first request after the snapshot, and the first
    # segment_size // n_merge = 2 such requests of each row are skipped. Row 0: 4 at 14 (skipped),
    # 1 at 17 (skipped), 2 at 18: 1e6 / (18 - 12 + 1); 1 at 19 counted already. Row 1: 6 at 20,
    # 7 at 21 (skipped), 8 at 22: 1e6 / (22 - 12 + 1).
    assert np.allclose(y, [1e6 / 7, 1e6 / 11])
    assert valid.tolist() == [True, False]  # every 10th row is held out


def test_training_happens_every_retrain_intvl_and_changes_decisions(tmp_path):
    f = write_pages(tmp_path / "sz.trace", glcache_scan_zipf())
    cls = recording(retrain_intvl=3000, segment_size=20)
    df = tierlab.run(f, policies=[cls, "glcache(segment_size=20)"], sizes=[400])
    g = cls.made[0]
    assert g.models >= 3
    first_eviction = g.victims[0][0]
    # Untimed trace: the clock is the reference; a model at the first reference 3,000 after the
    # first eviction (the first snapshot), then every 3,000.
    assert g.trained_at == [first_eviction + 3000 * k for k in range(1, g.models + 1)]
    assert all(r > 10 for r in g.training_rows)
    assert df["misses"].iloc[0] != df["misses"].iloc[1]  # the model's rankings are used
    # Until the first model, the same decisions as without one.
    cut = tierlab.run(f, policies=[cls, "glcache(segment_size=20)"], sizes=[400], limit=g.trained_at[0] + 1)
    assert cut["misses"].iloc[0] == cut["misses"].iloc[1]


@pytest.mark.parametrize(("segment_size", "n_merge", "size"), [(10, 2, 300), (12, 3, 300), (100, 2, 1000), (8, 4, 97)])
def test_logical_misses_equal_libcachesim_before_a_model(tmp_path, segment_size, n_merge, size):
    pages = glcache_scan_zipf()

    oracle = write_oracle_general(pages, tmp_path / "sz.oracleGeneral.bin")
    cls = recording(segment_size=segment_size, n_merge=n_merge)
    df = tierlab.run(oracle, policies=[cls], sizes=[size])
    (g,) = cls.made
    assert g.models == 0 and g._timed is True  # oracleGeneral carries times (here: the position)
    assert g.logical_misses == lcs_misses(oracle, len(pages), size, segment_size=segment_size, n_merge=n_merge)
    assert df["misses"].iloc[0] == g.logical_misses - g.pending_hits
    assert df["hits"].iloc[0] + df["misses"].iloc[0] == len(pages)


def test_cloudphysics_defaults_equal_libcachesim():
    """The defaults never train on cloudPhysicsIO (7,200 s): the logical misses equal pip
    libcachesim's GLCache exactly at four sizes; tierlab's are fewer by the pending hits."""
    cls = recording()
    df = tierlab.run(trace_path(ORACLE), policies=[cls], sizes=SIZES, threads=1)
    for size in SIZES:
        (g,) = [m for m in cls.made if m.capacity == size]
        row = df[df["size_pages"] == size].iloc[0]
        assert g.models == 0
        assert g.logical_misses == lcs_misses(trace_path(ORACLE), int(row["accesses"]), size), size
        assert row["misses"] == g.logical_misses - g.pending_hits
        assert 0 < g.pending_hits < 0.001 * row["accesses"]


# Trained: retrain_intvl=600 s gives 9 to 11 models over cloudPhysicsIO. Tolerance: miss ratios
# within 0.01 of libCacheSim's (as for the sampled policies against libCacheSim, 1% of the
# requests), for both the logical and tierlab's misses, in both merge modes. pip libcachesim
# 0.3.5 reads merge_consecutive_segs with atoi, so its default (the string "True") merges in
# ranked order; 1 merges consecutive segments, GL-Cache's default. Results (2026-11-27;
# docs/policies.md): the largest gap was 0.0061 (4,897 pages, consecutive, logical).
TRAINED = {"retrain_intvl": 600}


def _trained_check(sizes, cls=None, tolerance=0.01):
    for consecutive in (True, False):
        rec = recording(merge_consecutive_segs=consecutive, **TRAINED) if cls is None else cls(consecutive)
        df = tierlab.run(trace_path(ORACLE), policies=[rec], sizes=sizes, threads=1)
        for size in sizes:
            (g,) = [m for m in rec.made if m.capacity == size]
            row = df[df["size_pages"] == size].iloc[0]
            n = int(row["accesses"])
            lcs_mode = 1 if consecutive else True  # True: atoi("True") = 0, merges in ranked order
            theirs = lcs_misses(trace_path(ORACLE), n, size, merge_consecutive_segs=lcs_mode, **TRAINED)
            assert g.models >= 5
            assert abs(g.logical_misses - theirs) <= tolerance * n, (consecutive, size, g.logical_misses, theirs)
            if tolerance:
                assert abs(int(row["misses"]) - theirs) <= tolerance * n, (consecutive, size, row["misses"], theirs)


def test_trained_agrees_with_libcachesim():
    _trained_check(SIZES)


def test_with_xgboost_the_libcachesim_variant_equals_libcachesim():
    """A diagnostic of the differences (the class doc): with XGBoost in place of LightGBM (as the
    authors' code) and libcachesim=True, the logical misses equal libCacheSim's exactly wherever
    fewer than 10 rows are held out (no early stopping: 490, 2,449 and 4,897 pages), in both
    merge modes. Runs where xgboost is installed (not a tierlab dependency)."""
    xgb = pytest.importorskip("xgboost")

    def make(consecutive):
        base = recording(merge_consecutive_segs=consecutive, libcachesim=True, **TRAINED)

        class Xgb(base):
            def _fit(self, xt, yt, xv, yv):
                params = {"objective": "reg:squarederror", "nthread": 1, "verbosity": 0}
                dt = xgb.DMatrix(xt.astype(np.float32), label=yt.astype(np.float32))
                evals, result = [(dt, "train")], {}
                if len(yv) >= 10:
                    evals.append((xgb.DMatrix(xv.astype(np.float32), label=yv.astype(np.float32)), "valid"))
                b = xgb.train(params, dt, self.num_iterations, evals=evals, evals_result=result, verbose_eval=False)
                return b, self._stop_round(result.get("valid", {}).get("rmse", []), self.num_iterations)

            def predict(self, x):
                return self.booster.predict(xgb.DMatrix(x.astype(np.float32)), iteration_range=(0, self._best_iter))

        return Xgb

    _trained_check([490, 2449, 4897], cls=make, tolerance=0)


def test_invariants_and_determinism(tmp_path):
    pages = glcache_scan_zipf(n=15_000)
    f = write_pages(tmp_path / "sz.trace", pages)
    cls = recording(retrain_intvl=2000, segment_size=10, seed=5)
    df = tierlab.run(f, policies=[cls, cls], sizes=[250])
    a, b = cls.made
    assert a.models == b.models >= 3
    assert df["misses"].iloc[0] == df["misses"].iloc[1]
    assert a.victims == b.victims
    assert (df["hits"] + df["misses"] == len(pages)).all()
    # The logical cache plus the objects waiting for release is exactly what memory holds.
    logical = sum(len(s.objs) for s in a._segments())
    assert logical + len(a._pending) == 250 and logical == len(a._seg_of)
    assert all(len(s.objs) <= a.segment_size for s in a._segments())
    # The same models: the same predictions on the same features.
    x = a._features(a._segments())
    assert (a.predict(x) == b.predict(x)).all()


def test_by_name_params_label_and_errors(tmp_path):
    cls = resolve("glcache(segment_size=50, retrain_intvl=3600, clock=seq)")
    assert issubclass(cls, GlCache)
    assert cls.params == {"segment_size": 50, "retrain_intvl": 3600, "clock": "seq"}
    assert "glcache" in tierlab.policies()["name"].tolist()
    f = write_pages(tmp_path / "t.trace", HAND)
    df = tierlab.run(f, policies=["glcache(segment_size=4)"], sizes=[10])
    assert df["label"].iloc[0] == "glcache(segment_size=4)"
    assert json.loads(df["params"].iloc[0]) == {**GlCache.defaults, "segment_size": 4}
    with pytest.raises(tierlab.ConfigError, match="unknown parameter"):
        resolve("glcache(segment=3)")
    bad = [
        ({"segment_size": 1}, "segment_size must be at least 2"),
        ({"segment_size": 0}, "segment_size must be a whole number"),
        ({"n_merge": 1}, "n_merge must be at least 2"),
        ({"segment_size": 5, "n_merge": 3}, "segment_size // n_merge must be at least 2"),
        ({"rank_intvl": 1.5}, "rank_intvl must be between 0 and 1"),
        ({"rank_intvl": 0}, "rank_intvl must be between 0 and 1"),
        ({"retrain_intvl": 0}, "retrain_intvl must be a whole number"),
        ({"retrain_intvl": 2.5}, "retrain_intvl must be a whole number"),
        ({"clock": "wall"}, "clock must be one of"),
        ({"learning_rate": 0}, "learning_rate must be positive"),
    ]
    for params, msg in bad:
        with pytest.raises(tierlab.ConfigError, match=msg):
            GlCache(10, **params)
    with pytest.raises(tierlab.ConfigError, match="segment_size must be"):
        tierlab.run(f, policies=["glcache(segment_size=1)"], sizes=[10])


def test_clock_auto_time_and_seq(tmp_path):
    """clock=auto: trace time in seconds when the trace carries times, else the position."""

    pages = np.array(HAND, dtype=np.uint64)
    oracle = write_oracle_general(pages, tmp_path / "t.oracleGeneral.bin")  # times 0, 1, 2, ... s
    text = write_pages(tmp_path / "t.trace", HAND)  # no times: ordinals
    # Text-trace "time" is the ordinal in the nanoseconds' place: 16 ns is 0 s.
    for path, spec, timed, now in [
        (oracle, {}, True, 16),
        (text, {}, False, 16),
        (text, {"clock": "time"}, True, 0),
        (oracle, {"clock": "seq"}, False, 16),
    ]:
        cls = recording(segment_size=4, **spec)
        tierlab.run(path, policies=[cls], sizes=[10])
        (g,) = cls.made
        assert (g._timed, g._now) == (timed, now), (path, spec)


def test_libcachesim_variant_label_and_clock(tmp_path):
    """libcachesim=True: the authors' code's label (every request to an object still in its
    snapshotted segment counts), skip counts kept per segment, a clock one request behind."""
    # 16 pages fill 4 segments; 17 misses: snapshot rows [1-4] [5-8] [9-12] (not the open
    # [13-16]); FIFO merges the first two. Then 9, 9, 9, 10, 9: all in the surviving row 2.
    pages = list(range(1, 18)) + [9, 9, 9, 10, 9]
    f = write_pages(tmp_path / "t.trace", pages)
    made = {}
    for lc in (False, True):
        cls = recording(segment_size=4, libcachesim=lc)
        tierlab.run(f, policies=[cls], sizes=[16])
        made[lc] = cls.made[0]
    x, y, _ = made[False].training_data()
    # The paper's: each object once; 9 at 17 and 10 at 20 are the 2 skipped: no label.
    assert x[:, 0].tolist() == [16, 12, 8] and y.tolist() == [0, 0, 0]
    x, y, _ = made[True].training_data()
    # libCacheSim's clock: at reference 16 it reads 15 (the previous request's), and segments
    # made at references 0, 4, 8 were stamped 0 (its start), 3 and 7.
    assert x[:, 0].tolist() == [15, 12, 8]
    # 9 at 17 and 18 skipped, then 9 at 19, 10 at 20, 9 at 21 count: D = 4, 5, 6.
    assert np.allclose(y, [0, 0, 1e6 / 4 + 1e6 / 5 + 1e6 / 6])


def test_libcachesim_variant_retrains_one_unit_later(tmp_path):
    f = write_pages(tmp_path / "sz.trace", glcache_scan_zipf())
    cls = recording(retrain_intvl=3000, segment_size=20, libcachesim=True)
    tierlab.run(f, policies=[cls], sizes=[400])
    (g,) = cls.made
    e = g.victims[0][0]
    # Its clock lags one request and it waits retrain_intvl + 1: every 3,001 references.
    assert g.models >= 3 and g.trained_at == [e + 3001 * k for k in range(1, g.models + 1)]


def test_learned_selection_consecutive_and_ranked():
    """With a ranking, the lowest-ranked mergeable segment is merged with the next one in the log
    (merge_consecutive_segs, the default) or the next one in the ranking; the open segment never."""
    chosen = {}
    for consecutive in (True, False):
        g = GlCache(100, segment_size=4, merge_consecutive_segs=consecutive)
        for seq in range(18):  # segments [0-3] [4-7] [8-11] [12-15] [16 17] (open)
            g.on_miss(seq, seq, seq, 1)
        s0, s1, s2, s3, s4 = g._segments()
        g._ranked, g._rank_pos = [s3, s4, s0, s2, s1], 0
        segs = g._select_learned()
        chosen[consecutive] = [s.objs[0] for s in segs]
        assert g._rank_pos == 3  # positions 0 and 1 were passed over (s3's successor is open)
    assert chosen == {True: [0, 4], False: [0, 8]}


# --- object-size mode ---------------------------------------------------------------------------


def lcs_object_counts(oracle, size: int, **params) -> tuple[int, int]:
    """pip libcachesim's GLCache (object sizes, not ignored): (misses, byte misses)."""
    import libcachesim as lcs

    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
    ratio, byte_ratio = lcs.GLCache(size, **params).process_trace(reader)
    reader = lcs.TraceReader(str(oracle), lcs.TraceType.ORACLE_GENERAL_TRACE)
    n = nbytes = 0
    for req in reader:
        n += 1
        nbytes += req.obj_size
    return round(ratio * n), round(byte_ratio * nbytes)


def shadowed(**params):
    """A recording GlCache that also keeps tierlab's memory as tierlab keeps it (admitted sizes;
    a victim leaves, a miss enters) and checks after every callback that tierlab's resident bytes
    are the logical cache's plus the pending ones, within the capacity."""
    base = recording(**params)

    class Shadowed(base):
        def __init__(self, capacity, **kw):
            super().__init__(capacity, **kw)
            self.resident: dict[int, int] = {}
            self.resident_bytes = 0
            self.checks = 0

        def _check(self):
            assert self.resident_bytes == self.used + self.pending_bytes <= self.capacity
            self.checks += 1

        def on_hit(self, page, seq, time_, size):
            assert page in self.resident
            super().on_hit(page, seq, time_, size)
            self._check()

        def evict(self, page, seq, time_, size):
            v = super().evict(page, seq, time_, size)
            self.resident_bytes -= self.resident.pop(v)
            assert self.resident_bytes == self.used + self.pending_bytes
            return v

        def on_miss(self, page, seq, time_, size):
            super().on_miss(page, seq, time_, size)
            self.resident[page] = size
            self.resident_bytes += size
            self._check()

    return Shadowed


# The hand-worked sized trace (id:bytes), capacity 160, segments of 4 (worked in the test below).
SIZED = [(1, 10), (2, 20), (3, 10), (4, 10), (5, 20), (6, 10), (7, 10), (8, 40), (9, 10), (10, 10)]
SIZED += [(2, 20), (7, 10), (11, 30), (8, 40), (12, 25), (1, 10)]


def test_object_mode_hand_worked_victims_and_bytes(tmp_path):
    ids, sizes = zip(*SIZED, strict=True)
    oracle = write_oracle_general(np.asarray(ids, dtype=np.uint64), tmp_path / "sized.oracleGeneral.bin", sizes)
    cls = shadowed(segment_size=4, n_merge=2)
    df = tierlab.run(oracle, policies=[cls], sizes=[160], object_sizes=True)
    (g,) = cls.made
    # seq 0-9 fill segments A [1 2 3 4] (50 bytes), B [5 6 7 8] (80) and the open C [9 10] (20):
    # 150 bytes. 2 and 7 hit (seq 10, 11). seq 12, 11 (30 bytes): 150 + 30 > 160, and GL-Cache's
    # cache (150 bytes) does not fit it either: merge A and B (FIFO), keeping the 4 objects of
    # highest 1e8 / size / age (age = 12 - last request): 7 (1e8/10/1), 2 (1e8/20/2),
    # 6 (1e8/10/7), 4 (1e8/10/9) over 3 (1e8/10/10), 1 (1e8/10/12), 5 (1e8/20/8), 8 (1e8/40/5),
    # though 8 was requested after 4 and 6 (recency would keep it): [2 4 6 7], 50 bytes. Evicted
    # 1 3 5 8 (80 bytes), pending, released least recent first until tierlab fits 11: 1 (140 + 30
    # > 160), then 3 (130 + 30 = 160). seq 13, 8 (40): pending, so a hit in tierlab and a miss of
    # GL-Cache's cache, into C: [9 10 11 8] (90). seq 14, 12 (25): tierlab has 160, GL-Cache 140
    # (+ 25 > 160): the log is [2 4 6 7] and the open C, too few segments to merge: [2 4 6 7] is
    # evicted whole (50 bytes; pending in the order 4 6 2 7, after 5); released: 5 (20; 140 + 25
    # > 160), 4 (10; 130 + 25 = 155). seq 15, 1 (10, released at 12): a miss; GL-Cache fits it
    # (115 + 10), tierlab does not (155 + 10): release 6.
    assert g.victims == [(12, 1), (12, 3), (14, 5), (14, 4), (15, 6)]
    assert [s.objs for s in g._segments()] == [[9, 10, 11, 8], [12, 1]]
    assert [s.nbytes for s in g._segments()] == [90, 35]
    assert list(g._pending) == [2, 7] and g.pending_bytes == 30
    assert g.used == 125 and g.resident_bytes == 155
    assert g.pending_hits == 1 and g.pending_hit_bytes == 40 and g.logical_misses == 14
    r = df.iloc[0]
    assert (r["misses"], r["byte_misses"], r["hits"]) == (13, 150 + 30 + 25 + 10, 3)
    # libCacheSim's GLCache with sizes: the paper's cache's 14 misses, 150 + 30 + 40 + 25 + 10 bytes.
    assert lcs_object_counts(oracle, 160, segment_size=4, n_merge=2) == (14, 255)


def test_object_mode_invariant_and_features_on_a_sized_trace():
    """cloudPhysicsIO with sizes, trained (models every 600 s) and untrained, at a size where
    objects go through many merges: tierlab's resident bytes = the logical bytes + the pending
    bytes <= the capacity after every callback; the objects are the same; tierlab's misses are
    the logical ones less the pending hits; mean_obj_size is each segment's bytes per object."""
    cls = shadowed(retrain_intvl=600)
    df = tierlab.run(trace_path(ORACLE), policies=[cls], sizes=["1%", "5%"], object_sizes=True, threads=1, limit=60_000)
    for g in cls.made:
        row = df[df["size_bytes"] == g.capacity].iloc[0]
        assert g.models >= 3 and g.checks == 60_000 - row["too_large"]
        assert set(g.resident) == set(g._seg_of) | set(g._pending) and not set(g._seg_of) & set(g._pending)
        assert g.used == sum(g._size[p] for p in g._seg_of) == sum(s.nbytes for s in g._segments())
        assert row["misses"] == g.logical_misses - g.pending_hits
        segs = g._segments()
        assert np.allclose(g._features(segs)[:, 1], [s.nbytes / len(s.objs) for s in segs])
        assert len({s.nbytes // len(s.objs) for s in segs}) > 10  # real sizes, not unit ones


SIZES_BYTES = ["1%", "5%", "10%", "25%"]  # of cloudPhysicsIO's distinct bytes (4.06 GB)


def test_object_mode_untrained_equals_libcachesim():
    """The defaults never train on cloudPhysicsIO: with sizes, GL-Cache's (logical) object and
    byte misses equal pip libcachesim's GLCache exactly at four byte sizes."""
    cls = recording()
    df = tierlab.run(trace_path(ORACLE), policies=[cls], sizes=SIZES_BYTES, object_sizes=True, threads=1)
    for r in df.itertuples():
        (g,) = [m for m in cls.made if m.capacity == r.size_bytes]
        assert g.models == 0
        logical = (g.logical_misses, r.byte_misses + g.pending_hit_bytes)
        want = lcs_object_counts(trace_path(ORACLE), int(r.size_bytes), merge_consecutive_segs=1)
        assert logical == want, r.size_bytes
        assert r.misses == g.logical_misses - g.pending_hits and 0 < g.pending_hits < 0.001 * r.accesses


def test_object_mode_bypassed_objects_count_as_misses(tmp_path):
    """An object larger than the cache is bypassed by tierlab without a callback; GL-Cache counts
    it as libCacheSim does: a miss that inserts nothing (here 13, 500 bytes, twice), seen as the gap
    in ``seq`` at the next callback. The rest is the hand-worked trace above."""
    items = SIZED[:12] + [(13, 500)] + SIZED[12:15] + [(13, 500)] + SIZED[15:]
    ids, sizes = zip(*items, strict=True)
    oracle = write_oracle_general(np.asarray(ids, dtype=np.uint64), tmp_path / "big.oracleGeneral.bin", sizes)
    cls = shadowed(segment_size=4, n_merge=2)
    df = tierlab.run(oracle, policies=[cls], sizes=[160], object_sizes=True)
    (g,) = cls.made
    r = df.iloc[0]
    assert r["too_large"] == 2 and g.checks == len(items) - 2
    assert g.logical_misses == 16 and r["misses"] == g.logical_misses - g.pending_hits
    assert g._vtime == len(items)  # the state's request count includes the bypassed ones
    assert g.victims == [(13, 1), (13, 3), (15, 5), (15, 4), (17, 6)]  # seq one later from 12, two from 16
    assert lcs_object_counts(oracle, 160, segment_size=4, n_merge=2) == (16, 255 + 1000)


# Trained (retrain_intvl=600 s), with sizes. libcachesim=True (the authors' label, as
# libCacheSim computes it) is within 0.01 of libCacheSim's object and byte miss ratios at the four
# byte sizes in both merge modes (largest gaps measured: 0.0041 of the requests, 0.0081 of the
# bytes; 5%, ranked). The default (the paper's label: each object once, at its first request
# after the snapshot) trains on other labels and misses more than libCacheSim with sizes: up to
# 0.050 of the requests (25%, consecutive; docs/policies.md), so it is held to 0.06.
def test_object_mode_trained_against_libcachesim():
    for consecutive in (True, False):
        paper = recording(merge_consecutive_segs=consecutive, **TRAINED)
        authors = recording(merge_consecutive_segs=consecutive, libcachesim=True, **TRAINED)
        df = tierlab.run(trace_path(ORACLE), policies=[paper, authors], sizes=SIZES_BYTES, object_sizes=True, threads=1)
        for size in sorted(set(df["size_bytes"])):
            lcs_mode = 1 if consecutive else True  # True: atoi("True") = 0, merges in ranked order
            want = lcs_object_counts(trace_path(ORACLE), int(size), merge_consecutive_segs=lcs_mode, **TRAINED)
            for rec, tolerance in ((paper, 0.06), (authors, 0.01)):
                (g,) = [m for m in rec.made if m.capacity == size]
                r = df[(df["size_bytes"] == size) & (df["label"] == rec.policy_label())].iloc[0]
                assert g.models >= 5
                got = (g.logical_misses, int(r["byte_misses"]) + g.pending_hit_bytes)
                why = (consecutive, size, rec.policy_label(), got, want)
                assert abs(got[0] - want[0]) <= tolerance * r["accesses"], why
                assert abs(got[1] - want[1]) <= tolerance * r["byte_accesses"], why
