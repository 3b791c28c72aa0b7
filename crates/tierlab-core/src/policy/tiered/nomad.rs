//! NOMAD: non-exclusive memory tiering via transactional page migration
//! (Xiang et al., OSDI 2024), as the selective-shadow-paging paper describes it
//! (section 3.1) and its public code does it (github lingfenghsiang/Nomad;
//! REFERENCE.md). [`NomadCore`] is shared with Selective Shadow Paging
//! (`ssp.rs`), which differs only in the shadow decision at promotion.
//!
//! - Hint faults on slow-tier pages only (the machine's NUMA scanner; a page's
//!   PTE is made inaccessible once per `scan_period` accesses).
//! - Promotion candidate queue (PCQ): on each hint fault the previous
//!   candidates are walked first (module `async_promote_main.c`,
//!   `decide_queue_page`): a candidate no longer on the slow tier is dropped; a
//!   young (accessed since the scanner last rewrote its PTE) and `PG_active`
//!   one is queued for migration and dropped; a young inactive one is marked
//!   accessed (referenced, then active) and kept; one beyond the look-back
//!   distance (`lookback`, `PG_FAULT_LOOKBACK_DIST` = 20) is dropped. Then
//!   the faulting page joins the head: referenced -> active -> queued.
//! - Migration pending queue: a ring of `pending_queue` (`PROMOTE_QUEUE_LEN`
//!   = 512) pages; a page already queued, or a full ring, is skipped
//!   (`queue_pages_for_promotion`). One worker drains it in order
//!   (`promote_work_handler`) on its own clock: each copy takes the page copy
//!   time, starting when the worker is free. A promotion fails, without
//!   reclaim, when the fast tier has no free frame
//!   (`alloc_promote_page` has no `__GFP_RECLAIM`).
//! - Transactional migration (patch, mm/migrate.c `nomad_transit_pages` /
//!   `__nomad_copy_and_remap`): the copy runs while the old page stays mapped
//!   and writable; later accesses of the trace happen during it, and a write
//!   to the page during the copy makes the commit find the PTE dirty: abort,
//!   and retry at once, up to `max_passes` passes (10 in the code).
//! - On commit the old slow frame is kept as the shadow of the new fast-tier
//!   master (`link_shadow_page`), which is mapped write-protected. The first
//!   write to the master is a write-protect fault that frees the shadow
//!   (`release_shadow_page`; a "shadow fault"), costing `shadow_fault_ns`. A
//!   write-protected master whose shadow was reclaimed still takes the fault
//!   (counted in `wp_faults` only).
//! - Demotion is TPP's (kswapd, watermark); a master that still has its shadow
//!   is demoted by remapping to the shadow, with no copy (`nomad_try_to_remap`).
//!   Shadows are reclaimed when the slow tier runs short (the machine).
//! - `shadow_faults` counts what the module's `write_protect_break_num` counts:
//!   `release_shadow_page` sets the counter only when the written master still
//!   had its shadow (`TestClearPageShadowed`), so a write to a master whose
//!   shadow was reclaimed is a `wp_faults` only.
//! - Every shadow's making and end (fault, reclaim, remap) is also counted
//!   under the page's history when it was made (`shadow_<event>_<class>`,
//!   machine `ShadowClass`), and the pages that took a shadow fault
//!   (`shadow_fault_pages`): which of NOMAD's shadows SSP's history can skip.

use super::machine::{flag, tier_config, Machine, ShadowEvent, TierParams, FAST, NO_TIER, SLOW};
use crate::error::{Error, Result};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use std::collections::VecDeque;
use std::marker::PhantomData;

/// NOMAD's own parameters, which SSP shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShadowParams {
    pub shadow_fault_ns: f64,
    pub pending_queue: usize,
    pub lookback: usize,
    pub max_passes: u32,
}

