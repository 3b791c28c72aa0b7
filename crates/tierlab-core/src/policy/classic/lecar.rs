//! LeCaR: Vietri, Rodriguez, Martinez, Lyons, Liu, Rangaswami, Zhao & Narasimhan, "Driving
//! Cache Replacement with ML-based LeCaR", HotStorage 2018 (Section 3, Algorithm 1). Two
//! experts, LRU and LFU, each propose a victim; the cache evicts LRU's with probability `w_LRU`
//! and LFU's otherwise (regret minimisation over the two experts). A page evicted by one expert
//! goes to that expert's history (`H_LRU` or `H_LFU`, FIFO, newest first); a miss on a page found
//! in `H_e` is a regret of expert `e`: with `t` the references since that eviction, `e`'s weight
//! is multiplied by `exp(-λ d^t)` and the two weights are normalised (Algorithm 1's update; the
//! paper rewards the other expert by `exp(+λ d^t)` instead, the same after normalisation).
//!
//! Defaults are the paper's and libCacheSim's: learning rate `λ = 0.45` (`learning_rate`),
//! discount `d = 0.005^(1/N)` for a cache of `N` pages (`discount_base` = 0.005), initial weights
//! 0.5 each (`lru_weight`). libCacheSim's details, followed here: each history holds up to `N/2`
//! pages (`history` = 0.5 of `N` each); when both experts pick the same page it is evicted
//! without entering any history and no draw is made; a returning page starts again at count 1;
//! the LFU expert evicts the page that reached the lowest count first; weights get `1e-10` added
//! before normalising so that neither reaches 0.
//!
//! Difference from libCacheSim: the draw is libCacheSim's, `r < w_LRU` with `r` uniform over
//! `{0, 0.01, ..., 0.99}` (so LRU is chosen with probability `ceil(100 w_LRU) / 100`: still 1%
//! when its weight has all but vanished), but from a `Pcg64Mcg` seeded with `seed` (default 1)
//! instead of libCacheSim's generator, so the two agree in distribution, not miss for miss
//! (crates/tierlab-core/tests/libcachesim_sampled.rs checks the miss ratio on every trace and
//! size of the conformance set). With `lru_weight = 1` and `learning_rate = 0` the policy is LRU
//! exactly, and with `lru_weight = 0` and `history = 0` (no regrets, so the weight floor never
//! applies) it is LFU exactly (tests).
//!
//! Object sizes: libCacheSim's LeCaR decides without sizes (its histories are bounded in bytes);
//! tierlab's object-size mode has no history structure, so LeCaR runs in page mode only.
//!
//! Per reference: O(1) (an LRU list, O(1) frequency lists as in `lfu`, two ghost FIFOs).
//! Everything about a page is one 32-byte entry per page id (page ids are dense): its links
//! in the recency order (or in the history it is in) and in its count list (or, in a history,
//! the time of its eviction), its count, state, dirty bit, kind and page number. A hit reads
//! that entry and rewrites its four neighbours' links; the prefetch hint loads the entry 16
//! references ahead and its neighbours 6 ahead, so those loads overlap instead of following
//! one another. Memory: 32 bytes per distinct page, whatever the cache size.

use crate::error::{Error, Result};
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
pub struct LecarConfig {
    /// The paper's λ.
    pub learning_rate: f64,
    /// `d = discount_base^(1/N)`.
    pub discount_base: f64,
    /// Initial weight of the LRU expert (LFU's is 1 - this).
    pub lru_weight: f64,
    /// Each history's capacity as a fraction of the cache.
    pub history: f64,
    /// Seed of the expert draws.
    pub seed: u64,
}

impl Default for LecarConfig {
    fn default() -> Self {
        LecarConfig {
            learning_rate: 0.45,
            discount_base: 0.005,
            lru_weight: 0.5,
            history: 0.5,
            seed: 1,
        }
    }
}

/// Where a page is: nowhere, resident, or in the history of the expert that evicted it.
const ABSENT: u8 = 0;
const RESIDENT: u8 = 3;
const BY_LRU: u8 = 1;
const BY_LFU: u8 = 2;

/// Link pairs: the recency list (resident) or the history (`BY_LRU`/`BY_LFU`), and the count
/// list (resident only; a page in a history keeps its eviction time there instead).
const REC: usize = 0;
const CNT: usize = 1;

