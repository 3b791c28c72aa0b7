//! Linux's two-list page reclaim (the active/inactive LRU lists per type, as
//! in mm/vmscan.c and mm/workingset.c of Linux 5.9-6.x without MGLRU): the
//! baseline users compare with what their kernel does (issue 6; REFERENCE.md,
//! "Linux and Android reclaim").
//!
//! Four lists, anon and file, each inactive and active. References model
//! *mapped* pages: a reference sets the page's young (PTE accessed) bit, as
//! the MMU does; the kernel sees it only when reclaim tests and clears it
//! (`folio_referenced`). Followed kernel logic, by function:
//!
//! * fault (`lru_cache_add`, `workingset_refault`): a new page enters the head
//!   of its type's inactive list with the young bit set ("all mapped folios
//!   start out with page table references from the instantiating fault").
//!   A page with a shadow entry is a refault: its refault distance is the
//!   number of evictions and activations (`nonresident_age`) since it was
//!   evicted; if the distance fits the workingset size (`workingset_test_recent`:
//!   active file, plus inactive file for anon, plus active anon, plus inactive
//!   anon for file) it enters the active list and, if it had been active
//!   before eviction (PG_workingset), its type's reclaim cost grows by one I/O
//!   (`lru_note_cost_refault`).
//! * type balance (`get_scan_count`, SCAN_FRACT): anon and file are scanned in
//!   proportion to `size x ap` and `size x fp`, where, with
//!   `total = anon_cost + file_cost`,
//!   `ap = swappiness x (2 total + 1) / (total + anon_cost + 1)`
//!   and `fp = (200 - swappiness) x (2 total + 1) / (total + file_cost + 1)`;
//!   the costs are `lru_note_cost`'s `nr_io x SWAP_CLUSTER_MAX + nr_rotated`
//!   (32 per page written or refaulted, 1 per page kept or activated by the
//!   scan), halved when they exceed a quarter of the LRU pages. Swappiness 0
//!   scans only file pages.
//!
//!   `version = "6.1"`: Linux 6.1's `lru_note_cost(lruvec, file, nr_pages)`
//!   (mm/swap.c) adds one per page: `shrink_inactive_list` notes
//!   `stat.nr_pageout` only, `shrink_active_list` notes nothing, and a
//!   workingset refault one page (`lru_note_cost_folio`). Pages kept or
//!   activated by a scan are no cost there, so anonymous pages that rotate
//!   (young from their fault or a later use) do not turn reclaim toward file
//!   pages as they do from 6.12 (`nr_io x SWAP_CLUSTER_MAX + nr_rotated`,
//!   the default, `version = "6.12"`). `version = "6.17"`: from 6.17
//!   (`lru_note_cost_unlock_irq`, mm/swap.c) a note whose cost is 0 (a
//!   scan that freed every page it took, without I/O) returns before the
//!   decay; before, it halved both costs whenever they exceeded a quarter of
//!   the LRU pages, as every note does. This matters where that size is read
//!   stale (`stats_flush_at`, below: 0 before the group's first flush).
//! * active list (`shrink_active_list`, when `inactive_is_low`: inactive x
//!   ratio < active, ratio = int_sqrt(10 x GiB of the type) or 1 below 1 GiB):
//!   the tail page's young bit is tested and cleared; a young executable file
//!   page goes back to the active head; any other page is deactivated to the
//!   inactive head and marked workingset.
//! * inactive list (`shrink_folio_list` / `folio_check_references`): young and
//!   already PG_referenced, or young executable file -> activate; young ->
//!   set PG_referenced and keep (rotate to the inactive head); not young but
//!   PG_referenced file -> reclaim if clean, else keep; otherwise reclaim
//!   (dirty anon pages are written to swap, dirty file pages to the file
//!   store). The eviction leaves a shadow with the current `nonresident_age`.
//!
//!
//! How file pages are referenced (`file_access`):
//! * `exec` (default): mapped executable text, as instruction fetches of
//!   memory traces are (the VM_EXEC rules above apply);
//! * `mapped`: mapped data (young bit, no VM_EXEC rule);
//! * `read`: read()/write() system calls on an unmapped page cache, as a
//!   file server or database does, and as `tierlab kernel-check` drives the
//!   kernel (docs/kernel-check.md). A read marks the page accessed
//!   (`folio_mark_accessed`, called by `filemap_read` also right after a
//!   miss adds the page): the first sets PG_referenced, the second activates
//!   an inactive page (to the active head, PG_referenced cleared, and, as
//!   `workingset_activation`, one tick of `nonresident_age`). A write does
//!   not mark the page accessed: `generic_perform_write` gets the folio with
//!   FGP_WRITEBEGIN, which has no FGP_ACCESSED. At reclaim an unmapped page
//!   has no young bit, and PG_referenced alone does not save a clean file
//!   page (FOLIOREF_RECLAIM_CLEAN): use-twice, not second chance.
//!   Deactivation keeps PG_referenced, so the next read re-activates.
//!   A read of the page the previous read() of the file ended in is not
//!   marked again (`filemap_read`: "when a read accesses the same folio
//!   several times, only mark it as accessed the first time", tested with
//!   `pos_same_folio` against `ra->prev_pos - 1`, in 6.1 and 6.12 alike): a
//!   page read twice in a row is marked once. Writes and anonymous
//!   references in between do not move `prev_pos`.
//!
//! Dirty file pages at the inactive tail (`writeback`):
//! * `evict` (default): written back and reclaimed at once;
//! * `flusher`: as the kernel's direct and memcg reclaim does, which never
//!   writes file pages itself (`shrink_folio_list`: only kswapd may, and
//!   only when asked): the page is passed over and the flusher is woken
//!   (`wakeup_flusher_threads(WB_REASON_VMSCAN)`), which writes back every
//!   dirty file page (one bulk write-back); once clean, the page is reclaimed
//!   (`folio_rotate_reclaimable` puts it at the inactive tail when its write
//!   completes). Pages dirtied again are written again: the kernel's count of
//!   pages written is about the pages dirtied, not the dirty evictions.
//!
//! Swap-ins (`sync_swap`): on a swap file or disk a page swapped in by a
//! load stays in the swap cache with its slot (`do_swap_page` frees the slot
//! only for a write fault or a swap more than half full,
//! `should_try_to_free_swap`), so evicting it again, unless it was stored
//! to, writes nothing. On zram (SWP_SYNCHRONOUS_IO) `do_swap_page` reads the
//! page into a new folio outside the swap cache and frees the slot
//! (`swap_free_nr`), so the next eviction writes it again (`add_to_swap`
//! dirties the folio): with `sync_swap = true` a swapped-in page is dirty.
//!
//! Reclaim rounds (`reclaim_batch`): with the default 1, reclaim frees one
//! page per fault once memory is full, and an active list whose inactive
//! list is low is aged by one page per reclaim; the type scanned is chosen
//! page by page in get_scan_count's proportions. With `reclaim_batch = 32`
//! (SWAP_CLUSTER_MAX, what a memory cgroup's charge asks of
//! `try_to_free_mem_cgroup_pages`) a reclaim runs as `do_try_to_free_pages`
//! does: priority passes from DEF_PRIORITY (12) down, each scanning
//! `size >> priority` pages of each list (`get_scan_count`, in its integer
//! arithmetic), in rounds of at most 32 per list (`shrink_lruvec`), until the
//! passes together have reclaimed the batch; they often overshoot it (in a
//! 32 MiB group on `mixed_zipf` the kernel's passes ran at priorities 10..0,
//! mostly 9..5, and its `mm_vmscan_memcg_reclaim_end` counted 43 pages per
//! reclaim on average, most between 32 and 63). Each pass re-decides, as
//! `prepare_scan_control` does, `may_deactivate` per type (inactive list
//! low, or a refault activation of the type since the last reclaim:
//! `snapshot_refaults`) and `cache_trim_mode` (inactive file pages not
//! thrashing, `inactive_file >> priority` non-zero: `get_scan_count` then
//! scans file pages only, SCAN_FILE, so pages read once are reclaimed before
//! any anonymous page is swapped). So the first passes, while
//! `inactive_file >> priority` is still 0, balance by SCAN_FRACT and scan
//! (and may reclaim) a few anonymous pages before cache-trim mode holds.
//! An active list is scanned only when its type may deactivate
//! (`shrink_list`); after each pass the active anon list is aged by 32 if
//! its inactive list is low (`shrink_lruvec`). The cost of a batch is noted
//! once (`lru_note_cost(nr_pageout, nr_scanned - nr_reclaimed)`).
//!
//! Swap writes (`sync_swap`, with reclaim rounds): on a synchronous device
//! (zram, brd: SWP_SYNCHRONOUS_IO) `swap_writepage` completes the write at
//! once and the page is freed in the same scan. On a swap file or disk the
//! write is a bio (`swap_writepage_bdev_async`, submitted when
//! `shrink_folio_list` unplugs): the folio is still under writeback after
//! `pageout` returns, so it is kept (`goto keep`), put back at the inactive
//! head, counted as written (`nr_pageout`) but not reclaimed, and the round
//! scans on. When the write completes, `folio_end_writeback` sees PG_reclaim
//! and `folio_rotate_reclaimable` moves the clean folio to the inactive tail
//! through the CPU's rotation batch, which the next `lru_add_drain` empties;
//! the next scan frees it without writing. The model completes the writes at
//! the start of the next `shrink_inactive_list` (its `lru_add_drain`), in the
//! order written, skipping pages dirtied or reclaimed meanwhile: it takes a
//! write as done by then (tens of microseconds on a disk, against the rest of
//! the round's lists). On the host's swap file this moved mixed_zipf's swap
//! counts from +12..+18% to within 2.5% of the kernel's, with anon_loop's and
//! anon_zipf's unchanged; completing them only at the next reclaim instead
//! left the written pages at the inactive head for a whole reclaim and made
//! anon_loop miss 59% less than the kernel (docs/kernel-check.md). With
//! `reclaim_batch = 1` every swap write completes at once.
//!
//! The memory cgroup's statistics (`stats_flush_at`): reclaim reads the list
//! sizes and refault activations of `inactive_is_low`, `cache_trim_mode`,
//! `snapshot_refaults`, `workingset_test_recent`'s workingset size and
//! `lru_note_cost`'s decay (the LRU size) through `lruvec_page_state`, which
//! returns the group's counters as of their last rstat flush, not as they
//! are. The list sizes `get_scan_count` scans by
//! (`lruvec_lru_size`, the per-zone LRU sizes) are exact. Linux 6.1 flushes in
//! `prepare_scan_control` once 64 updates per CPU are pending
//! (`mem_cgroup_flush_stats`), so its statistics lag by a few dozen pages:
//! without `stats_flush_at` the model reads the lists as they are. From 6.8
//! (and in 6.12 and 6.18) `prepare_scan_control` and `workingset_test_recent`
//! call `mem_cgroup_flush_stats_ratelimited`, which flushes only when the
//! periodic flush (`flush_memcg_stats_dwork`, every 2 s, FLUSH_TIME) is a full
//! cycle late, so between the periodic flushes reclaim decides on statistics
//! up to 2 s old: in a fresh group, those of the empty group. With
//! `stats_flush_at = [i, ...]` (reference indices, ascending) the model starts
//! from the empty group's statistics and refreshes them before each listed
//! reference; `tierlab kernel-check` records where the kernel flushed (the
//! `memcg_flush_stats` tracepoint against the driver's clock) and passes them
//! (docs/kernel-check.md, "Statistics flushes"). The flush times are the
//! kernel's, measured per run, not a fitted parameter; without a kernel to
//! ask, a trace's timestamps give them (one flush every 2 s of the trace).
//!
//! Simplifications, documented: with `reclaim_batch = 1` one page is
//! examined per scan step, the type chosen by the proportions above (a type
//! with an empty inactive list yields to the other); `file_is_tiny`, the
//! per-CPU LRU batches, readahead, multiple mappings and large folios are not
//! modelled; shadow entries are never dropped.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, Arena, List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::{Kind, Op};
use serde::{Deserialize, Serialize};

