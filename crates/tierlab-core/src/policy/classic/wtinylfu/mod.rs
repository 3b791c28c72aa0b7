//! W-TinyLFU: Einziger, Friedman & Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
//! ACM Transactions on Storage 13(4), 2017 (Section 5, "W-TinyLFU", Figure 7), the design of
//! the Caffeine Java cache. A small LRU *window* takes every new object; the object the window
//! pushes out is a *candidate* for the *main* cache, a segmented LRU (SLRU: a probationary and a
//! protected segment); TinyLFU admits the candidate only if its estimated frequency is strictly
//! higher than that of the main cache's victim (the probationary segment's LRU object, or the
//! protected one's when probation is empty), and otherwise the candidate is evicted.
//!
//! Defaults (`libcachesim = false`), as the paper and Caffeine's `BoundedLocalCache` set them:
//! `window = 0.01` (the window holds `C - floor(0.99 C)` of the capacity `C`, so at least one
//! page), `protected = 0.8` (the protected segment holds `floor(0.8 * main)`, probation the rest
//! of the main cache), and the frequency sketch of `tinylfu_sketch.rs`: a count-min sketch of
//! `depth = 4` rows of `width = next_pow2(C)` 4-bit counters, reset (halving) after `W = sample * C`
//! samples with `sample = 10` (Section 3.3; Caffeine uses `10 * maximumSize` too), and a
//! doorkeeper Bloom filter (Section 4.1). Every reference, hit or miss, is one sample. A hit in
//! probation moves the object to the protected segment, whose overflow goes back to
//! probation's MRU end. Not done: Caffeine's hill climber that resizes the window at run time
//! and its random admission of warm candidates (both later than the paper).
//!
//! `libcachesim = true` is libCacheSim's `WTinyLFU` (cache/eviction/WTinyLFU.c, default
//! `main-cache=SLRU,window-size=0.01`), as pip `libcachesim` 0.3.5 runs it: miss for miss
//! equal on all 70 unit-size cells of tests/libcachesim_conformance.rs and the 4 object-size
//! cells of tests/libcachesim_sketch_conformance.rs, with its hashing (XXH64 with its seeds)
//! and filter size. It differs from the paper:
//! - the sketch is a counting Bloom filter of 32-bit counters (`LcsCbf` in
//!   `tinylfu_sketch.rs`, libCacheSim's hashing), with no doorkeeper and no counter cap. It is
//!   added to on a miss (the new object), on a hit in the main cache (not in the window), and
//!   once for every window object considered for admission; it decays (halves) after
//!   `32 * main` hits in the main cache (`main` in bytes in object-size mode);
//! - the window is `floor(0.01 C)` (0 below 100 pages: then nothing is ever admitted, every
//!   reference misses) and the main cache the rest, an SLRU of two segments bounded by
//!   `floor(main/5)` and `floor(4 main/5)`; a new main object enters the lowest segment with
//!   room (so the protected segment fills first while probation is full), and a hit in
//!   probation promotes to protected, whose overflow goes to probation, whose overflow is
//!   *evicted* (so a hit can evict);
//! - the window is not bounded by its own size: new objects go to the window until the whole
//!   cache is full; then one eviction moves window objects, oldest first, into the main cache
//!   while it has room, then compares the next window object with the main victim: if the
//!   window object's estimate is strictly higher, the main victim is evicted and the window
//!   object moves in, otherwise the window object is evicted; either way that eviction call
//!   ends there (if the window empties first, the main victim is evicted). The rule that an
//!   admission which evicted the main victim also ends the call is pip 0.3.5's: the
//!   libCacheSim source mirrored beside this project (Oct 2024) keeps comparing after such an
//!   admission until a window object loses, so a win costs at least one eviction more than
//!   the room needed (its C `cachesim` agrees with that older rule, pip does not; found on
//!   random traces by comparing pip's cache contents reference by reference);
//! - an object is cacheable only if it fits the window's size and probation's size.
//!
//! Sizes: in object-size mode capacities are in bytes and every object has its size; the same
//! code runs page mode with size 1. libCacheSim sizes its filter by bytes (about 14.4 counters of
//! 4 bytes per byte of main cache), so `libcachesim = true` refuses object-size caches whose
//! filter would exceed 2^28 counters (1 GiB); libCacheSim itself allocates it.
//!
//! Per reference: one hash and O(depth) sketch lookups plus O(1) list moves (a miss may
//! consider several window objects in the libCacheSim variant). Memory: a list node per resident
//! object (with its page's hash, so admission tests do not hash again), the sketch and
//! doorkeeper (about 14 bytes per page of capacity), and a 4-byte id -> slot entry per distinct
//! page. On a large cache each sketch lookup is a cache miss, so the replay loop hints each
//! reference's sketch line and doorkeeper word 16 references ahead ([`Policy::prefetch_ref`]), a
//! miss takes its page's hash from that hint (`HashCache`), and after a miss the next candidates'
//! and the victim's sketch entries (in the libCacheSim variant too: its ten filter counters each)
//! are loaded ahead. Speed only: every decision is the same. The sketch's layout is described in
//! `tinylfu_sketch.rs`.
//!
//! The admission test (paper rules) reads little; each shortcut gives the answer of comparing the
//! two estimates, and a test in `tinylfu_sketch.rs` checks each against the plain estimate:
//! - the victim's estimate is remembered by the sketch while no record touches its counter
//!   block or doorkeeper word ([`FreqSketch::estimate_remembered`]): the victim mostly stays
//!   the victim for many tests;
//! - the candidate's estimate comes from its node: a record notes the sample count and the
//!   key's smallest counter ([`FreqSketch::record_noting`], when the counter block is in cache
//!   anyway), the sketch stamps each counter block with the sample count of its last increment,
//!   and until the next reset the key stays in the doorkeeper, so while its block's stamp is
//!   not later than the note the estimate is that counter plus 1 (the window's notes are
//!   dropped at a reset). Otherwise the counters are read first and the doorkeeper word only
//!   when they leave the answer open ([`FreqSketch::exceeds_hashed`]);
//! - after a miss the next candidate but one gets its block's stamp loaded (or its counter
//!   block when it has no note), and the victim's lines are hinted only when it changed.

