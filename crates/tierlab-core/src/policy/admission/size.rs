//! Size-threshold admission: a missed object is cached only if it is smaller than `threshold`
//! bytes (strictly, as libCacheSim's `SizeAdmissioner`), the static policy AdaptSize (Berger et
//! al., NSDI'17, Section 2.2) compares against. In page mode every page has size 1, so any
//! threshold above 1 admits everything.

use super::AdmissionDef;
use crate::error::Result;
use crate::policy::PolicyCtx;
use crate::sim::PageRef;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SizeConfig {
    /// Objects of this many bytes or more are not admitted (default: no limit, as libCacheSim).
    pub threshold: u64,
}

impl Default for SizeConfig {
    fn default() -> Self {
        SizeConfig {
            threshold: i64::MAX as u64,
        }
    }
}

pub struct SizeThreshold {
    threshold: u64,
}

impl AdmissionDef for SizeThreshold {
    const NAME: &'static str = "size";
    const ALIASES: &'static [&'static str] = &["size-threshold"];
    const SUMMARY: &'static str = "Admit objects smaller than threshold bytes.";
    type Config = SizeConfig;
    fn build(cfg: &SizeConfig, _ctx: &PolicyCtx) -> Result<Self> {
        Ok(SizeThreshold {
            threshold: cfg.threshold,
        })
    }
}

impl SizeThreshold {
    #[inline]
    pub fn admit(&mut self, r: &PageRef) -> bool {
        r.size() < self.threshold
    }
}
