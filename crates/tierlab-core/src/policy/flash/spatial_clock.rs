//! Spatial Clock (Kim, Ryu & Ramachandran, SIGMETRICS 2012; described in
//! papers/bs-clock-flash-buffer.md, section II, last paragraph, and Figure 4).
//!
//! CLOCK whose circle is the resident pages sorted by logical sector number
//! (here: by `PageRef::page`, the original page number, which is the sector
//! number divided by the sectors per page): a hit sets the page's reference
//! bit; on a miss with a full buffer the hand sweeps in sector order, clears
//! set bits and evicts the first page whose bit is clear; the new page is
//! inserted at its sorted position. Victims therefore come out in ascending
//! sector order and the writes they cause are mostly sequential.
//!
//! Choices where the papers are silent (tested in tests/flash_policies.rs):
//! - A newly inserted page has its reference bit clear, as tierlab's `clock`
//!   (and libCacheSim's Clock) does; a later hit sets it.
//! - After an eviction the hand points at the victim's successor in sector
//!   order (wrapping from the highest sector to the lowest).
//!
//! Written once with BS-CLOCK: Spatial Clock is [`BsClock`] with
//! SEQ_DIRTIED_PAGES = 1 (the BS-CLOCK paper's section III builds BS-CLOCK as
//! Spatial Clock plus the bulk write; with a bulk of one page a dirty victim
//! is simply evicted dirty), without BS-CLOCK's counters. Data structure and
//! costs: `sector_ring` (a hit O(1), a miss O(1) through the finger or the
//! bucket table, O(log n) through the index).

use super::bs_clock::BsClock;
use crate::error::Result;
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpatialClockConfig {}

/// Spatial Clock: CLOCK over the resident pages in sector order.
pub struct SpatialClock(BsClock);

impl PolicyDef for SpatialClock {
    const NAME: &'static str = "spatial-clock";
    const ALIASES: &'static [&'static str] = &["sclock", "s-clock", "spatialclock"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "Spatial Clock (Kim et al., SIGMETRICS'12): CLOCK over resident \
         pages kept in logical-sector order (bs-clock paper, section II, Fig. 4).";
    type Config = SpatialClockConfig;
    fn build(_cfg: &SpatialClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(SpatialClock(BsClock::with_bulk(ctx.capacity, 1)))
    }
}

impl SpatialClock {
    /// Resident pages in sweep order from the hand (tests).
    pub fn order_from_hand(&self) -> Vec<u64> {
        self.0.order_from_hand()
    }
}

impl Policy for SpatialClock {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.0.prefetch(near, far);
    }

    const PREFETCH_REFS: bool = true;

    #[inline(always)]
    fn prefetch_ref(&self, r: &PageRef) {
        self.0.prefetch_page(r.page());
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.0.access(r, sink);
    }

    fn grow(&mut self, n: usize) {
        self.0.grow(n);
    }

    fn resident(&self) -> usize {
        self.0.resident()
    }
}
