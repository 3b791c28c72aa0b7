//! Second-request admission ("bloom filter"): a missed object is cached only if it missed
//! before, so one-hit wonders never enter the cache (Maggs & Sitaraman, "Algorithmic nuggets in
//! content delivery", SIGCOMM CCR 45(3), 2015, Section 4: Akamai's "cache on second hit" rule
//! with a Bloom filter of the objects requested once).
//!
//! Exact variant: one bit per dense object id remembers every object that has missed, so there
//! are no false positives (a Bloom filter would admit a few first requests). libCacheSim's
//! `BloomFilterAdmissioner` is exact as well (a hash table of the ids it has been asked
//! about), and this matches it miss for miss. Memory is one byte per distinct
//! object here, the same order as the policy's own id table.

use super::AdmissionDef;
use crate::error::Result;
use crate::policy::PolicyCtx;
use crate::sim::PageRef;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BloomConfig {}

pub struct Bloom {
    seen: Vec<bool>,
}

impl AdmissionDef for Bloom {
    const NAME: &'static str = "bloom";
    const ALIASES: &'static [&'static str] = &["bloomfilter", "second-hit"];
    const SUMMARY: &'static str =
        "Admit on the second miss (exact set of objects seen; Maggs & Sitaraman 2015).";
    type Config = BloomConfig;
    fn build(_cfg: &BloomConfig, _ctx: &PolicyCtx) -> Result<Self> {
        Ok(Bloom { seen: Vec::new() })
    }
}

impl Bloom {
    pub fn grow(&mut self, n: usize) {
        if self.seen.len() < n {
            self.seen.resize(n, false);
        }
    }
    #[inline]
    pub fn admit(&mut self, r: &PageRef) -> bool {
        std::mem::replace(&mut self.seen[r.id as usize], true)
    }
}
