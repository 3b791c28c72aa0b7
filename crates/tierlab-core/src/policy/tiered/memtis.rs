//! A Memtis-style policy (Lee et al., SOSP 2023; the SSP paper's section 2
//! baseline; REFERENCE.md "TPP and Memtis"): page hotness from sampled access
//! counts, a histogram, and a hot threshold sized to the fast tier.
//!
//! - Sampling: every `sample_period`-th access of the trace is a sample (Memtis
//!   samples with PEBS at a period; 1 counts every access) and increments its
//!   page's count.
//! - Histogram: bin = floor(log2(count + 1)), 16 bins.
//! - Hot threshold: the lowest bin whose cumulative page count (bins >= it)
//!   fits the fast tier minus a `promotion_watermark` share (3%); the warm
//!   threshold is one bin lower when the hot set fills less than `warm_share`
//!   (75%) of the fast tier, else the hot threshold.
//! - Cooling: every `cooling_period` samples all counts are halved.
//! - kmigrated: every `migrate_period` accesses (Memtis: 500 ms) it promotes
//!   the slow pages at or above the hot threshold and demotes fast pages below
//!   the warm threshold to make room for them and to keep `demote_watermark`
//!   of the fast tier free. kmigrated runs on its own core: its copies are
//!   applied at the tick and do not stall the app. The watermark kswapd is off
//!   (Memtis demotes by hotness, not by LRU).
//!
//! No hint faults: Memtis does not use NUMA hint faults.

use super::machine::{tier_config, Machine, FAST, NO_TIER, SLOW};
use crate::error::{Error, Result};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};

/// Histogram bins.
pub const BINS: usize = 16;

tier_config!(
    /// Memtis parameters (shared tier parameters plus these).
    MemtisConfig {
        /// Accesses per sample (PEBS period).
        sample_period: u64 = 1,
        /// Samples between coolings (counts halved).
        cooling_period: u64 = 100_000,
        /// Accesses between kmigrated runs.
        migrate_period: u64 = 10_000,
        /// Fast-tier share kept out of the hot set.
        promotion_watermark: f64 = 0.03,
        /// Hot set share of the fast tier under which warm = hot - 1.
        warm_share: f64 = 0.75,
    }
);

pub struct Memtis {
    pub m: Machine,
    cfg: MemtisConfig,
    counts: Vec<u32>,
    hist: [usize; BINS],
    samples: u64,
    pub hot_bin: usize,
    pub warm_bin: usize,
    pub coolings: u64,
}

#[inline]
pub fn bin(count: u32) -> usize {
    ((count as u64 + 1).ilog2() as usize).min(BINS - 1)
}

impl PolicyDef for Memtis {
    const NAME: &'static str = "memtis";
    const FAMILY: &'static str = "tiered";
    const SUMMARY: &'static str = "Memtis-style (SOSP'23): sampled access-count histogram, hot \
                                   threshold sized to the fast tier, periodic cooling.";
    type Config = MemtisConfig;
    fn build(cfg: &MemtisConfig, ctx: &PolicyCtx) -> Result<Self> {
        if cfg.sample_period == 0 || cfg.cooling_period == 0 || cfg.migrate_period == 0 {
            return Err(Error::config(
                "policy 'memtis': sample_period, cooling_period and migrate_period must be >= 1",
            ));
        }
        crate::policy::check_fraction(Self::NAME, "warm_share", cfg.warm_share)?;
        crate::policy::check_fraction(Self::NAME, "promotion_watermark", cfg.promotion_watermark)?;
        let mut m = Machine::new(Self::NAME, cfg.tier(), ctx)?;
        m.kswapd = false;
        Ok(Memtis {
            m,
            cfg: cfg.clone(),
            counts: Vec::new(),
            hist: [0; BINS],
            samples: 0,
            hot_bin: BINS - 1,
            warm_bin: BINS - 1,
            coolings: 0,
        })
    }
}

