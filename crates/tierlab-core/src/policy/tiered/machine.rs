//! The two-tier memory machine the tiered policies (TPP, NOMAD, SSP, Memtis)
//! run on: tier 0 = fast DRAM, tier 1 = slow CXL DRAM / NVM.
//!
//! The machine keeps what the kernel keeps and the engine's sink does not:
//! where each page lives, the page flags the policies read (`PG_referenced`,
//! `PG_active`, the NUMA-hint `prot_none` PTE, the PTE accessed ("young")
//! bit, NOMAD's `PG_shadowed` and write protection, SSP's `PG_fastdirty`),
//! frames used per tier (shadow pages occupy slow-tier frames), the LRU of each
//! tier, and a model of time.
//!
//! # Time model
//! The trace is the program's page accesses in order; each access touches one
//! page (the NOMAD microbenchmark copies whole 4 KiB pages in and out). The app
//! clock `now` advances by the access cost of the page's tier (`fast_ns` /
//! `slow_ns`) plus the faults the access takes (hint fault, shadow fault) and
//! any synchronous migration (TPP). Background kernel threads (kswapd demoting,
//! NOMAD's promotion worker, Memtis' kmigrated) have their own clocks: their
//! work costs time on their own core and overlaps the app's accesses, and
//! their results (a freed fast frame, a committed copy) become visible only
//! when their clock passes the app's. A page copy takes `page_size /
//! migrate_gbps`; a remap takes `remap_ns`. Copies do not slow the app's own
//! accesses (no bandwidth contention is modeled; the paper's testbed has two
//! sockets with separate memory controllers). The sink is told of every access
//! (`hit`/`miss` with the page's tier) and every copy (`migrate`) or remap
//! (`remap`), so the engine's accounting charges its device costs as well;
//! the policy counters report the machine's own clock.
//!
//! # Allocation and demotion
//! A first touch allocates on the fast tier while it has more than
//! `alloc_watermark` x fast pages free, else on the slow tier (Linux falls back
//! to the next node of the zonelist below the low watermark). kswapd is woken
//! when fast free pages fall below `demote_watermark` x fast pages (NOMAD's
//! scripts set `demote_scale_factor` = 1000, i.e. 10%: mm/vmscan.c
//! `pgdat_toptier_balanced` of the NOMAD patch) and demotes cold pages until
//! the watermark holds again, chosen as Linux reclaim chooses them from its
//! two anon LRU lists ([`Machine::pick_victim`]): new pages start inactive,
//! promoted pages active; the active list is aged into the inactive list
//! regardless of references; a referenced inactive page is re-activated. When a
//! slow frame is needed and the slow tier has no more than `slow_reserve` x
//! slow pages free, shadow pages are reclaimed first, oldest first, in batches
//! of `shadow_reclaim_batch` (NOMAD module `reclaim_shadow_page`, called with 10
//! from the demotion path); if that is not enough a slow page is swapped out.

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::PolicyCtx;
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
use std::collections::BTreeSet;
use std::sync::OnceLock;

pub(crate) use super::params::tier_config;
pub use super::params::TierParams;

mod shadow;
pub use shadow::{hist, ShadowClass, ShadowEvent};

/// No tier: the page was never touched (or was swapped out).
pub const NO_TIER: u8 = u8::MAX;
pub const FAST: u8 = 0;
pub const SLOW: u8 = 1;

