//! Probabilistic admission: a missed object is cached with probability `p` (the "Prob"
//! admission of libCacheSim, after the admission-probability baselines of Berger et al.,
//! AdaptSize, NSDI'17, Section 2). Seeded (`seed`), so runs repeat; the random stream is not
//! libCacheSim's, so agreement with it is statistical, not miss for miss.

use super::AdmissionDef;
use crate::error::{Error, Result};
use crate::policy::PolicyCtx;
use crate::sim::PageRef;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbConfig {
    /// Probability of admitting a miss (libCacheSim's default 0.5).
    pub p: f64,
    pub seed: u64,
}

impl Default for ProbConfig {
    fn default() -> Self {
        ProbConfig { p: 0.5, seed: 42 }
    }
}

pub struct Prob {
    p: f64,
    rng: Pcg64Mcg,
}

impl AdmissionDef for Prob {
    const NAME: &'static str = "prob";
    const ALIASES: &'static [&'static str] = &["probabilistic"];
    const SUMMARY: &'static str = "Admit a miss with probability p (seeded).";
    type Config = ProbConfig;
    fn build(cfg: &ProbConfig, _ctx: &PolicyCtx) -> Result<Self> {
        if !(cfg.p > 0.0 && cfg.p <= 1.0) {
            return Err(Error::config(format!(
                "admission policy 'prob': p must be in (0, 1], got {}",
                cfg.p
            )));
        }
        Ok(Prob {
            p: cfg.p,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
        })
    }
}

impl Prob {
    #[inline]
    pub fn admit(&mut self, _r: &PageRef) -> bool {
        self.rng.random::<f64>() < self.p
    }
}
