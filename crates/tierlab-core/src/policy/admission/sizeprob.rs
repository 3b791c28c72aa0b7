//! Size-probabilistic admission: a missed object of `s` bytes is cached with probability
//! `e^(-exponent * s)`, so large objects rarely displace many small ones. This is AdaptSize's
//! admission rule `e^(-s/c)` (Berger et al., NSDI'17, Section 4) with its parameter `c` fixed
//! at `1/exponent` instead of tuned online (`adaptsize` tunes it), and libCacheSim's
//! `SizeProbabilistic` admissioner; `exponent` and its default `1e-6` (`c` = 1 MB) are
//! libCacheSim's. In page mode every page has size 1, so a miss is admitted with probability
//! `e^(-exponent)`.
//!
//! Seeded (`seed`), so runs repeat; the random stream is not libCacheSim's, so agreement with
//! it is statistical, not miss for miss (tests/test_object_sizes.py compares the two).

use super::AdmissionDef;
use crate::error::{Error, Result};
use crate::policy::PolicyCtx;
use crate::sim::PageRef;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SizeProbConfig {
    /// Admission probability `e^(-exponent * size)`, size in bytes (libCacheSim's default 1e-6).
    pub exponent: f64,
    pub seed: u64,
}

impl Default for SizeProbConfig {
    fn default() -> Self {
        SizeProbConfig {
            exponent: 1e-6,
            seed: 42,
        }
    }
}

pub struct SizeProb {
    exponent: f64,
    rng: Pcg64Mcg,
}

impl AdmissionDef for SizeProb {
    const NAME: &'static str = "sizeprob";
    const ALIASES: &'static [&'static str] = &["size-probabilistic", "sizeprobabilistic"];
    const SUMMARY: &'static str =
        "Admit a miss of s bytes with probability e^(-exponent*s) (seeded).";
    type Config = SizeProbConfig;
    fn build(cfg: &SizeProbConfig, _ctx: &PolicyCtx) -> Result<Self> {
        if !(cfg.exponent >= 0.0 && cfg.exponent.is_finite()) {
            return Err(Error::config(format!(
                "admission policy 'sizeprob': exponent must be a finite number >= 0, got {}",
                cfg.exponent
            )));
        }
        Ok(SizeProb {
            exponent: cfg.exponent,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
        })
    }
}

impl SizeProb {
    /// The probability of admitting an object of `size` bytes.
    pub fn probability(&self, size: u64) -> f64 {
        (-self.exponent * size as f64).exp()
    }

    #[inline]
    pub fn admit(&mut self, r: &PageRef) -> bool {
        let p = self.probability(r.size());
        self.rng.random::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(exponent: f64) -> SizeProb {
        let ctx = PolicyCtx {
            capacity: 1,
            tiers: 1,
            page_size: 4096,
        };
        let cfg = SizeProbConfig { exponent, seed: 3 };
        SizeProb::build(&cfg, &ctx).unwrap()
    }

    #[test]
    fn probability_falls_with_size_as_the_exponential() {
        let a = build(1e-6);
        assert_eq!(a.probability(0), 1.0);
        assert!((a.probability(1_000_000) - (-1f64).exp()).abs() < 1e-12);
        assert!((a.probability(3_000_000) - (-3f64).exp()).abs() < 1e-12);
        assert_eq!(build(0.0).probability(u64::MAX), 1.0);
    }

    #[test]
    fn admits_about_the_probability_of_each_size() {
        use crate::sim::check::make_refs;
        let mut a = build(1e-6);
        let one = make_refs(&[(1, false)]).get(0).fields();
        for (size, draws) in [(500_000u32, 40_000u32), (2_000_000, 40_000)] {
            let mut refs = crate::sim::RefBatch::default();
            refs.push_sized(&one, size);
            let admitted = (0..draws).filter(|_| a.admit(&refs.get(0))).count() as f64;
            let p = (-1e-6 * size as f64).exp();
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (admitted - draws as f64 * p).abs() < 6.0 * sd,
                "size {size}: {admitted} of {draws}, p = {p}"
            );
        }
    }

    #[test]
    fn bad_exponents_are_config_errors() {
        let ctx = PolicyCtx {
            capacity: 1,
            tiers: 1,
            page_size: 4096,
        };
        for exponent in [-1.0, f64::NAN, f64::INFINITY] {
            let cfg = SizeProbConfig { exponent, seed: 1 };
            let e = SizeProb::build(&cfg, &ctx).err().expect("rejected");
            assert!(e.to_string().contains("exponent"), "{e}");
        }
    }
}
