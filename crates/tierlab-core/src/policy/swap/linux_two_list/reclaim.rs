//! The reclaim machinery of [`LinuxTwoList`]: the priority passes of
//! `shrink_node` as a memory cgroup's charge runs them (`get_scan_count`,
//! `shrink_lruvec`, `shrink_inactive_list`, `shrink_active_list`), the
//! one-page-at-a-time scan used with `reclaim_batch = 1`, and the eviction of
//! a reclaimed page (dirty write-back, shadow entry), after mm/vmscan.c. The
//! page model, the lists and the fault and access paths are in
//! `linux_two_list.rs`, whose module documentation describes the mechanism.
//! Cost: O(1) per page scanned; a priority pass scans at most its computed
//! share of each list.

use super::{
    lru, LinuxTwoList, ACTIVE, ACTIVE_ANON, ACTIVE_FILE, ANON, DEF_PRIORITY, DIRTY, INACTIVE_ANON,
    INACTIVE_FILE, REFERENCED, SWAP_CLUSTER_MAX, WORKINGSET, WRITEBACK, YOUNG,
};
use crate::policy::list::{prefetch, NIL};
use crate::sim::{PageOut, Sink};
use crate::trace::Kind;

impl LinuxTwoList {
    /// A speed hint after list `l` gave up its back page: starts loading the state of the page
    /// scanned next there, and the node after it.
    #[inline(always)]
    pub(super) fn prefetch_back(&self, l: usize) {
        self.lists[l].prefetch_back(&self.arena, |&id| prefetch(&self.pages, id as usize));
    }

    /// One step of shrink_active_list on the tail of `anon`'s active list.
    pub(super) fn shrink_active_one(&mut self, anon: bool) {
        let l = lru(anon, true);
        let Some(n) = self.lists[l].back() else {
            return;
        };
        let id = *self.arena.get(n);
        let flags = self.pages[id as usize].flags;
        self.lists[l].unlink(&mut self.arena, n);
        self.prefetch_back(l);
        if flags & YOUNG != 0 {
            self.pages[id as usize].flags &= !YOUNG;
            if self.is_exec_file(flags) {
                self.lists[l].push_front(&mut self.arena, n);
                self.note_cost(anon, 0, 1);
                return;
            }
        }
        let p = &mut self.pages[id as usize];
        p.flags &= !ACTIVE;
        p.flags |= WORKINGSET;
        self.lists[lru(anon, false)].push_front(&mut self.arena, n);
        self.c_deactivated += 1;
    }

    /// Writes back every dirty file page (the flusher woken by reclaim).
    pub(super) fn flush<S: Sink>(&mut self, sink: &mut S) {
        let mut out = Vec::with_capacity(self.dirty_files.len());
        for &id in &self.dirty_files {
            let p = &mut self.pages[id as usize];
            if p.node != NIL && p.flags & (DIRTY | ANON) == DIRTY {
                p.flags &= !DIRTY;
                out.push(PageOut {
                    id,
                    page: p.page,
                    kind: Kind::File,
                    dirty: true,
                    tier: 0,
                });
            }
        }
        self.dirty_files.clear();
        self.c_flushes += 1;
        self.c_flushed += out.len() as u64;
        crate::sim::write_back_runs(sink, &mut out);
    }

