//! BS-CLOCK, Bulk-write Spatial Clock (Lee, Lee & Park, 2016:
//! papers/bs-clock-flash-buffer.md, section III, Figure 3 for the victim
//! selection and Figures 4/5 for the worked example).
//!
//! Spatial Clock (see [`super::spatial_clock`]) whose victim, when dirty, is
//! written together with the pages that follow it in sector order as long as
//! each is unreferenced (reference bit 0), dirty, and at the next page number
//! ("sequential to it", Figure 3 line 12: `q->lsn == r->lsn + 1`), up to
//! `seq_dirtied_pages` pages in all. The pages go to flash in ONE request (a
//! bulk write, `Sink::write_back`); only the first victim, the page the hand
//! chose, leaves the buffer; the others stay resident and become clean
//! (Figure 3 lines 14-27), so the hand later evicts them without a write
//! unless they are written again.
//!
//! Choices where the paper is vague (each tested in tests/flash_policies.rs):
//! - `seq_dirtied_pages` counts the victim: a bulk write carries at most that
//!   many pages. Table 3 calls it "the maximum number of pages that could be
//!   written to flash" (2 pages = 8 KB ... 1024 pages = 4 MB); Figure 3's loop
//!   can collect one more follower than that and then clamps `nr_pages` to
//!   SEQ_DIRTIED_PAGES, so the table's reading is the consistent one.
//!   Default 16 (64 KB at 4 KB pages), the value section 4.2 fixes.
//! - The search never wraps past the highest sector (a page at the next page
//!   number cannot be there anyway).
//! - Victim selection is exactly Spatial Clock's: the write-ahead changes
//!   which pages are dirty, never which page the hand picks, so hits and
//!   misses are identical to Spatial Clock's on any trace. The paper reports
//!   small hit-ratio losses (0.13-0.54 %, Table 5) that Figure 3 does not
//!   explain; see the module docs of `tierlab.papers.bs_clock`.
//!
//! The sink sees, for a bulk write of the victim `v` and followers `f1..fk`:
//! `write_back([v, f1, .., fk])` (one request, all resident and dirty, now
//! clean) and then `evict(v)` with `dirty = false`. A dirty victim without
//! qualifying followers is evicted dirty (a one-page write), as in Spatial
//! Clock. Counters: `bulk_writes`, `pages_written_ahead` (followers cleaned),
//! `rewritten_after_write_ahead` (write hits on a page written ahead and not
//! written since: the "unnecessary writes" the paper bounds with
//! SEQ_DIRTIED_PAGES).

//!
//! Data structure: [`SectorRing`] (one flags word per page id and the circle
//! as a ring of sorted chunks with tombstones, found through the previous
//! insertion's chunk or a table of chunk hints per 64 page numbers; see its
//! module docs). A hit is one read and one write of the page's flags word,
//! O(1); a miss O(1) for the ring (O(log n) when the chunk search falls
//! back to the index: pages above the table's limit, stale hints), the
//! hand's walk amortized O(1) per reference, plus O(seq_dirtied_pages) for a
//! bulk write. Spatial Clock is this policy with `seq_dirtied_pages` = 1.

use super::sector_ring::SectorRing;
use crate::error::{Error, Result};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BsClockConfig {
    /// SEQ_DIRTIED_PAGES: most pages one bulk write carries, the victim
    /// included (Table 3; default 16 = 64 KB at 4 KB pages, section 4.2).
    pub seq_dirtied_pages: u32,
}

impl Default for BsClockConfig {
    fn default() -> Self {
        BsClockConfig {
            seq_dirtied_pages: 16,
        }
    }
}

pub struct BsClock {
    cap: usize,
    seq_dirtied_pages: usize,
    ring: SectorRing,
    bulk: Vec<PageOut>,
    bulk_writes: u64,
    pages_written_ahead: u64,
    rewritten_after_write_ahead: u64,
}

