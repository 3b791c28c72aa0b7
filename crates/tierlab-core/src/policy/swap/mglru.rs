//! Linux's multi-generational LRU (MGLRU, `CONFIG_LRU_GEN`, since Linux 6.1),
//! as in mm/vmscan.c ("multigenerational LRU" section), mm/workingset.c
//! (`lru_gen_eviction`, `lru_gen_refault`), mm/swap.c (`lru_gen_inc_refs`,
//! `folio_add_lru`) and include/linux/mm_inline.h (`lru_gen_folio_seq`,
//! `lru_tier_from_refs`) of Linux 6.14-6.18, where the "rework refs" series
//! put `PG_referenced` in front of the refs counter. Read: mm/vmscan.c and
//! mm/workingset.c at torvalds/linux 00c010e1; quoted from the same series:
//! `lru_gen_folio_seq`, `lru_gen_inc_refs`; not read, followed from their
//! callers (`walk_update_folio`) and the `LRU_REFS_FLAGS` description: the
//! MGLRU branch of `folio_check_references` and `lru_gen_set_refs`. Design:
//! Documentation/mm/multigen_lru.rst; knobs:
//! Documentation/admin-guide/mm/multigen_lru.rst. Issue 19.
//!
//! Followed kernel logic, by mechanism:
//!
//! * **Generations** (Documentation/mm/multigen_lru.rst): pages of each type
//!   (anon = 0, file = 1, `LRU_GEN_ANON`/`LRU_GEN_FILE`) are in generations
//!   numbered by sequence numbers; `max_seq` (the youngest) is shared by both
//!   types, `min_seq[type]` (the oldest) is per type. Between
//!   `MIN_NR_GENS` = 2 and `MAX_NR_GENS` = 4 generations exist per type; a
//!   page's generation is `seq % MAX_NR_GENS`. Start: `max_seq` = 3,
//!   `min_seq` = 0 (`lru_gen_init_lruvec`).
//! * **Placement** (`lru_gen_folio_seq`): a page faulted in is active
//!   (`folio_add_lru` sets PG_active in a fault), so it joins `max_seq - 1`,
//!   or `max_seq` when it is a refaulting working-set page; a page-cache
//!   page added by read() joins the oldest generation (`max_seq - 3`,
//!   clamped to `min_seq`), or `max_seq - 2` with PG_workingset.
//! * **Accesses.** Through page tables (mapped pages, the default): the MMU
//!   sets the young bit; the kernel sees it only in the aging walk or when
//!   eviction walks the rmap. Through file descriptors (`file_access =
//!   "read"`): `folio_mark_accessed` -> `lru_gen_inc_refs`: the first sets
//!   PG_referenced, each further one increments the 2-bit refs counter
//!   (`LRU_REFS_WIDTH` = 2) and once it is full sets PG_workingset. `refs`
//!   (`folio_lru_refs`) is the number of such accesses, 0..=4.
//! * **Tiers** (mmzone.h on MAX_NR_TIERS; `lru_tier_from_refs`): tier =
//!   3 with PG_workingset, else `order_base_2(refs)`: 0-1 accesses tier 0,
//!   2 tier 1, 3-4 tier 2.
//! * **Aging** (`try_to_inc_max_seq`, `walk_mm`, `walk_update_folio`,
//!   `folio_update_gen`, `inc_max_seq`): when eviction is no longer possible
//!   (`should_run_aging`: the evictable `min_seq + MIN_NR_GENS > max_seq`),
//!   the page-table walk visits every young mapped page and clears its young
//!   bit: a page with neither PG_referenced nor PG_workingset only gets
//!   PG_referenced; any other is promoted to the current `max_seq`
//!   generation with PG_workingset set and its refs cleared. Then
//!   `inc_max_seq` first makes room in a type that already has
//!   MAX_NR_GENS generations (`inc_min_seq`: its oldest pages move to the
//!   next generation, counted as protected), stamps the new generation's
//!   birth time (`timestamps`) and increments `max_seq`.
//! * **Eviction** (`evict_folios`, `isolate_folios`, `scan_folios`,
//!   `sort_folio`, `shrink_folio_list` / `folio_check_references` with
//!   `lru_gen_set_refs`): the type is chosen by `get_type_to_scan`, falling
//!   back to the other type when the chosen one has only MIN_NR_GENS
//!   generations; the tier cut-off by `get_tier_idx`. The tail of the type's
//!   oldest generation is examined: a page in a tier above the cut-off (or
//!   with full refs and PG_workingset) is *protected*: moved to
//!   `min_seq + 1` with its refs cleared (`folio_inc_gen`). Otherwise it is
//!   isolated (refs cleared unless PG_referenced) and its young bit tested:
//!   not young -> reclaimed (dirty anon written to swap, dirty file pages
//!   to the file store); young with PG_referenced or PG_workingset ->
//!   activated (PG_workingset, to `max_seq`); young otherwise -> PG_referenced
//!   and kept (to `max_seq - 1`: "don't add rejected folios to the oldest
//!   generation"). A generation left empty is retired (`try_to_inc_min_seq`,
//!   including its rule that keeps anon and file within MIN_NR_GENS of each
//!   other), which folds the PID controller's counts into its averages.
//! * **Refault feedback** (`lru_gen_eviction`, `lru_gen_test_recent`,
//!   `lru_gen_refault`; the PID controller of mm/vmscan.c: `read_ctrl_pos`,
//!   `reset_ctrl_pos`, `positive_ctrl_err`, `get_tier_idx`,
//!   `get_type_to_scan`): an eviction counts in `evicted[type][tier]` and
//!   leaves a shadow with the type's `min_seq`, the refs and PG_workingset; a
//!   refault is *recent* when `max_seq` is within MAX_NR_GENS of the shadow's
//!   sequence, and then counts in `refaulted[type][tier]` and restores
//!   PG_workingset. Each time `min_seq` advances, the counts are halved into
//!   `avg_refaulted` / `avg_total` (the I term; `NR_HIST_GENS` = 1 without
//!   `CONFIG_LRU_GEN_STATS`). `positive_ctrl_err(sp, pv)`: `pv.refaulted <
//!   MIN_LRU_BATCH (64) || pv.refaulted * (sp.total + 64) * sp.gain <=
//!   (sp.refaulted + 1) * pv.total * pv.gain`. Tiers: SP = tier 0 (gain 2),
//!   PV = tier 1, 2, 3 in turn (gain 3); the cut-off is the tier before the
//!   first PV with a higher refault rate. Types: SP = every tier of anon
//!   (gain `swappiness`), PV = every tier of file (gain `200 - swappiness`);
//!   file is scanned when its error is positive; swappiness <= 1 scans file
//!   only, 200 anon only (and 0 never evicts anon).
//! * **min_ttl** (`lru_gen_age_node`, `lruvec_is_reclaimable`; commit
//!   1332a809 "mm: multi-gen LRU: thrashing prevention"): with `min_ttl` > 0, when the oldest evictable
//!   generation was born less than `min_ttl` ago, kswapd invokes the OOM
//!   killer instead of letting the working set of the last `min_ttl` be
//!   evicted. A page trace has no process to kill, so the policy counts
//!   these trips (`min_ttl_oom`) and evicts anyway; `working_set_protected`
//!   answers the same question for a simulator that can kill (the mobile
//!   session). `min_ttl` is in trace time units (ns for timestamped traces,
//!   references otherwise); the kernel's knob is `min_ttl_ms` (default 0,
//!   off; that commit: "N=1000 usually eliminates intolerable lags").
//!
//! Simplified, and why:
//! * One page is examined per eviction step (the kernel isolates up to
//!   MIN_LRU_BATCH = 64 pages, then runs `shrink_folio_list`); with
//!   `reclaim_batch` > 1 reclaim frees that many pages per round, as in
//!   `linux-two-list`. The PID controller is consulted every step, so its
//!   decisions see each eviction at once rather than once per batch. (The
//!   memory-cgroup reclaim of `version = "6.1"` isolates whole batches:
//!   below.)
//! * Aging runs only when it must (fewer than three generations of the
//!   evictable types), except in the memory-cgroup reclaim of
//!   `version = "6.1"` with `reclaim_batch` > 1 (`mglru/memcg.rs`), where
//!   the priority passes age at three generations as `get_nr_to_scan` does.
//! * The aging walk visits exactly the young pages; the kernel's
//!   (`walk_pmd_range`) also skips a PTE table whose previous walk found
//!   fewer than one young entry in eight (its Bloom filter), leaving those
//!   young pages to eviction's rmap walk. It moves pages to their new
//!   generation at once instead of lazily at `sort_folio` time, so the
//!   order within a generation can differ.
//!   `lru_gen_look_around` (promoting the young neighbours of a young page
//!   found by eviction) is modelled for `version = "6.1"` and `"6.12"` only
//!   (below); in the default rules the neighbours wait for the next aging
//!   walk.
//! * Dirty file pages are written back when evicted with the default
//!   `writeback = "evict"` (as `linux-two-list`'s). The kernel's reclaim
//!   never writes a file page: with `writeback = "flusher"` 6.1's
//!   `sort_folio` moves it a generation up, 6.12's `shrink_folio_list`
//!   activates it with PG_reclaim, and the flusher's write sends it to the
//!   oldest generation; the flusher runs when 6.12's reclaim wakes it, or
//!   when the kernel's recorded writes say (`written_at`):
//!   `mglru/writeback.rs`.
//! * `lru_gen_refault` also restores the refs counter, but without
//!   PG_referenced, so the next `lru_gen_inc_refs` (or the isolation)
//!   clears it again; only PG_workingset is restored here.
//! * If the controller protects every page of every generation (all
//!   PG_workingset, tier 3 protected), the kernel relies on its counts
//!   shifting and on priorities; here, after a bounded number of steps
//!   without freeing a page, the tail of the oldest generation is reclaimed
//!   regardless (`forced`, a counter that stays 0 in the tests).
//! * Swap is assumed available; memory cgroups, zones, large folios,
//!   `swappiness` 201 (anon only, SWAPPINESS_ANON_ONLY) are not modelled.
//!
//! **`version = "6.1"`**: the MGLRU of Linux 6.1 to 6.11, before the
//! "rework refs" series (read: Debian's linux-source-6.12 6.12.117 and
//! linux-source-6.1 6.1.192; the rules below are the same in both);
//! **`version = "6.12"`** (6.12 and 6.13) differs from it only for dirty
//! file pages with `writeback = "flusher"` (6.12's `sort_folio` lets them
//! through to `shrink_folio_list`). (6.12's `lru_gen_add_folio` also clears
//! the refs counter and PG_referenced of a page it adds active, where 6.1
//! keeps a refault's refs = 4; the aging walk here reads every young page
//! and clears them first, so both give the same counts. The kernel's walk
//! skips PTE tables and mms: docs/kernel-check.md, `anon_loop@16MiB` on
//! 6.1.) What differs from the default, by function:
//! * `folio_inc_refs` (mm/swap.c): the first read() access sets
//!   PG_referenced, the second PG_workingset, each further one increments
//!   the 2-bit counter (up to 3); `folio_lru_refs` (mm_inline.h) = counter +
//!   PG_workingset, tier = `order_base_2(refs + 1)` (`lru_tier_from_refs`):
//!   1 access tier 0, 2 tier 1, 3-4 tier 2, 5 or more tier 3.
//! * `lru_gen_add_folio` (mm_inline.h; there is no `lru_gen_folio_seq`): an
//!   active page (a fault) joins `max_seq`; a page-cache page added by read()
//!   joins `min_seq + 1`, or `min_seq` when its type has only MIN_NR_GENS
//!   generations.
//! * `sort_folio` (mm/vmscan.c): protected when tier > the cut-off or refs
//!   = 4; `folio_inc_gen` then clears the counter, PG_referenced and
//!   PG_workingset (LRU_REFS_FLAGS), and `list_move_tail` puts the page at
//!   the end of `min_seq + 1` that is scanned first (the default rules put
//!   it at the other end); every protected page counts in `protected`. `inc_min_seq` moves the oldest generation's pages the same
//!   way and counts none.
//! * `isolate_folio`: without PG_referenced the counter and PG_workingset
//!   are cleared; PG_referenced is cleared either way.
//! * `lru_gen_eviction` / `lru_gen_refault` (mm/workingset.c): the shadow
//!   keeps refs; a refault is recent only when the shadow's `min_seq` is
//!   the type's current one (`lru_gen_test_recent`); a recent refault counts in `refaulted[tier(refs)]` and,
//!   in a fault or with refs >= 3, sets the counter full and PG_workingset
//!   (refs = 4: protected at the next sort); the page is placed by the rule
//!   above (no PG_active from a refault).
//! * `try_to_inc_min_seq`: with swap, anon's `min_seq` is never ahead of
//!   file's and file's waits at anon's (`min_seq[file] = max(min_seq[anon],
//!   min_seq[file])`), even over an empty file generation; `isolate_folios`
//!   scans anon first when its `min_seq` is behind file's.
//! * With `reclaim_batch` > 1, memory-cgroup reclaim (`do_try_to_free_pages`
//!   priority passes, `try_to_shrink_lruvec`, `get_nr_to_scan`,
//!   `should_run_aging`, `evict_folios` batches): `mglru/memcg.rs`.
//! * `get_type_to_scan` compares the first tiers of anon and file (gains
//!   `swappiness` : `200 - swappiness`) and gives the chosen type's cut-off
//!   (its tiers 1-3 against the other's first); `get_tier_idx` at gains
//!   1:2 (`Mglru::isolate_type`).
//!
//! * `lru_gen_look_around` (mm/vmscan.c; called from `folio_referenced_one`
//!   when eviction's rmap walk finds a young PTE): the PTEs around it, up to
//!   MIN_LRU_BATCH (64) pages of the same PTE table (PTRS_PER_PMD = 512
//!   pages, aligned), are scanned too, and each young page there loses its
//!   young bit and is activated (`folio_clear_lru_refs`, `folio_activate`:
//!   `max_seq`), or, when it is isolated in the same batch, gets
//!   PG_referenced, which `shrink_folio_list` keeps ("folio_update_gen()
//!   tried to promote this page?"). Memory-cgroup reclaim has no page-table
//!   walk at hand (`set_mm_walk(NULL, sc->proactive)`), so this is the
//!   `folio_activate` branch. Page numbers stand for virtual addresses
//!   (one mapping; a trace has no VMAs): the neighbours of page n are the
//!   resident pages of its type numbered within the window. With
//!   `reclaim_batch` > 1 `evict_folios` isolates its batch first
//!   (`scan_folios`: up to MIN_LRU_BATCH pages) and then runs
//!   `shrink_folio_list` on it in order, so a young page found by the
//!   look-around counts as isolated when it is in the batch and is skipped
//!   by the scan (promoted) otherwise: per batch the kernel swaps out the
//!   cold pages among the next 64 not yet promoted. Cost: a hash map of the
//!   resident mapped pages (an insert per fault, a removal per eviction)
//!   and up to 64 look-ups per young page eviction finds.
//! * Mapped pages (young bits): the aging walk (`folio_update_gen`) moves
//!   every young page to `max_seq` with its refs counter, PG_referenced and
//!   PG_workingset cleared; eviction that finds a page young
//!   (`folio_check_references`, then `evict_folios`) puts it in `max_seq`
//!   the same way (PG_active, LRU_REFS_MASK and LRU_REFS_FLAGS cleared).

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, NIL};
use crate::policy::swap::linux_two_list::{FileAccess, Writeback};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::{Kind, Op};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// MIN_NR_GENS / MAX_NR_GENS (include/linux/mmzone.h).
pub const MIN_NR_GENS: u64 = 2;
pub const MAX_NR_GENS: u64 = 4;
/// MAX_NR_TIERS (include/linux/mmzone.h).
pub const MAX_NR_TIERS: usize = 4;
/// MIN_LRU_BATCH = BITS_PER_LONG (64-bit).
const MIN_LRU_BATCH: u64 = 64;
/// BIT(LRU_REFS_WIDTH): the most accesses through file descriptors counted.
const MAX_REFS: u8 = 4;
const MAX_SWAPPINESS: u64 = 200;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MglruConfig {
    /// vm.swappiness, 0..=200 (kernel default 60).
    pub swappiness: u32,
    /// How file pages are referenced: "mapped" (through page tables; "exec"
    /// is accepted and means the same, MGLRU has no VM_EXEC rule) or "read"
    /// (read()/write() system calls, counted in tiers).
    pub file_access: FileAccess,
    /// The thrashing guard /sys/kernel/mm/lru_gen/min_ttl_ms, in trace time
    /// units; 0 = off (the kernel default).
    pub min_ttl: u64,
    /// Pages freed per reclaim round (1, or 32 as a memory cgroup does).
    pub reclaim_batch: u32,
    /// Which kernel's MGLRU: "6.14" (6.14-6.18, the default), "6.12" (6.12
    /// and 6.13) or "6.1" (6.1-6.11); the last two before the "rework refs"
    /// series (see the module doc).
    pub version: MglruVersion,
    /// The swap device is synchronous (zram, brd: SWP_SYNCHRONOUS_IO), so a
    /// swap-in does not keep the page's swap slot and the page is written
    /// again when it is next evicted (as `linux-two-list`'s `sync_swap`).
    pub sync_swap: bool,
    /// Dirty file pages at reclaim: "evict" (default: written back and
    /// reclaimed at once) or "flusher" (the kernel's: reclaim never writes a
    /// file page; `mglru/writeback.rs`).
    pub writeback: Writeback,
    /// With `writeback = "flusher"`: the flusher's writes as a kernel
    /// recorded them, `[[ref, first_page, pages], ...]` ascending by `ref`:
    /// before reference `ref` (0-based) the file pages `first_page ..
    /// first_page + pages` are written back. The flusher is then not woken
    /// by the model's reclaim.
    pub written_at: Option<Vec<[u64; 3]>>,
}