use super::tinylfu_sketch::{FreqSketch, LcsCbf, Noted};
use crate::error::{Error, Result};
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{check_fraction, Policy, PolicyCtx, PolicyDef, PolicyVisitor};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
use serde::{Deserialize, Serialize};
use std::cell::Cell;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WTinyLfuConfig {
    /// Share of the capacity for the window LRU.
    pub window: f64,
    /// Share of the main cache for the protected segment (paper rules only).
    pub protected: f64,
    /// Count-min sketch rows (paper rules only).
    pub depth: u32,
    /// Sample size `W` as a multiple of the capacity (paper rules only).
    pub sample: u64,
    /// Counters per sketch row; 0: `next_pow2(capacity)` (paper rules only).
    pub width: usize,
    /// libCacheSim's variant (see the module doc).
    pub libcachesim: bool,
}

impl WTinyLfuConfig {
    /// The paper's and Caffeine's parameters: a 1% window, 80% of the main cache protected, a
    /// sketch of 4 rows of `next_pow2(C)` counters reset every `10 C` samples.
    const PAPER: WTinyLfuConfig = WTinyLfuConfig {
        window: 0.01,
        protected: 0.8,
        depth: 4,
        sample: 10,
        width: 0,
        libcachesim: false,
    };
}

impl Default for WTinyLfuConfig {
    fn default() -> Self {
        Self::PAPER
    }
}

const WINDOW: usize = 0;
const PROBATION: usize = 1;
const PROTECTED: usize = 2;