/// How file pages are referenced (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileAccess {
    Exec,
    Mapped,
    Read,
}

/// What reclaim does with a dirty file page (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Writeback {
    Evict,
    Flusher,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxTwoListConfig {
    /// vm.swappiness, 0..=200 (kernel default 60).
    pub swappiness: u32,
    /// Older spelling: `file_exec = false` is `file_access = "mapped"`.
    pub file_exec: Option<bool>,
    /// How file pages are referenced: exec (default), mapped or read.
    pub file_access: Option<FileAccess>,
    /// Dirty file pages at reclaim: evict (default) or flusher.
    pub writeback: Writeback,
    /// Pages freed per reclaim round (1, or 32 as a memory cgroup does).
    pub reclaim_batch: u32,
    /// The swap device is synchronous (zram: SWP_SYNCHRONOUS_IO), so a
    /// swap-in does not keep the page's swap slot and the page is written
    /// again when it is next evicted; false (a swap file or disk): with
    /// `reclaim_batch` > 1 a swap write completes after the scan that issued
    /// it (see the module documentation).
    pub sync_swap: bool,
    /// Which kernel's reclaim cost: "6.12" (the default), "6.17" (6.17 and
    /// later) or "6.1" (see the module documentation).
    pub version: TwoListVersion,
    /// Reference indices (0-based, ascending) before which the memory
    /// cgroup's statistics are flushed; given, reclaim reads them as of the
    /// last flush, starting from the empty group's (see the module
    /// documentation). Absent: read as they are.
    pub stats_flush_at: Option<Vec<u64>>,
}

