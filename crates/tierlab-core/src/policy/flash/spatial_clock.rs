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
//! Data structure ([`SectorRing`]): one flags byte per page id (a hit sets
//! the reference bit there, O(1)) and the circle as a ring of sorted chunks of
//! page numbers with a chunk index, so a miss costs O(log n) (see
//! `sector_ring`'s module docs for the layout and each operation's cost).

use super::sector_ring::SectorRing;
use crate::error::Result;
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpatialClockConfig {}

/// Spatial Clock: CLOCK over the resident pages in sector order.
pub struct SpatialClock {
    cap: usize,
    ring: SectorRing,
}

impl PolicyDef for SpatialClock {
    const NAME: &'static str = "spatial-clock";
    const ALIASES: &'static [&'static str] = &["sclock", "s-clock", "spatialclock"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "Spatial Clock (Kim et al., SIGMETRICS'12): CLOCK over resident \
         pages kept in logical-sector order (bs-clock paper, section II, Fig. 4).";
    type Config = SpatialClockConfig;
    fn build(_cfg: &SpatialClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(SpatialClock {
            cap: ctx.capacity,
            ring: SectorRing::default(),
        })
    }
}

impl SpatialClock {
    /// Resident pages in sweep order from the hand (tests).
    pub fn order_from_hand(&self) -> Vec<u64> {
        self.ring.order_from_hand()
    }
}

impl Policy for SpatialClock {
    #[inline(always)]
    fn prefetch(&self, _near: PageId, far: PageId) {
        self.ring.prefetch(far);
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if self.ring.is_resident(r.id) {
            self.ring.touch(r.id, r.is_write());
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.ring.len() == self.cap {
            self.ring.sweep();
            let victim = self.ring.evict_at_hand().frame();
            sink.evict(victim.out(0));
        }
        self.ring.insert(Frame::of(r));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.ring.grow(n);
    }

    fn resident(&self) -> usize {
        self.ring.len()
    }
}