/// A page's node: its frame's fields written out (with the policy's own bytes in what would
/// be the frame's padding, so a node is 32 bytes and with its links 40).
#[derive(Debug, Clone, Copy)]
struct Node {
    page: u64,
    /// The sketch's hash of the page, kept so that admission tests do not hash again.
    h: u64,
    id: PageId,
    /// Size (page mode: 1; object sizes are `u32`).
    size: u32,
    /// Paper rules, window nodes: what the sketch noted at the page's last record
    /// ([`Noted`]), so that its admission test mostly needs no counter block.
    stamp: u32,
    kind: Kind,
    dirty: bool,
    seg: u8,
    min: u8,
}

impl Node {
    #[inline(always)]
    fn new(r: &PageRef, h: u64, size: u64, noted: Noted) -> Node {
        Node {
            page: r.page(),
            h,
            id: r.id,
            size: size as u32,
            stamp: noted.stamp,
            kind: r.kind(),
            dirty: r.is_write(),
            seg: 0,
            min: noted.min,
        }
    }
    #[inline(always)]
    fn out(&self) -> PageOut {
        PageOut {
            id: self.id,
            page: self.page,
            kind: self.kind,
            dirty: self.dirty,
            tier: 0,
        }
    }
    #[inline(always)]
    fn noted(&self) -> Noted {
        Noted {
            stamp: self.stamp,
            min: self.min,
        }
    }
}

/// The sketch's hashes of the pages the replay loop hinted last ([`Policy::prefetch_ref`],
/// which hashes a page to load its counters and doorkeeper word), so that a miss, about
/// [`crate::policy::PREFETCH_FAR`] references later, does not hash the page again (XXH64's
/// chain of five multiplications stood between the reference and the doorkeeper test, whose
/// branch goes either way on a miss-heavy trace): direct-mapped by page id, each entry holding
/// the page it is for; an entry of another page is not used. A speed hint only: the hash is a
/// function of the page, so the answer is the same either way.
struct HashCache {
    e: [(Cell<u64>, Cell<u64>); HASH_CACHE],
}

/// Entries in [`HashCache`]: page ids are dense and numbered in first-seen order, so the
/// pages hinted within a few references rarely share an entry.
const HASH_CACHE: usize = 256;

impl HashCache {
    /// A cache of `hash` (the paper's sketch's or libCacheSim's filter's), which its callers
    /// pass again to [`HashCache::get`].
    fn new(hash: fn(u64) -> u64) -> Self {
        // Every entry holds a page and its hash (page 0), so a match is always right.
        let h0 = hash(0);
        HashCache {
            e: std::array::from_fn(|_| (Cell::new(0), Cell::new(h0))),
        }
    }
    #[inline(always)]
    fn put(&self, id: PageId, page: u64, h: u64) {
        let e = &self.e[id as usize % HASH_CACHE];
        e.0.set(page);
        e.1.set(h);
    }
    /// The hash of `page` (whose id is `id`): the entry's when it is `page`'s, else worked
    /// out.
    #[inline(always)]
    fn get(&self, id: PageId, page: u64, hash: impl FnOnce(u64) -> u64) -> u64 {
        let e = &self.e[id as usize % HASH_CACHE];
        if e.0.get() == page {
            e.1.get()
        } else {
            hash(page)
        }
    }
}

pub struct WTinyLfu {
    /// Per segment (window, probation, protected): its LRU list, occupancy and bound.
    lists: [List; 3],
    used: [u64; 3],
    seg_max: [u64; 3],
    /// libCacheSim's rules.
    lcs: bool,
    /// Capacity (pages, or bytes with object sizes), window size and main size.
    cap: u64,
    wcap: u64,
    main_cap: u64,
    arena: Arena<Node>,
    table: SlotTable,
    /// The paper's sketch (a minimal unused one in the libCacheSim variant) and libCacheSim's
    /// filter (likewise), as two fields so the hot paths do not match on a variant.
    sketch: FreqSketch,
    cbf: LcsCbf,
    /// The main victim whose sketch entries [`WTinyLfu::prefetch_admission`] last loaded.
    hinted_victim: u32,
    /// The sketch's (or the filter's) hashes of recently hinted pages ([`HashCache`]).
    hashes: HashCache,
    /// The sketch's resets when the window's notes were last checked.
    resets_seen: u64,
    main_hits: u64,
    decay_every: u64,
    admitted: u64,
    rejected: u64,
}