/// The kernel versions whose two-list reclaim differs in a way the model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TwoListVersion {
    /// Linux 6.1: `lru_note_cost` counts pages written and refaulted, one each.
    #[serde(rename = "6.1")]
    V6_1,
    /// Linux 6.12 and later: 32 per page written or refaulted, plus rotations.
    #[default]
    #[serde(rename = "6.12")]
    V6_12,
    /// Linux 6.17 and later: as 6.12, and a note of no cost leaves the costs
    /// as they are (`lru_note_cost_unlock_irq` returns before the decay).
    #[serde(rename = "6.17")]
    V6_17,
}

impl Default for LinuxTwoListConfig {
    fn default() -> Self {
        LinuxTwoListConfig {
            swappiness: 60,
            file_exec: None,
            file_access: None,
            writeback: Writeback::Evict,
            reclaim_batch: 1,
            sync_swap: false,
            version: TwoListVersion::V6_12,
            stats_flush_at: None,
        }
    }
}

impl LinuxTwoListConfig {
    fn access(&self) -> Result<FileAccess> {
        match (self.file_access, self.file_exec) {
            (Some(a), None) => Ok(a),
            (None, Some(false)) => Ok(FileAccess::Mapped),
            (None, _) => Ok(FileAccess::Exec),
            (Some(_), Some(_)) => Err(Error::config(
                "policy 'linux-two-list': give file_access or the older file_exec, not both",
            )),
        }
    }
}

