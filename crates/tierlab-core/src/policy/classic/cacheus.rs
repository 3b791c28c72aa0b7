//! CACHEUS: Rodriguez, Yusuf, Lyons, Paz, Rangaswami, Liu, Zhao & Narasimhan, "Learning Cache
//! Replacement with CACHEUS", FAST 2021. LeCaR's regret-weighted choice between two experts
//! (policy/classic/lecar.rs), with better experts and no hand-set learning rate (the design of
//! Section 4):
//!
//! - SR-LRU, scan-resistant LRU: the cache is split into `R` (pages hit at least once, or back
//!   from SR-LRU's own history `H`) and `SR` (new pages, and pages demoted from `R`'s LRU end);
//!   SR-LRU evicts `SR`'s LRU page into `H` (at most `N` pages). The split adapts: a hit on a
//!   demoted page shrinks `SR` by `max(1, C_new / C_demoted)` and a new page coming back from `H`
//!   grows it by `max(1, C_demoted / C_new)`, where `C_new` counts the new pages evicted to `H`
//!   and `C_demoted` the demoted pages still cached.
//! - CR-LFU, churn-resistant LFU: evict a page of the lowest count, the one that reached it
//!   last (MRU among the least frequent).
//! - A page evicted by the expert the draw chose goes to that expert's history (`N/2` pages
//!   each, LRU order); a miss found there multiplies that expert's weight by `exp(-λ)` (no
//!   time discount, unlike LeCaR) and the weights are normalised.
//! - The learning rate `λ` adapts: it starts at a random value in
//!   `[0.001, 1.0]`, and every `N` requests moves by `±|λ * Δλ|`, up when the hit rate moved
//!   the same way as `λ` did last time and down otherwise (floored at 0.0001); after 10
//!   intervals without improvement while `λ` stood still it is re-drawn at random.
//!
//! `N` is the cache size in pages; both experts see the same resident pages, and the `R`/`SR`
//! split starts at `N/2` each. Defaults and details are libCacheSim's `Cacheus`: `R` and `SR`
//! start at `floor(N/2)`; the split's steps are `(C_a / C_b as an integer) + 0.5`, at least 1,
//! `SR` kept between 1 and the resident count - 1; when both experts pick the same page it
//! enters no expert history; CR-LFU remembers the count of a page while it is in `H` (a page
//! coming back from `H` continues from its old count + 1, a page not in `H` starts at 1); `SR` overflowing after an
//! insertion evicts `SR`'s LRU page itself (into `H`, no expert history). A cache below 2 pages
//! caches nothing (libCacheSim: an `SR` of `floor(N/2) = 0` admits nothing).
//!
//! `libcachesim = true` reproduces two things libCacheSim's code does that the paper does not:
//! its SR-LRU marks a page moved into `R` as a fresh object, so neither adaptation of the split
//! ever fires (`R` and `SR` stay at `floor(N/2)`); and it computes the hit rate of an interval
//! as an integer division (`hits / N`, so 0 unless every request hit), which makes `λ` shrink
//! by `λ * |Δλ|` every interval. Both modes draw the expert as libCacheSim does (`r < w_LRU`,
//! `r` uniform over `{0, 0.01, ..., 0.99}`) but from a `Pcg64Mcg` seeded with `seed` (default 1)
//! instead of libCacheSim's generator, so they agree in distribution, not miss for miss
//! (tests/libcachesim_sampled.rs runs `cacheus(libcachesim=true)` against libCacheSim's counts:
//! 52 of 70 cells within 0.02 of the miss ratio; the 18 others are listed there: pip
//! libcachesim 0.3.5's Cacheus is not the code of libCacheSim's source at aa0fc40, whose C
//! `cachesim` gives tierlab's miss ratios, e.g. 0.7280 on cpp at 61 pages and 0.6828 on 2_pools
//! at 99, where pip gives 0.394 and 0.523).
//! The paper's mode (the default) has no reference.
//!
//! Object sizes: libCacheSim's Cacheus decides without sizes; tierlab's object-size mode has no
//! history structure, so Cacheus runs in page mode only.
//!
//! Per reference: O(1) (lists over per-page entries; count lists as in `lfu`). Everything
//! about a page is one 32-byte entry per page id: its links in `R`, `SR` or `H`, its links in
//! its count list (resident) or in an expert history (not resident: a page in an expert
//! history never is), its count, location, flags, kind and page number. A hit reads that entry
//! and rewrites its neighbours' links; the prefetch hint loads the entry 16 references ahead
//! and its neighbours 6 ahead, so those loads overlap. Memory: 32 bytes per distinct
//! page.