/// The kernel versions whose MGLRU differs in a way the model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MglruVersion {
    /// Linux 6.1 to 6.11.
    #[serde(rename = "6.1")]
    V6_1,
    /// Linux 6.12 and 6.13: 6.1's rules but for dirty file pages.
    #[serde(rename = "6.12")]
    V6_12,
    /// Linux 6.14 to 6.18.
    #[default]
    #[serde(rename = "6.14")]
    V6_14,
}

impl Default for MglruConfig {
    fn default() -> Self {
        MglruConfig {
            swappiness: 60,
            file_access: FileAccess::Mapped,
            min_ttl: 0,
            reclaim_batch: 1,
            version: MglruVersion::V6_14,
            sync_swap: false,
            writeback: Writeback::Evict,
            written_at: None,
        }
    }
}

const YOUNG: u8 = 1;
const WORKINGSET: u8 = 2;
const DIRTY: u8 = 4;
const ANON: u8 = 8;
/// PG_referenced, kept apart from the counter (`version = "6.1"` only).
const REFERENCED: u8 = 16;
/// Isolated by `scan_folios`, not yet through `shrink_folio_list` (a batch
/// of memory-cgroup reclaim with `version = "6.1"`).
const ISOLATED: u8 = 32;
/// PG_reclaim on a dirty file page reclaim passed over (`writeback =
/// "flusher"`): its write-back moves it to the oldest generation.
const RECLAIM: u8 = 64;