/// SWAP_CLUSTER_MAX: the weight of one I/O in `lru_note_cost`, and the most
/// pages `shrink_lruvec` scans on one list per round.
const SWAP_CLUSTER_MAX: u64 = 32;

/// DEF_PRIORITY: reclaim's first pass scans `size >> 12` pages of each list.
const DEF_PRIORITY: u32 = 12;

const ACTIVE: u8 = 1;
const REFERENCED: u8 = 2;
const YOUNG: u8 = 4;
const DIRTY: u8 = 8;
const ANON: u8 = 16;
const WORKINGSET: u8 = 32;
/// Written to swap asynchronously, not yet rotated to the inactive tail.
const WRITEBACK: u8 = 64;

/// No shadow entry.
const NO_SHADOW: u64 = u64::MAX;

/// LRU list index as the kernel orders them.
const INACTIVE_ANON: usize = 0;
const ACTIVE_ANON: usize = 1;
const INACTIVE_FILE: usize = 2;
const ACTIVE_FILE: usize = 3;

#[inline]
fn lru(anon: bool, active: bool) -> usize {
    (if anon { 0 } else { 2 }) + active as usize
}

/// The statistics reclaim reads through the memory cgroup's rstat flush.
#[derive(Debug, Clone, Copy, Default)]
struct FlushedStats {
    /// Pages on each list.
    lists: [usize; 4],
    /// Refault activations of anon and file pages (WORKINGSET_ACTIVATE_*).
    activations: [u64; 2],
}

