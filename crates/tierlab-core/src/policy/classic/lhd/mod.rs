//! LHD, Least Hit Density: Beckmann, Chen & Cidon, "LHD: Improving Cache Hit Rate by Maximizing
//! Hit Density", NSDI 2018. An object's hit density is its probability of a hit divided by the
//! space-time it will occupy, `P[hit] / (S * E[L])` (Section 3); conditioned on its age `a` it is
//! estimated from the ages at which objects of its class were hit or evicted,
//! `hits(>= a) / sum_{x >= a} (x - a + 1) * events(x)`, computed in one pass from the oldest age
//! down (Section 4, `model.rs`). Objects are classified by the sum of their last two hit ages, in
//! 16 log-scale classes (Section 4). The statistics decay by an EWMA (0.9) at each
//! reconfiguration, every 2^20 accesses, and ages are coarsened by a power of two chosen from the
//! number of resident objects. Eviction samples candidates at random and evicts the one of least
//! hit density (Section 5, RankCache's sampling-based eviction; `ranking.rs`).
//!
//! Defaults and details are libCacheSim's `LHD` (a port of the authors' simulator): `associativity
//! = 32` samples per eviction, but 8 until 50 reconfigurations have passed (the authors' warm-up);
//! the last `admissions = 8` newly admitted objects whose density was below the running average of
//! victims' are always candidates too; 1% of the cache is a budget for "explorers" (an object
//! becomes one with probability 1/32 per access during the first 50 reconfigurations; its density
//! gets +1, so it is kept); `MAX_AGE = 20000` coarsened ages, an age at or past it ranks lowest;
//! the initial age shift is 10 and is re-chosen at the 5th and 25th reconfigurations; before the
//! first reconfiguration the densities are the authors' GDSF-like prior `(c + 1) / (a + 1)`, where
//! `c = 16 + class` (libCacheSim's row for application id 1). Time counts the accesses that hit or
//! insert. In page mode every size is 1.
//!
//! Where it departs from libCacheSim: libCacheSim samples with `next_rand() % n` from one
//! generator; here the eviction samples are uniform draws (with replacement) from
//! `policy/sampling.rs`'s `IndexSampler` (SplitMix64, seeded with `seed`, default 1), and the
//! explorer draws come from a second SplitMix64 stream (`sampler.rs`), so the accesses between two
//! evictions do not shift the samples' stream and the next evictions' draws are known ahead. The
//! two agree in distribution, not miss for miss (tests/libcachesim_sampled.rs checks the miss
//! ratio on every trace and size of the conformance set). When the candidate count is at least the
//! number of resident objects every object is examined and ties go to the least recently accessed
//! (deterministic, for hand-worked tests); sampled candidates tie as in libCacheSim, the first
//! examined wins. libCacheSim also takes a hit's new size into its occupancy; tierlab's object-size
//! mode keeps the size an object was admitted with (as for every other policy) and ranks by the new
//! one, as libCacheSim does.
//!
//! Cost per reference: O(1) on a hit; O(associativity + admissions) per eviction; a
//! reconfiguration costs O(16 * MAX_AGE) every 2^20 accesses. Memory (`layout.rs`): a resident
//! object is an 8-byte `Stamp` (last access time, class, explorer bit and, in page mode, the
//! frame's kind and dirty bit: all that ranking reads) and a 16-byte `Cold` entry (key, last two
//! hit ages, page), plus its size with object sizes: 24 B per resident page in page mode, and a
//! 4-byte key -> index entry per distinct key, which an eviction does not clear (a key is resident
//! when its entry is below the resident count and the `Cold` entry there holds the key). The
//! hits, evictions and densities tables are class-major, about 2.6 MB touched. The end of an
//! eviction prefetches the stamps (and, above 1 MB of `Cold` entries, those too) of the eviction
//! after next's samples; the running compare is branch-free (`select_unpredictable`). None of the
//! layout changes a decision (tests/policy_counts.rs pins them).

mod core;
mod layout;
mod model;
mod ranking;
mod sampler;
#[cfg(test)]
mod tests;

pub use self::core::LhdCore;
use self::layout::{frame_bits, Stamp, DIRTY_BIT};
use crate::error::{Error, Result};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LhdConfig {
    /// Random candidates per eviction after the warm-up.
    pub associativity: usize,
    /// Recently admitted objects always considered for eviction.
    pub admissions: usize,
    /// Seed of the sampling and of the explorer draws.
    pub seed: u64,
}

impl Default for LhdConfig {
    fn default() -> Self {
        LhdConfig {
            associativity: 32,
            admissions: 8,
            seed: 1,
        }
    }
}

impl LhdConfig {
    pub fn validate(&self) -> Result<()> {
        if self.associativity == 0 {
            return Err(Error::config(
                "policy 'lhd': associativity must be at least 1",
            ));
        }
        Ok(())
    }
}

pub struct Lhd {
    cap: usize,
    core: LhdCore,
}

impl PolicyDef for Lhd {
    const NAME: &'static str = "lhd";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Least hit density (Beckmann et al., NSDI 2018): evict the sampled object of least hits per space-time (seeded).";
    type Config = LhdConfig;
    fn build(cfg: &LhdConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        Ok(Lhd {
            cap: ctx.capacity,
            core: LhdCore::new(cfg, ctx.capacity, true),
        })
    }
}

impl Policy for Lhd {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.core.prefetch(near, far);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if let Some(p) = self.core.index(r.id) {
            let s = Stamp(self.core.stamps[p].0 | (r.is_write() as u64 * DIRTY_BIT));
            self.core.hit_stamp(p, s, 1.0);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.core.len() == self.cap {
            let frame = self.core.evict_with::<true>();
            sink.evict(frame.out(0));
        }
        self.core.grow(r.id as usize + 1);
        let frame = frame_bits(r.kind(), r.is_write());
        self.core.insert(r.id, 1.0, r.page(), frame);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.core.grow(n);
    }

    fn resident(&self) -> usize {
        self.core.len()
    }
}