/// Everything LeCaR keeps about a page id (32 bytes, one cache line holds two).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    links: [[u32; 2]; 2],
    freq: u32,
    state: u8,
    dirty: bool,
    kind: Kind,
    page: u64,
}

const EMPTY: Entry = Entry {
    links: [[NIL; 2]; 2],
    freq: 0,
    state: ABSENT,
    dirty: false,
    kind: Kind::File,
    page: 0,
};

id_links_in_field!(Entry);

impl Entry {
    /// A page in a history: when it was evicted (kept in the count links it no longer uses).
    #[inline(always)]
    fn evicted_at(&self) -> u64 {
        let [lo, hi] = self.links[CNT];
        lo as u64 | (hi as u64) << 32
    }
    #[inline(always)]
    fn set_evicted_at(&mut self, t: u64) {
        self.links[CNT] = [t as u32, (t >> 32) as u32];
    }
}

pub struct Lecar {
    cap: usize,
    resident: usize,
    now: u64,
    lr: f64,
    discount: f64,
    w_lru: f64,
    w_lfu: f64,
    /// Per page id.
    entries: Vec<Entry>,
    /// Resident pages, front = most recent.
    lru: IdList<REC>,
    /// `lists[f]`: resident pages with count `f` in order of reaching it.
    lists: Vec<IdList<CNT>>,
    /// No count list below it holds a page.
    min_freq: usize,
    /// Histories of LRU's and LFU's victims (index BY_LRU - 1, BY_LFU - 1), front = newest.
    ghosts: [IdList<REC>; 2],
    ghost_cap: usize,
    rng: Pcg64Mcg,
    regrets: [u64; 2],
}

impl PolicyDef for Lecar {
    const NAME: &'static str = "lecar";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "LeCaR (Vietri et al., HotStorage 2018): LRU and LFU experts chosen by regret-weighted draws (seeded).";
    type Config = LecarConfig;
    fn build(cfg: &LecarConfig, ctx: &PolicyCtx) -> Result<Self> {
        let bad =
            |k: &str, v: f64| Error::config(format!("policy 'lecar': {k} out of range, got {v}"));
        if !(cfg.learning_rate.is_finite() && cfg.learning_rate >= 0.0) {
            return Err(bad("learning_rate (>= 0)", cfg.learning_rate));
        }
        if !(cfg.discount_base > 0.0 && cfg.discount_base <= 1.0) {
            return Err(bad("discount_base (0, 1]", cfg.discount_base));
        }
        if !(0.0..=1.0).contains(&cfg.lru_weight) {
            return Err(bad("lru_weight [0, 1]", cfg.lru_weight));
        }
        if !(cfg.history.is_finite() && cfg.history >= 0.0) {
            return Err(bad("history (>= 0)", cfg.history));
        }
        Ok(Lecar {
            cap: ctx.capacity,
            resident: 0,
            now: 0,
            lr: cfg.learning_rate,
            discount: cfg.discount_base.powf(1.0 / ctx.capacity.max(1) as f64),
            w_lru: cfg.lru_weight,
            w_lfu: 1.0 - cfg.lru_weight,
            entries: Vec::new(),
            lru: IdList::default(),
            lists: vec![IdList::default(); 2],
            min_freq: 1,
            ghosts: [IdList::default(); 2],
            ghost_cap: (ctx.capacity as f64 * cfg.history) as usize,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            regrets: [0; 2],
        })
    }
}

impl Lecar {
    /// Expert `by` (BY_LRU or BY_LFU) chose a page that is requested again `t` references after
    /// its eviction: lower its weight.
    fn regret(&mut self, by: u8, t: u64) {
        self.regrets[(by - 1) as usize] += 1;
        let r = self.discount.powf(t as f64);
        let (wu, wn) = if by == BY_LRU {
            (&mut self.w_lru, &mut self.w_lfu)
        } else {
            (&mut self.w_lfu, &mut self.w_lru)
        };
        *wu = *wu * (-self.lr * r).exp() + 1e-10;
        let s = *wu + *wn + 2e-10;
        *wu /= s;
        *wn = (*wn + 1e-10) / s;
    }

