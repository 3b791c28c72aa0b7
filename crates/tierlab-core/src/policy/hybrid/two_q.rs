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
//!
//! Layout: everything about a page is one 32-byte entry per page id (page ids are dense): its
//! links in the one 2Q queue it is in (A1in, Am or the ghost FIFO A1out), its links in DRAM's
//! recency order, which queue it is in, whether it is in DRAM, its page number, kind, dirty
//! bit and owner (the app of its latest reference, which the [`Meter`] reads when the page
//! leaves memory). A reference reads that one entry instead of an id -> slot table, a ghost
//! table, a DRAM table, the meter's owner table and a node per list; the prefetch hint loads
//! it 16 references ahead and its neighbours in Am / A1out and in DRAM 6 ahead. Memory: 32
//! bytes per distinct page, whatever the memory size. [`super::lru::HybridLru`] keeps its pages in the same
//! [`super::HybridPages`] (entries, DRAM's order, meter) and takes a hit, a new page and a victim
//! through it the same way.

use super::{hybrid_ctx, DramOrder, HybridPages, Meter, ABSENT, OWN as Q, PAPER_DRAM_RATIO};
use crate::error::Result;
use crate::policy::id_list::{prefetch_before, prefetch_neighbours, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{check_fraction, Policy, PolicyCtx, PolicyDef};
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

/// Which of 2Q's queues holds a page (`PageEntry::state`; `ABSENT` for none).
const A1IN: u8 = 1;
const AM: u8 = 2;
const GHOST: u8 = 3;

pub struct HybridTwoQ {
    cap: usize,
    kin: usize,
    kout: usize,
    a1in: IdList<Q>,
    am: IdList<Q>,
    a1out: IdList<Q>,
    pages: HybridPages,
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
            a1in: IdList::default(),
            am: IdList::default(),
            a1out: IdList::default(),
            pages: HybridPages::new(d, cfg.promote),
            ghost_hits: 0,
        })
    }
}

impl HybridTwoQ {
    pub fn meter(&self) -> &Meter {
        &self.pages.meter
    }

    /// Pages of A1in (newest first) and Am (MRU first).
    pub fn queues(&self) -> (Vec<u64>, Vec<u64>) {
        let entries = &self.pages.entries;
        let pages = |l: &IdList<Q>| {
            l.iter(entries)
                .map(|id| entries[id as usize].page)
                .collect::<Vec<_>>()
        };
        (pages(&self.a1in), pages(&self.am))
    }

    /// Page ids in DRAM, MRU first.
    pub fn dram_ids(&self) -> Vec<PageId> {
        self.pages.dram.ids(&self.pages.entries)
    }

    /// Keeps evicted page `id` as A1out's newest ghost, forgetting the oldest when A1out is
    /// full.
    #[inline]
    fn remember(&mut self, id: PageId) {
        let entries = &mut self.pages.entries;
        if self.kout == 0 {
            entries[id as usize].state = ABSENT;
            return;
        }
        if self.a1out.len() == self.kout {
            let g = self.a1out.pop_back(entries);
            entries[g as usize].state = ABSENT;
            prefetch_before(entries, self.a1out.tail(), Q);
        }
        entries[id as usize].state = GHOST;
        self.a1out.push_front(entries, id);
    }

    /// Evicts the 2Q victim.
    #[inline]
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let from_a1in = self.a1in.len() > self.kin || self.am.is_empty();
        let v = if from_a1in {
            self.a1in.pop_back(&mut self.pages.entries)
        } else {
            self.am.pop_back(&mut self.pages.entries)
        };
        debug_assert!(v != NIL, "full memory has a victim");
        self.pages.evict(v, sink);
        if from_a1in {
            self.remember(v);
        } else {
            self.pages.entries[v as usize].state = ABSENT;
        }
        // The next victims' entries (a speed hint): each queue's back entry is cached by now
        // or on its way; start loading the one before it.
        for t in [self.a1in.tail(), self.am.tail()] {
            prefetch_before(&self.pages.entries, t, Q);
        }
    }
}

impl Policy for HybridTwoQ {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        let entries = &self.pages.entries;
        prefetch(entries, far as usize);
        // `near`'s entry arrived since it was `far`: load the entries a reference to it
        // rewrites (its neighbours in Am, which a hit moves it out of, or in A1out, which a
        // ghost hit unlinks it from; and in DRAM's order).
        if let Some(e) = entries.get(near as usize) {
            if e.state == AM || e.state == GHOST {
                prefetch_neighbours(entries, e, Q);
            }
            DramOrder::prefetch_neighbours(entries, e);
        }
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.pages.meter.begin_unowned(r);
        let id = r.id;
        let state = self.pages.entries[id as usize].state;
        if state == A1IN || state == AM {
            if state == AM {
                self.am.move_to_front(&mut self.pages.entries, id);
            }
            self.pages.hit(r, sink);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let in_am = state == GHOST;
        if in_am {
            self.ghost_hits += 1;
            self.a1out.unlink(&mut self.pages.entries, id);
            self.pages.entries[id as usize].state = ABSENT;
        }
        if self.a1in.len() + self.am.len() == self.cap {
            self.evict(sink);
        }
        if in_am {
            self.pages.insert(r, AM, &mut self.am, sink);
        } else {
            self.pages.insert(r, A1IN, &mut self.a1in, sink);
        }
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.pages.meter.event(e);
    }

    fn grow(&mut self, n: usize) {
        self.pages.grow(n);
    }

    fn resident(&self) -> usize {
        self.a1in.len() + self.am.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.pages.meter.counters();
        c.push(("ghost_hits", self.ghost_hits));
        c
    }
}