/// Defines a shadow-paging policy's config: the shared tier parameters, NOMAD's own keys (with
/// NOMAD's defaults) and any more the policy adds. The keys stay flat in TOML, so the config
/// repeats them rather than nesting [`ShadowParams`] (serde's `flatten` cannot be combined with
/// `deny_unknown_fields`).
macro_rules! shadow_paging_config {
    ($(#[$m:meta])* $name:ident { $($rest:tt)* }) => {
        tier_config!(
            $(#[$m])*
            $name {
                /// App time of a write-protect (shadow) fault, ns.
                shadow_fault_ns: f64 = 1500.0,
                /// Migration pending queue length (`PROMOTE_QUEUE_LEN`).
                pending_queue: usize = 512,
                /// PCQ look-back distance (`PG_FAULT_LOOKBACK_DIST`).
                lookback: usize = 20,
                /// Transactional migration passes before giving up.
                max_passes: u32 = 10,
                $($rest)*
            }
        );
        impl $name {
            pub fn shadow(&self) -> $crate::policy::tiered::nomad::ShadowParams {
                $crate::policy::tiered::nomad::ShadowParams {
                    shadow_fault_ns: self.shadow_fault_ns,
                    pending_queue: self.pending_queue,
                    lookback: self.lookback,
                    max_passes: self.max_passes,
                }
            }
        }
    };
}
pub(crate) use shadow_paging_config;

shadow_paging_config!(
    /// NOMAD parameters (shared tier parameters plus NOMAD's own).
    NomadConfig {}
);

#[derive(Debug, Clone, Copy)]
struct Job {
    id: PageId,
    end: f64,
    dirty: bool,
    passes: u32,
}

/// NOMAD's machinery; `selective` turns on SSP's shadow decision.
pub struct NomadCore {
    pub m: Machine,
    shadow_fault_ns: f64,
    pending_cap: usize,
    lookback: usize,
    max_passes: u32,
    /// SSP: keep a shadow at promotion only if `PG_fastdirty` is clear.
    selective: bool,
    /// SSP: also set `PG_fastdirty` on writes to fast pages that were never promoted.
    fastdirty_unpromoted: bool,
    pcq: VecDeque<PageId>,
    pcq_next: VecDeque<PageId>,
    pending: VecDeque<(PageId, f64)>,
    job: Option<Job>,
    worker_at: f64,
}

impl NomadCore {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        policy: &str,
        tier: TierParams,
        shadow: ShadowParams,
        ctx: &PolicyCtx,
        selective: bool,
        fastdirty_unpromoted: bool,
    ) -> Result<Self> {
        let ShadowParams {
            shadow_fault_ns,
            pending_queue,
            lookback,
            max_passes,
        } = shadow;
        if !(shadow_fault_ns.is_finite() && shadow_fault_ns >= 0.0) {
            return Err(Error::config(format!(
                "policy '{policy}': shadow_fault_ns must be a finite number >= 0, got {shadow_fault_ns}"
            )));
        }
        if pending_queue == 0 || max_passes == 0 {
            return Err(Error::config(format!(
                "policy '{policy}': pending_queue and max_passes must be >= 1"
            )));
        }
        Ok(NomadCore {
            m: Machine::new(policy, tier, ctx)?,
            shadow_fault_ns,
            pending_cap: pending_queue,
            lookback,
            max_passes,
            selective,
            fastdirty_unpromoted,
            pcq: VecDeque::new(),
            pcq_next: VecDeque::new(),
            pending: VecDeque::new(),
            job: None,
            worker_at: 0.0,
        })
    }

    /// Runs the promotion worker until its clock reaches the app's.
    fn advance_worker<S: Sink>(&mut self, sink: &mut S) {
        let now = self.m.now;
        loop {
            if let Some(j) = self.job {
                if j.end > now {
                    break;
                }
                self.job = None;
                self.worker_at = j.end;
                let i = j.id as usize;
                if self.m.tier[i] != SLOW {
                    // Swapped out meanwhile: release the reserved frame.
                    self.m.used[FAST as usize] -= 1;
                    self.m.clear(j.id, flag::QUEUED);
                    continue;
                }
                if j.dirty {
                    self.m.c.tx_aborts += 1;
                    if j.passes < self.max_passes {
                        self.job = Some(Job {
                            id: j.id,
                            end: j.end + self.m.copy_ns,
                            dirty: false,
                            passes: j.passes + 1,
                        });
                    } else {
                        self.m.c.tx_give_up += 1;
                        self.m.used[FAST as usize] -= 1;
                        self.m.clear(j.id, flag::QUEUED);
                    }
                    continue;
                }
                let keep = !self.selective || !self.m.has(j.id, flag::FASTDIRTY);
                self.m.commit_promotion(j.id, keep, sink);
                continue;
            }
            let Some((id, t)) = self.pending.pop_front() else {
                break;
            };
            let start = self.worker_at.max(t);
            if self.m.tier[id as usize] != SLOW {
                self.m.clear(id, flag::QUEUED);
                continue;
            }
            if !self.m.fast_has_room() {
                self.m.c.promote_fail += 1;
                self.m.clear(id, flag::QUEUED);
                self.worker_at = start;
                continue;
            }
            self.m.used[FAST as usize] += 1;
            self.job = Some(Job {
                id,
                end: start + self.m.copy_ns,
                dirty: false,
                passes: 1,
            });
        }
    }

    fn enqueue(&mut self, id: PageId) {
        if self.m.has(id, flag::QUEUED) || self.pending.len() >= self.pending_cap {
            return;
        }
        self.m.set(id, flag::QUEUED);
        self.pending.push_back((id, self.m.now));
    }

    /// `decide_queue_page`: walks the previous candidates, then adds `id`.
    fn decide_queue_page(&mut self, id: PageId) {
        let mut cands = std::mem::take(&mut self.pcq);
        self.pcq_next.clear();
        for (idx, &c) in cands.iter().enumerate() {
            if self.m.tier[c as usize] != SLOW {
                continue;
            }
            let young = self.m.has(c, flag::YOUNG);
            let active = self.m.has(c, flag::ACTIVE);
            if young && active {
                self.enqueue(c);
                continue;
            }
            if young {
                self.m.mark_accessed(c);
                self.pcq_next.push_back(c);
                continue;
            }
            if idx > self.lookback {
                continue;
            }
            self.pcq_next.push_back(c);
        }
        self.pcq_next.push_front(id);
        cands.clear();
        self.pcq = std::mem::replace(&mut self.pcq_next, cands);
    }

    pub fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.m.begin(r, true, sink);
        self.advance_worker(sink);
        let id = r.id;
        if self.m.tier[id as usize] == NO_TIER {
            if self.m.first_touch(r, sink).is_none() {
                sink.miss_bypass(r);
            }
            return;
        }
        if r.is_write() {
            if let Some(j) = self.job.as_mut() {
                if j.id == id {
                    j.dirty = true;
                }
            }
        }
        let t = self.m.tier[id as usize];
        if t == SLOW && self.m.has(id, flag::PROTNONE) {
            self.m.clear(id, flag::PROTNONE);
            self.m.c.hint_faults += 1;
            self.m.now += self.m.p.hint_fault_ns;
            self.decide_queue_page(id);
        }
        if t == FAST && r.is_write() {
            if self.m.has(id, flag::WP) {
                self.m.clear(id, flag::WP);
                self.m.c.wp_faults += 1;
                self.m.now += self.shadow_fault_ns;
                if self.m.has(id, flag::SHADOW) {
                    self.m.note_shadow(id, ShadowEvent::Fault);
                    self.m.drop_shadow(id);
                    self.m.c.shadow_faults += 1;
                }
            }
            self.m.note_fast_write(id);
            if self.selective && (self.fastdirty_unpromoted || self.m.has(id, flag::PROMOTED)) {
                self.m.set(id, flag::FASTDIRTY);
            }
        }
        self.m.hit(r, sink);
    }

    /// Pages waiting in the migration pending queue.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }
}

