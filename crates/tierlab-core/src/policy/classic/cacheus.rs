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
//! Per reference: O(1) (lists over per-page nodes; count lists as in `lfu`).

use crate::error::Result;
use crate::policy::list::{Arena, List};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
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

#[derive(Debug, Clone, Copy)]
struct Meta {
    f: Frame,
    /// NONE, IN_R, IN_SR or IN_H.
    loc: u8,
    demoted: bool,
    new_obj: bool,
    freq: usize,
    /// The expert history the page is in (NONE, BY_LRU, BY_LFU).
    ghost: u8,
}

const BLANK: Meta = Meta {
    f: Frame {
        page: 0,
        id: 0,
        kind: Kind::File,
        dirty: false,
    },
    loc: NONE,
    demoted: false,
    new_obj: false,
    freq: 0,
    ghost: NONE,
};

pub struct Cacheus {
    n: usize,
    lcs: bool,
    resident: usize,
    now: u64,
    /// One node per page id in each arena (node i = page id i).
    main: Arena<Meta>,
    lfu: Arena<()>,
    ghost: Arena<()>,
    r: List,
    sr: List,
    h: List,
    r_size: f64,
    sr_size: f64,
    c_new: u64,
    c_demoted: u64,
    lists: Vec<List>,
    min_freq: usize,
    /// Expert histories: [by LRU, by LFU], front = newest.
    g: [List; 2],
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
            main: Arena::with_capacity(0),
            lfu: Arena::with_capacity(0),
            ghost: Arena::with_capacity(0),
            r: List::default(),
            sr: List::default(),
            h: List::default(),
            r_size: (n / 2) as f64,
            sr_size: (n / 2) as f64,
            c_new: 0,
            c_demoted: 0,
            lists: vec![List::default(); 2],
            min_freq: 1,
            g: [List::default(); 2],
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
    #[inline]
    fn m(&mut self, i: u32) -> &mut Meta {
        self.main.get_mut(i)
    }

    /// Demotes `R`'s LRU pages into `SR` until `R` has room for `extra` more.
    fn fit_r(&mut self, extra: usize) {
        while (self.r.len() + extra) as f64 > self.r_size && !self.r.is_empty() {
            let x = self.r.pop_back(&mut self.main).expect("non-empty");
            self.sr.push_front(&mut self.main, x);
            let m = self.m(x);
            m.loc = IN_SR;
            if !m.demoted {
                m.demoted = true;
                self.c_demoted += 1;
            }
        }
    }

    /// Takes resident page `x` out of the cache (both experts) into SR-LRU's history.
    fn retire<S: Sink>(&mut self, x: u32, sink: &mut S) {
        let m = *self.main.get(x);
        if m.loc == IN_R {
            self.r.unlink(&mut self.main, x);
        } else {
            self.sr.unlink(&mut self.main, x);
        }
        self.lists[m.freq].unlink(&mut self.lfu, x);
        self.h.push_front(&mut self.main, x);
        if m.new_obj {
            self.c_new += 1;
        }
        let mm = self.m(x);
        mm.loc = IN_H;
        if m.demoted {
            mm.demoted = false;
            self.c_demoted -= 1;
        }
        self.resident -= 1;
        sink.evict(m.f.out(0));
        while self.h.len() >= self.n {
            let y = self.h.pop_back(&mut self.main).expect("non-empty");
            let old = *self.main.get(y);
            *self.m(y) = Meta {
                f: old.f,
                ghost: old.ghost,
                ..BLANK
            };
        }
    }

    fn lfu_victim(&mut self) -> u32 {
        while self.lists[self.min_freq].is_empty() {
            self.min_freq += 1;
        }
        self.lists[self.min_freq].back().expect("non-empty")
    }

    /// One eviction chosen by the experts' draw.
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let by_lru = self.sr.back().or(self.r.back()).expect("a full cache");
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
            self.g[g].push_front(&mut self.ghost, v);
            self.m(v).ghost = by;
            if self.g[g].len() > self.g_cap {
                let old = self.g[g].pop_back(&mut self.ghost).expect("non-empty");
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

    fn hit(&mut self, id: u32, r: &PageRef) {
        self.interval_hits += 1;
        let m = *self.main.get(id);
        self.m(id).f.dirty |= r.is_write();
        if m.loc == IN_R {
            self.r.move_to_front(&mut self.main, id);
        } else {
            self.sr.unlink(&mut self.main, id);
            self.r.push_front(&mut self.main, id);
            let mm = self.m(id);
            mm.loc = IN_R;
            mm.new_obj = false;
            if self.lcs {
                // libCacheSim re-creates the page in R: its flags are lost.
                let mm = self.m(id);
                let was = mm.demoted;
                mm.demoted = false;
                if was {
                    self.c_demoted -= 1;
                }
            }
            self.fit_r(0);
            if !self.lcs && m.demoted {
                let delta = step(self.c_new, self.c_demoted);
                self.sr_size = if self.sr_size - delta > 1.0 {
                    self.sr_size - delta
                } else {
                    1.0
                };
                self.r_size = self.n as f64 - self.sr_size;
                self.m(id).demoted = false;
                self.c_demoted -= 1;
            }
        }
        let f = m.freq;
        if self.lists.len() <= f + 1 {
            self.lists.push(List::default());
        }
        self.lists[f].unlink(&mut self.lfu, id);
        self.lists[f + 1].push_back(&mut self.lfu, id);
        self.m(id).freq = f + 1;
    }

    fn insert<S: Sink>(&mut self, id: u32, r: &PageRef, sink: &mut S) {
        let m = *self.main.get(id);
        let from_h = m.loc == IN_H;
        // CR-LFU remembers the count of a page in SR-LRU's history.
        let f = if from_h { m.freq + 1 } else { 1 };
        while self.lists.len() <= f {
            self.lists.push(List::default());
        }
        self.lists[f].push_back(&mut self.lfu, id);
        self.min_freq = self.min_freq.min(f);
        *self.m(id) = Meta {
            f: Frame::of(r),
            freq: f,
            ghost: m.ghost,
            ..BLANK
        };
        self.resident += 1;
        if from_h {
            self.h.unlink(&mut self.main, id);
            self.fit_r(1);
            self.r.push_front(&mut self.main, id);
            self.m(id).loc = IN_R;
            if !self.lcs && m.new_obj {
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
            self.sr.push_front(&mut self.main, id);
            let mm = self.m(id);
            mm.loc = IN_SR;
            mm.new_obj = true;
        }
        while self.sr.len() as f64 > self.sr_size {
            let x = self.sr.back().expect("non-empty");
            self.retire(x, sink);
        }
    }
}

impl Policy for Cacheus {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.now += 1;
        let id = r.id;
        let m = *self.main.get(id);
        if m.loc == IN_R || m.loc == IN_SR {
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
                self.g[g].unlink(&mut self.ghost, id);
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
        while self.main.live() < n {
            let i = self.main.alloc(BLANK);
            self.lfu.alloc(());
            self.ghost.alloc(());
            self.m(i).f.id = i;
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