const NO_SHADOW: u64 = u64::MAX;

#[derive(Debug, Clone, Copy)]
struct PageState {
    node: u32,
    /// Generation slot, `seq % MAX_NR_GENS` (valid while resident).
    gen: u8,
    flags: u8,
    /// Accesses through file descriptors, 0..=4 (`folio_lru_refs`): 0 =
    /// no PG_referenced.
    refs: u8,
    page: u64,
    /// Shadow: the type's `min_seq` at eviction, or NO_SHADOW.
    shadow_seq: u64,
    shadow_refs: u8,
    shadow_ws: bool,
}

impl Default for PageState {
    fn default() -> Self {
        PageState {
            node: NIL,
            gen: 0,
            flags: 0,
            refs: 0,
            page: 0,
            shadow_seq: NO_SHADOW,
            shadow_refs: 0,
            shadow_ws: false,
        }
    }
}

/// `lru_tier_from_refs`.
#[inline]
pub fn tier_from_refs(refs: u8, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else {
        // order_base_2: ceil(log2(refs)), 0 for 0 and 1.
        match refs {
            0 | 1 => 0,
            2 => 1,
            _ => 2,
        }
    }
}

/// `lru_tier_from_refs` of 6.1-6.13: `order_base_2(refs + 1)`, refs =
/// counter + PG_workingset (0..=4).
#[inline]
pub fn tier_from_refs_6_1(refs: u8) -> usize {
    match refs {
        0 => 0,
        1 => 1,
        2 | 3 => 2,
        _ => 3,
    }
}