use crate::error::Result;
use crate::policy::id_list::{id_links_in_field, prefetch_neighbours, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheusConfig {
    /// libCacheSim's fixed SR/R split and integer hit rate (see the module doc).
    pub libcachesim: bool,
    /// Seed of the expert draws and of the learning rate's random (re)starts.
    pub seed: u64,
}

impl Default for CacheusConfig {
    fn default() -> Self {
        CacheusConfig {
            libcachesim: false,
            seed: 1,
        }
    }
}

const NONE: u8 = 0;
const IN_R: u8 = 1;
const IN_SR: u8 = 2;
const IN_H: u8 = 3;
const BY_LRU: u8 = 1;
const BY_LFU: u8 = 2;

// Flags of an entry.
/// Demoted from `R` to `SR` (and counted in `C_demoted`).
const DEMOTED: u8 = 1;
/// Entered `SR` as a new page (counted in `C_new` when it goes to `H`).
const NEW_OBJ: u8 = 2;
const DIRTY: u8 = 4;

/// Link pairs: `R`, `SR` or `H`; and the count list (resident) or expert history.
const LST: usize = 0;
const AUX: usize = 1;

/// Everything Cacheus keeps about a page id (32 bytes, two to a cache line).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    links: [[u32; 2]; 2],
    freq: u32,
    /// NONE, IN_R, IN_SR or IN_H.
    loc: u8,
    flags: u8,
    /// The expert history the page is in (NONE, BY_LRU, BY_LFU).
    ghost: u8,
    kind: Kind,
    page: u64,
}

const BLANK: Entry = Entry {
    links: [[NIL; 2]; 2],
    freq: 0,
    loc: NONE,
    flags: 0,
    ghost: NONE,
    kind: Kind::File,
    page: 0,
};

id_links_in_field!(Entry);

impl Entry {
    #[inline(always)]
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    #[inline(always)]
    fn resident(&self) -> bool {
        self.loc == IN_R || self.loc == IN_SR
    }
}

pub struct Cacheus {
    n: usize,
    lcs: bool,
    resident: usize,
    now: u64,
    /// Per page id.
    e: Vec<Entry>,
    r: IdList<LST>,
    sr: IdList<LST>,
    h: IdList<LST>,
    r_size: f64,
    sr_size: f64,
    c_new: u64,
    c_demoted: u64,
    lists: Vec<IdList<AUX>>,
    min_freq: usize,
    /// Expert histories: [by LRU, by LFU], front = newest.
    g: [IdList<AUX>; 2],
    g_cap: usize,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_prev: f64,
    hit_rate_prev: f64,
    unlearn: u64,
    interval_hits: u64,
    rng: Pcg64Mcg,
}

impl PolicyDef for Cacheus {
    const NAME: &'static str = "cacheus";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "CACHEUS (Rodriguez et al., FAST 2021): SR-LRU and CR-LFU experts, regret weights, adaptive learning rate (seeded).";
    type Config = CacheusConfig;
    fn build(cfg: &CacheusConfig, ctx: &PolicyCtx) -> Result<Self> {
        let n = ctx.capacity;
        let mut rng = Pcg64Mcg::seed_from_u64(cfg.seed);
        let lr = 0.001 + rng.random_range(0..1000u32) as f64 / 1000.0;
        Ok(Cacheus {
            n,
            lcs: cfg.libcachesim,
            resident: 0,
            now: 0,
            e: Vec::new(),
            r: IdList::default(),
            sr: IdList::default(),
            h: IdList::default(),
            r_size: (n / 2) as f64,
            sr_size: (n / 2) as f64,
            c_new: 0,
            c_demoted: 0,
            lists: vec![IdList::default(); 2],
            min_freq: 1,
            g: [IdList::default(); 2],
            g_cap: n / 2,
            w_lru: 0.5,
            w_lfu: 0.5,
            lr,
            lr_prev: 0.0,
            hit_rate_prev: 0.0,
            unlearn: 0,
            interval_hits: 0,
            rng,
        })
    }
}

