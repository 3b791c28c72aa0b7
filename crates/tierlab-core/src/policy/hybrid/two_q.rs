//! 2Q over hybrid DRAM+PCM memory, the second baseline of
//! papers/hybrid-dram-pcm-app-aware.md ("2QLRU [16]", Section 4).
//!
//! Residency follows full 2Q (Johnson and Shasha, VLDB 1994, Section 2.2): new
//! pages enter the FIFO `A1in`; a page evicted from `A1in` leaves its id in the
//! ghost FIFO `A1out`; a miss on a page remembered in `A1out` enters the LRU
//! `Am`; hits in `Am` move the page to `Am`'s MRU end, hits in `A1in` change
//! nothing. When memory is full the victim is `A1in`'s oldest page if `A1in`
//! holds more than `kin` of memory, else `Am`'s LRU page. `kin` = 25% and
//! `kout` = 50% of memory, the values 2Q's authors recommend (and libCacheSim's
//! defaults).
//!
//! Placement is the same as for [`super::lru::HybridLru`]: DRAM (`dram_ratio`
//! of memory, 5% in the paper) holds the most recently referenced resident
//! pages; new pages enter at DRAM's MRU end, DRAM's LRU page demotes to PCM, and
//! a PCM hit migrates the page back to DRAM (`promote`, our choice as for LRU).
//! A 2Q victim leaves from whichever tier holds it.

