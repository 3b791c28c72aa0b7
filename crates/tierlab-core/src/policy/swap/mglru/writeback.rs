//! MGLRU's dirty file pages with `writeback = "flusher"`, as Debian's
//! linux-source-6.12 (6.12.117) and linux-source-6.1 (6.1.192) have them in
//! mm/vmscan.c, mm/swap.c and include/linux/mm_inline.h. Reclaim never writes
//! a file page itself (`shrink_folio_list`: only kswapd may); what it does
//! with one depends on the version:
//!
//! * **6.12 on** (`version = "6.12"`, `"6.14"`): `sort_folio` lets a dirty
//!   page through; `shrink_folio_list` sets PG_reclaim and activates it
//!   (`goto activate_locked`), counted in `nr_unqueued_dirty`;
//!   `evict_folios` gives a PG_workingset page its PG_referenced back and
//!   `lru_gen_add_folio` puts the PG_active page in `max_seq`. At the end of
//!   `try_to_shrink_lruvec` the flusher is woken
//!   (`wakeup_flusher_threads(WB_REASON_VMSCAN)`) when every file page the
//!   pass isolated was dirty and unqueued (`sc->nr.unqueued_dirty ==
//!   sc->nr.file_taken`, counted per `shrink_node` pass).
//! * **6.1 to 6.11** (`version = "6.1"`): `sort_folio` ("waiting for
//!   writeback") moves a dirty file page to `min_seq + 1` with PG_reclaim
//!   and its refs cleared (`folio_inc_gen(..., true)`) before isolating
//!   anything; this reclaim never wakes the flusher.
//!
//! When the flusher writes a page (`folio_end_writeback`), a page with
//! PG_reclaim goes to the tail of its type's oldest generation
//! (`folio_rotate_reclaimable` -> `lru_move_tail` -> `lru_gen_add_folio`
//! with `reclaiming`), next in line for eviction; the per-CPU rotation batch
//! is drained by the next reclaim's `lru_add_drain` before it scans, so the
//! move is made at once here.
//!
//! When the flusher runs is the kernel's scheduling and its dirty limits
//! (`balance_dirty_pages` against the memory cgroup's dirty statistics, as of
//! their last flush), not reclaim's alone. So the writes can be given as a
//! kernel recorded them (`written_at`, what `tierlab kernel-check` measures
//! from the block layer under QEMU); without them the model wakes the
//! flusher where 6.12's reclaim does and lets it write every dirty file page
//! before the next reference (6.1's reclaim wakes none: its dirty pages wait
//! for the background flusher, which the model does not time). The choice
//! between these two is the user's; neither is fitted.
//!
//! Cost: O(1) per reference for the recorded writes' cursor, O(pages
//! written) per write, a map from file page to id in the recorded mode.

use super::{Mglru, ANON, DIRTY, NIL, RECLAIM, REFERENCED, WORKINGSET};
use crate::error::{Error, Result};
use crate::sim::{write_back_runs, PageOut, Sink};
use crate::trace::Kind;
use rustc_hash::FxHashMap;

/// The flusher's state and counters.
#[derive(Debug, Default)]
pub(super) struct Flusher {
    /// The recorded writes, `[ref, first_page, pages]`; empty when woken by
    /// reclaim.
    written_at: Vec<[u64; 3]>,
    recorded: bool,
    next: usize,
    /// References seen so far.
    refs: u64,
    /// Recorded mode: the id of every file page dirtied so far.
    ids: FxHashMap<u64, u32>,
    /// Woken mode: file pages dirtied since the last write (ids).
    dirty: Vec<u32>,
    /// `sc->nr.unqueued_dirty` and `sc->nr.file_taken` of the current pass.
    unqueued_dirty: u64,
    file_taken: u64,
    c_passed_over: u64,
    c_wakeups: u64,
    c_written: u64,
    c_rotated: u64,
    c_written_clean: u64,
}

impl Flusher {
    pub(super) fn new(written_at: Option<&[[u64; 3]]>) -> Result<Self> {
        let mut f = Flusher::default();
        if let Some(w) = written_at {
            for (i, pair) in w.windows(2).enumerate() {
                if pair[1][0] < pair[0][0] {
                    return Err(Error::config(format!(
                        "policy 'mglru': written_at must be ascending by reference: entry {} \
                         (reference {}) follows reference {}",
                        i + 1,
                        pair[1][0],
                        pair[0][0]
                    )));
                }
            }
            if let Some(i) = w.iter().position(|e| e[2] == 0) {
                return Err(Error::config(format!(
                    "policy 'mglru': written_at entry {i} writes 0 pages; expected [reference, \
                     first_page, pages] with pages >= 1"
                )));
            }
            f.written_at = w.to_vec();
            f.recorded = true;
        }
        Ok(f)
    }

    /// A file page became dirty.
    pub(super) fn dirtied(&mut self, id: u32, page: u64) {
        if self.recorded {
            self.ids.insert(page, id);
        } else {
            self.dirty.push(id);
        }
    }

    /// A file page was isolated in this pass (`sc->nr.file_taken`).
    pub(super) fn taken(&mut self) {
        self.file_taken += 1;
    }