impl PolicyDef for WTinyLfu {
    const NAME: &'static str = "wtinylfu";
    const ALIASES: &'static [&'static str] = &["w-tinylfu", "tinylfu"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "W-TinyLFU (Einziger et al. 2017; Caffeine): LRU window, SLRU main, \
         count-min sketch admission; libcachesim=true for libCacheSim's WTinyLFU.";
    type Config = WTinyLfuConfig;
    fn build(cfg: &WTinyLfuConfig, ctx: &PolicyCtx) -> Result<Self> {
        check_fraction(Self::NAME, "window", cfg.window)?;
        check_fraction(Self::NAME, "protected", cfg.protected)?;
        if !(1..=16).contains(&cfg.depth) || cfg.sample == 0 {
            return Err(Error::config(format!(
                "policy 'wtinylfu': depth must be in 1..=16 and sample at least 1, got {} and {}",
                cfg.depth, cfg.sample
            )));
        }
        let cap = ctx.capacity as u64;
        let (wcap, main_cap, seg_max, sketch, cbf, decay_every);
        if cfg.libcachesim {
            wcap = (cap as f64 * cfg.window) as u64;
            main_cap = cap - wcap;
            // SLRU "seg-size=1:4".
            seg_max = [
                0,
                (main_cap as f64 / 5.0) as u64,
                (4.0 / 5.0 * main_cap as f64) as u64,
            ];
            let (n, hashes) = LcsCbf::counters_for(main_cap as i64);
            if n > 1 << 28 {
                return Err(Error::config(format!(
                    "policy 'wtinylfu(libcachesim=true)': libCacheSim's filter for a main cache \
                     of {main_cap} would have {n} counters; at most 2^28 are allowed"
                )));
            }
            cbf = LcsCbf::new(n, hashes);
            sketch = FreqSketch::new(1, 1, 1, 1);
            decay_every = 32 * main_cap;
        } else {
            wcap = cap - (cap as f64 * (1.0 - cfg.window)) as u64;
            main_cap = cap - wcap;
            let protected = (main_cap as f64 * cfg.protected) as u64;
            seg_max = [wcap, main_cap - protected, protected];
            sketch = FreqSketch::new(ctx.capacity, cfg.width, cfg.depth, cfg.sample);
            cbf = LcsCbf::new(1, 1);
            decay_every = 0;
        }
        Ok(WTinyLfu {
            lcs: cfg.libcachesim,
            cap,
            wcap,
            main_cap,
            seg_max,
            used: [0; 3],
            lists: Default::default(),
            arena: Arena::with_capacity(ctx.capacity.min(1 << 20)),
            table: SlotTable::default(),
            sketch,
            cbf,
            hinted_victim: NIL,
            hashes: HashCache::new(if cfg.libcachesim {
                LcsCbf::hash
            } else {
                FreqSketch::hash
            }),
            resets_seen: 0,
            main_hits: 0,
            decay_every,
            admitted: 0,
            rejected: 0,
        })
    }
    fn visit_object_mode<V: PolicyVisitor>(v: V) -> Option<V::Out> {
        Some(v.visit::<Self>())
    }
}

