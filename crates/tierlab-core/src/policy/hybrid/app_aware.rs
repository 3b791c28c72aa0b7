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
//!
//! Layout (as [`super::two_q`] and [`super::lru`]): everything about a page is one 32-byte entry
//! per page id (page ids are dense): its links in the one list it is in (DRAM's or PCM's), its
//! reference count, whether it is resident and in which tier, its page number, kind, dirty bit
//! and owner (the app of its latest reference, which the [`Meter`] reads when the page leaves
//! memory). A reference reads that one entry instead of an id -> slot table, an arena node and
//! the meter's owner table; the prefetch hint loads it 16 references ahead and its list
//! neighbours 6 ahead; a second chance starts loading the next candidate, and after a tier gives
//! up its victim the entry before its new LRU end is prefetched. Memory: 32 bytes per distinct page,
//! whatever the memory size.

use super::{hybrid_ctx, owned_entry_in_fields, Meter, DRAM, PAPER_DRAM_RATIO, PCM};
use crate::error::Result;
use crate::policy::id_list::{id_links_in_field, prefetch_before, prefetch_neighbours, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::{Event, Kind};
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

/// Everything about one page id, in one 32-byte entry (32-aligned, so never across two cache
/// lines): its links in its tier's list (a page is in one list, so one pair), its reference
/// count, whether it is resident and its tier, its page number, kind and dirty bit, and its
/// owner (the app of its latest reference, which the [`Meter`] needs when the page leaves
/// memory).
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct Entry {
    links: [[u32; 2]; 1],
    page: u64,
    owner: u32,
    count: u32,
    resident: bool,
    tier: u8,
    dirty: bool,
    kind: Kind,
}
id_links_in_field!(Entry);
owned_entry_in_fields!(Entry);
const _: () = assert!(std::mem::size_of::<Entry>() == 32);

const EMPTY: Entry = Entry {
    links: [[NIL; 2]; 1],
    page: 0,
    owner: u32::MAX,
    count: 0,
    resident: false,
    tier: PCM,
    dirty: false,
    kind: Kind::File,
};

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
    entries: Vec<Entry>,
    dram: IdList<0>,
    pcm: IdList<0>,
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
            entries: Vec::new(),
            dram: IdList::default(),
            pcm: IdList::default(),
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
        l.iter(&self.entries)
            .map(|id| {
                let e = &self.entries[id as usize];
                PageState {
                    page: e.page,
                    count: e.count,
                    dirty: e.dirty,
                }
            })
            .collect()
    }

    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// The list of `tier` and the entries, borrowed together.
    #[inline]
    fn parts(&mut self, tier: u8) -> (&mut IdList<0>, &mut Vec<Entry>) {
        if tier == DRAM {
            (&mut self.dram, &mut self.entries)
        } else {
            (&mut self.pcm, &mut self.entries)
        }
    }

    /// Picks and unlinks the victim of `tier`: the LRU page with count 0; LRU
    /// pages with a count lose 1 and go to the MRU end.
    fn take_victim(&mut self, tier: u8) -> PageId {
        let (list, entries) = self.parts(tier);
        let mut chances = 0;
        let v = loop {
            let t = list.tail();
            debug_assert!(t != NIL, "victim of an empty list");
            let e = &mut entries[t as usize];
            if e.count == 0 {
                list.unlink(entries, t);
                break t;
            }
            e.count -= 1;
            chances += 1;
            // The next candidate (a speed hint).
            prefetch_before(entries, t, 0);
            list.move_to_front(entries, t);
        };
        self.second_chances += chances;
        v
    }

    /// Evicts the victim of `tier` to storage.
    fn evict_from<S: Sink>(&mut self, tier: u8, sink: &mut S) {
        let v = self.take_victim(tier);
        let e = &mut self.entries[v as usize];
        e.resident = false;
        let e = *e;
        self.meter.evict_entry(sink, v, &e, tier);
        self.prefetch_victim(tier, sink);
    }

    /// Moves DRAM's victim to PCM's MRU end (PCM must have a free frame).
    fn demote<S: Sink>(&mut self, sink: &mut S) {
        let v = self.take_victim(DRAM);
        let e = &mut self.entries[v as usize];
        e.tier = PCM;
        let page = e.page;
        self.pcm.push_front(&mut self.entries, v);
        self.meter.migrate(sink, v, page, DRAM, PCM);
        self.prefetch_victim(DRAM, sink);
    }

    /// A speed hint after `tier` gave up its victim: its LRU page (the next candidate) is cached
    /// by now or on its way; start loading the entry before it, and the new LRU page's wear
    /// count in the sink.
    #[inline(always)]
    fn prefetch_victim<S: Sink>(&self, tier: u8, sink: &S) {
        let t = if tier == DRAM {
            self.dram.tail()
        } else {
            self.pcm.tail()
        };
        prefetch_before(&self.entries, t, 0);
        if t != NIL {
            sink.prefetch(t);
        }
    }

    /// Makes a free DRAM frame (DRAM must be full and have frames).
    fn free_dram<S: Sink>(&mut self, sink: &mut S) {
        if self.pcm_cap == 0 {
            self.evict_from(DRAM, sink);
            return;
        }
        if self.pcm.len() == self.pcm_cap {
            self.evict_from(PCM, sink);
        }
        self.demote(sink);
    }
}

impl Policy for AppAware {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.entries, far as usize);
        // `near`'s entry arrived since it was `far`: load the entries a hit on it rewrites (its
        // neighbours in its list).
        if let Some(e) = self.entries.get(near as usize) {
            if e.resident {
                prefetch_neighbours(&self.entries, e, 0);
            }
        }
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let fg = self.meter.begin_unowned(r);
        let id = r.id;
        let max = self.max_count;
        let e = &mut self.entries[id as usize];
        if e.resident {
            e.owner = r.app();
            e.dirty |= r.is_write();
            e.count = e.count.saturating_add(1).min(max);
            if e.tier == DRAM {
                self.dram.move_to_front(&mut self.entries, id);
                self.meter.hit(sink, r, DRAM);
            } else if fg && e.dirty && e.count >= self.migrate_count && self.dram_cap > 0 {
                // Figure 2(a): migrate to DRAM's MRU end; 2(c): DRAM's victim
                // takes the PCM frame this page frees.
                self.pcm.unlink(&mut self.entries, id);
                if self.dram.len() == self.dram_cap {
                    self.demote(sink);
                }
                self.entries[id as usize].tier = DRAM;
                self.dram.push_front(&mut self.entries, id);
                self.meter.migrate(sink, id, r.page(), PCM, DRAM);
                self.meter.hit(sink, r, DRAM);
            } else {
                // Figure 2(b).
                self.pcm.move_to_front(&mut self.entries, id);
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
        if tier == DRAM {
            if self.dram.len() == self.dram_cap {
                self.free_dram(sink);
            }
        } else if self.pcm.len() == self.pcm_cap {
            self.evict_from(PCM, sink);
        }
        let e = &mut self.entries[id as usize];
        *e = Entry {
            links: e.links,
            page: r.page(),
            owner: r.app(),
            count: 0,
            resident: true,
            tier,
            dirty: r.is_write(),
            kind: r.kind(),
        };
        let (list, entries) = self.parts(tier);
        list.push_front(entries, id);
        self.meter.miss(sink, r, tier);
    }

    fn event<S: Sink>(&mut self, e: &Event, _sink: &mut S) {
        self.meter.event(e);
    }

    fn grow(&mut self, n: usize) {
        if self.entries.len() < n {
            self.entries.resize(n, EMPTY);
        }
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