/// `(a / b as an integer) + 0.5`, at least 1 (libCacheSim's step of the split).
fn step(a: u64, b: u64) -> f64 {
    let q = a.checked_div(b).unwrap_or(0) as f64 + 0.5;
    q.max(1.0)
}

impl Cacheus {
    #[inline(always)]
    fn m(&mut self, i: u32) -> &mut Entry {
        &mut self.e[i as usize]
    }

    /// Demotes `R`'s LRU pages into `SR` until `R` has room for `extra` more.
    fn fit_r(&mut self, extra: usize) {
        while (self.r.len() + extra) as f64 > self.r_size && !self.r.is_empty() {
            let x = self.r.pop_back(&mut self.e);
            self.sr.push_front(&mut self.e, x);
            let m = self.m(x);
            m.loc = IN_SR;
            if !m.has(DEMOTED) {
                m.flags |= DEMOTED;
                self.c_demoted += 1;
            }
        }
    }

    /// Takes resident page `x` out of the cache (both experts) into SR-LRU's history.
    fn retire<S: Sink>(&mut self, x: u32, sink: &mut S) {
        let m = self.e[x as usize];
        if m.loc == IN_R {
            self.r.unlink(&mut self.e, x);
        } else {
            self.sr.unlink(&mut self.e, x);
        }
        self.lists[m.freq as usize].unlink(&mut self.e, x);
        self.h.push_front(&mut self.e, x);
        if m.has(NEW_OBJ) {
            self.c_new += 1;
        }
        let mm = self.m(x);
        mm.loc = IN_H;
        if m.has(DEMOTED) {
            mm.flags &= !DEMOTED;
            self.c_demoted -= 1;
        }
        self.resident -= 1;
        sink.evict(PageOut {
            id: x,
            page: m.page,
            kind: m.kind,
            dirty: m.has(DIRTY),
            tier: 0,
        });
        while self.h.len() >= self.n {
            let y = self.h.pop_back(&mut self.e);
            // Forgotten, but still in the expert history it may be in (its AUX links).
            let my = self.m(y);
            my.loc = NONE;
            my.flags = 0;
            my.freq = 0;
        }
    }

    /// CR-LFU's victim: the last page to reach the lowest count. Moves `min_freq` up past the
    /// empty lists it passes (an insertion at a lower count moves it back down).
    #[inline]
    fn lfu_victim(&mut self) -> u32 {
        while self.lists[self.min_freq].is_empty() {
            self.min_freq += 1;
        }
        self.lists[self.min_freq].tail()
    }