#[derive(Debug, Clone, Copy)]
struct PageState {
    node: u32,
    flags: u8,
    page: u64,
    /// `nonresident_age` at eviction, or NO_SHADOW.
    shadow: u64,
}

impl Default for PageState {
    fn default() -> Self {
        PageState {
            node: NIL,
            flags: 0,
            page: 0,
            shadow: NO_SHADOW,
        }
    }
}

pub struct LinuxTwoList {
    cap: usize,
    swappiness: u64,
    file_exec: bool,
    /// File references are read()/write() calls (FileAccess::Read).
    file_read: bool,
    flusher: bool,
    reclaim_batch: usize,
    /// A swap-in leaves the page without a swap copy (zram).
    sync_swap: bool,
    /// Swap writes complete after the `shrink_inactive_list` that issued them
    /// (a swap file or disk in reclaim rounds; see the module documentation).
    async_swap_write: bool,
    /// Pages written to swap asynchronously, in the order written.
    under_writeback: Vec<u32>,
    /// Swap writes issued asynchronously so far.
    c_async_writes: u64,
    /// Reclaim cost as 6.1 notes it (pages written and refaulted only).
    cost_v6_1: bool,
    /// A note of no cost skips the decay (6.17 and later).
    cost_skips_zero: bool,
    /// The page the last read() call read (`ra->prev_pos`), or u32::MAX.
    last_read: u32,
    /// Dirty file pages since the last flush (may hold evicted or cleaned ids).
    dirty_files: Vec<u32>,
    /// Refault activations per type (anon, file), and their value at the
    /// start of the last reclaim round.
    refault_activations: [u64; 2],
    refaults_snapshot: [u64; 2],
    /// Pages kept or activated by the current shrink_inactive_list batch
    /// (node, to the active list), put back after it.
    putback: Vec<(u32, bool)>,
    pages: Vec<PageState>,
    arena: Arena<u32>,
    lists: [List; 4],
    resident: usize,
    /// lruvec->anon_cost / file_cost.
    cost: [u64; 2],
    nonresident_age: u64,
    /// Scan credits of anon / file (SCAN_FRACT proportions).
    credit: [f64; 2],
    /// Pages per GiB, for inactive_is_low's ratio.
    pages_per_gib: u64,
    c_scanned: [u64; 2],
    c_reclaimed: [u64; 2],
    c_activated: u64,
    c_deactivated: u64,
    c_kept: u64,
    c_refaults: u64,
    c_flushes: u64,
    c_flushed: u64,
    /// The statistics as of the last flush (None: read as they are).
    flushed: Option<FlushedStats>,
    /// `stats_flush_at`, and the index of the next flush in it.
    flush_at: Vec<u64>,
    next_flush: usize,
    /// References seen so far (counted with `stats_flush_at` only).
    refs: u64,
    c_stats_flushes: u64,
}