impl WTinyLfu {
    #[inline]
    fn node(&self, s: u32) -> &Node {
        self.arena.get(s)
    }
    #[inline(always)]
    fn unlink(&mut self, s: u32) {
        let n = *self.arena.get(s);
        self.lists[n.seg as usize].unlink(&mut self.arena, s);
        self.used[n.seg as usize] -= n.size as u64;
    }
    fn link(&mut self, s: u32, seg: usize) {
        let n = self.arena.get_mut(s);
        n.seg = seg as u8;
        let size = n.size as u64;
        self.lists[seg].push_front(&mut self.arena, s);
        self.used[seg] += size;
    }
    fn evict<S: Sink>(&mut self, s: u32, sink: &mut S) {
        self.unlink(s);
        let out = self.arena.get(s).out();
        self.table.clear(out.id);
        self.arena.release(s);
        sink.evict(out);
    }
    fn main_used(&self) -> u64 {
        self.used[PROBATION] + self.used[PROTECTED]
    }
    /// The main cache's victim: probation's LRU object, else protected's.
    fn main_victim(&self) -> Option<u32> {
        self.lists[PROBATION]
            .back()
            .or_else(|| self.lists[PROTECTED].back())
    }
    /// libCacheSim's filter estimate of slot `s`'s page.
    #[inline]
    fn lcs_estimate(&self, s: u32) -> u32 {
        self.cbf.estimate_hashed(self.node(s).h)
    }

    /// TinyLFU's admission test (paper rules): whether candidate `c`'s estimate is higher than
    /// victim `v`'s. The victim's estimate is remembered by the sketch (it mostly stays the
    /// victim for many tests), the candidate's comes from its node's note when that still
    /// holds ([`FreqSketch::estimate_noted`]), else from its counters first
    /// ([`FreqSketch::exceeds_hashed`]); the answer is the same as comparing two estimates.
    #[inline(always)]
    fn admits(&mut self, c: u32, v: u32) -> bool {
        let (hc, hv) = (self.node(c).h, self.node(v).h);
        let k = self.sketch.estimate_remembered(hv);
        match self.sketch.estimate_noted(hc, self.node(c).noted()) {
            Some(e) => e > k,
            None => self.sketch.exceeds_hashed(hc, k),
        }
    }

    // ---- the paper's rules ----

    /// A sample of the page whose hash is `h` (paper rules).
    #[inline(always)]
    fn record(&mut self, h: u64) {
        self.sketch.record_hashed(h);
        self.after_record();
    }

    /// [`WTinyLfu::record`], noting what a window node keeps ([`FreqSketch::record_noting`]).
    #[inline(always)]
    fn record_noting(&mut self, h: u64) -> Noted {
        let noted = self.sketch.record_noting(h);
        self.after_record();
        noted
    }

    /// After a reset of the sketch the window's notes are stale: they are dropped (a walk of
    /// the window, 1% of the cache, once per `W` samples).
    #[inline(always)]
    fn after_record(&mut self) {
        if self.sketch.resets() != self.resets_seen {
            self.resets_seen = self.sketch.resets();
            let mut cur = self.lists[WINDOW].front();
            while let Some(s) = cur {
                let n = self.arena.get_mut(s);
                (n.stamp, n.min) = (Noted::NONE.stamp, Noted::NONE.min);
                cur = self.lists[WINDOW].next_of(&self.arena, s);
            }
        }
    }

    /// Probation hit: to protected; protected's overflow back to probation's MRU end.
    fn promote(&mut self, s: u32) {
        self.unlink(s);
        self.link(s, PROTECTED);
        while self.used[PROTECTED] > self.seg_max[PROTECTED] {
            let Some(t) = self.lists[PROTECTED].back() else {
                break;
            };
            self.unlink(t);
            self.link(t, PROBATION);
        }
        // The next demotion's node and the one before it (a speed hint).
        self.lists[PROTECTED].prefetch_back(&self.arena, |_| {});
    }