    /// One step of shrink_folio_list on the tail of `anon`'s inactive list.
    /// Returns the reclaimed page id, if any. In a `batch` (shrink_inactive_list)
    /// a kept or activated page waits in `putback` and its cost is noted by the
    /// caller; otherwise it goes back at once and its cost is noted here.
    pub(super) fn shrink_inactive_one<S: Sink>(
        &mut self,
        anon: bool,
        batch: bool,
        sink: &mut S,
    ) -> Option<u32> {
        let l = lru(anon, false);
        let n = self.lists[l].back()?;
        let id = *self.arena.get(n);
        self.c_scanned[!anon as usize] += 1;
        let flags = self.pages[id as usize].flags;
        let young = flags & YOUNG != 0;
        let referenced = flags & REFERENCED != 0;
        let dirty_file = !anon && flags & DIRTY != 0;
        self.pages[id as usize].flags &= !(YOUNG | REFERENCED);
        self.lists[l].unlink(&mut self.arena, n);
        self.prefetch_back(l);
        enum Verdict {
            Activate,
            Keep,
            Reclaim,
        }
        let verdict = if young {
            self.pages[id as usize].flags |= REFERENCED;
            if referenced || self.is_exec_file(flags) {
                Verdict::Activate
            } else {
                Verdict::Keep
            }
        } else if dirty_file && self.flusher {
            // Reclaim does not write file pages: the flusher cleans them all
            // (this one included), which is then reclaimed.
            self.flush(sink);
            Verdict::Reclaim
        } else if referenced && dirty_file {
            // FOLIOREF_RECLAIM_CLEAN on a dirty file page: keep it.
            Verdict::Keep
        } else if batch && anon && self.async_swap_write && flags & DIRTY != 0 {
            // pageout() submits the swap write; the folio, under writeback,
            // is kept until the write completes (see the module documentation).
            let p = &mut self.pages[id as usize];
            p.flags = (p.flags & !DIRTY) | WRITEBACK;
            let out = PageOut {
                id,
                page: p.page,
                kind: Kind::Anon,
                dirty: true,
                tier: 0,
            };
            sink.write_back(&[out]);
            self.under_writeback.push(id);
            self.c_async_writes += 1;
            Verdict::Keep
        } else {
            Verdict::Reclaim
        };
        match verdict {
            Verdict::Activate | Verdict::Keep => {
                let active = matches!(verdict, Verdict::Activate);
                if active {
                    self.pages[id as usize].flags |= ACTIVE;
                    self.c_activated += 1;
                } else {
                    self.c_kept += 1;
                }
                if batch {
                    self.putback.push((n, active));
                } else {
                    self.lists[lru(anon, active)].push_front(&mut self.arena, n);
                    self.note_cost(anon, 0, 1);
                }
                None
            }
            Verdict::Reclaim => {
                self.arena.release(n);
                let p = &mut self.pages[id as usize];
                p.node = NIL;
                p.shadow = self.nonresident_age;
                self.nonresident_age += 1;
                self.c_reclaimed[!anon as usize] += 1;
                if !batch && p.flags & DIRTY != 0 {
                    self.note_cost(anon, 1, 0);
                }
                Some(id)
            }
        }
    }

    /// The asynchronous swap writes issued so far have completed:
    /// `folio_rotate_reclaimable` moves each page still clean, inactive and
    /// resident to the inactive anon tail, in the order written.
    fn complete_swap_writes(&mut self) {
        for i in 0..self.under_writeback.len() {
            let id = self.under_writeback[i];
            let p = &mut self.pages[id as usize];
            if p.flags & WRITEBACK == 0 {
                continue;
            }
            p.flags &= !WRITEBACK;
            if p.node == NIL || p.flags & (DIRTY | ACTIVE) != 0 {
                continue;
            }
            let n = p.node;
            self.lists[INACTIVE_ANON].unlink(&mut self.arena, n);
            self.lists[INACTIVE_ANON].push_back(&mut self.arena, n);
        }
        self.under_writeback.clear();
    }

    /// Hands a page reclaimed by `shrink_inactive_one` to the sink.
    pub(super) fn evict_reclaimed<S: Sink>(&mut self, id: u32, sink: &mut S) {
        let p = &mut self.pages[id as usize];
        let out = PageOut {
            id,
            page: p.page,
            kind: if p.flags & ANON != 0 {
                Kind::Anon
            } else {
                Kind::File
            },
            dirty: p.flags & DIRTY != 0,
            tier: 0,
        };
        // The shadow keeps whether the page was workingset.
        p.flags &= ANON | WORKINGSET;
        self.resident -= 1;
        sink.evict(out);
    }

    /// Reclaims one page per round (`reclaim_batch = 1`): an active list
    /// whose inactive list is low (or empty) is aged by one page, then one
    /// inactive page of the type chosen by get_scan_count's proportions is
    /// scanned, until a page is freed.
    pub(super) fn reclaim_one<S: Sink>(&mut self, sink: &mut S) {
        let mut may_deactivate = [self.inactive_is_low(true), self.inactive_is_low(false)];
        loop {
            let mut anon = self.pick_type();
            if self.lists[lru(anon, false)].is_empty() && !self.lists[lru(!anon, false)].is_empty()
            {
                anon = !anon;
            }
            let t = !anon as usize;
            if may_deactivate[t] || self.lists[lru(anon, false)].is_empty() {
                may_deactivate[t] = false;
                self.shrink_active_one(anon);
            }
            if let Some(id) = self.shrink_inactive_one(anon, false, sink) {
                self.evict_reclaimed(id, sink);
                return;
            }
        }
    }