use super::{hybrid_ctx, Meter, RecencyPlacement, PAPER_DRAM_RATIO};
use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{check_fraction, Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::Event;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridTwoQConfig {
    /// DRAM share of memory (paper: 0.05).
    pub dram_ratio: f64,
    /// A1in's share of memory (2Q: 0.25).
    pub kin: f64,
    /// A1out's size as a share of memory, in remembered page ids (2Q: 0.5).
    pub kout: f64,
    /// Whether a PCM hit migrates the page to DRAM.
    pub promote: bool,
}

impl Default for HybridTwoQConfig {
    fn default() -> Self {
        HybridTwoQConfig {
            dram_ratio: PAPER_DRAM_RATIO,
            kin: 0.25,
            kout: 0.5,
            promote: true,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    f: Frame,
    in_am: bool,
}

pub struct HybridTwoQ {
    cap: usize,
    kin: usize,
    kout: usize,
    arena: Arena<Entry>,
    a1in: List,
    am: List,
    table: SlotTable,
    ghosts: Arena<PageId>,
    a1out: List,
    ghost_table: SlotTable,
    place: RecencyPlacement,
    ghost_hits: u64,
}

impl PolicyDef for HybridTwoQ {
    const NAME: &'static str = "hybrid-2q";
    const ALIASES: &'static [&'static str] = &["hybrid-2qlru"];
    const FAMILY: &'static str = "hybrid";
    const MIN_TIERS: usize = 2;
    const SUMMARY: &'static str =
        "2Q (Johnson & Shasha 1994) over DRAM+PCM: new pages to DRAM, DRAM's \
         LRU page demotes to PCM (baseline of Oh et al., KIISE 2015).";
    type Config = HybridTwoQConfig;
    fn build(cfg: &HybridTwoQConfig, ctx: &PolicyCtx) -> Result<Self> {
        let (d, _) = hybrid_ctx(Self::NAME, ctx, cfg.dram_ratio)?;
        check_fraction(Self::NAME, "kin", cfg.kin)?;
        if !(cfg.kout.is_finite() && cfg.kout >= 0.0) {
            return Err(crate::Error::config(format!(
                "policy '{}': kout must be a number >= 0, got {}",
                Self::NAME,
                cfg.kout
            )));
        }
        let cap = ctx.capacity;
        Ok(HybridTwoQ {
            cap,
            kin: ((cap as f64 * cfg.kin).round() as usize).max(1),
            kout: (cap as f64 * cfg.kout).round() as usize,
            arena: Arena::with_capacity(cap),
            a1in: List::default(),
            am: List::default(),
            table: SlotTable::default(),
            ghosts: Arena::default(),
            a1out: List::default(),
            ghost_table: SlotTable::default(),
            place: RecencyPlacement::new(d, cfg.promote),
            ghost_hits: 0,
        })
    }
}

impl HybridTwoQ {
    pub fn meter(&self) -> &Meter {
        &self.place.meter
    }

    /// Pages of A1in (newest first), Am (MRU first), and page numbers in DRAM.
    pub fn queues(&self) -> (Vec<u64>, Vec<u64>) {
        let pages = |l: &List| {
            l.iter(&self.arena)
                .map(|s| self.arena.get(s).f.page)
                .collect::<Vec<_>>()
        };
        (pages(&self.a1in), pages(&self.am))
    }

    pub fn dram_ids(&self) -> Vec<PageId> {
        self.place.dram.ids()
    }

    fn remember(&mut self, id: PageId) {
        if self.kout == 0 {
            return;
        }
        if self.a1out.len() == self.kout {
            let g = self
                .a1out
                .pop_back(&mut self.ghosts)
                .expect("full A1out has a tail");
            self.ghost_table.clear(*self.ghosts.get(g));
            self.ghosts.release(g);
            self.a1out
                .prefetch_back(&self.ghosts, |&id| self.ghost_table.prefetch(id));
        }
        let g = self.ghosts.alloc(id);
        self.a1out.push_front(&mut self.ghosts, g);
        self.ghost_table.set(id, g);
    }

    /// Evicts the 2Q victim; returns its slot for reuse.
    fn evict<S: Sink>(&mut self, sink: &mut S) -> u32 {
        let from_a1in = self.a1in.len() > self.kin || self.am.is_empty();
        let v = if from_a1in {
            self.a1in.pop_back(&mut self.arena)
        } else {
            self.am.pop_back(&mut self.arena)
        }
        .expect("full memory has a victim");
        let e = *self.arena.get(v);
        self.table.clear(e.f.id);
        self.place.evict(&e.f, sink);
        if from_a1in {
            self.remember(e.f.id);
        }
        // The next victims' entries (a speed hint).
        for l in [&self.a1in, &self.am] {
            l.prefetch_back(&self.arena, |e| {
                self.table.prefetch(e.f.id);
                self.place.prefetch_victim(e.f.id);
            });
        }
        v
    }
}

impl Policy for HybridTwoQ {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
        // A miss on a ghost unlinks it from A1out: its node loads too.
        self.ghost_table
            .prefetch_ahead(near, far, |g| self.ghosts.prefetch(g));
        self.place.prefetch(near, far);
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.place.begin(r);
        let slot = self.table.get(r.id);
        if slot != NIL {
            let e = self.arena.get_mut(slot);
            e.f.dirty |= r.is_write();
            if e.in_am {
                self.am.move_to_front(&mut self.arena, slot);
            }
            self.place.hit(r, sink);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let g = self.ghost_table.get(r.id);
        let in_am = g != NIL;
        if in_am {
            self.ghost_hits += 1;
            self.a1out.unlink(&mut self.ghosts, g);
            self.ghosts.release(g);
            self.ghost_table.clear(r.id);
        }
        let entry = Entry {
            f: Frame::of(r),
            in_am,
        };
        let slot = if self.a1in.len() + self.am.len() == self.cap {
            let v = self.evict(sink);
            *self.arena.get_mut(v) = entry;
            v
        } else {
            self.arena.alloc(entry)
        };
        if in_am {
            self.am.push_front(&mut self.arena, slot);
        } else {
            self.a1in.push_front(&mut self.arena, slot);
        }
        self.table.set(r.id, slot);
        self.place.fill(r, sink);
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.place.event(e);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
        self.ghost_table.grow(n);
        self.place.grow(n);
    }

    fn resident(&self) -> usize {
        self.a1in.len() + self.am.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.place.meter.counters();
        c.push(("ghost_hits", self.ghost_hits));
        c
    }
}
