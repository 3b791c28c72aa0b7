//! TPP, Transparent Page Placement (Maruf et al., ASPLOS 2023), as the
//! selective-shadow-paging paper (section 2) and NOMAD use it as a baseline.
//!
//! - Demotion: kswapd keeps `demote_watermark` of the fast tier free by
//!   demoting cold pages (the shared [`Machine`]; NOMAD code
//!   `src/implementation_patches/tpp.patch`, mm/vmscan.c `demote_page_list`).
//! - Promotion: NUMA hint faults are raised on slow-tier pages only. A hint
//!   fault on a page that is not `PG_active` only marks it accessed
//!   (`mark_page_accessed`: referenced, then active); a hint fault that finds
//!   the page active promotes it (tpp.patch, mm/memory.c `do_numa_page`: "Only
//!   migrate pages that are active on non-toptier node"). So a page with clean
//!   flags is promoted on its third hint fault: two touches to activate it, and
//!   the fault that finds it active.
//! - The promotion is synchronous: the app pays the hint fault and the copy.
//!   It fails (the page stays) when the fast tier has no free frame
//!   (`Machine::fast_has_room`); kswapd then makes room.

use super::machine::{flag, tier_config, Machine, FAST, SLOW};
use crate::error::Result;
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

tier_config!(
    /// TPP parameters: only the shared tier parameters.
    TppConfig {}
);

pub struct Tpp {
    pub m: Machine,
}

impl PolicyDef for Tpp {
    const NAME: &'static str = "tpp";
    const FAMILY: &'static str = "tiered";
    const SUMMARY: &'static str = "TPP (ASPLOS'23): watermark demotion by kswapd, synchronous \
                                   promotion of active slow pages on NUMA hint faults.";
    type Config = TppConfig;
    fn build(cfg: &TppConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Tpp {
            m: Machine::new(Self::NAME, cfg.tier(), ctx)?,
        })
    }
}

impl Policy for Tpp {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let m = &mut self.m;
        m.begin(r, true, sink);
        if m.tier[r.id as usize] == super::machine::NO_TIER {
            if m.first_touch(r, sink).is_none() {
                sink.miss_bypass(r);
            }
            return;
        }
        if m.tier[r.id as usize] == SLOW && m.has(r.id, flag::PROTNONE) {
            m.clear(r.id, flag::PROTNONE);
            m.c.hint_faults += 1;
            m.now += m.p.hint_fault_ns;
            if !m.has(r.id, flag::ACTIVE) {
                m.mark_accessed(r.id);
            } else if m.fast_has_room() {
                m.used[FAST as usize] += 1;
                m.now += m.copy_ns;
                m.commit_promotion(r.id, false, sink);
            } else {
                m.c.promote_fail += 1;
            }
        }
        m.hit(r, sink);
    }

    fn grow(&mut self, n: usize) {
        self.m.grow(n);
    }

    fn resident(&self) -> usize {
        self.m.resident()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.m.counters()
    }
}