impl PolicyDef for BsClock {
    const NAME: &'static str = "bs-clock";
    const ALIASES: &'static [&'static str] = &["bsclock", "bulk-spatial-clock"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str =
        "BS-CLOCK (Lee, Lee & Park 2016, Fig. 3): Spatial Clock that writes \
         a dirty victim together with up to seq_dirtied_pages-1 following unreferenced dirty \
         sequential pages in one bulk write; only the victim is evicted.";
    type Config = BsClockConfig;
    fn build(cfg: &BsClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        if cfg.seq_dirtied_pages == 0 || cfg.seq_dirtied_pages > (1 << 20) {
            return Err(Error::config(format!(
                "policy 'bs-clock': seq_dirtied_pages must be in 1..=1048576, got {}",
                cfg.seq_dirtied_pages
            )));
        }
        Ok(BsClock::with_bulk(
            ctx.capacity,
            cfg.seq_dirtied_pages as usize,
        ))
    }
}

impl BsClock {
    /// BS-CLOCK over `cap` pages with SEQ_DIRTIED_PAGES = `seq_dirtied_pages`
    /// (1: Spatial Clock).
    pub(crate) fn with_bulk(cap: usize, seq_dirtied_pages: usize) -> Self {
        BsClock {
            cap,
            seq_dirtied_pages,
            ring: SectorRing::with_capacity(cap),
            bulk: Vec::with_capacity(seq_dirtied_pages),
            bulk_writes: 0,
            pages_written_ahead: 0,
            rewritten_after_write_ahead: 0,
        }
    }

    /// Resident pages in sweep order from the hand (tests).
    pub fn order_from_hand(&self) -> Vec<u64> {
        self.ring.order_from_hand()
    }

    /// Whether resident page `page` is dirty (None: not resident). Tests.
    pub fn is_dirty(&self, page: u64) -> Option<bool> {
        self.ring.find(page).map(|n| n.dirty)
    }

    /// See [`SectorRing::prefetch_page`].
    #[inline(always)]
    pub(crate) fn prefetch_page(&self, page: u64) {
        self.ring.prefetch_page(page);
    }

    /// Evicts the hand's victim, bulk-writing it with its sequential dirty
    /// followers when it is dirty (Figure 3). O(seq_dirtied_pages) on top of
    /// the ring's eviction.
    fn evict_one<S: Sink>(&mut self, sink: &mut S) {
        let v = self.ring.sweep();
        let victim = self.ring.state(v);
        if victim.dirty && self.seq_dirtied_pages > 1 {
            self.bulk.clear();
            self.bulk.push(victim.frame().out(0));
            let mut prev_page = victim.page;
            let mut q = self.ring.next(v);
            while q != v && self.bulk.len() < self.seq_dirtied_pages {
                let n = self.ring.state(q);
                if n.referenced || !n.dirty || n.page != prev_page + 1 {
                    break;
                }
                self.bulk.push(n.frame().out(0));
                // A follower makes this a bulk write: it is written ahead
                // (clean, marked) now, in the same walk (its `PageOut` above
                // was taken dirty, as the sink must see it).
                self.ring.mark_written_ahead(q);
                prev_page = n.page;
                q = self.ring.next(q);
            }
            if self.bulk.len() > 1 {
                sink.write_back(&self.bulk);
                self.bulk_writes += 1;
                self.pages_written_ahead += self.bulk.len() as u64 - 1;
                self.ring.evict_at_hand();
                let mut clean: Frame = victim.frame();
                clean.dirty = false;
                sink.evict(clean.out(0));
                return;
            }
        }
        self.ring.evict_at_hand();
        sink.evict(victim.frame().out(0));
    }
}

impl Policy for BsClock {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.ring.prefetch(near, far);
    }

    const PREFETCH_REFS: bool = true;

    #[inline(always)]
    fn prefetch_ref(&self, r: &PageRef) {
        self.prefetch_page(r.page());
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if self.ring.is_resident(r.id) {
            if self.ring.hit(r.id, r.is_write()) {
                self.rewritten_after_write_ahead += 1;
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.ring.len() == self.cap {
            self.evict_one(sink);
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

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("bulk_writes", self.bulk_writes),
            ("pages_written_ahead", self.pages_written_ahead),
            (
                "rewritten_after_write_ahead",
                self.rewritten_after_write_ahead,
            ),
        ]
    }
}