    /// A speed hint after a miss, so that on a large cache (whose sketch, doorkeeper and
    /// nodes are far larger than the CPU's caches) the next admission tests do not wait for
    /// memory: the window's candidate after next gets its sketch entries (paper rules: its
    /// counter block only, see [`WTinyLfu::admits`]) and table entry loaded, the one after
    /// that its node (a pipeline: each is read one miss after its load began), and the main
    /// victim, when it is not the one hinted last time, its sketch entries, table entry and
    /// the node after it. Changes nothing but the record of the hinted victim.
    #[inline(always)]
    fn prefetch_admission(&mut self) {
        let w = &self.lists[WINDOW];
        if let Some(p) = w.back().and_then(|c| w.prev_of(&self.arena, c)) {
            let n = self.node(p);
            if self.lcs {
                self.cbf.prefetch_hashed(n.h);
            } else if n.min != Noted::NONE.min {
                self.sketch.prefetch_noted(n.h);
            } else {
                self.sketch.prefetch_counters_hashed(n.h);
            }
            self.table.prefetch(n.id);
            if let Some(q) = w.prev_of(&self.arena, p) {
                self.arena.prefetch(q);
            }
        }
        let main = if self.lists[PROBATION].is_empty() {
            &self.lists[PROTECTED]
        } else {
            &self.lists[PROBATION]
        };
        let v = main.back().unwrap_or(NIL);
        if v == self.hinted_victim {
            return;
        }
        self.hinted_victim = v;
        main.prefetch_back(&self.arena, |v| {
            if self.lcs {
                self.cbf.prefetch_hashed(v.h);
            } else {
                self.sketch.prefetch_hashed(v.h);
            }
            self.table.prefetch(v.id);
        });
    }

    /// Moves window overflow into the main cache through TinyLFU's admission test.
    fn drain_window<S: Sink>(&mut self, sink: &mut S) {
        while self.used[WINDOW] > self.wcap {
            // The window's back, unlinked here (not by `unlink`): its own copy of the list
            // code, whose branches (no node after it) this call site always takes alike.
            let c = self.lists[WINDOW]
                .pop_back(&mut self.arena)
                .expect("an over-full window has objects");
            let size = self.node(c).size as u64;
            self.used[WINDOW] -= size;
            let mut admit = size <= self.main_cap;
            while admit && self.main_used() + size > self.main_cap {
                let v = self.main_victim().expect("a full main cache has objects");
                if self.admits(c, v) {
                    self.evict(v, sink);
                } else {
                    admit = false;
                }
            }
            if admit {
                self.admitted += 1;
                self.link(c, PROBATION);
            } else {
                self.rejected += 1;
                let out = self.node(c).out();
                self.table.clear(out.id);
                self.arena.release(c);
                sink.evict(out);
            }
        }
    }

    // ---- libCacheSim's rules ----

    /// libCacheSim's SLRU insert into the main cache: the lowest segment with room, else
    /// (after evicting while the main cache would overflow) probation.
    fn lcs_main_insert<S: Sink>(&mut self, s: u32, sink: &mut S) {
        let size = self.node(s).size as u64;
        let seg = if self.used[PROBATION] + size <= self.seg_max[PROBATION] {
            PROBATION
        } else if self.used[PROTECTED] + size <= self.seg_max[PROTECTED] {
            PROTECTED
        } else {
            while self.main_used() + size > self.main_cap {
                let v = self
                    .main_victim()
                    .expect("an over-full main cache has objects");
                self.evict(v, sink);
            }
            PROBATION
        };
        self.link(s, seg);
    }

    /// libCacheSim's SLRU hit: promote from probation, cool protected into probation, evict
    /// probation's overflow.
    fn lcs_main_hit<S: Sink>(&mut self, s: u32, sink: &mut S) {
        if self.node(s).seg as usize == PROTECTED {
            self.lists[PROTECTED].move_to_front(&mut self.arena, s);
            return;
        }
        self.unlink(s);
        self.link(s, PROTECTED);
        while self.used[PROTECTED] > self.seg_max[PROTECTED] {
            let t = self.lists[PROTECTED]
                .back()
                .expect("over-full protected segment");
            self.unlink(t);
            self.link(t, PROBATION);
            while self.used[PROBATION] > self.seg_max[PROBATION] {
                let v = self.lists[PROBATION].back().expect("over-full probation");
                self.evict(v, sink);
            }
        }
    }