    /// `shrink_inactive_list`: isolates up to `nr` pages from the tail of
    /// `anon`'s inactive list, decides each (`shrink_folio_list`), puts the
    /// kept and activated ones back after the batch (`move_folios_to_lru`,
    /// in the order scanned) and notes the batch's cost once
    /// (`lru_note_cost(nr_pageout, nr_scanned - nr_reclaimed)`). Returns the
    /// pages freed.
    pub(super) fn shrink_inactive_list<S: Sink>(
        &mut self,
        nr: usize,
        anon: bool,
        sink: &mut S,
    ) -> usize {
        self.complete_swap_writes();
        let l = lru(anon, false);
        let mut scanned = 0u64;
        let mut freed = 0usize;
        let async_before = self.c_async_writes;
        let mut written = 0u64;
        for _ in 0..nr {
            if self.lists[l].is_empty() {
                break;
            }
            scanned += 1;
            if let Some(id) = self.shrink_inactive_one(anon, true, sink) {
                if self.pages[id as usize].flags & DIRTY != 0 {
                    written += 1;
                }
                self.evict_reclaimed(id, sink);
                freed += 1;
            }
        }
        for i in 0..self.putback.len() {
            let (n, active) = self.putback[i];
            self.lists[lru(anon, active)].push_front(&mut self.arena, n);
        }
        self.putback.clear();
        if scanned > 0 {
            written += self.c_async_writes - async_before;
            self.note_cost(anon, written, scanned - freed as u64);
        }
        freed
    }

    /// One reclaim of a memory cgroup's charge (`reclaim_batch` > 1:
    /// `try_to_free_mem_cgroup_pages`, nr_to_reclaim = `reclaim_batch`), as
    /// `do_try_to_free_pages` runs it: priority passes from DEF_PRIORITY (12)
    /// down to 0, until the pages reclaimed reach the target. Each pass:
    ///
    /// * `prepare_scan_control`: `may_deactivate` per type (inactive list low,
    ///   or a refault activation of the type since the last reclaim:
    ///   `snapshot_refaults` at the end of the previous one), and
    ///   `cache_trim_mode` when `inactive_file >> priority` is non-zero and the
    ///   file type may not deactivate;
    /// * `get_scan_count`: each list's target is `size >> priority`; in
    ///   at priority 0 the lists as they are (SCAN_EQUAL, checked first); in
    ///   cache-trim mode file lists only (SCAN_FILE); otherwise scaled by the anon/file fraction
    ///   in integers (SCAN_FRACT, `div64_u64`, which rounds down);
    /// * `shrink_lruvec`: rounds over the lists in the kernel's order
    ///   (inactive anon, active anon, inactive file, active file), at most
    ///   SWAP_CLUSTER_MAX pages of each per round (`shrink_list`: an active
    ///   list only if its type may deactivate), while the inactive lists or
    ///   the active file list have a target left; once the pass has reclaimed
    ///   the target it stops the type with less left and cuts the other to
    ///   the share of its target still unscanned (the proportional nudge),
    ///   then stops when either type is done; afterwards the active anon list
    ///   is aged by SWAP_CLUSTER_MAX pages if the inactive anon list is low.
    ///
    /// So while the lists are small against `1 << priority`, the first passes
    /// scan nothing; the pass that first scans does so by SCAN_FRACT unless the
    /// inactive file list already qualifies for cache-trim mode at that
    /// priority, and a pass may reclaim more than the target (the passes'
    /// counts add up). A reclaim that frees nothing at every priority retries
    /// with forced deactivation of both types (`force_deactivate`, as
    /// `do_try_to_free_pages` does when a pass skipped an active list); if that
    /// frees nothing either (the kernel would go on to OOM), one page is
    /// reclaimed as `reclaim_batch = 1` does, so the run goes on.
    pub(super) fn reclaim_priorities<S: Sink>(&mut self, sink: &mut S) {
        let nr_to_reclaim = self.reclaim_batch;
        let activations = self.stat_activations();
        let mut refaulted = [false; 2];
        for (r, (now, then)) in refaulted
            .iter_mut()
            .zip(activations.iter().zip(&self.refaults_snapshot))
        {
            *r = now != then;
        }
        self.refaults_snapshot = activations;
        let mut force_deactivate = false;
        loop {
            let mut total = 0;
            let mut skipped_deactivate = false;
            for priority in (0..=DEF_PRIORITY).rev() {
                let may_deactivate = if force_deactivate {
                    [true; 2]
                } else {
                    [
                        refaulted[0] || self.inactive_is_low(true),
                        refaulted[1] || self.inactive_is_low(false),
                    ]
                };
                let cache_trim =
                    self.stat_len(INACTIVE_FILE) >> priority != 0 && !may_deactivate[1];
                let nr = self.scan_count(priority, cache_trim);
                let (freed, skipped) = self.shrink_lruvec(nr, may_deactivate, nr_to_reclaim, sink);
                skipped_deactivate |= skipped;
                total += freed;
                if total >= nr_to_reclaim {
                    return;
                }
            }
            if total > 0 {
                return;
            }
            if force_deactivate || !skipped_deactivate {
                break;
            }
            force_deactivate = true;
        }
        self.reclaim_one(sink);
    }