impl PolicyDef for LinuxTwoList {
    const NAME: &'static str = "linux-two-list";
    const ALIASES: &'static [&'static str] = &["linux", "linux-lru", "two-list"];
    const FAMILY: &'static str = "swap";
    const SUMMARY: &'static str = "Linux 5.9-6.x active/inactive anon/file LRU reclaim with \
         swappiness balance and refault detection (mm/vmscan.c, mm/workingset.c).";
    type Config = LinuxTwoListConfig;

    fn build(cfg: &LinuxTwoListConfig, ctx: &PolicyCtx) -> Result<Self> {
        if cfg.swappiness > 200 {
            return Err(Error::config(format!(
                "policy 'linux-two-list': swappiness must be in 0..=200, got {}",
                cfg.swappiness
            )));
        }
        if cfg.reclaim_batch == 0 {
            return Err(Error::config(
                "policy 'linux-two-list': reclaim_batch must be at least 1",
            ));
        }
        let access = cfg.access()?;
        if let Some(at) = &cfg.stats_flush_at {
            if let Some(w) = at.windows(2).find(|w| w[1] < w[0]) {
                return Err(Error::config(format!(
                    "policy 'linux-two-list': stats_flush_at must be ascending reference \
                     indices, got {} after {}",
                    w[1], w[0]
                )));
            }
        }
        Ok(LinuxTwoList {
            cap: ctx.capacity,
            swappiness: cfg.swappiness as u64,
            file_exec: access == FileAccess::Exec,
            file_read: access == FileAccess::Read,
            flusher: cfg.writeback == Writeback::Flusher,
            reclaim_batch: cfg.reclaim_batch as usize,
            sync_swap: cfg.sync_swap,
            async_swap_write: !cfg.sync_swap && cfg.reclaim_batch > 1,
            under_writeback: Vec::new(),
            c_async_writes: 0,
            cost_v6_1: cfg.version == TwoListVersion::V6_1,
            cost_skips_zero: cfg.version == TwoListVersion::V6_17,
            last_read: u32::MAX,
            dirty_files: Vec::new(),
            refault_activations: [0; 2],
            refaults_snapshot: [0; 2],
            putback: Vec::new(),
            pages: Vec::new(),
            arena: Arena::with_capacity(ctx.capacity),
            lists: [List::default(); 4],
            resident: 0,
            cost: [0; 2],
            nonresident_age: 0,
            credit: [0.0; 2],
            pages_per_gib: (1u64 << 30) / ctx.page_size.max(1) as u64,
            c_scanned: [0; 2],
            c_reclaimed: [0; 2],
            c_activated: 0,
            c_deactivated: 0,
            c_kept: 0,
            c_refaults: 0,
            c_flushes: 0,
            c_flushed: 0,
            flushed: cfg.stats_flush_at.as_ref().map(|_| FlushedStats::default()),
            flush_at: cfg.stats_flush_at.clone().unwrap_or_default(),
            next_flush: 0,
            refs: 0,
            c_stats_flushes: 0,
        })
    }
}

mod reclaim;

impl LinuxTwoList {
    /// Pages on each list (inactive anon, active anon, inactive file, active file).
    pub fn list_sizes(&self) -> [usize; 4] {
        [0, 1, 2, 3].map(|l| self.lists[l].len())
    }

    /// (active, PG_referenced, young) of a resident page id, or None.
    pub fn page_flags(&self, id: u32) -> Option<(bool, bool, bool)> {
        let p = self.pages.get(id as usize)?;
        (p.node != NIL).then_some((
            p.flags & ACTIVE != 0,
            p.flags & REFERENCED != 0,
            p.flags & YOUNG != 0,
        ))
    }

    /// (anon_cost, file_cost).
    pub fn costs(&self) -> (u64, u64) {
        (self.cost[0], self.cost[1])
    }