    pub(super) fn counters(&self) -> [(&'static str, u64); 5] {
        [
            ("dirty_passed_over", self.c_passed_over),
            ("flusher_wakeups", self.c_wakeups),
            ("flusher_written", self.c_written),
            ("rotated", self.c_rotated),
            ("written_clean", self.c_written_clean),
        ]
    }
}

impl Mglru {
    /// Marks a page dirty, telling the flusher of a file page newly dirty.
    pub(super) fn set_dirty(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        let newly_dirty_file = p.flags & (DIRTY | ANON) == 0;
        p.flags |= DIRTY;
        if newly_dirty_file {
            if let Some(f) = self.flusher.as_mut() {
                f.dirtied(id, p.page);
            }
        }
    }

    /// `sort_folio` of 6.1-6.11 on a dirty file page (`dirty_sort`): up a
    /// generation with PG_reclaim, refs cleared. True when it applied.
    pub(super) fn sort_dirty(&mut self, id: u32, t: usize) -> bool {
        if !self.dirty_sort || t != 1 || self.pages[id as usize].flags & DIRTY == 0 {
            return false;
        }
        let Some(f) = self.flusher.as_mut() else {
            return false;
        };
        f.c_passed_over += 1;
        let q = &mut self.pages[id as usize];
        q.refs = 0;
        q.flags = (q.flags & !(REFERENCED | WORKINGSET)) | RECLAIM;
        self.link(id, self.min_seq[t] + 1, false);
        true
    }

    /// `isolate_folio` on a page of type `t` (PG_reclaim cleared), counted
    /// in `file_taken`.
    pub(super) fn isolated(&mut self, id: u32, t: usize) {
        if let Some(f) = self.flusher.as_mut() {
            self.pages[id as usize].flags &= !RECLAIM;
            if t == 1 {
                f.taken();
            }
        }
    }

    /// `shrink_folio_list` of 6.12 on an isolated page found not young: a
    /// dirty file page is activated with PG_reclaim instead of reclaimed.
    /// True when it applied.
    pub(super) fn pass_over_dirty(&mut self, id: u32, t: usize) -> bool {
        if t != 1 || self.pages[id as usize].flags & DIRTY == 0 {
            return false;
        }
        let Some(f) = self.flusher.as_mut() else {
            return false;
        };
        f.unqueued_dirty += 1;
        f.c_passed_over += 1;
        let q = &mut self.pages[id as usize];
        q.flags |= RECLAIM;
        // evict_folios: "restore LRU_REFS_FLAGS cleared by isolate_folio()"
        if q.flags & WORKINGSET != 0 {
            if self.v6_1 {
                q.flags |= REFERENCED;
            } else {
                q.refs = q.refs.max(1);
            }
        }
        self.link(id, self.max_seq, false);
        true
    }

    /// The end of a reclaim pass (`try_to_shrink_lruvec`): the flusher is
    /// woken when every file page isolated was dirty (6.12 on, without
    /// recorded writes), and writes every dirty file page. True when it
    /// wrote a page.
    pub(super) fn end_pass<S: Sink>(&mut self, sink: &mut S) -> bool {
        let Some(mut f) = self.flusher.take() else {
            return false;
        };
        let wake = !f.recorded
            && !self.dirty_sort
            && f.unqueued_dirty > 0
            && f.unqueued_dirty == f.file_taken;
        f.unqueued_dirty = 0;
        f.file_taken = 0;
        let mut out = Vec::new();
        if wake {
            f.c_wakeups += 1;
            // write_cache_pages writes the inode's dirty pages in index
            // order, and each completion rotates its page in that order.
            let mut ids = std::mem::take(&mut f.dirty);
            ids.sort_unstable_by_key(|&id| self.pages[id as usize].page);
            ids.dedup();
            out.extend(ids.iter().filter_map(|&id| self.clean(id, &mut f)));
            ids.clear();
            f.dirty = ids;
        }
        self.flusher = Some(f);
        if out.is_empty() {
            return false;
        }
        write_back_runs(sink, &mut out);
        true
    }

    /// The recorded writes due before the current reference.
    pub(super) fn writes_due<S: Sink>(&mut self, sink: &mut S) {
        let Some(mut f) = self.flusher.take() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(&[at, first, n]) = f.written_at.get(f.next) {
            if at > f.refs {
                break;
            }
            f.next += 1;
            for page in first..first.saturating_add(n) {
                let id = f.ids.get(&page).copied();
                match id.and_then(|id| self.clean(id, &mut f)) {
                    Some(o) => out.push(o),
                    None => f.c_written_clean += 1,
                }
            }
        }
        f.refs += 1;
        self.flusher = Some(f);
        if !out.is_empty() {
            write_back_runs(sink, &mut out);
        }
    }

    /// `folio_end_writeback` of a dirty resident file page: clean, and with
    /// PG_reclaim rotated to the tail of the oldest file generation.
    fn clean(&mut self, id: u32, f: &mut Flusher) -> Option<PageOut> {
        let p = self.pages[id as usize];
        if p.node == NIL || p.flags & (DIRTY | ANON) != DIRTY {
            return None;
        }
        self.pages[id as usize].flags &= !(DIRTY | RECLAIM);
        if p.flags & RECLAIM != 0 {
            self.unlink(id);
            self.link(id, self.min_seq[1], true);
            f.c_rotated += 1;
        }
        f.c_written += 1;
        Some(PageOut {
            id,
            page: p.page,
            kind: Kind::File,
            dirty: true,
            tier: 0,
        })
    }
}
