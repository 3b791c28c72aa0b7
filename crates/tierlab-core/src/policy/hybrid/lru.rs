//! LRU over hybrid DRAM+PCM memory, the first baseline of
//! papers/hybrid-dram-pcm-app-aware.md (Section 4, Figures 4-7).
//!
//! One LRU stack over the whole memory decides which pages stay; the DRAM
//! (`dram_ratio` of memory, the paper's 5%) holds its most recently used pages:
//! a new page is written at DRAM's MRU end, DRAM's LRU page demotes to PCM when
//! DRAM is full, and the stack's LRU page (in PCM, or in DRAM when there is no
//! PCM) goes to storage. The paper only says LRU evicts "without telling apps
//! apart" and runs on "the same hybrid memory" (Section 4); we choose to keep
//! DRAM the top of one stack, so that a PCM hit migrates the page to DRAM's MRU
//! end (`promote = true`), because Section 3 adds reference counts to LRU "to
//! reduce the overhead of migrations between DRAM and PCM" ("DRAM과 PCM간의
//! 페이지 이동(Migration)에 따른 오버헤드를 줄이기 위하여 LRU 기법에 참조
//! 카운트를 추가로 이용한다"), i.e. its LRU migrates. The hit ratio is then
//! exactly that of plain LRU with the same number of frames (tested). With
//! `promote = false` a PCM hit only refreshes the page's recency and it stays in
//! PCM.

use super::{hybrid_ctx, Meter, RecencyPlacement, PAPER_DRAM_RATIO};
use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::Event;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridLruConfig {
    /// DRAM share of memory (paper: 0.05).
    pub dram_ratio: f64,
    /// Whether a PCM hit migrates the page to DRAM (one LRU stack over both).
    pub promote: bool,
}

impl Default for HybridLruConfig {
    fn default() -> Self {
        HybridLruConfig {
            dram_ratio: PAPER_DRAM_RATIO,
            promote: true,
        }
    }
}

pub struct HybridLru {
    cap: usize,
    arena: Arena<Frame>,
    stack: List,
    table: SlotTable,
    place: RecencyPlacement,
}

impl PolicyDef for HybridLru {
    const NAME: &'static str = "hybrid-lru";
    const FAMILY: &'static str = "hybrid";
    const MIN_TIERS: usize = 2;
    const SUMMARY: &'static str =
        "LRU over DRAM+PCM: new pages to DRAM, DRAM's LRU page demotes to PCM \
         (baseline of Oh et al., KIISE 2015).";
    type Config = HybridLruConfig;
    fn build(cfg: &HybridLruConfig, ctx: &PolicyCtx) -> Result<Self> {
        let (d, _) = hybrid_ctx(Self::NAME, ctx, cfg.dram_ratio)?;
        Ok(HybridLru {
            cap: ctx.capacity,
            arena: Arena::with_capacity(ctx.capacity),
            stack: List::default(),
            table: SlotTable::default(),
            place: RecencyPlacement::new(d, cfg.promote),
        })
    }
}

impl HybridLru {
    /// Pages in DRAM, MRU first.
    pub fn dram_pages(&self) -> Vec<u64> {
        self.stack_pages()
            .into_iter()
            .filter(|p| self.place.dram.contains(p.1))
            .map(|p| p.0)
            .collect()
    }
    /// Resident pages, MRU first.
    pub fn resident_pages(&self) -> Vec<u64> {
        self.stack_pages().into_iter().map(|p| p.0).collect()
    }
    /// Resident pages (page, id), MRU first.
    fn stack_pages(&self) -> Vec<(u64, u32)> {
        self.stack
            .iter(&self.arena)
            .map(|s| {
                let f = self.arena.get(s);
                (f.page, f.id)
            })
            .collect()
    }
    /// Pages in PCM, most recently used first.
    pub fn pcm_pages(&self) -> Vec<u64> {
        self.stack_pages()
            .into_iter()
            .filter(|p| !self.place.dram.contains(p.1))
            .map(|p| p.0)
            .collect()
    }
    pub fn meter(&self) -> &Meter {
        &self.place.meter
    }
}

impl Policy for HybridLru {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
        self.place.prefetch(near, far);
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.place.begin(r);
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.arena.get_mut(slot).dirty |= r.is_write();
            self.stack.move_to_front(&mut self.arena, slot);
            self.place.hit(r, sink);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.stack.len() == self.cap {
            let v = self
                .stack
                .pop_back(&mut self.arena)
                .expect("full memory has a tail");
            let victim = *self.arena.get(v);
            self.table.clear(victim.id);
            self.place.evict(&victim, sink);
            // The next victim's entries (a speed hint).
            self.stack.prefetch_back(&self.arena, |f| {
                self.table.prefetch(f.id);
                self.place.prefetch_victim(f.id);
            });
            *self.arena.get_mut(v) = Frame::of(r);
            v
        } else {
            self.arena.alloc(Frame::of(r))
        };
        self.stack.push_front(&mut self.arena, slot);
        self.table.set(r.id, slot);
        self.place.fill(r, sink);
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.place.event(e);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
        self.place.grow(n);
    }

    fn resident(&self) -> usize {
        self.stack.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.place.meter.counters()
    }
}