pub use ctrl::{positive_ctrl_err, CtrlPos};

pub struct Mglru {
    cap: usize,
    swappiness: u64,
    fd_access: bool,
    min_ttl: u64,
    reclaim_batch: usize,
    /// `version = "6.1"` or `"6.12"`: the rules of 6.1-6.13.
    v6_1: bool,
    /// `version = "6.1"`: `sort_folio` moves a dirty file page up a
    /// generation instead of isolating it.
    dirty_sort: bool,
    /// `writeback = "flusher"` and its state (`mglru/writeback.rs`).
    flusher: Option<Box<Flusher>>,
    /// `MglruConfig::sync_swap`.
    sync_swap: bool,
    max_seq: u64,
    min_seq: [u64; 2],
    /// Birth time of each generation slot.
    timestamps: [u64; MAX_NR_GENS as usize],
    /// lists[gen][type]: head = youngest position, tail = next to scan.
    lists: [[List; 2]; MAX_NR_GENS as usize],
    pages: Vec<PageState>,
    arena: Arena<u32>,
    resident: usize,
    /// Pages whose young bit was set since the last aging walk.
    young: Vec<u32>,
    /// `version = "6.1"`: resident pages accessed through page tables, by
    /// page number (with the anon bit), for `lru_gen_look_around`.
    mapped: FxHashMap<u64, u32>,
    /// The pages a memory-cgroup reclaim batch isolated (reused buffer).
    batch: Vec<u32>,
    /// PID controller state, per type and tier (NR_HIST_GENS = 1).
    refaulted: [[u64; MAX_NR_TIERS]; 2],
    evicted: [[u64; MAX_NR_TIERS]; 2],
    protected: [[u64; MAX_NR_TIERS]; 2],
    avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    avg_total: [[u64; MAX_NR_TIERS]; 2],
    now: u64,
    c_scanned: [u64; 2],
    c_reclaimed: [u64; 2],
    c_aging: u64,
    c_promoted: u64,
    c_protected: u64,
    c_activated: u64,
    /// Young pages `lru_gen_look_around` moved to `max_seq`.
    c_looked_around: u64,
    c_kept: u64,
    c_refaults: u64,
    c_refaults_recent: u64,
    c_min_ttl_oom: u64,
    c_forced: u64,
    /// No swap space (a simulator that owns the swap area says so): the
    /// kernel's `get_swappiness` is then 0. Always false in trace replay.
    swap_off: bool,
}

