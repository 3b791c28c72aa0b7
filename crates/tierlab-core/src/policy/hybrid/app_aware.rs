//! The app-state-aware hybrid-memory buffer cache of Oh, Kang, Lee and Eom
//! (papers/hybrid-dram-pcm-app-aware.md, Section 3, Figures 2 and 3).
//!
//! Memory is DRAM (`dram_ratio` of it, the paper's 5%) and PCM, each an LRU
//! list with a reference count per page:
//!
//! - a miss of the **foreground** app writes the new page at DRAM's MRU end; if
//!   DRAM is full, DRAM's victim first moves to PCM's MRU end, and if PCM is full
//!   too, PCM's victim first goes to storage (Figure 3, lines 12-17);
//! - a miss of a **background** app writes the new page at PCM's MRU end, after
//!   evicting PCM's victim to storage when PCM is full (lines 18-21);
//! - a DRAM hit moves the page to DRAM's MRU end, whatever its app (line 3;
//!   Section 3: a background app's page left in DRAM stays there while it is
//!   re-referenced);
//! - a PCM hit migrates the page to DRAM's MRU end when the referencing app is in
//!   the foreground, the page is dirty and its reference count is at least
//!   `migrate_count` (2, lines 5-7; Figure 2(a)), demoting DRAM's victim to PCM
//!   when DRAM is full (Figure 2(c)); otherwise the page moves to PCM's MRU end
//!   (line 9; Figure 2(b)).
//!
//! Reference counts: a page enters memory with count 0; each re-reference (hit)
//! adds 1; a page "becomes the eviction candidate" when it is at its list's LRU
//! end while that list must give up a page: with count 0 it is the victim,
//! otherwise its count drops by 1 ("LRU의 추출후보가 되면 1씩 감소한다"). The
//! paper does not say where a candidate with a non-zero count goes; we move it to
//! its list's MRU end (a second chance, as CLOCK does with its reference bit, so
//! the next page becomes the candidate; keeping it at the LRU end would make the
//! count delay nothing). A page keeps its count across migrations.
//!
//! Choices where the paper is silent, each tested:
//! - the count is incremented before the migration test, so a page written into
//!   PCM is migrated on its second re-reference by the foreground app (the paper:
//!   "PCM에 위치한 페이지가 2번 이상 쓰기 참조가 발생하면");
//! - "dirty" is the page's dirty bit after the current reference (a write hit
//!   makes the page dirty before the test);
//! - on a migration the hit is served from DRAM (the page is copied up, then
//!   read or written there);
//! - counts are unbounded unless `max_count` > 0 caps them;
//! - with no DRAM frames (tiny memories) foreground misses go to PCM; with no PCM
//!   frames DRAM victims go straight to storage.

use super::{hybrid_ctx, Meter, DRAM, PAPER_DRAM_RATIO, PCM};
use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::Event;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppAwareConfig {
    /// DRAM share of memory (paper: 0.05).
    pub dram_ratio: f64,
    /// Reference count from which a dirty PCM page hit by the foreground app
    /// migrates to DRAM (paper: 2).
    pub migrate_count: u32,
    /// Cap on reference counts (0: unbounded, the paper states no cap).
    pub max_count: u32,
}

impl Default for AppAwareConfig {
    fn default() -> Self {
        AppAwareConfig {
            dram_ratio: PAPER_DRAM_RATIO,
            migrate_count: 2,
            max_count: 0,
        }
    }
}

/// A resident page.
#[derive(Debug, Clone, Copy)]
struct Page {
    f: Frame,
    tier: u8,
    count: u32,
}

/// Where a resident page is, as tests inspect it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageState {
    pub page: u64,
    pub count: u32,
    pub dirty: bool,
}

pub struct AppAware {
    dram_cap: usize,
    pcm_cap: usize,
    migrate_count: u32,
    max_count: u32,
    arena: Arena<Page>,
    dram: List,
    pcm: List,
    table: SlotTable,
    meter: Meter,
    second_chances: u64,
}

impl PolicyDef for AppAware {
    const NAME: &'static str = "app-aware";
    const ALIASES: &'static [&'static str] = &["app-state", "oh2015"];
    const FAMILY: &'static str = "hybrid";
    const MIN_TIERS: usize = 2;
    const SUMMARY: &'static str =
        "App-state-aware DRAM+PCM buffer cache: foreground misses to DRAM, \
         background to PCM, reference counts, dirty foreground PCM pages migrate up \
         (Oh et al., KIISE 2015, Figure 3).";
    type Config = AppAwareConfig;
    fn build(cfg: &AppAwareConfig, ctx: &PolicyCtx) -> Result<Self> {
        let (dram_cap, pcm_cap) = hybrid_ctx(Self::NAME, ctx, cfg.dram_ratio)?;
        Ok(AppAware {
            dram_cap,
            pcm_cap,
            migrate_count: cfg.migrate_count,
            max_count: if cfg.max_count == 0 {
                u32::MAX
            } else {
                cfg.max_count
            },
            arena: Arena::with_capacity(ctx.capacity),
            dram: List::default(),
            pcm: List::default(),
            table: SlotTable::default(),
            meter: Meter::default(),
            second_chances: 0,
        })
    }
}

impl AppAware {
    /// DRAM frames and PCM frames.
    pub fn split(&self) -> (usize, usize) {
        (self.dram_cap, self.pcm_cap)
    }