    /// One eviction chosen by the experts' draw.
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let by_lru = if self.sr.is_empty() {
            self.r.tail()
        } else {
            self.sr.tail()
        };
        debug_assert!(by_lru != NIL, "a full cache");
        let by_lfu = self.lfu_victim();
        let lru_drawn = self.rng.random_range(0..100u32) as f64 / 100.0 < self.w_lru;
        let (v, by) = if by_lru == by_lfu {
            (by_lru, NONE)
        } else if lru_drawn {
            (by_lru, BY_LRU)
        } else {
            (by_lfu, BY_LFU)
        };
        self.retire(v, sink);
        if by != NONE && self.g_cap > 0 {
            let g = (by - 1) as usize;
            self.g[g].push_front(&mut self.e, v);
            self.m(v).ghost = by;
            if self.g[g].len() > self.g_cap {
                let old = self.g[g].pop_back(&mut self.e);
                self.m(old).ghost = NONE;
            }
        }
    }

    fn update_lr(&mut self) {
        let n = self.n as u64;
        let hit_rate = if self.lcs {
            (self.interval_hits / n) as f64
        } else {
            self.interval_hits as f64 / n as f64
        };
        let d_hit = hit_rate - self.hit_rate_prev;
        let d_lr = self.lr - self.lr_prev;
        self.lr_prev = self.lr;
        self.hit_rate_prev = hit_rate;
        if d_lr != 0.0 {
            let sign = if d_hit / d_lr > 0.0 { 1.0 } else { -1.0 };
            let next = self.lr + sign * (self.lr * d_lr).abs();
            self.lr = if next > 0.001 { next } else { 0.0001 };
            self.unlearn = 0;
        } else if hit_rate == 0.0 || d_hit <= 0.0 {
            self.unlearn += 1;
        } else if self.unlearn >= 10 {
            self.unlearn = 0;
            self.lr = 0.001 + self.rng.random_range(0..1000u32) as f64 / 1000.0;
        }
        self.interval_hits = 0;
    }

    #[inline(always)]
    fn hit(&mut self, id: u32, r: &PageRef) {
        self.interval_hits += 1;
        let m = self.e[id as usize];
        if r.is_write() {
            self.m(id).flags |= DIRTY;
        }
        if m.loc == IN_R {
            self.r.move_to_front(&mut self.e, id);
        } else {
            self.hit_sr(id, m.has(DEMOTED));
        }
        let f = m.freq as usize;
        if self.lists.len() <= f + 1 {
            self.lists.push(IdList::default());
        }
        self.lists[f].unlink(&mut self.e, id);
        self.lists[f + 1].push_back(&mut self.e, id);
        self.m(id).freq = f as u32 + 1;
    }

    /// A hit on a page in `SR` (`demoted` if it came there from `R`): it moves to `R`.
    fn hit_sr(&mut self, id: u32, demoted: bool) {
        self.sr.unlink(&mut self.e, id);
        self.r.push_front(&mut self.e, id);
        let mm = self.m(id);
        mm.loc = IN_R;
        mm.flags &= !NEW_OBJ;
        if self.lcs {
            // libCacheSim re-creates the page in R: its flags are lost.
            let mm = self.m(id);
            let was = mm.has(DEMOTED);
            mm.flags &= !DEMOTED;
            if was {
                self.c_demoted -= 1;
            }
        }
        self.fit_r(0);
        if !self.lcs && demoted {
            let delta = step(self.c_new, self.c_demoted);
            self.sr_size = if self.sr_size - delta > 1.0 {
                self.sr_size - delta
            } else {
                1.0
            };
            self.r_size = self.n as f64 - self.sr_size;
            self.m(id).flags &= !DEMOTED;
            self.c_demoted -= 1;
        }
    }

    fn insert<S: Sink>(&mut self, id: u32, r: &PageRef, sink: &mut S) {
        let m = self.e[id as usize];
        let from_h = m.loc == IN_H;
        // CR-LFU remembers the count of a page in SR-LRU's history.
        let f = if from_h { m.freq as usize + 1 } else { 1 };
        while self.lists.len() <= f {
            self.lists.push(IdList::default());
        }
        self.lists[f].push_back(&mut self.e, id);
        self.min_freq = self.min_freq.min(f);
        {
            let mm = self.m(id);
            mm.freq = f as u32;
            mm.loc = NONE;
            mm.flags = if r.is_write() { DIRTY } else { 0 };
            mm.kind = r.kind();
            mm.page = r.page();
        }
        self.resident += 1;
        if from_h {
            self.h.unlink(&mut self.e, id);
            self.fit_r(1);
            self.r.push_front(&mut self.e, id);
            self.m(id).loc = IN_R;
            if !self.lcs && m.has(NEW_OBJ) {
                let delta = step(self.c_demoted, self.c_new);
                let most = self.resident as f64 - 1.0;
                self.sr_size = if self.sr_size + delta > most {
                    most
                } else {
                    self.sr_size + delta
                };
                self.r_size = self.n as f64 - self.sr_size;
            }
        } else {
            self.sr.push_front(&mut self.e, id);
            let mm = self.m(id);
            mm.loc = IN_SR;
            mm.flags |= NEW_OBJ;
        }
        while self.sr.len() as f64 > self.sr_size {
            let x = self.sr.tail();
            self.retire(x, sink);
        }
    }
}

