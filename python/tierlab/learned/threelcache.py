"""3L-Cache (Zhou, Niu, Xiong, Fang & Wang, "3L-Cache: Low Overhead and Precise Learning-based
Eviction Policy for Caches", USENIX FAST 2025), in Python on LightGBM: see :class:`ThreeLCache`."""

from __future__ import annotations

import heapq
import math
import random
import time

import numpy as np

from tierlab._core import ConfigError
from tierlab.learned.base import GBDT_DEFAULTS, LearnedPolicy, gbdt_params, lgb_params

# A remembered object's record (a list, indexed by these): its last request's time, its number of
# requests, its last ``n_past_distances`` gaps (most recent first, 0 when missing), its size, the
# time of its pending training sample (-1: none) and its slot in the out-of-cache queue (-1: resident).
_LAST, _FREQ, _SIZE, _SAMPLE, _OUT, _D = 0, 1, 2, 3, 4, 5

OBJECTIVES = ("byte-miss-ratio", "object-miss-ratio")


class ThreeLCache(LearnedPolicy):
    """3L-Cache: Low overhead, Lowest object and byte miss ratio, Learning (Zhou et al., FAST 2025).

    An object-level learned policy like LRB (:class:`tierlab.learned.Lrb`): a LightGBM regression
    predicts an object's time to next request and the farthest predicted is evicted. The paper cuts
    LRB's overheads in the ways its abstract lists (its design section, §3; the section numbers
    below are that section's parts as the abstract names them); the details, and the parameters'
    names and defaults, follow the authors' code (their repository, carried by libCacheSim as
    ``3LCache/ThreeLCache.cpp``, which pip libcachesim's ``ThreeLCache`` runs), since the paper's
    full text was not available:

    1. **Training data** (the efficient collection scheme). Metadata is kept for resident objects
       and, in an out-of-cache queue in eviction order, for evicted ones: the *history sliding
       window*, ``(hsw - 1) x (objects resident) + 2`` entries (``hsw`` = 2); each request drops
       at most one entry from its front (readmitted objects' entries stay in the queue, dead,
       and count). From the first eviction on, every request draws one entry uniformly among the
       resident objects and the queue's entries and gives that object a pending sample at the
       current time, unless it has one (one per object). The sample is labelled ``log1p(t_next -
       t_sample)`` at the object's next request; when its entry leaves the window unrequested it is
       labelled ``log1p(B + age)`` (``age`` = now - its last request; ``B`` = the largest such age
       seen before the last model: the eviction boundary, 0 until then). Once a model exists a
       sample is labelled only with probability ``label_probability`` = 1/4 (else dropped), which
       thins the data. Features of a sample: its age at the sample's time, its last
       ``n_past_distances`` = 3 gaps between requests (0 when missing, as the authors' sparse rows
       give LightGBM), its size and its number of requests: 6 (LRB has 44).
    2. **Retraining**: a model (LightGBM GBDT regression, ``num_iterations`` = 16, ``num_leaves`` =
       32, ``learning_rate`` = 0.1, ``feature_fraction`` = 0.8, ``bagging_fraction`` = 0.8,
       ``bagging_freq`` = 5) is trained on a batch once ``batch_size`` = 65,536 labels have been
       collected and no batch of evictions is under way (below); the batch is then cleared and the
       old model replaced. Thinning the labels to 1/4 stretches the time between models 4x: the
       training frequency adapts to how fast labels arrive.
    3. **Eviction** (bidirectional sampling and the efficient eviction strategy). Resident objects
       are in LRU order (a circular list; a hit moves the object to the MRU end). One *ranking*
       gathers candidates from both ends: (a) *new objects* (admitted since the first model,
       oldest first), while they are more than ``reserved_space`` % of the cache and at most
       ``1.5 x sample_rate`` of them (quick demotion, §3); (b) while new objects are below
       ``10 x reserved_space`` %, a *sampling pointer* walking from the LRU end toward the MRU end,
       across rankings, takes ``sample_rate`` objects: the first ``sampling_lru`` % (+
       ``eviction_rate``) of each walk unconditionally, later ones only if unpopular (requested
       fewer than ``sample_boundary`` + 1 times; objective ``byte-miss-ratio`` only: with
       ``object-miss-ratio`` every object qualifies, as in the authors' code). The number of
       candidates: ``sample_rate`` = min(1024, 1% of the resident objects + ``eviction_rate``),
       read when a walk starts. All candidates are predicted in one call and go into a max-heap;
       the next ``len(candidates) // eviction_rate`` evictions (``eviction_rate`` = 2) pop the
       heap's top without predicting again (entries of objects hit or evicted since are skipped).
       Heap key: ``exp(prediction) + (now - time of the last model)`` for ``byte-miss-ratio`` (the
       authors' offset, which prefers later rankings' candidates), ``size x exp(prediction)`` for
       ``object-miss-ratio``.
    4. **Auto-tuning** (§3, parameter auto-tuning), at the end of each walk of the pointer over the
       queue (``byte-miss-ratio`` only): ``sample_boundary`` becomes the 99th percentile of the
       evicted objects' request counts (log2 buckets, interpolated as the authors do);
       ``sampling_lru`` grows by 1 when evictions per sample were higher in the walk's first
       ``sampling_lru`` % than after it, else shrinks by 1 (to 1); ``reserved_space`` grows by 1 when
       more evictions came from the LRU side than new objects are waiting, else halves (to 1). At
       each model after ``hsw_min_requests`` = 10^6 requests since the window filled, ``hsw`` grows
       by 1 (to ``max_hsw`` = 6) when hits on out-of-cache metadata exceed 1% of cache hits per
       window multiple and the window is shorter than the misses per such hit.
    5. Before the first model: the least recently used object is evicted (LRU exactly).

    Time is the request count (``seq``), as in the authors' code. In page mode every object has
    size 1, so the size feature is constant (the model cannot use it), the two objectives count
    the same misses (they differ only in the code paths above), and bytes are objects.

    In object-size mode (``tierlab.run(..., object_sizes=True)``: ``capacity`` in bytes, tierlab
    calls ``evict`` until the missed object fits) the quantities are what they are in the authors'
    code run by libCacheSim with sizes: the size feature and the ``object-miss-ratio`` heap key's
    ``size`` are the object's bytes as admitted (a hit keeps them); ``reserved_space`` is a share
    of the resident *bytes*, compared with the bytes of the new objects waiting (quick demotion
    above ``reserved_space`` %, the walk below ``10 x reserved_space`` %). Counted in *objects*
    still: the window (``(hsw - 1) x objects resident + 2``), ``sample_rate`` (1% of the resident
    objects), the walk's length and its first ``sampling_lru`` %, and the auto-tuning's comparison
    of LRU-side evictions with the number of new objects waiting. The ``byte-miss-ratio`` key does
    not use the size (``exp(prediction)`` + offset) and the ``object-miss-ratio`` key multiplies
    by it: named as the authors name them. Before the first model the victims are LRU by bytes:
    the least recently used objects, as many as the missed object needs. A miss may evict several
    objects while a request drops at most one window entry, so there the window can run past its
    bound for a while (as in the authors' code).

    Choices where the paper and the authors' code leave it open or are undefined (each tested in
    tests/test_threelcache.py): when every heap entry is stale the authors' code returns an invalid
    victim; here a new ranking is made, and if it yields nothing the LRU object is evicted. A key
    forgotten (out of the window) while still on the new-object list is skipped (the authors' code
    reads a missing map entry). The new objects' bytes drop by each entry's size at admission
    as it leaves the list (the authors subtract the object's size where it is now, which differs
    only for an object admitted twice while listed, and they reset the sum when the list empties;
    here the sum is always that of the listed entries). A request for an object larger than the
    cache gets no callback (tierlab bypasses it), so it draws no sample and moves no window entry,
    where libCacheSim's lookup does both. Request counts are not capped at 65,535 (their ``uint16``) and the
    log2 bucket of the eviction histogram is capped at 15; ``sampling_lru`` is capped at 255 (their
    ``uint8`` wraps). Heap values are float64 (theirs float32) and ties go to the earlier pushed.
    ``seed`` seeds the sample draws and label thinning (Python's ``random.Random``; the authors
    use ``std::default_random_engine``) and LightGBM (one thread, ``deterministic=True``), so runs
    repeat; agreement with libCacheSim is in distribution only (docs/policies.md has the table).
    The known differences from pip libcachesim's run, then: the random streams (they decide which
    model is trained, and at some sizes that moves the miss ratio by 0.06: docs/policies.md), the
    choices above, its LightGBM build (PyPI's 4.7 here) and its CSR rows (missing gaps absent)
    against dense rows with 0 here (LightGBM bins a sparse absent value and a 0 alike).

    It shares :class:`~tierlab.learned.base.LearnedPolicy` (named parameters) and the optional
    LightGBM import with :class:`~tierlab.learned.Lrb`; LRB's feature table (32 gaps, 10 decayed
    counters, a window counted in requests) does not fit 3L-Cache's 6 features and window counted
    in cache multiples, so nothing else is shared.

    ``training_times`` (seconds per model), ``models``, ``trained_at`` and ``predict_calls`` are
    kept on the object for measurement.
    """

    name = "3lcache"
    request_info = True
    #: Runs in object-size mode too (class doc: which quantities are bytes there).
    object_sizes = True

    #: The authors' defaults (class doc); ``ThreeLCache.with_params`` and ``3lcache(k=v)`` override them.
    defaults = {
        "batch_size": 65536,
        "hsw": 2,
        "max_hsw": 6,
        "hsw_min_requests": 1_000_000,
        "sample_rate": 1024,
        "eviction_rate": 2,
        "reserved_space": 2,
        "sample_boundary": 1,
        "sampling_lru": 1,
        "label_probability": 0.25,
        "n_past_distances": 3,
        "objective": "byte-miss-ratio",
        "num_iterations": 16,
        **GBDT_DEFAULTS,
        "seed": 1,
    }

    def __init__(self, capacity: int, **params):
        super().__init__(capacity)
        p = self.resolved_params(params)
        ints = ("batch_size", "hsw", "max_hsw", "sample_rate", "eviction_rate", "reserved_space")
        ints += ("sampling_lru", "num_iterations", "num_leaves")
        for k in ints:
            if not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < 1:
                raise ConfigError(f"3lcache: {k} must be an integer of at least 1, not {p[k]!r}")
        for k in ("sample_boundary", "n_past_distances", "hsw_min_requests", "bagging_freq"):
            if not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < 0:
                raise ConfigError(f"3lcache: {k} must be an integer of at least 0, not {p[k]!r}")
        if p["max_hsw"] < p["hsw"]:
            raise ConfigError(f"3lcache: max_hsw ({p['max_hsw']}) must be at least hsw ({p['hsw']})")
        for k in ("label_probability", "learning_rate", "feature_fraction", "bagging_fraction"):
            if not isinstance(p[k], (int, float)) or isinstance(p[k], bool) or not 0 < p[k] <= 1:
                raise ConfigError(f"3lcache: {k} must be in (0, 1], not {p[k]!r}")
        if p["objective"] not in OBJECTIVES:
            raise ConfigError(f"3lcache: objective must be one of {list(OBJECTIVES)}, not {p['objective']!r}")
        self.batch_size = p["batch_size"]
        self.hsw = p["hsw"]
        self.max_hsw = p["max_hsw"]
        self.hsw_min_requests = p["hsw_min_requests"]
        self.sample_rate_cap = p["sample_rate"]
        self.sample_rate = p["sample_rate"]
        self.eviction_rate = p["eviction_rate"]
        self.reserved_space = p["reserved_space"]
        self.by_bytes = p["objective"] == "byte-miss-ratio"
        # object-miss-ratio: every object passes the frequency filter (the authors' uint16 -1).
        self.sample_boundary = p["sample_boundary"] if self.by_bytes else math.inf
        self.sampling_lru = p["sampling_lru"]
        self.label_probability = float(p["label_probability"])
        self.n_past = p["n_past_distances"]
        self.seed = p["seed"]
        self.num_iterations = p["num_iterations"]
        self.lgb_params = lgb_params(self.seed, **gbdt_params(p))
        self._rng = random.Random(self.seed)
        self._meta: dict[int, list] = {}
        # Resident objects: a circular doubly linked list in LRU order (head: least recent) ...
        self._next: dict[int, int] = {}
        self._prev: dict[int, int] = {}
        self._head: int | None = None
        # ... and an array, for uniform draws.
        self._res: list[int] = []
        self._res_pos: dict[int, int] = {}
        # The out-of-cache queue (history sliding window): absolute slot -> object; an entry is
        # live while its object's record still points at the slot.
        self._outq: dict[int, int] = {}
        self._out_front = 0
        self._out_end = 0
        self._now = -1
        self._sampling = False
        self._rows: list[list[float]] = []
        self._labels: list[float] = []
        self._boundary = [0, 0]  # the eviction boundary B: in use, and the largest age since the last model
        self.booster = None
        # Eviction state (§3, the ranking and its heap).
        self._ptr: int | None = None  # the sampling pointer
        self._scan_length = 0
        self._queue_length = 0  # the authors' initial_queue_length: resident objects when the walk began
        self._new: list[int] = []  # objects admitted since the first model, oldest first
        self._new_sizes: list[int] = []  # their sizes at admission
        self._new_front = 0
        self._new_bytes = 0  # the sizes of _new[_new_front:] (the authors' new_obj_size)
        self._used = 0  # resident bytes (objects in page mode: every size is 1)
        self._heap: list[tuple[float, int, int]] = []
        self._pred: dict[int, int] = {}  # object -> its valid heap entry's tie number
        self._pushes = 0
        self.evict_nums = 0
        self._origin = 0  # time of the last model
        self._spointer_time = 0
        self._ev = [0, 0, 0, 0]  # evictions / samples after the walk's first part, and in it
        self._ev_hist = [0] * 16  # evicted objects by floor(log2(requests))
        # History sliding window tuning.
        self._full = False
        self._n_req = self._n_hit = self._n_window_hit = 0
        #: Seconds spent training each model, in order; models so far; the reference (``seq``)
        #: at which each was trained; calls to LightGBM's predict.
        self.training_times: list[float] = []
        self.models = 0
        self.trained_at: list[int] = []
        self.predict_calls = 0

    # --- the resident list ---------------------------------------------------------------------

    def _link_tail(self, key: int) -> None:
        h = self._head
        if h is None:
            self._head = key
            self._next[key] = self._prev[key] = key
            return
        t = self._prev[h]
        self._next[t] = key
        self._prev[h] = key
        self._prev[key] = t
        self._next[key] = h

    def _unlink(self, key: int) -> None:
        n = self._next.pop(key)
        p = self._prev.pop(key)
        if n == key:
            self._head = None
            return
        self._next[p] = n
        self._prev[n] = p
        if self._head == key:
            self._head = n

    def _to_tail(self, key: int) -> None:
        if key == self._head:
            self._head = self._next[key]  # circular: the head becomes the tail
        elif key != self._prev[self._head]:
            self._unlink(key)
            self._link_tail(key)

    def lru_order(self) -> list[int]:
        """Resident objects, least recently used first."""
        out, k = [], self._head
        for _ in range(len(self._res)):
            out.append(k)
            k = self._next[k]
        return out

    # --- training data (§3, efficient collection) -------------------------------------------------

    def _row(self, m: list, at: int) -> list[float]:
        return [at - m[_LAST], *m[_D:], m[_SIZE], m[_FREQ]]

    def _label(self, m: list, at: int, future: int) -> None:
        self._rows.append(self._row(m, at))
        self._labels.append(math.log1p(future))
        if len(self._labels) >= self.batch_size and self.evict_nums <= 0:
            self._train()

    def _keep_label(self) -> bool:
        return self.booster is None or self._rng.random() < self.label_probability

    def _train(self) -> None:
        t0 = time.perf_counter()
        lgb = self._lgb
        data = lgb.Dataset(np.array(self._rows, dtype=np.float64), np.array(self._labels), params=self.lgb_params)
        self.booster = lgb.train(self.lgb_params, data, num_boost_round=self.num_iterations)
        self._rows, self._labels = [], []
        self._heap, self._pred = [], {}
        self._boundary[0] = self._boundary[1]
        self._origin = self._now
        if self._n_req > self.hsw_min_requests and self._full:
            extra = self._n_window_hit - self._n_hit
            if extra > 0 and (self._n_hit == 0 or extra / (self._n_hit * (self.hsw - 1)) > 0.01):
                if self.hsw - 1 < (self._n_req - self._n_hit) // extra:
                    self.hsw += 1
                    self._full = False
                self.hsw = min(self.hsw, self.max_hsw)
            self._n_req = self._n_hit = self._n_window_hit = 0
        self.models += 1
        self.training_times.append(time.perf_counter() - t0)
        self.trained_at.append(self._now)

    def _lookup(self, page: int, now: int) -> None:
        """The request's bookkeeping, once per reference (before any eviction it causes)."""
        if now == self._now:
            return
        self._now = now
        if self._full:
            self._n_req += 1
        m = self._meta.get(page)
        if m is not None:
            resident = m[_OUT] < 0
            if self._full:
                self._n_hit += resident
                self._n_window_hit += 1
            at = m[_SAMPLE]
            if at >= 0:
                m[_SAMPLE] = -1
                if self._keep_label():
                    self._label(m, at, now - at)
            if self.n_past:
                m[_D + 1 :] = m[_D:-1]
                m[_D] = now - m[_LAST]
            m[_LAST] = now
            m[_FREQ] += 1
            if resident:
                if self._ptr == page:
                    self._ptr = self._next[page]
                self._pred.pop(page, None)
                self._to_tail(page)
        if self._sampling:
            self._sample(now)
        self._erase_out_cache(now)

    def _sample(self, now: int) -> None:
        n_in = len(self._res)
        i = self._rng.randrange(n_in + self._out_end - self._out_front)
        if i < n_in:
            m = self._meta[self._res[i]]
        else:
            slot = self._out_front + i - n_in
            m = self._meta.get(self._outq[slot])
            if m is None or m[_OUT] != slot:
                return  # a dead entry (readmitted object): nothing sampled
        if m[_SAMPLE] < 0:
            m[_SAMPLE] = now

    def _erase_out_cache(self, now: int) -> None:
        if self._out_end - self._out_front < len(self._res) * (self.hsw - 1) + 2:
            return
        self._full = True
        slot = self._out_front
        key = self._outq.pop(slot)
        self._out_front += 1
        m = self._meta.get(key)
        if m is None or m[_OUT] != slot:
            return
        at = m[_SAMPLE]
        if at >= 0 and self._keep_label():
            age = now - m[_LAST]
            self._boundary[1] = max(self._boundary[1], age)
            self._label(m, at, self._boundary[0] + age)
        del self._meta[key]

    # --- the callbacks --------------------------------------------------------------------------

    def on_hit(self, page, seq, time_, size):
        self._lookup(page, seq)

    def evict(self, page, seq, time_, size):
        self._lookup(page, seq)
        victim = self._choose()
        self._evict(victim)
        return victim

    def on_miss(self, page, seq, time_, size):
        self._lookup(page, seq)
        m = self._meta.get(page)
        if m is None:
            m = self._meta[page] = [seq, 1, size, -1, -1] + [0] * self.n_past
        else:
            m[_OUT] = -1  # its queue entry is dead from now on
            m[_SIZE] = size
        self._res_pos[page] = len(self._res)
        self._res.append(page)
        self._used += size
        self._link_tail(page)
        if self._ptr is None:
            self._ptr = page  # the authors' pointer starts at the first object admitted
        if self.booster is not None:
            self._new.append(page)
            self._new_sizes.append(size)
            self._new_bytes += size

    # --- eviction (§3, bidirectional sampling and the efficient eviction strategy) ----------------

    def _choose(self) -> int:
        if self.booster is None:
            return self._head
        if self.evict_nums <= 0 or not self._pred:
            self.evict_nums = self._rank() // self.eviction_rate
        victim = self._pop()
        if victim is None:  # every entry stale (undefined in the authors' code): rank again
            self.evict_nums = self._rank() // self.eviction_rate
            victim = self._pop()
        if victim is None:
            return self._head
        m = self._meta[victim]
        self._ev_hist[min(int(math.log2(m[_FREQ])), 15)] += 1
        if m[_LAST] <= self._spointer_time:
            self._ev[0] += 1
        return victim

    def _pop(self) -> int | None:
        heap, pred = self._heap, self._pred
        while heap:
            _, tie, key = heapq.heappop(heap)
            if pred.get(key) == tie:
                return key
        return None

    def _evict(self, victim: int) -> None:
        self._sampling = True
        self.evict_nums -= 1
        self._pred.pop(victim, None)
        if self._ptr == victim:
            self._ptr = self._next[victim] if self._next[victim] != victim else None
        self._unlink(victim)
        self._used -= self._meta[victim][_SIZE]
        i = self._res_pos.pop(victim)
        last = self._res.pop()
        if last != victim:
            self._res[i] = last
            self._res_pos[last] = i
        self._meta[victim][_OUT] = self._out_end
        self._outq[self._out_end] = victim
        self._out_end += 1

    def _set_sample_rate(self) -> None:
        q = self._queue_length
        if self.sample_rate >= q * 0.01 + self.eviction_rate:
            self.sample_rate = int(q * 0.01 + self.eviction_rate) if q > 2 else 1

    def _rank(self) -> int:
        """One ranking: gathers candidates from both ends, predicts them, fills the heap; returns
        how many were gathered."""
        if self._queue_length == 0:
            self._queue_length = len(self._res)
        self._set_sample_rate()
        cands = self._quick_demotion()
        if self._new_bytes < self._used * self.reserved_space // 10:
            self._walk(cands)
        self._predict(cands)
        return len(cands)

    def _quick_demotion(self) -> list[int]:
        """New objects, oldest first, while their bytes exceed ``reserved_space`` % of the resident
        bytes (objects in page mode)."""
        out: list[int] = []
        limit = self._used * self.reserved_space // 100
        most = int(self.sample_rate * 1.5)
        new, sizes = self._new, self._new_sizes
        while self._new_bytes > limit and len(out) < most and self._new_front < len(new):
            key = new[self._new_front]
            self._new_bytes -= sizes[self._new_front]
            self._new_front += 1
            if key in self._res_pos:
                out.append(key)
        if self._new_front == len(new):
            self._new, self._new_sizes, self._new_front, self._new_bytes = [], [], 0, 0
        elif self._new_front > 4096:
            del new[: self._new_front]
            del sizes[: self._new_front]
            self._new_front = 0
        return out

    def _walk(self, out: list[int]) -> None:
        """The sampling pointer's walk from the LRU end adds ``sample_rate`` objects to ``out``
        (unpopular ones past the walk's first ``sampling_lru`` %); at the walk's end, the auto-tuning."""
        ev = self._ev
        taken = 0
        if self._ptr is None:
            self._ptr = self._head
        while taken < self.sample_rate and len(out) < self._queue_length:
            m = self._meta[self._ptr]
            head_part = self._queue_length * self.sampling_lru // 100
            if ev[3] == 0 and self._scan_length > head_part:
                ev[2], ev[3], ev[1], ev[0] = ev[0], ev[1], 0, 0
            if m[_FREQ] - 1 < self.sample_boundary or self._scan_length <= head_part + self.eviction_rate:
                out.append(self._ptr)
                taken += 1
            self._scan_length += 1
            if self._scan_length >= self._queue_length:
                self._queue_length = len(self._res)
                self.sample_rate = self.sample_rate_cap
                self._set_sample_rate()
                taken = 0
                self._ptr = self._head
                self._scan_length = 0
                self._heap, self._pred = [], {}
                if self.by_bytes:
                    self._tune()
                continue
            self._ptr = self._next[self._ptr]
        if out:  # the last candidate (the walk's, or a new object's if the walk took none)
            self._spointer_time = self._meta[out[-1]][_LAST]
        ev[1] += self.sample_rate

    def _tune(self) -> None:
        """The auto-tuning at the end of a walk (objective ``byte-miss-ratio``)."""
        hist, ev = self._ev_hist, self._ev
        total = sum(hist)
        cum = 0
        for i, h in enumerate(hist):
            cum += h
            if cum >= 0.99 * total:
                if i == 0:
                    self.sample_boundary = 1
                else:
                    lo, hi = 2 ** (i - 1), 2**i
                    self.sample_boundary = int(lo + math.ceil((hi - lo) * ((0.99 * total + h - cum) / h)))
                break
        if ev[2] * ev[1] > ev[0] * ev[3]:
            self.sampling_lru = min(self.sampling_lru + 1, 255)
        elif self.sampling_lru > 1:
            self.sampling_lru -= 1
        if ev[0] + ev[2] > len(self._new) - self._new_front:
            self.reserved_space += 1
        elif self.reserved_space > 1:
            self.reserved_space //= 2
        self._ev = [0, 0, 0, 0]
        self._ev_hist = [0] * 16

    def _features(self, keys: list[int], now: int) -> np.ndarray:
        return np.array([self._row(self._meta[k], now) for k in keys], dtype=np.float64)

    def _predict(self, cands: list[int]) -> None:
        if not cands:
            return
        now = self._now
        scores = self.booster.predict(self._features(cands, now), num_threads=1)
        self.predict_calls += 1
        offset = now - self._origin
        for key, s in zip(cands, scores.tolist(), strict=True):
            v = math.exp(s) + offset if self.by_bytes else self._meta[key][_SIZE] * math.exp(s)
            self._pushes += 1
            self._pred[key] = self._pushes
            heapq.heappush(self._heap, (-v, self._pushes, key))