mod ctrl;
mod evict;
mod external;
mod gens;
mod memcg;
mod writeback;

use writeback::Flusher;

impl PolicyDef for Mglru {
    const NAME: &'static str = "mglru";
    const ALIASES: &'static [&'static str] = &["multi-gen-lru", "lru-gen"];
    const FAMILY: &'static str = "swap";
    const SUMMARY: &'static str = "Linux multi-generational LRU: generations per anon/file, \
         page-table aging, tiers by fd accesses, PID refault feedback, min_ttl \
         (mm/vmscan.c lru_gen, Documentation/mm/multigen_lru.rst).";
    type Config = MglruConfig;

    fn build(cfg: &MglruConfig, ctx: &PolicyCtx) -> Result<Self> {
        if cfg.swappiness > 200 {
            return Err(Error::config(format!(
                "policy 'mglru': swappiness must be in 0..=200, got {}",
                cfg.swappiness
            )));
        }
        if cfg.reclaim_batch == 0 {
            return Err(Error::config(
                "policy 'mglru': reclaim_batch must be at least 1",
            ));
        }
        let flusher = match cfg.writeback {
            Writeback::Evict => {
                if cfg.written_at.is_some() {
                    return Err(Error::config(
                        "policy 'mglru': written_at needs writeback = 'flusher'",
                    ));
                }
                None
            }
            Writeback::Flusher => Some(Box::new(Flusher::new(cfg.written_at.as_deref())?)),
        };
        Ok(Mglru {
            cap: ctx.capacity,
            swappiness: cfg.swappiness as u64,
            fd_access: cfg.file_access == FileAccess::Read,
            min_ttl: cfg.min_ttl,
            reclaim_batch: cfg.reclaim_batch as usize,
            v6_1: matches!(cfg.version, MglruVersion::V6_1 | MglruVersion::V6_12),
            dirty_sort: cfg.version == MglruVersion::V6_1,
            flusher,
            sync_swap: cfg.sync_swap,
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; 2],
            timestamps: [0; MAX_NR_GENS as usize],
            lists: [[List::default(); 2]; MAX_NR_GENS as usize],
            pages: Vec::new(),
            arena: Arena::with_capacity(ctx.capacity),
            resident: 0,
            young: Vec::new(),
            mapped: FxHashMap::default(),
            batch: Vec::new(),
            refaulted: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS]; 2],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            now: 0,
            c_scanned: [0; 2],
            c_reclaimed: [0; 2],
            c_aging: 0,
            c_promoted: 0,
            c_protected: 0,
            c_activated: 0,
            c_looked_around: 0,
            c_kept: 0,
            c_refaults: 0,
            c_refaults_recent: 0,
            c_min_ttl_oom: 0,
            c_forced: 0,
            swap_off: false,
        })
    }
}