impl Memtis {
    /// Recomputes the hot and warm thresholds from the histogram.
    pub fn thresholds(&mut self) {
        let fit = (self.m.cap[0] as f64 * (1.0 - self.cfg.promotion_watermark)).floor() as usize;
        let mut cum = 0;
        let mut hot = BINS;
        for b in (0..BINS).rev() {
            if cum + self.hist[b] > fit {
                break;
            }
            cum += self.hist[b];
            hot = b;
        }
        // Bin 0 holds never-sampled pages: they are never hot.
        let hot = hot.max(1);
        self.hot_bin = hot;
        let hot_pages: usize = self.hist[hot.min(BINS - 1)..].iter().sum();
        self.warm_bin = if (hot_pages as f64) < self.cfg.warm_share * self.m.cap[0] as f64 {
            hot.saturating_sub(1).max(1)
        } else {
            hot
        };
    }

    fn cool(&mut self) {
        self.hist = [0; BINS];
        for (i, c) in self.counts.iter_mut().enumerate() {
            *c /= 2;
            if self.m.tier[i] != NO_TIER {
                self.hist[bin(*c)] += 1;
            }
        }
        self.coolings += 1;
    }

    /// kmigrated: promote hot slow pages, demote cold fast pages.
    pub fn migrate<S: Sink>(&mut self, sink: &mut S) {
        self.thresholds();
        let (hot, warm) = (self.hot_bin, self.warm_bin);
        let mut hot_slow: Vec<PageId> = Vec::new();
        let mut cold_fast: Vec<PageId> = Vec::new();
        for (i, &t) in self.m.tier.iter().enumerate() {
            let b = bin(self.counts[i]);
            if t == SLOW && b >= hot {
                hot_slow.push(i as PageId);
            } else if t == FAST && b < warm {
                cold_fast.push(i as PageId);
            }
        }
        hot_slow.sort_by_key(|&i| std::cmp::Reverse(self.counts[i as usize]));
        cold_fast.sort_by_key(|&i| self.counts[i as usize]);
        let mut cold = cold_fast.into_iter();
        for id in hot_slow {
            if !self.m.fast_has_room() {
                let Some(v) = cold.next() else { break };
                if self.m.demote(v, sink).is_none() {
                    break;
                }
            }
            self.m.used[FAST as usize] += 1;
            self.m.commit_promotion(id, false, sink);
        }
        for v in cold {
            if self.m.free(FAST) >= self.m.demote_target() {
                break;
            }
            if self.m.demote(v, sink).is_none() {
                break;
            }
        }
    }
}

impl Policy for Memtis {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.m.begin(r, false, sink);
        if r.seq() > 0 && r.seq().is_multiple_of(self.cfg.migrate_period) {
            self.migrate(sink);
        }
        let i = r.id as usize;
        let new = self.m.tier[i] == NO_TIER;
        if new {
            if self.m.first_touch(r, sink).is_none() {
                sink.miss_bypass(r);
                return;
            }
            self.hist[bin(self.counts[i])] += 1;
        } else {
            self.m.hit(r, sink);
        }
        if r.seq().is_multiple_of(self.cfg.sample_period) {
            let old = bin(self.counts[i]);
            self.counts[i] = self.counts[i].saturating_add(1);
            self.hist[old] -= 1;
            self.hist[bin(self.counts[i])] += 1;
            self.samples += 1;
            if self.samples.is_multiple_of(self.cfg.cooling_period) {
                self.cool();
            }
        }
    }

    fn grow(&mut self, n: usize) {
        self.m.grow(n);
        if self.counts.len() < n {
            self.counts.resize(n, 0);
        }
    }

    fn resident(&self) -> usize {
        self.m.resident()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.m.counters();
        v.push(("hot_bin", self.hot_bin as u64));
        v.push(("warm_bin", self.warm_bin as u64));
        v.push(("coolings", self.coolings));
        v
    }
}
