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
//!
//! Layout (as [`super::two_q`]: both keep their pages in one [`super::HybridPages`], whose
//! entries their own lists link through, and take a hit, a new page and a victim the same way):
//! everything about a page is one 32-byte entry per page id
//! (page ids are dense): its links in the LRU stack and in DRAM's recency order, whether it is
//! resident and whether it is in DRAM, its page number, kind, dirty bit and owner (the app of
//! its latest reference, which the [`Meter`] reads when the page leaves memory). A reference
//! reads that one entry instead of an id -> slot table, a stack node, DRAM's table and node and
//! the meter's owner table; the prefetch hint loads it 16 references ahead and its neighbours
//! in the stack and in DRAM 6 ahead, and each pop from the stack's or DRAM's back starts
//! loading the entry before the new back. Memory: 32 bytes per distinct page, whatever the
//! memory size.

use super::{hybrid_ctx, DramOrder, HybridPages, Meter, ABSENT, OWN as S, PAPER_DRAM_RATIO};
use crate::error::Result;
use crate::policy::id_list::{prefetch_before, prefetch_neighbours, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
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

/// `PageEntry::state` of a page in the LRU stack (a resident page); `ABSENT` otherwise.
const RESIDENT: u8 = 1;

pub struct HybridLru {
    cap: usize,
    stack: IdList<S>,
    pages: HybridPages,
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
            stack: IdList::default(),
            pages: HybridPages::new(d, cfg.promote),
        })
    }
}

impl HybridLru {
    /// Pages in DRAM, MRU first.
    pub fn dram_pages(&self) -> Vec<u64> {
        self.stack_pages(true)
    }
    /// Resident pages, MRU first.
    pub fn resident_pages(&self) -> Vec<u64> {
        let entries = &self.pages.entries;
        self.stack
            .iter(entries)
            .map(|id| entries[id as usize].page)
            .collect()
    }
    /// Resident pages whose `in_dram` is `dram`, MRU first (in the stack's order).
    fn stack_pages(&self, dram: bool) -> Vec<u64> {
        let entries = &self.pages.entries;
        self.stack
            .iter(entries)
            .map(|id| &entries[id as usize])
            .filter(|e| e.in_dram == dram)
            .map(|e| e.page)
            .collect()
    }
    /// Page ids in DRAM, in DRAM's own recency order (MRU first).
    pub fn dram_ids(&self) -> Vec<PageId> {
        self.pages.dram.ids(&self.pages.entries)
    }
    /// Pages in PCM, most recently used first.
    pub fn pcm_pages(&self) -> Vec<u64> {
        self.stack_pages(false)
    }
    pub fn meter(&self) -> &Meter {
        &self.pages.meter
    }

    /// Evicts the stack's LRU page from whichever tier holds it.
    #[inline]
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let entries = &mut self.pages.entries;
        let v = self.stack.pop_back(entries);
        debug_assert!(v != NIL, "full memory has a victim");
        entries[v as usize].state = ABSENT;
        self.pages.evict(v, sink);
        // The next victim's entry (a speed hint): the back entry is cached by now or on its
        // way; start loading the one before it.
        prefetch_before(&self.pages.entries, self.stack.tail(), S);
    }
}

impl Policy for HybridLru {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        let entries = &self.pages.entries;
        prefetch(entries, far as usize);
        // `near`'s entry arrived since it was `far`: load the entries a hit on it rewrites (its
        // neighbours in the stack and in DRAM's order).
        if let Some(e) = entries.get(near as usize) {
            if e.state == RESIDENT {
                prefetch_neighbours(entries, e, S);
            }
            DramOrder::prefetch_neighbours(entries, e);
        }
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.pages.meter.begin_unowned(r);
        let id = r.id;
        if self.pages.entries[id as usize].state == RESIDENT {
            self.stack.move_to_front(&mut self.pages.entries, id);
            self.pages.hit(r, sink);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.stack.len() == self.cap {
            self.evict(sink);
        }
        self.pages.insert(r, RESIDENT, &mut self.stack, sink);
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.pages.meter.event(e);
    }

    fn grow(&mut self, n: usize) {
        self.pages.grow(n);
    }

    fn resident(&self) -> usize {
        self.stack.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.pages.meter.counters()
    }
}