    /// `get_scan_count` for one priority: the pages to scan on each list.
    pub(super) fn scan_count(&self, priority: u32, cache_trim: bool) -> [usize; 4] {
        let size = |l: usize| self.lists[l].len() >> priority;
        let mut nr = [0, 1, 2, 3].map(size);
        if self.swappiness == 0 || (priority > 0 && cache_trim) {
            // SCAN_FILE: swappiness 0 in cgroup reclaim, or cache-trim mode
            // (priority 0 is SCAN_EQUAL first).
            nr[INACTIVE_ANON] = 0;
            nr[ACTIVE_ANON] = 0;
        } else if priority > 0 {
            // SCAN_FRACT, in the kernel's integer arithmetic.
            let (ac, fc) = (self.cost[0], self.cost[1]);
            let total = ac + fc;
            let anon_cost = total + ac;
            let file_cost = total + fc;
            let total = anon_cost + file_cost;
            let ap = self.swappiness * (total + 1) / (anon_cost + 1);
            let fp = (200 - self.swappiness) * (total + 1) / (file_cost + 1);
            let denominator = ap + fp;
            for (l, n) in nr.iter_mut().enumerate() {
                let fraction = if l < INACTIVE_FILE { ap } else { fp };
                *n = (*n as u64 * fraction / denominator) as usize;
            }
        }
        nr
    }

    /// `shrink_lruvec` with the targets `nr`. Returns the pages reclaimed and
    /// whether an active list with a target was skipped (may not deactivate).
    pub(super) fn shrink_lruvec<S: Sink>(
        &mut self,
        mut nr: [usize; 4],
        may_deactivate: [bool; 2],
        nr_to_reclaim: usize,
        sink: &mut S,
    ) -> (usize, bool) {
        let cluster = SWAP_CLUSTER_MAX as usize;
        let targets = nr;
        let mut freed = 0;
        let mut skipped = false;
        while nr[INACTIVE_ANON] > 0 || nr[ACTIVE_FILE] > 0 || nr[INACTIVE_FILE] > 0 {
            for l in [INACTIVE_ANON, ACTIVE_ANON, INACTIVE_FILE, ACTIVE_FILE] {
                if nr[l] == 0 {
                    continue;
                }
                let n = nr[l].min(cluster);
                nr[l] -= n;
                let anon = l < INACTIVE_FILE;
                if l == ACTIVE_ANON || l == ACTIVE_FILE {
                    if may_deactivate[!anon as usize] {
                        for _ in 0..n.min(self.lists[l].len()) {
                            self.shrink_active_one(anon);
                        }
                    } else {
                        skipped = true;
                    }
                } else {
                    freed += self.shrink_inactive_list(n, anon, sink);
                }
            }
            if freed < nr_to_reclaim {
                continue;
            }
            let nr_file = nr[INACTIVE_FILE] + nr[ACTIVE_FILE];
            let nr_anon = nr[INACTIVE_ANON] + nr[ACTIVE_ANON];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, percentage) = if nr_file > nr_anon {
                let target = targets[INACTIVE_ANON] + targets[ACTIVE_ANON] + 1;
                (INACTIVE_ANON, nr_anon * 100 / target)
            } else {
                let target = targets[INACTIVE_FILE] + targets[ACTIVE_FILE] + 1;
                (INACTIVE_FILE, nr_file * 100 / target)
            };
            nr[stop] = 0;
            nr[stop + 1] = 0;
            let other = if stop == INACTIVE_FILE {
                INACTIVE_ANON
            } else {
                INACTIVE_FILE
            };
            for l in [other, other + 1] {
                let scanned = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - percentage) / 100;
                nr[l] -= nr[l].min(scanned);
            }
        }
        if self.inactive_is_low(true) {
            for _ in 0..cluster.min(self.lists[ACTIVE_ANON].len()) {
                self.shrink_active_one(true);
            }
        }
        (freed, skipped)
    }

    /// Reclaims `reclaim_batch` pages: one page at a time (`reclaim_one`) or,
    /// with a larger batch, as a memory cgroup's charge does
    /// (`reclaim_priorities`).
    pub(super) fn reclaim<S: Sink>(&mut self, sink: &mut S) {
        if self.reclaim_batch > 1 {
            self.reclaim_priorities(sink);
        } else {
            self.reclaim_one(sink);
        }
    }
}
