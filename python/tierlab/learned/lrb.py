"""LRB, Learning Relaxed Belady (Song, Berger, Li & Lloyd, "Learning Relaxed Belady for Content
Distribution Network Caching", NSDI 2020), in Python on LightGBM: see :class:`Lrb`."""

from __future__ import annotations

import collections
import math
import random
import time

import numpy as np

from tierlab._core import ConfigError
from tierlab.learned.base import GBDT_DEFAULTS, LearnedPolicy, gbdt_params, lgb_params


class Lrb(LearnedPolicy):
    """LRB: Learning Relaxed Belady (Song, Berger, Li & Lloyd, NSDI 2020).

    The paper's design, section by section, with the parameters named as the paper names them:

    - §4.1, sliding memory window: LRB remembers an object while its last request is less than
      ``memory_window`` requests ago (resident objects always). Time is the request number: the
      reference's position in the trace (``seq``), as in the authors' implementation.
    - §4.2, training data: on every request (once the cache has evicted for the first time) one
      object drawn uniformly from those remembered becomes a training sample at that time. Its
      label is the log of its time to next request, ``log1p(t_next - t_sample)``, set when it is
      requested again; or ``log1p(2 * memory_window)`` when its last request leaves the memory
      window first (not requested within the window). Every ``training_samples`` labelled samples
      (the paper's 128K) a new model is trained on them (the batch is then cleared) and replaces
      the old one.
    - §4.3, features of an object at time ``t``: the ``n_deltas`` = 32 deltas, Δ1 = ``t - last
      request`` and Δ2..Δ32 the gaps between its earlier requests (missing ones are NaN, which
      LightGBM treats as missing); its size; the ``n_edcs`` = 10 exponentially decayed counters
      ``C_i = 1 + C_i * 2^(-Δ1 / 2^(9+i))``, i = 1..10, updated at each request and decayed to
      ``t`` for the feature; and, from the authors' implementation, the number of its past
      requests within the memory window. The authors' code also has slots for categorical extra
      features (e.g. a CDN object's content type; none in libCacheSim's copy): tierlab's traces
      carry none, so there are none here. Model: LightGBM gradient-boosted regression trees with
      the paper's parameters ``num_iterations=32``, ``num_leaves=32``, ``learning_rate=0.1``,
      ``feature_fraction=0.8``, ``bagging_fraction=0.8``, ``bagging_freq=5`` (L2 regression).
    - §4.4, eviction: ``eviction_samples`` = 64 resident objects drawn uniformly at random (with
      replacement, repeats dropped: the authors' code redraws repeats up to 200 times); the one
      with the largest predicted time to next request is evicted (ties: the first drawn). As in
      the authors' implementation, the LRU object is evicted first, without the model, when
      its last request is ``memory_window`` or more ago: it is past the relaxed Belady
      boundary, so any such object is a good decision (§3).
    - Before the first model is trained LRB evicts the least recently used object: LRU exactly.

    Defaults: ``memory_window = 2^26`` requests and ``training_samples = 131072`` are the
    authors' implementation's (the paper tunes the window per trace on its first part, §5); on a
    trace shorter than a few times ``training_samples`` LRB never trains and is LRU, so short
    traces need smaller values (e.g. ``lrb(memory_window=20000, training_samples=8192)``).

    Choices where the paper is vague (each tested in tests/test_learned.py): the EDCs decay
    continuously (2^(-Δ/w)), where the authors' code rounds Δ/w down; a resident object whose last
    request leaves the window is labelled then too (2x window) and keeps its features; an object
    evicted past the window is forgotten at once. ``seed`` seeds the candidate and sample draws
    and LightGBM (one thread, ``deterministic=True``), so runs are repeatable.

    ``libcachesim=True`` follows the authors' code as libCacheSim carries it where it differs:
    EDCs decayed by ``0.5^min(floor(Δ / 2^(9+i)), memory_window/1024 - 1)``; missing deltas are
    0 (absent from its sparse rows); a resident object is not labelled when its last request
    leaves the window (its samples wait for its next request, or for its eviction, then labelled
    ``log1p(age + memory_window)``); the 64 candidates are distinct.

    Object-size mode (``tierlab.run(..., object_sizes=True)``), as the paper's CDN caches and
    libCacheSim's LRB run: the capacity is in bytes and the size feature is the object's size in
    bytes as its latest request gives it (in page mode it is constant, 1). tierlab asks ``evict``
    for victims, one at a time, until the missed object fits; all of them see the same ``seq``.

    ``training_times`` (seconds per model) and ``models`` are kept on the object for measurement.
    """

    name = "lrb"
    request_info = True
    #: Runs in object-size mode too, with its size feature in bytes (class doc).
    object_sizes = True

    #: The defaults: the paper's, and the authors' code's for the window and the batch (class doc);
    #: ``Lrb.with_params`` and ``lrb(k=v)`` override them.
    defaults = {
        "memory_window": 1 << 26,
        "training_samples": 131072,
        "eviction_samples": 64,
        "n_deltas": 32,
        "n_edcs": 10,
        "num_iterations": 32,
        **GBDT_DEFAULTS,
        "seed": 1,
        "libcachesim": False,
    }

    def __init__(self, capacity: int, **params):
        super().__init__(capacity)
        p = self.resolved_params(params)
        for k in ("memory_window", "training_samples", "eviction_samples", "n_deltas", "num_iterations"):
            if int(p[k]) < 1:
                raise ConfigError(f"lrb: {k} must be at least 1, not {p[k]}")
        self.memory_window = int(p["memory_window"])
        self.training_samples = int(p["training_samples"])
        self.eviction_samples = int(p["eviction_samples"])
        self.n_deltas = int(p["n_deltas"])
        self.n_edcs = int(p["n_edcs"])
        self.seed = int(p["seed"])
        self.libcachesim = bool(p["libcachesim"])
        self.lgb_params = lgb_params(self.seed, **gbdt_params(p))
        self.num_iterations = int(p["num_iterations"])
        # EDC i (1-based) decays with window 2^(9+i): C * 2^(-Δ / 2^(9+i)).
        self._edc_rates = np.array([2.0 ** -(9 + i) for i in range(1, self.n_edcs + 1)])
        self._label_beyond = math.log1p(2 * self.memory_window)
        # libcachesim=True: the authors' EDCs, 0.5^floor(Δ / window) with the exponent capped.
        self._edc_cap = max(self.memory_window // 1024 - 1, 0)
        self._rng = random.Random(self.seed)
        self._gen = np.random.default_rng(self.seed)
        # What LRB remembers (§4.1), one row per object in ``_keys`` order: its last request's
        # time, Δ2..Δn (NaN when missing), its size and its EDCs at its last request.
        nd = self.n_deltas
        self._c_size = nd
        self._c_edc = nd + 1
        self._table = np.zeros((1024, nd + 1 + self.n_edcs))
        self._keys: list[int] = []  # every remembered object; row i of _table is _keys[i]
        self._pos: dict[int, int] = {}
        self._samples: dict[int, list[int]] = {}  # object -> times of its unlabelled samples (§4.2)
        self._lru: collections.OrderedDict[int, None] = collections.OrderedDict()  # resident, LRU first
        self._res: list[int] = []  # resident objects, for uniform candidate draws
        self._res_pos: dict[int, int] = {}
        self._last_at: dict[int, int] = {}  # time of an object's last request -> object
        self._now = -1
        self._sampling = False
        self._rows: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._n_labels = 0
        self.booster = None
        #: Seconds spent training each model, in order.
        self.training_times: list[float] = []
        #: Models trained so far, and the reference (``seq``) at which each was trained: decisions
        #: from that reference on use it.
        self.models = 0
        self.trained_at: list[int] = []

    # --- features (§4.3) ----------------------------------------------------------------------

    def _features(self, rows: np.ndarray, now) -> np.ndarray:
        """Features of the objects in table ``rows`` at time(s) ``now``: Δ1..Δn, size, requests
        within the window, EDCs (one row each)."""
        t = self._table[rows]
        nd = self.n_deltas
        age = np.asarray(now, dtype=np.float64) - t[:, 0]
        past = t[:, 1:nd]
        within = (np.cumsum(past, axis=1) < self.memory_window).sum(axis=1)
        edcs = t[:, self._c_edc :] * self._decay(np.multiply.outer(age, self._edc_rates))
        if self.libcachesim:
            past = np.nan_to_num(past, nan=0.0)  # absent from the authors' sparse rows: zero
        return np.column_stack([age, past, t[:, self._c_size], within, edcs])

    def _decay(self, x):
        """``2^(-x)`` for ``x = Δ / window``; the authors' ``0.5^min(floor(x), cap)`` with libcachesim=True."""
        if self.libcachesim:
            return 0.5 ** np.minimum(np.floor(x), self._edc_cap)
        return np.exp2(-x)

    # --- training data (§4.2) -----------------------------------------------------------------

    def _label(self, key: int, now: int | None, gap: int | None = None) -> None:
        """Labels ``key``'s pending samples: requested at ``now``, or (None) not within the window
        (``gap``: a time to next request given instead, libcachesim=True's forced evictions)."""
        samples = self._samples.pop(key, None)
        if not samples:
            return
        at = np.array(samples, dtype=np.float64)
        self._rows.append(self._features(np.full(len(samples), self._pos[key]), at))
        if gap is not None:
            self._labels.append(np.full(len(samples), math.log1p(gap)))
        elif now is None:
            self._labels.append(np.full(len(samples), self._label_beyond))
        else:
            self._labels.append(np.log1p(now - at))
        self._n_labels += len(samples)
        if self._n_labels >= self.training_samples:
            self._train()

    def _train(self) -> None:
        t0 = time.perf_counter()
        lgb = self._lgb
        data = lgb.Dataset(np.concatenate(self._rows), np.concatenate(self._labels), params=self.lgb_params)
        self.booster = lgb.train(self.lgb_params, data, num_boost_round=self.num_iterations)
        self._rows, self._labels, self._n_labels = [], [], 0
        self.models += 1
        self.training_times.append(time.perf_counter() - t0)
        self.trained_at.append(self._now)

    def _forget(self, key: int) -> None:
        self._label(key, None)
        i = self._pos.pop(key)
        last = self._keys.pop()
        if last != key:
            self._keys[i] = last
            self._pos[last] = i
            self._table[i] = self._table[len(self._keys)]

    def _begin(self, now: int) -> None:
        """Advances time to ``now``: objects whose last request leaves the window (§4.1)."""
        if now == self._now:
            return
        prev, self._now = self._now, now
        for t in range(prev + 1 - self.memory_window, now + 1 - self.memory_window):
            key = self._last_at.pop(t, None)
            if key is None:
                continue
            if key in self._res_pos:
                if not self.libcachesim:
                    self._label(key, None)  # resident: labelled, remembered
            else:
                self._forget(key)

    def _request(self, page: int, now: int, size: int) -> None:
        i = self._pos.get(page)
        if i is None:
            i = self._pos[page] = len(self._keys)
            self._keys.append(page)
            if i == len(self._table):
                self._table = np.concatenate([self._table, np.zeros_like(self._table)])
            row = self._table[i]
            row[0] = now
            row[1 : self.n_deltas] = np.nan
            row[self._c_size] = size
            row[self._c_edc :] = 1.0
        else:
            if page in self._samples:
                self._label(page, now)
            row = self._table[i]
            last = int(row[0])
            gap = now - last
            self._last_at.pop(last, None)  # gone if it left the window while resident
            if self.n_deltas > 1:
                row[2 : self.n_deltas] = row[1 : self.n_deltas - 1].copy()
                row[1] = gap
            edc = row[self._c_edc :]
            edc *= self._decay(gap * self._edc_rates)
            edc += 1.0
            row[0] = now
            row[self._c_size] = size
        self._last_at[now] = page
        if self._sampling:
            key = self._keys[self._rng.randrange(len(self._keys))]
            self._samples.setdefault(key, []).append(now)

    # --- the callbacks ------------------------------------------------------------------------

    def on_hit(self, page, seq, time_, size):
        self._begin(seq)
        self._lru.move_to_end(page)
        self._request(page, seq, size)

    def on_miss(self, page, seq, time_, size):
        self._begin(seq)
        self._lru[page] = None
        self._res_pos[page] = len(self._res)
        self._res.append(page)
        self._request(page, seq, size)

    def evict(self, page, seq, time_, size):
        self._begin(seq)
        self._sampling = True
        victim = next(iter(self._lru))
        if self.booster is not None and seq - self._table[self._pos[victim], 0] < self.memory_window:
            victim = self._predict_victim(seq)
        self._remove(victim, seq)
        return victim

    # --- eviction (§4.4) ----------------------------------------------------------------------

    def _predict_victim(self, now: int) -> int:
        n = len(self._res)
        if self.libcachesim:  # distinct candidates, as the authors' redraws mostly give
            draws = self._gen.choice(n, min(self.eviction_samples, n), replace=False)
        else:
            draws = self._gen.integers(0, n, self.eviction_samples)
            _, first = np.unique(draws, return_index=True)
            draws = draws[np.sort(first)]  # drawn order, repeats dropped
        keys = [self._res[i] for i in draws]
        x = self._features(np.array([self._pos[k] for k in keys]), now)
        scores = self.booster.predict(x, num_threads=1)
        return keys[int(np.argmax(scores))]

    def _remove(self, victim: int, now: int) -> None:
        del self._lru[victim]
        i = self._res_pos.pop(victim)
        last = self._res.pop()
        if last != victim:
            self._res[i] = last
            self._res_pos[last] = i
        age = now - int(self._table[self._pos[victim], 0])
        if age >= self.memory_window:
            # Past the window (its _last_at entry is gone): forgotten at once.
            if self.libcachesim:
                self._label(victim, None, gap=age + self.memory_window)
            self._forget(victim)