    /// `lru_note_cost`: 6.12's `nr_io x SWAP_CLUSTER_MAX + nr_rotated`, or
    /// 6.1's `nr_pages` of I/O alone (rotations are not a cost there).
    fn note_cost(&mut self, anon: bool, nr_io: u64, nr_rotated: u64) {
        let cost = if self.cost_v6_1 {
            nr_io
        } else {
            nr_io * SWAP_CLUSTER_MAX + nr_rotated
        };
        // 6.17's lru_note_cost_unlock_irq: nothing to note, no decay.
        if cost == 0 && self.cost_skips_zero {
            return;
        }
        self.cost[!anon as usize] += cost;
        // The decay's LRU size is read through the statistics too (`lruvec_page_state`).
        let lrusize = match &self.flushed {
            Some(f) => f.lists.iter().sum::<usize>() as u64,
            None => self.resident as u64,
        };
        if self.cost[0] + self.cost[1] > lrusize / 4 {
            self.cost[0] /= 2;
            self.cost[1] /= 2;
        }
    }

    /// Pages on list `l` as the memory cgroup's statistics say (`lruvec_page_state`).
    fn stat_len(&self, l: usize) -> usize {
        match &self.flushed {
            Some(f) => f.lists[l],
            None => self.lists[l].len(),
        }
    }

    /// Refault activations (anon, file) as the memory cgroup's statistics say.
    fn stat_activations(&self) -> [u64; 2] {
        match &self.flushed {
            Some(f) => f.activations,
            None => self.refault_activations,
        }
    }

    /// The rstat flushes listed for references up to the current one.
    #[inline]
    fn flush_stats_due(&mut self) {
        while self.flush_at.get(self.next_flush) == Some(&self.refs) {
            self.next_flush += 1;
            self.c_stats_flushes += 1;
            self.flushed = Some(FlushedStats {
                lists: self.list_sizes(),
                activations: self.refault_activations,
            });
        }
        self.refs += 1;
    }

    /// `inactive_is_low` for a type.
    fn inactive_is_low(&self, anon: bool) -> bool {
        let inactive = self.stat_len(lru(anon, false)) as u64;
        let active = self.stat_len(lru(anon, true)) as u64;
        let gb = (inactive + active) / self.pages_per_gib.max(1);
        let ratio = if gb > 0 { (10 * gb).isqrt() } else { 1 };
        inactive * ratio < active
    }

    /// Chooses the type to scan (true = anon), as get_scan_count's proportions.
    fn pick_type(&mut self) -> bool {
        let anon_pages = (self.lists[INACTIVE_ANON].len() + self.lists[ACTIVE_ANON].len()) as f64;
        let file_pages = (self.lists[INACTIVE_FILE].len() + self.lists[ACTIVE_FILE].len()) as f64;
        if file_pages == 0.0 {
            return true;
        }
        if anon_pages == 0.0 || self.swappiness == 0 {
            return false;
        }
        let (ac, fc) = (self.cost[0] as f64, self.cost[1] as f64);
        let total = ac + fc;
        let anon_cost = total + ac;
        let file_cost = total + fc;
        let total = anon_cost + file_cost;
        let ap = self.swappiness as f64 * (total + 1.0) / (anon_cost + 1.0);
        let fp = (200 - self.swappiness) as f64 * (total + 1.0) / (file_cost + 1.0);
        let wa = ap * anon_pages;
        let wf = fp * file_pages;
        self.credit[0] += wa;
        self.credit[1] += wf;
        let anon = self.credit[0] >= self.credit[1];
        self.credit[!anon as usize] -= wa + wf;
        anon
    }

    fn is_exec_file(&self, flags: u8) -> bool {
        self.file_exec && flags & ANON == 0
    }

    /// folio_mark_accessed on a resident page referenced by a read() call.
    fn mark_accessed(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        if p.flags & REFERENCED == 0 {
            p.flags |= REFERENCED;
        } else if p.flags & ACTIVE == 0 {
            let n = p.node;
            p.flags = (p.flags | ACTIVE) & !REFERENCED;
            let anon = p.flags & ANON != 0;
            self.lists[lru(anon, false)].unlink(&mut self.arena, n);
            self.lists[lru(anon, true)].push_front(&mut self.arena, n);
            // workingset_activation ages the non-resident clock.
            self.nonresident_age += 1;
            self.c_activated += 1;
        }
    }