    /// The LFU expert's victim: the first page to reach the lowest count. Moves `min_freq` up
    /// past the empty lists it passes (they stay empty until a page enters at count 1, which
    /// resets it).
    #[inline]
    fn lfu_victim(&mut self) -> u32 {
        while self.lists[self.min_freq].is_empty() {
            self.min_freq += 1;
        }
        self.lists[self.min_freq].head()
    }

    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let by_lru = self.lru.tail();
        let by_lfu = self.lfu_victim();
        let (v, by) = if by_lru == by_lfu {
            (by_lru, ABSENT)
        } else if self.rng.random_range(0..100u32) as f64 / 100.0 < self.w_lru {
            (by_lru, BY_LRU)
        } else {
            (by_lfu, BY_LFU)
        };
        self.lru.unlink(&mut self.entries, v);
        let e = self.entries[v as usize];
        self.lists[e.freq as usize].unlink(&mut self.entries, v);
        self.resident -= 1;
        sink.evict(PageOut {
            id: v,
            page: e.page,
            kind: e.kind,
            dirty: e.dirty,
            tier: 0,
        });
        if by == ABSENT || self.ghost_cap == 0 {
            self.entries[v as usize].state = ABSENT;
            return;
        }
        let g = (by - 1) as usize;
        let e = &mut self.entries[v as usize];
        e.state = by;
        e.set_evicted_at(self.now);
        self.ghosts[g].push_front(&mut self.entries, v);
        if self.ghosts[g].len() > self.ghost_cap {
            let old = self.ghosts[g].pop_back(&mut self.entries);
            self.entries[old as usize].state = ABSENT;
        }
    }
}