/// The key of a page in `Mglru::mapped`: its number, with the type.
#[inline]
fn mapped_key(page: u64, anon: bool) -> u64 {
    page ^ ((anon as u64) << 63)
}

#[inline]
fn slot(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

impl Mglru {
    /// (max_seq, [min_seq anon, min_seq file]).
    pub fn seqs(&self) -> (u64, [u64; 2]) {
        (self.max_seq, self.min_seq)
    }

    /// The sequence number of a resident page's generation, or None.
    pub fn seq_of(&self, id: u32) -> Option<u64> {
        let p = self.pages.get(id as usize)?;
        if p.node == NIL {
            return None;
        }
        let t = (p.flags & ANON == 0) as usize;
        (self.min_seq[t]..=self.max_seq).find(|&s| slot(s) == p.gen as usize)
    }

    /// (refs, PG_workingset, young) of a resident page.
    pub fn page_refs(&self, id: u32) -> Option<(u8, bool, bool)> {
        let p = self.pages.get(id as usize)?;
        (p.node != NIL).then_some((p.refs, p.flags & WORKINGSET != 0, p.flags & YOUNG != 0))
    }

    /// Pages in generation `seq` of a type (0 anon, 1 file).
    pub fn gen_len(&self, seq: u64, file: bool) -> usize {
        if seq < self.min_seq[file as usize] || seq > self.max_seq {
            return 0;
        }
        self.lists[slot(seq)][file as usize].len()
    }

    /// Pages of a type's generation `seq`, oldest (next to scan) first.
    pub fn gen_pages(&self, seq: u64, file: bool) -> Vec<u64> {
        if seq < self.min_seq[file as usize] || seq > self.max_seq {
            return Vec::new();
        }
        let mut v: Vec<u64> = self.lists[slot(seq)][file as usize]
            .iter(&self.arena)
            .map(|n| self.pages[*self.arena.get(n) as usize].page)
            .collect();
        v.reverse();
        v
    }

    /// The tier cut-off `get_tier_idx` picks for a type now.
    pub fn tier_idx(&self, file: bool) -> usize {
        self.get_tier_idx(file as usize)
    }

    /// The type `get_type_to_scan` picks now (true = file).
    pub fn type_to_scan(&self) -> bool {
        self.isolate_type().0 == 1
    }

    /// (refaulted, evicted, protected) of a type's tier in the current
    /// generation (before averaging).
    pub fn ctrl_counts(&self, file: bool, tier: usize) -> (u64, u64, u64) {
        let t = file as usize;
        (
            self.refaulted[t][tier],
            self.evicted[t][tier],
            self.protected[t][tier],
        )
    }

    /// (avg_refaulted, avg_total) of a type's tier: the refault controller's
    /// history, as `lru_gen_full` prints it at `max_seq` (R, T).
    pub fn ctrl_avg(&self, file: bool, tier: usize) -> (u64, u64) {
        let t = file as usize;
        (self.avg_refaulted[t][tier], self.avg_total[t][tier])
    }

    /// Whether the min_ttl guard holds now: the oldest evictable generation
    /// was born less than `min_ttl` before `now` (`lruvec_is_reclaimable`
    /// false), so the kernel would OOM-kill rather than evict.
    pub fn working_set_protected(&self, now: u64) -> bool {
        if self.min_ttl == 0 || self.resident == 0 {
            return false;
        }
        let birth = self.timestamps[slot(self.evictable_min_seq())];
        now < birth.saturating_add(self.min_ttl)
    }

    /// A page's refs and tier as the version counts them: (refs, tier).
    #[inline]
    fn refs_tier(&self, p: &PageState) -> (u8, usize) {
        let ws = p.flags & WORKINGSET != 0;
        if self.v6_1 {
            let refs = p.refs + ws as u8;
            (refs, tier_from_refs_6_1(refs))
        } else {
            (p.refs, tier_from_refs(p.refs, ws))
        }
    }

    /// `get_swappiness`: 0 without swap space.
    fn swappiness(&self) -> u64 {
        if self.swap_off {
            0
        } else {
            self.swappiness
        }
    }

    fn anon_evictable(&self) -> bool {
        self.swappiness() > 0
    }

    /// `evictable_min_seq`: the oldest min_seq over the evictable types.
    fn evictable_min_seq(&self) -> u64 {
        if self.anon_evictable() {
            self.min_seq[0].min(self.min_seq[1])
        } else {
            self.min_seq[1]
        }
    }

    fn nr_gens(&self, t: usize) -> u64 {
        self.max_seq - self.min_seq[t] + 1
    }

    /// A page comes in (a miss): refault feedback from its shadow, then
    /// placement (`lru_gen_folio_seq`: `active` for a page faulted through
    /// page tables, else the oldest generation) and its first access (the
    /// young bit when `young`, else a read() access when `fd`).
    fn fault_in(&mut self, id: u32, page: u64, anon: bool, write: bool, fd: bool, active: bool) {
        self.fault_in_as(id, page, anon, write, fd, active, active);
    }

    #[allow(clippy::too_many_arguments)]
    fn fault_in_as(
        &mut self,
        id: u32,
        page: u64,
        anon: bool,
        write: bool,
        fd: bool,
        active: bool,
        young: bool,
    ) {
        let st = self.pages[id as usize];
        let t = !anon as usize;
        // What the refault gives back: PG_workingset and the refs counter.
        let (mut ws, mut refs) = (false, 0);
        if st.shadow_seq != NO_SHADOW {
            self.c_refaults += 1;
            // lru_gen_test_recent: 6.14 on, within MAX_NR_GENS of max_seq;
            // 6.1-6.13, evicted from the type's current min_seq.
            let recent = if self.v6_1 {
                st.shadow_seq == self.min_seq[t]
            } else {
                self.max_seq.abs_diff(st.shadow_seq) < MAX_NR_GENS
            };
            if recent {
                self.c_refaults_recent += 1;
                if self.v6_1 {
                    // 6.1-6.13 lru_gen_refault: the shadow keeps refs; in a
                    // fault or with refs >= BIT(LRU_REFS_WIDTH) - 1 the
                    // counter comes back full with PG_workingset.
                    self.refaulted[t][tier_from_refs_6_1(st.shadow_refs)] += 1;
                    if active || st.shadow_refs >= MAX_REFS - 1 {
                        (ws, refs) = (true, MAX_REFS - 1);
                    }
                } else {
                    let r = st.shadow_refs.max(1);
                    self.refaulted[t][tier_from_refs(r, st.shadow_ws)] += 1;
                    ws = st.shadow_ws;
                }
            }
        }
        let n = self.arena.alloc(id);
        {
            let p = &mut self.pages[id as usize];
            p.node = n;
            p.page = page;
            p.shadow_seq = NO_SHADOW;
            p.refs = refs;
            p.flags = if anon { ANON } else { 0 };
            if ws {
                p.flags |= WORKINGSET;
            }
        }
        // A swap-in from a synchronous device bypasses the swap cache and
        // frees the slot (do_swap_page: SWP_SYNCHRONOUS_IO with a swap count
        // of 1, then swap_free_nr): reclaim must write the page again
        // (add_to_swap dirties it). The swap-in path is the same with MGLRU
        // as with the two lists.
        if write || (anon && self.sync_swap && st.shadow_seq != NO_SHADOW) {
            self.set_dirty(id);
        }
        let seq = if self.v6_1 {
            // 6.1-6.13 lru_gen_add_folio: an active page joins max_seq; a
            // page added by read() min_seq + 1, or min_seq when its type is
            // down to MIN_NR_GENS generations; a refault sets no PG_active.
            if active {
                self.max_seq
            } else if self.min_seq[t] + MIN_NR_GENS >= self.max_seq {
                self.min_seq[t]
            } else {
                self.min_seq[t] + 1
            }
        } else if active {
            // lru_gen_folio_seq: a fault makes the page active.
            self.max_seq + 1 - (MIN_NR_GENS - ws as u64)
        } else {
            self.max_seq + 1 - (MAX_NR_GENS - ws as u64)
        };
        let seq = seq.max(self.min_seq[t]);
        self.link(id, seq, false);
        if self.v6_1 && !fd {
            self.mapped.insert(mapped_key(page, anon), id);
        }
        if young {
            self.set_young(id);
        } else if fd && !write {
            // filemap_read marks the new page accessed.
            self.inc_refs(id);
        }
        self.resident += 1;
    }

    /// Sets the young bit, remembering the page for the aging walk.
    #[inline]
    fn set_young(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        if p.flags & YOUNG == 0 {
            p.flags |= YOUNG;
            self.young.push(id);
        }
    }

    /// `lru_gen_inc_refs` (folio_mark_accessed); `folio_inc_refs` with
    /// `version = "6.1"`.
    fn inc_refs(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        if self.v6_1 {
            if p.flags & REFERENCED == 0 {
                p.flags |= REFERENCED;
            } else if p.flags & WORKINGSET == 0 {
                p.flags |= WORKINGSET;
            } else if p.refs < MAX_REFS - 1 {
                p.refs += 1;
            }
            return;
        }
        if p.refs < MAX_REFS {
            p.refs += 1;
        } else {
            p.flags |= WORKINGSET;
        }
    }
}

impl Policy for Mglru {
    /// Every reference reads its page's state, a 32-byte entry in an array indexed by page id
    /// (24 MB for a million pages): start loading it 16 references ahead.
    #[inline(always)]
    fn prefetch(&self, _near: PageId, far: PageId) {
        crate::policy::list::prefetch(&self.pages, far as usize);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if self.flusher.is_some() {
            self.writes_due(sink);
        }
        let st = self.pages[r.id as usize];
        let anon = r.kind() == Kind::Anon;
        let write = r.op() == Op::Write;
        let fd = self.fd_access && !anon;
        if st.node != NIL {
            if !fd {
                self.set_young(r.id);
            } else if !write {
                self.inc_refs(r.id);
            }
            if write {
                self.set_dirty(r.id);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        self.now = r.time();
        if self.resident >= self.cap {
            self.reclaim(sink);
        }
        self.fault_in(r.id, r.page(), anon, write, fd, !fd);
        sink.miss(r, 0);
    }

    crate::policy::swap::page_state_glue!();

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("scanned_anon", self.c_scanned[0]),
            ("scanned_file", self.c_scanned[1]),
            ("reclaimed_anon", self.c_reclaimed[0]),
            ("reclaimed_file", self.c_reclaimed[1]),
            ("aging", self.c_aging),
            ("promoted", self.c_promoted),
            ("protected", self.c_protected),
            ("activated", self.c_activated),
            ("looked_around", self.c_looked_around),
            ("kept", self.c_kept),
            ("refaults", self.c_refaults),
            ("refaults_recent", self.c_refaults_recent),
            ("min_ttl_oom", self.c_min_ttl_oom),
            ("forced", self.c_forced),
        ];
        if let Some(f) = &self.flusher {
            v.extend(f.counters());
        }
        v
    }
}
