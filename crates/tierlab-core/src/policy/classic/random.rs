//! RANDOM: evict a resident page chosen uniformly at random, the replacement baseline of
//! Belady, "A study of replacement algorithms for a virtual-storage computer", IBM Systems
//! Journal 5(2), 1966 (Section "Algorithm RAND"). libCacheSim's `Random` does the same with its
//! own random-number generator (it picks a random entry of its hash table), so the two agree in
//! distribution, not miss for miss; tests check the distribution (on references drawn uniformly
//! from `N` pages any demand policy with `C` pages hits `C/N` of them in the steady state).
//!
//! `seed` (default 1) seeds a `Pcg64Mcg` generator, so a run is reproducible; one draw per
//! eviction. Per reference: O(1) (the resident pages are a dense array; the victim's place is
//! filled by the last page).
//!
//! An eviction happens only in a full cache, so every draw is from `0..capacity` and can be
//! made early: the victims' places are drawn `AHEAD` evictions in advance (the same draws in
//! the same order, so the same victims), and each eviction starts loading the frame of the one
//! after next and the table entry of the next victim's page, which would otherwise be two
//! dependent cache misses per eviction once the cache outgrows the CPU's caches.

use crate::error::Result;
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RandomConfig {
    /// Seed of the victim draws.
    pub seed: u64,
}

impl Default for RandomConfig {
    fn default() -> Self {
        RandomConfig { seed: 1 }
    }
}

/// Victims' places drawn before their evictions (see the module doc).
const AHEAD: usize = 2;

pub struct Random {
    cap: usize,
    pages: Vec<Frame>,
    table: SlotTable,
    rng: Pcg64Mcg,
    /// The places of the next evictions' victims, in draw order (`AHEAD + 1` once the first
    /// eviction has drawn them).
    drawn: VecDeque<usize>,
}

impl PolicyDef for Random {
    const NAME: &'static str = "random";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Evict a uniformly random resident page (seeded; Belady 1966).";
    type Config = RandomConfig;
    fn build(cfg: &RandomConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Random {
            cap: ctx.capacity,
            pages: Vec::with_capacity(ctx.capacity),
            table: SlotTable::default(),
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            drawn: VecDeque::with_capacity(AHEAD + 1),
        })
    }
}

impl Random {
    /// The place of this eviction's victim (the cache is full), drawing the ones `AHEAD`
    /// evictions later and starting the loads the next evictions will need.
    #[inline]
    fn next_victim(&mut self) -> usize {
        let n = self.pages.len();
        while self.drawn.len() <= AHEAD {
            let d = self.rng.random_range(0..n);
            self.drawn.push_back(d);
        }
        let i = self.drawn.pop_front().expect("drawn ahead");
        let d = self.rng.random_range(0..n);
        self.drawn.push_back(d);
        prefetch(&self.pages, d);
        // The next victim's frame was loaded an eviction ago: its page's table entry now.
        if let Some(f) = self.pages.get(self.drawn[0]) {
            self.table.prefetch(f.id);
        }
        i
    }
}

impl Policy for Random {
    /// A hit reads the page's table entry and frame: start loading the entry 16 references
    /// ahead and the frame 6 ahead.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| prefetch(&self.pages, s as usize));
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.pages[slot as usize].dirty |= r.is_write();
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.pages.len() == self.cap {
            let i = self.next_victim();
            let victim = self.pages.swap_remove(i);
            self.table.clear(victim.id);
            if let Some(moved) = self.pages.get(i) {
                self.table.set(moved.id, i as u32);
            }
            sink.evict(victim.out(0));
        }
        self.table.set(r.id, self.pages.len() as u32);
        self.pages.push(Frame::of(r));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicySpec;
    use crate::sim::check::{check_policy, make_refs, replay_ids, replay_spec_ids};
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn uniform_references_hit_c_over_n() {
        // 200,000 references drawn uniformly from 100 pages, memory 20: hit ratio 0.2 in the
        // steady state for any demand policy. The binomial standard deviation over 200,000
        // references is 0.0009; allow 0.01.
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let ids: Vec<u64> = (0..200_000).map(|_| rng.random_range(0..100u64)).collect();
        let (hits, _) = replay_ids("random", 20, &ids);
        let ratio = hits as f64 / ids.len() as f64;
        assert!((ratio - 0.2).abs() < 0.01, "hit ratio {ratio}");
    }

    #[test]
    fn seeded_and_uniform_over_victims() {
        // Memory 2: 1 2, then 3 evicts 1 or 2 at random; 1 then hits iff 2 was evicted.
        // Over seeds, both victims come up about equally often.
        let mut hits = 0;
        for seed in 0..2000 {
            let (h, _) = replay_spec_ids(&format!("random(seed={seed})"), 2, &[1, 2, 3, 1]);
            hits += h;
        }
        assert!(
            (900..=1100).contains(&hits),
            "1 survived {hits} of 2000 times"
        );
        // The same seed gives the same run; another seed, another eviction order.
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let pages: Vec<(u64, bool)> = (0..5000)
            .map(|_| (rng.random_range(0..300u64), false))
            .collect();
        let refs = make_refs(&pages);
        let run = |s: &str| check_policy(&PolicySpec::parse(s).unwrap(), 50, 1, &refs).unwrap();
        assert_eq!(run("random(seed=5)"), run("random(seed=5)"));
        assert_ne!(
            run("random(seed=5)").eviction_digest,
            run("random(seed=6)").eviction_digest
        );
    }
}