/// Page flags.
pub mod flag {
    /// `PG_referenced`.
    pub const REFERENCED: u16 = 1 << 0;
    /// `PG_active`.
    pub const ACTIVE: u16 = 1 << 1;
    /// PTE accessed bit, cleared when the NUMA scanner rewrites the PTE.
    pub const YOUNG: u16 = 1 << 2;
    /// PTE made inaccessible by the NUMA scanner: the next access is a hint fault.
    pub const PROTNONE: u16 = 1 << 3;
    /// NOMAD `PG_shadowed`: a fast-tier master with a shadow on the slow tier.
    pub const SHADOW: u16 = 1 << 4;
    /// Master mapped write-protected: the next write is a write-protect fault.
    pub const WP: u16 = 1 << 5;
    /// SSP `PG_fastdirty`.
    pub const FASTDIRTY: u16 = 1 << 6;
    /// In the migration pending queue (NOMAD `PagePromQueued`).
    pub const QUEUED: u16 = 1 << 7;
    /// Arrived on the fast tier by promotion (not by first touch).
    pub const PROMOTED: u16 = 1 << 8;
    /// Accessed since the fast-tier LRU last looked at it (second chance).
    pub const LRU_REF: u16 = 1 << 9;
    /// Written since it was last written to swap (for a correct evict report).
    pub const DIRTY: u16 = 1 << 10;
    /// On the fast tier's inactive LRU list (else its active list).
    pub const INACTIVE: u16 = 1 << 11;
}

/// Counters shared by the tiered policies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub promotions: u64,
    pub demotions: u64,
    pub hint_faults: u64,
    pub promote_fail: u64,
    pub demote_fail: u64,
    pub shadow_copies: u64,
    pub shadow_faults: u64,
    pub wp_faults: u64,
    pub shadow_reclaims: u64,
    pub shadow_remaps: u64,
    pub tx_aborts: u64,
    pub tx_give_up: u64,
    pub swapped_out: u64,
}

/// Most samples kept; when full, every other one is dropped and the stride doubles.
pub const MAX_SAMPLES: usize = 64;