    /// One call of libCacheSim's `WTinyLFU_evict`.
    fn lcs_evict<S: Sink>(&mut self, sink: &mut S) {
        loop {
            let Some(c) = self.lists[WINDOW].back() else {
                let v = self.main_victim().expect("a full cache has objects");
                self.evict(v, sink);
                return;
            };
            let h = self.node(c).h;
            let size = self.node(c).size as u64;
            if self.main_used() + size <= self.main_cap {
                self.unlink(c);
                self.lcs_main_insert(c, sink);
                self.admitted += 1;
                self.cbf.add_hashed(h);
                continue;
            }
            let v = self.main_victim().expect("a full main cache has objects");
            // The victim's estimate before the candidate's sample (the estimates first, as
            // libCacheSim takes them).
            let kv = self.lcs_estimate(v);
            let kc = self.lcs_estimate(c);
            self.cbf.add_hashed(h);
            if kc > kv {
                self.evict(v, sink);
                self.unlink(c);
                self.lcs_main_insert(c, sink);
                self.admitted += 1;
                // The main victim's eviction made room: this call ends here (pip
                // libcachesim 0.3.5; see the module doc).
            } else {
                self.evict(c, sink);
                self.rejected += 1;
            }
            return;
        }
    }
}

impl Policy for WTinyLfu {
    table_glue!(arena);

    const PREFETCH_REFS: bool = true;
    #[inline(always)]
    fn prefetch_ref(&self, r: &PageRef) {
        if self.lcs {
            let h = LcsCbf::hash(r.page());
            self.cbf.prefetch_hashed(h);
            self.hashes.put(r.id, r.page(), h);
        } else {
            let h = FreqSketch::hash(r.page());
            self.sketch.prefetch_hashed(h);
            self.hashes.put(r.id, r.page(), h);
        }
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.arena.get_mut(slot).dirty |= r.is_write();
            let Node { seg, h, .. } = *self.node(slot);
            let seg = seg as usize;
            sink.hit(r, 0);
            if self.lcs {
                if seg == WINDOW {
                    self.lists[WINDOW].move_to_front(&mut self.arena, slot);
                } else {
                    self.lcs_main_hit(slot, sink);
                    self.cbf.add_hashed(h);
                    self.main_hits += 1;
                    if self.main_hits >= self.decay_every {
                        self.main_hits = 0;
                        self.cbf.decay();
                    }
                }
            } else {
                match seg {
                    WINDOW => {
                        let noted = self.record_noting(h);
                        let n = self.arena.get_mut(slot);
                        (n.stamp, n.min) = (noted.stamp, noted.min);
                        self.lists[WINDOW].move_to_front(&mut self.arena, slot);
                    }
                    PROBATION => {
                        self.record(h);
                        self.promote(slot);
                    }
                    s => {
                        self.record(h);
                        self.lists[s].move_to_front(&mut self.arena, slot);
                    }
                }
            }
            return;
        }
        let size = r.size();
        if self.lcs {
            let h = self.hashes.get(r.id, r.page(), LcsCbf::hash);
            if size > self.cap || size > self.wcap || size > self.seg_max[PROBATION] {
                sink.miss_bypass(r);
                return;
            }
            while self.used.iter().sum::<u64>() + size > self.cap {
                self.lcs_evict(sink);
            }
            let s = self.arena.alloc(Node::new(r, h, size, Noted::NONE));
            self.table.set(r.id, s);
            self.link(s, WINDOW);
            self.cbf.add_hashed(h);
            sink.miss(r, 0);
            self.prefetch_admission();
        } else {
            let h = self.hashes.get(r.id, r.page(), FreqSketch::hash);
            let noted = self.record_noting(h);
            if size > self.cap {
                sink.miss_bypass(r);
                return;
            }
            sink.miss(r, 0);
            let s = self.arena.alloc(Node::new(r, h, size, noted));
            self.table.set(r.id, s);
            self.link(s, WINDOW);
            self.drain_window(sink);
            self.prefetch_admission();
        }
    }

    fn resident(&self) -> usize {
        self.arena.live()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let resets = if self.lcs {
            self.cbf.decays()
        } else {
            self.sketch.resets()
        };
        vec![
            ("admitted", self.admitted),
            ("rejected", self.rejected),
            ("sketch_resets", resets),
        ]
    }
}

#[cfg(test)]
mod tests;
