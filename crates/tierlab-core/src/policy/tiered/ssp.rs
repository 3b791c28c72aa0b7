//! Selective Shadow Paging (SSP; papers/selective-shadow-paging-nomad.md,
//! section 3.2 and Figure 1): NOMAD (`nomad.rs`) with a `PG_fastdirty` page
//! flag that records the page's fast-tier history.
//!
//! - The flag is 0 when a page is created, so a page's first promotion keeps a
//!   shadow.
//! - A write to a promoted page on the fast tier sets it ("Promotion된 Page에
//!   Write 요청이 있으면 ... PG_fastdirty 플래그를 1로 설정"). Pages that reached
//!   the fast tier by first touch are not "promoted pages": their writes leave
//!   it clear, unless `fastdirty_unpromoted` is set (the paper is silent on
//!   them; with the flag clear, the read workload keeps the same shadows and
//!   remaps as NOMAD, as the paper reports).
//! - Demotion keeps the flag (copy and remap alike).
//! - At promotion, a clear flag keeps the old page as a shadow (NOMAD's
//!   promotion); a set flag migrates exclusively (the old frame is freed, no
//!   write protection). Both clear the flag.
//!
//! Everything else (PCQ, pending queue, transactional copy, shadow faults,
//! shadow reclaim, remap demotion) is NOMAD's.

use super::machine::tier_config;
use super::nomad::{shadow_paging_config, NomadCore, ShadowPaging};
use crate::error::Result;
use crate::policy::{PolicyCtx, PolicyDef};

shadow_paging_config!(
    /// SSP parameters: NOMAD's plus `fastdirty_unpromoted`.
    SspConfig {
        /// Also mark `PG_fastdirty` on writes to fast pages never promoted.
        fastdirty_unpromoted: bool = false,
    }
);

/// Marker of SSP's shadow decision (`PG_fastdirty`).
pub enum SspKind {}

/// Selective Shadow Paging (see the module docs).
pub type Ssp = ShadowPaging<SspKind>;

impl PolicyDef for Ssp {
    const NAME: &'static str = "ssp";
    const ALIASES: &'static [&'static str] = &["selective-shadow-paging"];
    const FAMILY: &'static str = "tiered";
    const SUMMARY: &'static str = "Selective Shadow Paging (on NOMAD): keep a shadow at \
                                   promotion only for pages not written in their last fast-tier stay.";
    type Config = SspConfig;
    fn build(cfg: &SspConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ShadowPaging::new(NomadCore::new(
            Self::NAME,
            cfg.tier(),
            cfg.shadow(),
            ctx,
            true,
            cfg.fastdirty_unpromoted,
        )?))
    }
}