fn sample_names() -> &'static [[&'static str; 3]] {
    static NAMES: OnceLock<Vec<[&'static str; 3]>> = OnceLock::new();
    NAMES.get_or_init(|| {
        (0..MAX_SAMPLES)
            .map(|i| {
                [
                    &*Box::leak(format!("sample_seq@{i:02}").into_boxed_str()),
                    &*Box::leak(format!("shadow_pages@{i:02}").into_boxed_str()),
                    &*Box::leak(format!("shadow_copies@{i:02}").into_boxed_str()),
                ]
            })
            .collect()
    })
}

/// The two-tier machine (see the module docs).
pub struct Machine {
    pub p: TierParams,
    /// Frames per tier.
    pub cap: [usize; 2],
    /// Frames used per tier (slow includes shadow frames).
    pub used: [usize; 2],
    pub shadows: usize,
    pub tier: Vec<u8>,
    pub flags: Vec<u16>,
    pageno: Vec<u64>,
    kind: Vec<Kind>,
    arena: Arena<PageId>,
    table: SlotTable,
    /// LRU lists: fast active, slow, fast inactive.
    pub lru: [List; 3],
    inactive_ratio: usize,
    reclaim_oldest: bool,
    /// Shadow index: (reclaim key, master), reclaimed in key order.
    shadow_index: BTreeSet<(u64, PageId)>,
    /// Reclaim key of each master's shadow.
    shadow_key: Vec<u64>,
    /// Each page's fast-tier history ([`hist`]).
    pub hist: Vec<u8>,
    /// Shadows by event and class ([`ShadowEvent`], [`ShadowClass`]).
    pub by_class: [[u64; 5]; 4],
    /// Pages that took at least one shadow fault.
    pub fault_pages: u64,
    /// App clock (ns).
    pub now: f64,
    /// Page copy time (ns).
    pub copy_ns: f64,
    kswapd_at: f64,
    kswapd_awake: bool,
    /// Whether kswapd demotes at the watermark (Memtis demotes on its own).
    pub kswapd: bool,
    scan_pos: usize,
    scan_acc: f64,
    pub c: Counters,
    t0: Option<f64>,
    measured: u64,
    page_size: u32,
    samples: Vec<[u64; 3]>,
    sample_stride: u64,
}

impl Machine {
    pub fn new(policy: &str, p: TierParams, ctx: &PolicyCtx) -> Result<Self> {
        let bad = |k: &str, v: f64| {
            Error::config(format!(
                "policy '{policy}': {k} must be a finite number >= 0, got {v}"
            ))
        };
        for (k, v) in [
            ("fast_ns", p.fast_ns),
            ("slow_ns", p.slow_ns),
            ("remap_ns", p.remap_ns),
            ("hint_fault_ns", p.hint_fault_ns),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(k, v));
            }
        }
        if !(p.migrate_gbps.is_finite() && p.migrate_gbps > 0.0) {
            return Err(Error::config(format!(
                "policy '{policy}': migrate_gbps must be > 0, got {}",
                p.migrate_gbps
            )));
        }
        for (k, v) in [
            ("demote_watermark", p.demote_watermark),
            ("alloc_watermark", p.alloc_watermark),
            ("slow_reserve", p.slow_reserve),
        ] {
            if !(v.is_finite() && (0.0..1.0).contains(&v)) {
                return Err(Error::config(format!(
                    "policy '{policy}': {k} must be in [0, 1), got {v}"
                )));
            }
        }
        if p.fast_pages == 0 {
            crate::policy::check_fraction(policy, "fast_share", p.fast_share)?;
        }
        if ctx.tiers < 2 {
            return Err(Error::config(format!(
                "policy '{policy}' needs a system with two memory tiers (fast, slow); got {}",
                ctx.tiers
            )));
        }
        // Tiny capacities (the conformance harness) may leave a tier empty:
        // first touches then go where there is room, demotions fail.
        let fast = if p.fast_pages > 0 {
            if p.fast_pages > ctx.capacity {
                return Err(Error::config(format!(
                    "policy '{policy}': fast_pages ({}) exceeds the capacity ({} pages)",
                    p.fast_pages, ctx.capacity
                )));
            }
            p.fast_pages
        } else {
            ((ctx.capacity as f64 * p.fast_share).round() as usize).min(ctx.capacity)
        };
        let page_size = ctx.page_size.max(1);
        Ok(Machine {
            copy_ns: page_size as f64 / p.migrate_gbps,
            p,
            cap: [fast, ctx.capacity - fast],
            used: [0, 0],
            shadows: 0,
            tier: Vec::new(),
            flags: Vec::new(),
            pageno: Vec::new(),
            kind: Vec::new(),
            arena: Arena::with_capacity(ctx.capacity),
            table: SlotTable::default(),
            lru: [List::default(), List::default(), List::default()],
            reclaim_oldest: p.reclaim_oldest,
            inactive_ratio: if p.inactive_ratio > 0 {
                p.inactive_ratio
            } else {
                let gb = fast as f64 * page_size as f64 / 1e9;
                ((10.0 * gb).sqrt() as usize).max(1)
            },
            shadow_index: BTreeSet::new(),
            shadow_key: Vec::new(),
            hist: Vec::new(),
            by_class: [[0; 5]; 4],
            fault_pages: 0,
            now: 0.0,
            kswapd_at: 0.0,
            kswapd_awake: false,
            kswapd: true,
            scan_pos: 0,
            scan_acc: 0.0,
            c: Counters::default(),
            t0: None,
            measured: 0,
            page_size,
            samples: Vec::new(),
            sample_stride: p.sample_every,
        })
    }

    pub fn grow(&mut self, n: usize) {
        if self.tier.len() < n {
            self.tier.resize(n, NO_TIER);
            self.flags.resize(n, 0);
            self.pageno.resize(n, 0);
            self.kind.resize(n, Kind::Anon);
            self.table.grow(n);
            self.shadow_key.resize(n, 0);
            self.hist.resize(n, 0);
        }
    }

    #[inline]
    pub fn has(&self, id: PageId, f: u16) -> bool {
        self.flags[id as usize] & f != 0
    }
    #[inline]
    pub fn set(&mut self, id: PageId, f: u16) {
        self.flags[id as usize] |= f;
    }
    #[inline]
    pub fn clear(&mut self, id: PageId, f: u16) {
        self.flags[id as usize] &= !f;
    }
    #[inline]
    pub fn free(&self, t: u8) -> usize {
        self.cap[t as usize] - self.used[t as usize]
    }
    pub fn resident(&self) -> usize {
        self.lru[0].len() + self.lru[1].len() + self.lru[2].len()
    }
    pub fn demote_target(&self) -> usize {
        (self.cap[0] as f64 * self.p.demote_watermark).ceil() as usize
    }
    fn alloc_reserve(&self) -> usize {
        (self.cap[0] as f64 * self.p.alloc_watermark).ceil() as usize
    }
    fn slow_reserve(&self) -> usize {
        (self.cap[1] as f64 * self.p.slow_reserve).ceil() as usize
    }
    /// Whether a promotion may take a fast frame now. Promotions allocate
    /// without reclaim down to the min watermark, which is below the
    /// allocation (low) watermark; we take it as 0: any free frame.
    pub fn fast_has_room(&self) -> bool {
        self.free(FAST) > 0
    }

    /// Start of every access: advance the NUMA hint scanner (when `scan`),
    /// kswapd, measurement and sampling. Call before handling `r`.
    pub fn begin<S: Sink>(&mut self, r: &PageRef, scan: bool, sink: &mut S) {
        if scan && self.p.scan_period > 0 {
            self.scan_acc += self.tier.len() as f64 / self.p.scan_period as f64;
            while self.scan_acc >= 1.0 {
                self.scan_acc -= 1.0;
                self.scan_one();
            }
        }
        self.run_kswapd(sink);
        if r.seq() >= self.p.measure_from {
            if self.t0.is_none() {
                self.t0 = Some(self.now);
            }
            self.measured += 1;
        }
        if self.sample_stride > 0 && r.seq().is_multiple_of(self.sample_stride) {
            if self.samples.len() == MAX_SAMPLES {
                let kept: Vec<[u64; 3]> = self.samples.iter().step_by(2).copied().collect();
                self.samples = kept;
                self.sample_stride *= 2;
            }
            if r.seq().is_multiple_of(self.sample_stride) {
                self.samples
                    .push([r.seq(), self.shadows as u64, self.c.shadow_copies]);
            }
        }
    }

    /// The NUMA hint scanner: only slow-tier PTEs are made inaccessible
    /// (NOMAD and TPP skip top-tier nodes when scanning, REFERENCE.md); the
    /// rewritten PTE loses its accessed bit.
    fn scan_one(&mut self) {
        let n = self.tier.len();
        if n == 0 {
            return;
        }
        if self.scan_pos >= n {
            self.scan_pos = 0;
        }
        let id = self.scan_pos as PageId;
        if self.tier[self.scan_pos] == SLOW {
            self.set(id, flag::PROTNONE);
            self.clear(id, flag::YOUNG);
        }
        self.scan_pos += 1;
    }

    /// Handles a first touch: allocates a frame and reports the miss. Returns
    /// the tier, or `None` if the page was resident already.
    pub fn first_touch<S: Sink>(&mut self, r: &PageRef, sink: &mut S) -> Option<u8> {
        if self.tier[r.id as usize] != NO_TIER {
            return None;
        }
        let t = if self.free(FAST) > self.alloc_reserve() {
            FAST
        } else if self.take_slow_frame(sink) {
            SLOW
        } else if self.free(FAST) > 0 || self.swap_out_fast(sink) {
            FAST
        } else {
            return None;
        };
        let i = r.id as usize;
        self.pageno[i] = r.page();
        self.kind[i] = r.kind();
        self.flags[i] = flag::YOUNG | flag::LRU_REF | if r.is_write() { flag::DIRTY } else { 0 };
        self.hist[i] = (self.hist[i] & hist::LOST) | if t == FAST { hist::BORN_FAST } else { 0 };
        self.place(r.id, t, true);
        if t == FAST {
            self.used[0] += 1;
        }
        sink.miss(r, t);
        self.now += self.access_ns(t);
        self.wake_kswapd_if_needed();
        Some(t)
    }

    /// Charges an ordinary access to a resident page and updates the bits the
    /// hardware sets. Returns the tier.
    #[inline]
    pub fn hit<S: Sink>(&mut self, r: &PageRef, sink: &mut S) -> u8 {
        let t = self.tier[r.id as usize];
        let mut f = flag::YOUNG | flag::LRU_REF;
        if r.is_write() {
            f |= flag::DIRTY;
        }
        self.set(r.id, f);
        sink.hit(r, t);
        self.now += self.access_ns(t);
        t
    }

    #[inline]
    pub fn access_ns(&self, t: u8) -> f64 {
        if t == FAST {
            self.p.fast_ns
        } else {
            self.p.slow_ns
        }
    }

    /// The LRU list `id` is on.
    #[inline]
    fn list_of(&self, id: PageId) -> usize {
        let t = self.tier[id as usize];
        if t == FAST && self.has(id, flag::INACTIVE) {
            2
        } else {
            t as usize
        }
    }

    /// Links `id` at the front of tier `t`'s LRU (on the fast tier: the
    /// inactive list when `inactive`, as Linux adds new anon pages, else the
    /// active list, where migrated pages with `PG_active` go) and sets its
    /// tier. Frame counts are the caller's business.
    fn place(&mut self, id: PageId, t: u8, inactive: bool) {
        let slot = self.table.get(id);
        let slot = if slot == NIL {
            let s = self.arena.alloc(id);
            self.table.set(id, s);
            s
        } else {
            let l = self.list_of(id);
            self.lru[l].unlink(&mut self.arena, slot);
            slot
        };
        let l = if t == FAST && inactive {
            self.set(id, flag::INACTIVE);
            2
        } else {
            self.clear(id, flag::INACTIVE);
            t as usize
        };
        self.lru[l].push_front(&mut self.arena, slot);
        self.tier[id as usize] = t;
    }

    /// Takes a free slow-tier frame, reclaiming shadows (then swapping out)
    /// when the slow tier is short. Returns false if none can be had.
    pub fn take_slow_frame<S: Sink>(&mut self, sink: &mut S) -> bool {
        if self.free(SLOW) <= self.slow_reserve() && self.shadows > 0 {
            self.reclaim_shadows(self.p.shadow_reclaim_batch.max(1));
        }
        if self.free(SLOW) == 0 && !self.swap_out_slow(sink) {
            return false;
        }
        self.used[1] += 1;
        true
    }

    /// Swaps out the coldest slow-tier page (memory over-committed).
    fn swap_out_slow<S: Sink>(&mut self, sink: &mut S) -> bool {
        let Some(slot) = self.lru[1].back() else {
            return false;
        };
        let id = *self.arena.get(slot);
        self.swap_out(id, sink);
        true
    }

    /// Swaps out a fast-tier page when the slow tier has no frame at all
    /// (tiny capacities): the demotion victim leaves memory.
    fn swap_out_fast<S: Sink>(&mut self, sink: &mut S) -> bool {
        match self.pick_victim() {
            Some(id) => {
                self.swap_out(id, sink);
                true
            }
            None => false,
        }
    }

    /// Evicts resident page `id` to swap (its shadow, if any, is freed).
    fn swap_out<S: Sink>(&mut self, id: PageId, sink: &mut S) {
        let i = id as usize;
        let t = self.tier[i];
        if self.has(id, flag::SHADOW) {
            self.drop_shadow(id);
        }
        let l = self.list_of(id);
        let slot = self.table.get(id);
        self.lru[l].unlink(&mut self.arena, slot);
        self.arena.release(slot);
        self.table.clear(id);
        sink.evict(PageOut {
            id,
            page: self.pageno[i],
            kind: self.kind[i],
            dirty: self.flags[i] & flag::DIRTY != 0,
            tier: t,
        });
        self.tier[i] = NO_TIER;
        self.flags[i] = 0;
        self.hist[i] = hist::LOST;
        self.used[t as usize] -= 1;
        self.c.swapped_out += 1;
    }

    /// Moves `id` from the slow tier to a fast frame the caller already
    /// counted in `used[0]`; `keep_shadow` keeps the old slow frame as a
    /// shadow, otherwise it is freed. Clears `PG_fastdirty` (SSP, 3.2).
    pub fn commit_promotion<S: Sink>(&mut self, id: PageId, keep_shadow: bool, sink: &mut S) {
        let i = id as usize;
        debug_assert_eq!(self.tier[i], SLOW);
        self.place(id, FAST, false);
        self.clear(id, flag::FASTDIRTY | flag::PROTNONE | flag::QUEUED);
        self.set(id, flag::PROMOTED | flag::LRU_REF);
        let h = self.hist[i];
        let class = ShadowClass::of(h);
        self.hist[i] = (h & (hist::BORN_FAST | hist::LOST | hist::FAULTED) | hist::PROMOTED_BEFORE)
            | (class as u8) << hist::CLASS_SHIFT;
        if keep_shadow {
            self.by_class[ShadowEvent::Copy as usize][class as usize] += 1;
            self.add_shadow(id);
        } else {
            self.used[1] -= 1;
        }
        self.c.promotions += 1;
        sink.migrate(id, self.pageno[i], SLOW, FAST);
        self.wake_kswapd_if_needed();
    }

    fn wake_kswapd_if_needed(&mut self) {
        if self.kswapd && !self.kswapd_awake && self.free(FAST) < self.demote_target() {
            self.kswapd_awake = true;
            self.kswapd_at = self.kswapd_at.max(self.now);
        }
    }

    /// kswapd: while awake and its clock is behind the app's, demote one cold
    /// fast page per step until the demotion watermark holds.
    pub fn run_kswapd<S: Sink>(&mut self, sink: &mut S) {
        while self.kswapd_awake && self.kswapd_at <= self.now {
            if self.free(FAST) >= self.demote_target() {
                self.kswapd_awake = false;
                break;
            }
            match self.demote_one(sink) {
                Some(cost) => self.kswapd_at += cost,
                None => {
                    self.kswapd_awake = false;
                    break;
                }
            }
        }
        if !self.kswapd_awake {
            self.wake_kswapd_if_needed();
        }
    }

    /// Picks a fast page to demote as Linux reclaim does with its two anon
    /// LRU lists: the active list is aged into the inactive list until the
    /// inactive list holds 1/(1 + `inactive_ratio`) of the fast pages
    /// (`shrink_active_list` deactivates anon pages whether referenced or not,
    /// clearing their accessed bits); the inactive tail is then reclaimed
    /// unless referenced since, which re-activates it
    /// (`page_check_references`: a referenced swap-backed page is activated).
    pub fn pick_victim(&mut self) -> Option<PageId> {
        let total = self.lru[0].len() + self.lru[2].len();
        let target = (total / (1 + self.inactive_ratio)).max(1);
        for _ in 0..=2 * total + 2 {
            while self.lru[2].len() < target {
                let Some(slot) = self.lru[0].pop_back(&mut self.arena) else {
                    break;
                };
                let id = *self.arena.get(slot);
                self.clear(id, flag::LRU_REF);
                self.set(id, flag::INACTIVE);
                self.lru[2].push_front(&mut self.arena, slot);
            }
            let slot = self.lru[2].back()?;
            let id = *self.arena.get(slot);
            if self.has(id, flag::LRU_REF) {
                self.clear(id, flag::LRU_REF | flag::INACTIVE);
                self.lru[2].unlink(&mut self.arena, slot);
                self.lru[0].push_front(&mut self.arena, slot);
            } else {
                return Some(id);
            }
        }
        None
    }

    /// Demotes one cold fast page; returns the time it took kswapd.
    fn demote_one<S: Sink>(&mut self, sink: &mut S) -> Option<f64> {
        let id = self.pick_victim()?;
        self.demote(id, sink)
    }

    /// Demotes `id`: a master with its shadow is remapped to the shadow with
    /// no copy (NOMAD `demote_shadow_page_find` / `nomad_try_to_remap`);
    /// otherwise it is copied to a new slow frame. `PG_fastdirty` is kept.
    /// Returns the time it took, or None if no slow frame could be had.
    pub fn demote<S: Sink>(&mut self, id: PageId, sink: &mut S) -> Option<f64> {
        let i = id as usize;
        debug_assert_eq!(self.tier[i], FAST);
        let cost = if self.has(id, flag::SHADOW) {
            // The shadow frame becomes the page again: slow `used` unchanged.
            self.shadow_index
                .remove(&(self.shadow_key[id as usize], id));
            self.shadows -= 1;
            self.clear(id, flag::SHADOW);
            self.c.shadow_remaps += 1;
            self.note_shadow(id, ShadowEvent::Remap);
            sink.remap(id, self.pageno[i], FAST, SLOW);
            self.p.remap_ns
        } else {
            if !self.take_slow_frame(sink) {
                self.c.demote_fail += 1;
                return None;
            }
            sink.migrate(id, self.pageno[i], FAST, SLOW);
            self.copy_ns
        };
        self.used[0] -= 1;
        self.place(id, SLOW, false);
        self.clear(
            id,
            flag::WP | flag::ACTIVE | flag::REFERENCED | flag::PROMOTED | flag::PROTNONE,
        );
        self.c.demotions += 1;
        Some(cost)
    }

    /// `mark_page_accessed`: an unreferenced page becomes referenced, a
    /// referenced one active.
    pub fn mark_accessed(&mut self, id: PageId) {
        if self.has(id, flag::ACTIVE) {
            return;
        }
        if self.has(id, flag::REFERENCED) {
            self.clear(id, flag::REFERENCED);
            self.set(id, flag::ACTIVE);
        } else {
            self.set(id, flag::REFERENCED);
        }
    }

    /// Modeled app time of the measured accesses (ns).
    pub fn measured_ns(&self) -> f64 {
        self.t0.map_or(0.0, |t| self.now - t)
    }

    /// The shared counters, with measured bandwidth and samples.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.c;
        let bytes = self.measured * self.page_size as u64;
        let ns = self.measured_ns();
        let mbps = if ns > 0.0 {
            (bytes as f64 / ns * 1000.0).round() as u64
        } else {
            0
        };
        let mut v = vec![
            ("promotions", c.promotions),
            ("demotions", c.demotions),
            ("hint_faults", c.hint_faults),
            ("promote_fail", c.promote_fail),
            ("demote_fail", c.demote_fail),
            ("shadow_copies", c.shadow_copies),
            ("shadow_faults", c.shadow_faults),
            ("wp_faults", c.wp_faults),
            ("shadow_reclaims", c.shadow_reclaims),
            ("shadow_remaps", c.shadow_remaps),
            ("tx_aborts", c.tx_aborts),
            ("tx_retries", c.tx_aborts - c.tx_give_up),
            ("tx_give_up", c.tx_give_up),
            ("swapped_out", c.swapped_out),
            ("shadow_pages_end", self.shadows as u64),
            ("fast_used_end", self.used[0] as u64),
            ("slow_used_end", self.used[1] as u64),
            ("measured_accesses", self.measured),
            ("measured_bytes", bytes),
            ("modeled_ns", ns.round() as u64),
            ("bandwidth_mb_s", mbps),
        ];
        let names = sample_names();
        for (k, s) in self.samples.iter().enumerate() {
            v.push((names[k][0], s[0]));
            v.push((names[k][1], s[1]));
            v.push((names[k][2], s[2]));
        }
        v
    }

    /// Checks the frame accounting (tests).
    pub fn check(&self) {
        let fast = self.tier.iter().filter(|&&t| t == FAST).count();
        let slow = self.tier.iter().filter(|&&t| t == SLOW).count();
        assert_eq!(self.lru[0].len() + self.lru[2].len(), fast);
        assert_eq!(self.lru[1].len(), slow);
        assert_eq!(self.shadow_index.len(), self.shadows);
        assert!(self.used[0] >= fast, "fast used {} < {fast}", self.used[0]);
        assert_eq!(self.used[1], slow + self.shadows);
        assert!(self.used[0] <= self.cap[0] && self.used[1] <= self.cap[1]);
    }
}