    /// Pages of `tier`, MRU first.
    pub fn list(&self, tier: u8) -> Vec<PageState> {
        let l = if tier == DRAM { &self.dram } else { &self.pcm };
        l.iter(&self.arena)
            .map(|s| {
                let p = self.arena.get(s);
                PageState {
                    page: p.f.page,
                    count: p.count,
                    dirty: p.f.dirty,
                }
            })
            .collect()
    }

    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// The list of `tier` and the arena, borrowed together.
    #[inline]
    fn parts(&mut self, tier: u8) -> (&mut List, &mut Arena<Page>) {
        if tier == DRAM {
            (&mut self.dram, &mut self.arena)
        } else {
            (&mut self.pcm, &mut self.arena)
        }
    }

    /// Picks and unlinks the victim of `tier`: the LRU page with count 0; LRU
    /// pages with a count lose 1 and go to the MRU end.
    fn take_victim(&mut self, tier: u8) -> u32 {
        let (list, arena) = self.parts(tier);
        let mut chances = 0;
        let v = loop {
            let t = list.back().expect("victim of an empty list");
            let p = arena.get_mut(t);
            if p.count == 0 {
                list.unlink(arena, t);
                break t;
            }
            p.count -= 1;
            chances += 1;
            list.move_to_front(arena, t);
        };
        self.second_chances += chances;
        v
    }

    /// Evicts the victim of `tier` to storage; returns its slot, free for reuse.
    fn evict_from<S: Sink>(&mut self, tier: u8, sink: &mut S) -> u32 {
        let v = self.take_victim(tier);
        let p = *self.arena.get(v);
        self.table.clear(p.f.id);
        self.meter.evict(sink, p.f.out(tier));
        self.prefetch_victim(tier, sink);
        v
    }

    /// Moves DRAM's victim to PCM's MRU end (PCM must have a free frame).
    fn demote<S: Sink>(&mut self, sink: &mut S) {
        let v = self.take_victim(DRAM);
        let p = self.arena.get_mut(v);
        p.tier = PCM;
        let (id, page) = (p.f.id, p.f.page);
        self.pcm.push_front(&mut self.arena, v);
        self.meter.migrate(sink, id, page, DRAM, PCM);
        self.prefetch_victim(DRAM, sink);
    }

    /// A speed hint after `tier` gave up its victim: starts loading what its next victim (its
    /// LRU page, unless that gets a second chance) will touch.
    #[inline(always)]
    fn prefetch_victim<S: Sink>(&self, tier: u8, sink: &S) {
        let l = if tier == DRAM { &self.dram } else { &self.pcm };
        l.prefetch_back(&self.arena, |p| {
            self.table.prefetch(p.f.id);
            self.meter.prefetch(p.f.id);
            sink.prefetch(p.f.id);
        });
    }

    /// Makes a free DRAM frame (DRAM must be full and have frames).
    fn free_dram<S: Sink>(&mut self, sink: &mut S) -> Option<u32> {
        if self.pcm_cap == 0 {
            return Some(self.evict_from(DRAM, sink));
        }
        let mut freed = None;
        if self.pcm.len() == self.pcm_cap {
            freed = Some(self.evict_from(PCM, sink));
        }
        self.demote(sink);
        freed
    }
}

impl Policy for AppAware {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
        self.meter.prefetch(far);
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let fg = self.meter.begin(r);
        let slot = self.table.get(r.id);
        if slot != NIL {
            let max = self.max_count;
            let p = self.arena.get_mut(slot);
            p.f.dirty |= r.is_write();
            p.count = p.count.saturating_add(1).min(max);
            if p.tier == DRAM {
                self.dram.move_to_front(&mut self.arena, slot);
                self.meter.hit(sink, r, DRAM);
            } else if fg && p.f.dirty && p.count >= self.migrate_count && self.dram_cap > 0 {
                // Figure 2(a): migrate to DRAM's MRU end; 2(c): DRAM's victim
                // takes the PCM frame this page frees.
                self.pcm.unlink(&mut self.arena, slot);
                if self.dram.len() == self.dram_cap {
                    self.demote(sink);
                }
                self.arena.get_mut(slot).tier = DRAM;
                self.dram.push_front(&mut self.arena, slot);
                self.meter.migrate(sink, r.id, r.page(), PCM, DRAM);
                self.meter.hit(sink, r, DRAM);
            } else {
                // Figure 2(b).
                self.pcm.move_to_front(&mut self.arena, slot);
                self.meter.hit(sink, r, PCM);
            }
            return;
        }
        if self.dram_cap + self.pcm_cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let tier = if (fg && self.dram_cap > 0) || self.pcm_cap == 0 {
            DRAM
        } else {
            PCM
        };
        // Figure 2(d): a full tier gives up its victim first.
        let freed = if tier == DRAM {
            if self.dram.len() == self.dram_cap {
                self.free_dram(sink)
            } else {
                None
            }
        } else if self.pcm.len() == self.pcm_cap {
            Some(self.evict_from(PCM, sink))
        } else {
            None
        };
        let page = Page {
            f: Frame::of(r),
            tier,
            count: 0,
        };
        let s = match freed {
            Some(s) => {
                *self.arena.get_mut(s) = page;
                s
            }
            None => self.arena.alloc(page),
        };
        let (list, arena) = self.parts(tier);
        list.push_front(arena, s);
        self.table.set(r.id, s);
        self.meter.miss(sink, r, tier);
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.meter.event(e);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
        self.meter.grow(n);
    }

    fn resident(&self) -> usize {
        self.dram.len() + self.pcm.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.meter.counters();
        c.push(("second_chances", self.second_chances));
        c
    }
}