impl Policy for Cacheus {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.e, far as usize);
        // `near`'s entry arrived since it was `far`: fetch the entries a hit (or a return from a
        // history) rewrites.
        if let Some(e) = self.e.get(near as usize) {
            if e.loc != NONE {
                prefetch_neighbours(&self.e, e, LST);
            }
            if e.resident() {
                prefetch_neighbours(&self.e, e, AUX);
                if let Some(l) = self.lists.get(e.freq as usize + 1) {
                    prefetch(&self.e, l.tail() as usize);
                }
            } else if e.ghost != NONE {
                prefetch_neighbours(&self.e, e, AUX);
            }
        }
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.now += 1;
        let id = r.id;
        let m = self.e[id as usize];
        if m.resident() {
            self.hit(id, r);
            sink.hit(r, 0);
        } else {
            if m.ghost != NONE {
                let g = (m.ghost - 1) as usize;
                if m.ghost == BY_LRU {
                    self.w_lru *= (-self.lr).exp();
                } else {
                    self.w_lfu *= (-self.lr).exp();
                }
                self.w_lru /= self.w_lru + self.w_lfu;
                self.w_lfu = 1.0 - self.w_lru;
                self.g[g].unlink(&mut self.e, id);
                self.m(id).ghost = NONE;
            }
            if self.n < 2 {
                sink.miss_bypass(r);
            } else {
                while self.resident >= self.n {
                    self.evict(sink);
                }
                self.insert(id, r, sink);
                sink.miss(r, 0);
            }
        }
        if self.n > 0 && self.now.is_multiple_of(self.n as u64) {
            self.update_lr();
        }
    }

    fn grow(&mut self, n: usize) {
        if self.e.len() < n {
            self.e.resize(n, BLANK);
        }
    }

    fn resident(&self) -> usize {
        self.resident
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("final_lru_weight_ppm", (self.w_lru * 1e6).round() as u64),
            ("final_learning_rate_ppm", (self.lr * 1e6).round() as u64),
            ("final_sr_size", self.sr_size as u64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::Cacheus;
    use crate::policy::{Policy, PolicyCtx, PolicyDef, PolicySpec};
    use crate::sim::check::{check_policy, mod_skewed_refs, replay_ids, replay_spec_ids, NullSink};

    #[test]
    fn hand_worked_sr_lru() {
        // Memory 2: R and SR hold 1 page each. 1 enters SR; 2 enters SR, which overflows:
        // SR-LRU evicts 1 into H although the cache has room; 1 misses, comes back from H into
        // R; 2 hits (SR -> R: R overflows, 1 is demoted to SR); 1 hits. No eviction needed the
        // experts' draw. LRU keeps both pages.
        for spec in ["cacheus", "cacheus(libcachesim=true)"] {
            assert_eq!(replay_spec_ids(spec, 2, &[1, 2, 1, 2, 1]), (2, 3), "{spec}");
        }
        assert_eq!(replay_ids("lru", 2, &[1, 2, 1, 2, 1]), (3, 2));
        // A cache of one page caches nothing (SR of 0 pages).
        assert_eq!(replay_ids("cacheus", 1, &[1, 1, 1]), (0, 3));
    }

    #[test]
    fn scan_resistant() {
        // Memory 10: 5 hot pages hit twice (they move to R), a scan of 1000 new pages, the hot
        // pages again: the scan only churns SR and the least frequent pages, whatever the
        // draws, so all 5 hit; LRU lost them.
        let mut ids: Vec<u64> = (0..5).chain(0..5).collect();
        ids.extend(100..1100);
        ids.extend(0..5);
        for seed in 1..4 {
            for lcs in [false, true] {
                let spec = format!("cacheus(seed={seed}, libcachesim={lcs})");
                assert_eq!(replay_spec_ids(&spec, 10, &ids).0, 10, "{spec}");
            }
        }
        assert_eq!(replay_ids("lru", 10, &ids).0, 5);
    }

    #[test]
    fn seeded_and_adaptive() {
        let refs = mod_skewed_refs(9, 30_000, 400);
        let run = |s: &str| check_policy(&PolicySpec::parse(s).unwrap(), 60, 1, &refs).unwrap();
        let a = run("cacheus(seed=5)");
        assert_eq!(a, run("cacheus(seed=5)"));
        assert_ne!(a.eviction_digest, run("cacheus(seed=6)").eviction_digest);
        // The paper's SR-LRU moves its split; libCacheSim's keeps it at N/2 = 30.
        let split = |lcs: bool| {
            let cfg = super::CacheusConfig {
                libcachesim: lcs,
                seed: 1,
            };
            let ctx = PolicyCtx {
                capacity: 60,
                tiers: 1,
                page_size: 4096,
            };
            let mut p = Cacheus::build(&cfg, &ctx).unwrap();
            p.grow(refs.ids.iter().map(|&i| i as usize + 1).max().unwrap());
            for r in refs.iter() {
                p.access(&r, &mut NullSink);
            }
            p.counters()
                .into_iter()
                .find(|(k, _)| *k == "final_sr_size")
                .unwrap()
                .1
        };
        assert_eq!(split(true), 30);
        assert_ne!(split(false), 30);
    }
}