/// A shadow-paging policy: [`NomadCore`] under the name and shadow decision of
/// the marker `K` (NOMAD here, SSP in `ssp.rs`); the two differ only in how
/// they build the core.
// `fn() -> K`: the marker is never stored, so the policy is `Send` whatever `K` is.
pub struct ShadowPaging<K>(pub NomadCore, PhantomData<fn() -> K>);

impl<K> ShadowPaging<K> {
    pub(crate) fn new(core: NomadCore) -> Self {
        ShadowPaging(core, PhantomData)
    }
}

impl<K: 'static> Policy for ShadowPaging<K> {
    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.0.access(r, sink);
    }
    fn grow(&mut self, n: usize) {
        self.0.m.grow(n);
    }
    fn resident(&self) -> usize {
        self.0.m.resident()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.0.m.counters();
        v.extend(self.0.m.shadow_class_counters());
        v
    }
}

/// Marker of NOMAD's shadow decision: every promotion keeps a shadow.
pub enum NomadKind {}

/// NOMAD (see the module docs).
pub type Nomad = ShadowPaging<NomadKind>;

impl PolicyDef for Nomad {
    const NAME: &'static str = "nomad";
    const FAMILY: &'static str = "tiered";
    const SUMMARY: &'static str =
        "NOMAD (OSDI'24): asynchronous transactional promotion that keeps \
                                   the slow page as a shadow; remap demotion of shadowed pages.";
    type Config = NomadConfig;
    fn build(cfg: &NomadConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ShadowPaging::new(NomadCore::new(
            Self::NAME,
            cfg.tier(),
            cfg.shadow(),
            ctx,
            false,
            false,
        )?))
    }
}
