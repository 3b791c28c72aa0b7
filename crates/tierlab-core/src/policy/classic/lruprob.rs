//! LRU-Prob: LRU whose hits move the page to the MRU end only with probability `prob`
//! (otherwise the hit changes nothing), so a page must be hit repeatedly to stay, and a hit costs
//! no list update most of the time. libCacheSim's `LRUProb` (no paper of its own: probabilistic
//! promotion as in the lazy-promotion designs it was written to study) is the definition;
//! `prob = 1` is LRU and `prob = 0` is FIFO exactly (tests check both).
//!
//! Default `prob = 0.5`, libCacheSim's. libCacheSim promotes with probability
//! `1 / floor(1 / prob)` (equal to `prob` when `1 / prob` is an integer, as for its default) and
//! draws from its own generator, so the two agree in distribution, not miss for miss. `seed`
//! (default 1) seeds a `Pcg64Mcg` generator, one draw per hit.
//!
//! Per reference: O(1).

use crate::error::{Error, Result};
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruProbConfig {
    /// Probability that a hit moves the page to the MRU end.
    pub prob: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for LruProbConfig {
    fn default() -> Self {
        LruProbConfig { prob: 0.5, seed: 1 }
    }
}

pub struct LruProb {
    cap: usize,
    prob: f64,
    arena: Arena<Frame>,
    list: List,
    table: SlotTable,
    rng: Pcg64Mcg,
}

impl PolicyDef for LruProb {
    const NAME: &'static str = "lruprob";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "LRU promoting on a hit with probability prob (libCacheSim's LRUProb; seeded).";
    type Config = LruProbConfig;
    fn build(cfg: &LruProbConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(0.0..=1.0).contains(&cfg.prob) {
            return Err(Error::config(format!(
                "policy 'lruprob': prob must be in [0, 1], got {}",
                cfg.prob
            )));
        }
        Ok(LruProb {
            cap: ctx.capacity,
            prob: cfg.prob,
            arena: Arena::with_capacity(ctx.capacity),
            list: List::default(),
            table: SlotTable::default(),
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
        })
    }
}

impl Policy for LruProb {
    table_glue!(arena);

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.arena.get_mut(slot).dirty |= r.is_write();
            if self.rng.random::<f64>() < self.prob {
                self.list.move_to_front(&mut self.arena, slot);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.list.len() == self.cap {
            let v = self.list.pop_back(&mut self.arena).expect("full");
            let f = *self.arena.get(v);
            self.table.clear(f.id);
            self.arena.release(v);
            sink.evict(f.out(0));
        }
        let s = self.arena.alloc(Frame::of(r));
        self.list.push_front(&mut self.arena, s);
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.list.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::{replay_ids, replay_spec_ids};
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn prob_one_is_lru_and_zero_is_fifo() {
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let ids: Vec<u64> = (0..20_000)
            .map(|_| rng.random_range(0..200u64) % (1 + rng.random_range(0..200u64)))
            .collect();
        for cap in [5, 30, 120] {
            assert_eq!(
                replay_spec_ids("lruprob(prob=1.0)", cap, &ids),
                replay_ids("lru", cap, &ids)
            );
            assert_eq!(
                replay_spec_ids("lruprob(prob=0.0)", cap, &ids),
                replay_ids("fifo", cap, &ids)
            );
        }
        // Memory 2: 1 2 1 3: with promotion 3 evicts 2 and 1 hits; without, 3 evicts 1.
        assert_eq!(
            replay_spec_ids("lruprob(prob=1.0)", 2, &[1, 2, 1, 3, 1]),
            (2, 3)
        );
        assert_eq!(
            replay_spec_ids("lruprob(prob=0.0)", 2, &[1, 2, 1, 3, 1]),
            (1, 4)
        );
    }

    #[test]
    fn promotes_with_the_given_probability() {
        // Memory 2: 1 2 1 3 1: 1 survives 3 iff its hit promoted it. Over 4000 seeds at
        // prob=0.25, about 1000 promotions (binomial sd 27; allow 120).
        let mut survived = 0;
        for seed in 0..4000 {
            let (h, _) = replay_spec_ids(
                &format!("lruprob(prob=0.25, seed={seed})"),
                2,
                &[1, 2, 1, 3, 1],
            );
            survived += h - 1;
        }
        assert!(
            (880..=1120).contains(&survived),
            "promoted {survived} of 4000 times"
        );
    }
}