    /// Marks a page dirty, remembering a newly dirty file page for the flusher.
    #[inline]
    fn set_dirty(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        if self.flusher && p.flags & (DIRTY | ANON) == 0 {
            self.dirty_files.push(id);
        }
        p.flags |= DIRTY;
    }

    /// workingset_test_recent's workingset size for a refault of type `anon`.
    fn workingset_size(&self, anon: bool) -> u64 {
        let mut ws = self.stat_len(ACTIVE_FILE);
        if anon {
            ws += self.stat_len(INACTIVE_FILE);
        }
        ws += self.stat_len(ACTIVE_ANON);
        if !anon {
            ws += self.stat_len(INACTIVE_ANON);
        }
        ws as u64
    }
}

impl Policy for LinuxTwoList {
    /// A hit reads and writes only the page's state: load `far`'s.
    #[inline(always)]
    fn prefetch(&self, _near: PageId, far: PageId) {
        prefetch(&self.pages, far as usize);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if self.flushed.is_some() {
            self.flush_stats_due();
        }
        let st = self.pages[r.id as usize];
        let anon = r.kind() == Kind::Anon;
        let write = r.op() == Op::Write;
        let syscall = self.file_read && !anon;
        if st.node != NIL {
            if !syscall {
                self.pages[r.id as usize].flags |= YOUNG;
            } else if !write && self.last_read != r.id {
                self.mark_accessed(r.id);
            }
            if syscall && !write {
                self.last_read = r.id;
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
        if self.resident >= self.cap {
            self.reclaim(sink);
        }
        let mut active = false;
        let was_workingset = st.flags & WORKINGSET != 0;
        if st.shadow != NO_SHADOW {
            self.c_refaults += 1;
            let distance = self.nonresident_age - st.shadow;
            if distance <= self.workingset_size(anon) {
                active = true;
                self.nonresident_age += 1;
                self.refault_activations[!anon as usize] += 1;
                if was_workingset {
                    self.note_cost(anon, 1, 0);
                }
            }
        }
        let n = self.arena.alloc(r.id);
        self.lists[lru(anon, active)].push_front(&mut self.arena, n);
        let p = &mut self.pages[r.id as usize];
        p.node = n;
        p.page = r.page();
        p.shadow = NO_SHADOW;
        if syscall && !write {
            self.last_read = r.id;
        }
        // A fault maps the page young; a read() marks it accessed once
        // (PG_referenced); a write() does neither.
        p.flags = if !syscall {
            YOUNG
        } else if !write {
            REFERENCED
        } else {
            0
        };
        if anon {
            p.flags |= ANON;
        }
        if active {
            p.flags |= ACTIVE;
            if was_workingset {
                p.flags |= WORKINGSET;
            }
        }
        // A swap-in from a synchronous device (zram) bypasses the swap cache
        // and frees the slot (do_swap_page: SWP_SYNCHRONOUS_IO with a swap
        // count of 1, then swap_free_nr): reclaim must swap the page out again
        // (add_to_swap dirties it), as a dirty page.
        if write || (anon && self.sync_swap && st.shadow != NO_SHADOW) {
            self.set_dirty(r.id);
        }
        self.resident += 1;
        sink.miss(r, 0);
    }

    crate::policy::swap::page_state_glue!();

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = vec![
            ("scanned_anon", self.c_scanned[0]),
            ("scanned_file", self.c_scanned[1]),
            ("reclaimed_anon", self.c_reclaimed[0]),
            ("reclaimed_file", self.c_reclaimed[1]),
            ("activated", self.c_activated),
            ("deactivated", self.c_deactivated),
            ("kept", self.c_kept),
            ("refaults", self.c_refaults),
            ("refault_activations", self.refault_activations.iter().sum()),
            ("flushes", self.c_flushes),
            ("pages_flushed", self.c_flushed),
        ];
        // Only where the setting behind them is on (the pinned counts of the rest stay as they are).
        if self.flushed.is_some() {
            c.push(("stats_flushes", self.c_stats_flushes));
        }
        if self.async_swap_write {
            c.push(("async_swap_writes", self.c_async_writes));
        }
        c
    }
}