impl Policy for Lecar {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.entries, far as usize);
        // `near`'s entry arrived since it was `far`: fetch the entries a hit (or, for a page in
        // a history, its removal) rewrites.
        if let Some(e) = self.entries.get(near as usize) {
            if e.state != ABSENT {
                prefetch_neighbours(&self.entries, e, REC);
            }
            if e.state == RESIDENT {
                prefetch_neighbours(&self.entries, e, CNT);
                if let Some(l) = self.lists.get(e.freq as usize + 1) {
                    prefetch(&self.entries, l.tail() as usize);
                }
            }
        }
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.now += 1;
        let id = r.id;
        let e = &mut self.entries[id as usize];
        let state = e.state;
        if state == RESIDENT {
            e.dirty |= r.is_write();
            let f = e.freq as usize;
            e.freq += 1;
            self.lru.move_to_front(&mut self.entries, id);
            if self.lists.len() <= f + 1 {
                self.lists.push(IdList::default());
            }
            self.lists[f].unlink(&mut self.entries, id);
            self.lists[f + 1].push_back(&mut self.entries, id);
            if self.min_freq == f && self.lists[f].is_empty() {
                self.min_freq = f + 1;
            }
            sink.hit(r, 0);
            return;
        }
        if state != ABSENT {
            // A regret: the page is back from a history.
            let t = self.now - e.evicted_at();
            e.state = ABSENT;
            self.regret(state, t);
            self.ghosts[(state - 1) as usize].unlink(&mut self.entries, id);
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.resident == self.cap {
            self.evict(sink);
        }
        let e = &mut self.entries[id as usize];
        *e = Entry {
            links: e.links,
            freq: 1,
            state: RESIDENT,
            dirty: r.is_write(),
            kind: r.kind(),
            page: r.page(),
        };
        self.lists[1].push_back(&mut self.entries, id);
        self.min_freq = 1;
        self.lru.push_front(&mut self.entries, id);
        self.resident += 1;
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        if self.entries.len() < n {
            self.entries.resize(n, EMPTY);
        }
    }

    fn resident(&self) -> usize {
        self.resident
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("lru_regrets", self.regrets[0]),
            ("lfu_regrets", self.regrets[1]),
            ("final_lru_weight_ppm", (self.w_lru * 1e6).round() as u64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::{replay_ids, replay_spec_ids};
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    fn skewed(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        (0..n)
            .map(|_| rng.random_range(0..300u64) % (1 + rng.random_range(0..300u64)))
            .collect()
    }

    #[test]
    fn pure_experts_are_lru_and_lfu() {
        let ids = skewed(20_000, 11);
        for cap in [5, 30, 120] {
            assert_eq!(
                replay_spec_ids("lecar(lru_weight=1.0, learning_rate=0.0)", cap, &ids),
                replay_ids("lru", cap, &ids)
            );
            // All weight on LFU is LFU when no regret can happen (no histories): a regret adds
            // 1e-10 to the weights, as in libCacheSim, and a draw of 0.00 then picks LRU.
            assert_eq!(
                replay_spec_ids(
                    "lecar(lru_weight=0.0, learning_rate=0.0, history=0.0)",
                    cap,
                    &ids
                ),
                replay_ids("lfu", cap, &ids)
            );
        }
    }

    #[test]
    fn hand_worked_regret() {
        // Memory 2, all weight on LRU (still learning): 1 1 2; 3: LRU picks 1, LFU picks 2
        // (count 1 against 2); the draw takes LRU's: 1 goes to H_LRU. 1 again, one reference
        // later: a regret of LRU (w_LRU = e^{-λ d}, then normalised against LFU's 1e-10: still
        // almost 1). 1 evicts 2, which both experts pick (least recent; count 1 reached before
        // 3's), so 2 enters no history. 3 hits.
        assert_eq!(
            replay_spec_ids("lecar(lru_weight=1.0)", 2, &[1, 1, 2, 3, 1, 3]),
            (2, 4)
        );
        // With all weight on LFU, 3 evicts 2 (count 1) and both 1 and 3 hit.
        assert_eq!(
            replay_spec_ids("lecar(lru_weight=0.0)", 2, &[1, 1, 2, 3, 1, 3]),
            (3, 3)
        );
    }

    #[test]
    fn learns_the_better_expert() {
        // Phase 1 (LFU wins): each of 12 hot pages is referenced 3 times, then every other
        // reference goes to one of them, the others to pages never seen again; memory 15, so
        // LRU (23 distinct pages between two uses of a hot page) keeps none. Phase 2 (LRU wins): a working set of 10 new pages that moves
        // by one page every 50 references; LFU keeps the phase-1 pages with their high counts.
        // LeCaR must beat the worse expert in each phase.
        use crate::policy::PolicySpec;
        use crate::sim::check::{check_policy, make_refs};
        let mut ids: Vec<u64> = (0..36).map(|i| i / 3).collect();
        for i in 0..30_000u64 {
            ids.push(if i % 2 == 0 { (i / 2) % 12 } else { 1000 + i });
        }
        let phase1 = ids.len();
        for i in 0..30_000u64 {
            ids.push(100_000 + i / 50 + i % 10);
        }
        let pages: Vec<(u64, bool)> = ids.iter().map(|&p| (p, false)).collect();
        let run = |s: &str, n: usize| {
            check_policy(
                &PolicySpec::parse(s).unwrap(),
                15,
                1,
                &make_refs(&pages[..n]),
            )
            .unwrap()
        };
        let (lru1, lfu1, lecar1) = (run("lru", phase1), run("lfu", phase1), run("lecar", phase1));
        assert!(lfu1.hits > lru1.hits, "phase 1 favours LFU");
        assert!(
            lecar1.hits > lru1.hits,
            "{} vs LRU {}",
            lecar1.hits,
            lru1.hits
        );
        let all = ids.len();
        let (lru, lfu, lecar) = (run("lru", all), run("lfu", all), run("lecar", all));
        let (lru2, lfu2, lecar2) = (
            lru.hits - lru1.hits,
            lfu.hits - lfu1.hits,
            lecar.hits - lecar1.hits,
        );
        assert!(lru2 > lfu2, "phase 2 favours LRU");
        assert!(lecar2 > lfu2, "{lecar2} vs LFU {lfu2}");
    }

    #[test]
    fn seeded() {
        let ids = skewed(20_000, 3);
        let a = replay_spec_ids("lecar(seed=4)", 50, &ids);
        assert_eq!(a, replay_spec_ids("lecar(seed=4)", 50, &ids));
        let others: Vec<_> = (5..10)
            .map(|s| replay_spec_ids(&format!("lecar(seed={s})"), 50, &ids))
            .collect();
        assert!(others.iter().any(|o| *o != a), "{a:?} {others:?}");
    }
}
