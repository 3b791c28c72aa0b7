//! MGLRU's reclaim of a memory cgroup's charge with `version = "6.1"` and
//! `reclaim_batch` > 1, as Linux 6.1-6.13 run it (read in Debian's
//! linux-source-6.12, 6.12.117, mm/vmscan.c): `try_to_free_mem_cgroup_pages`
//! -> `do_try_to_free_pages`, priority passes from DEF_PRIORITY (12) down to
//! 0 until `nr_to_reclaim` (= `reclaim_batch`, SWAP_CLUSTER_MAX for a charge)
//! pages are reclaimed; each pass is `lru_gen_shrink_lruvec` ->
//! `try_to_shrink_lruvec`:
//!
//! * `get_nr_to_scan`: `should_run_aging` says whether the lruvec is out of
//!   cold pages (the evictable `min_seq + MIN_NR_GENS > max_seq`: nothing to
//!   scan) or, at exactly MIN_NR_GENS + 1 generations, whether its pages are
//!   spread badly (`young * MIN_NR_GENS > total`: the youngest generation
//!   holds more than half; `old * (MIN_NR_GENS + 2) < total`: the oldest
//!   less than a quarter). If not, or at DEF_PRIORITY, the pass scans
//!   `total >> priority` pages (`total`: every page of the evictable types);
//!   otherwise it ages (`try_to_inc_max_seq`) and scans nothing.
//! * `evict_folios`: `isolate_folios` -> `scan_folios` on one type's oldest
//!   generation (the other type when it finds nothing to isolate), sorting
//!   protected pages up and isolating until MIN_LRU_BATCH (64) pages are
//!   isolated, the generation is empty or MAX_LRU_BATCH (4,096) pages were
//!   looked at; then `shrink_folio_list` reclaims the isolated pages that
//!   are not young, in the order of isolation (a young page's
//!   `lru_gen_look_around` may mark another of the batch, which is then
//!   kept); then `try_to_inc_min_seq`. It reports the pages looked at,
//!   0 when the evictable type is down to MIN_NR_GENS generations.
//! * The pass repeats `evict_folios` until it has looked at `nr_to_scan`
//!   pages (memcg reclaim is never aborted early: `should_abort_scan`).
//!
//! So a lruvec of fewer than 4,096 pages scans nothing at DEF_PRIORITY
//! (`total >> 12` = 0), and at priority 11 ages whenever it holds exactly
//! three generations spread as above, before it evicts anything: in a
//! 16 MiB group every charge that finds three generations adds a fourth,
//! which is how anonymous pages faulted once sink to the oldest generation
//! and are swapped out (with `try_to_inc_min_seq`'s rule that file's
//! `min_seq` waits at anon's). A lruvec of 4,096 pages or more usually
//! reclaims its 32 pages at DEF_PRIORITY and does not age there.
//!
//! Cost: O(pages looked at) per pass, plus O(pages) for `should_run_aging`'s
//! generation sizes (O(1) per generation here: list lengths).

use super::evict::Scan;
use super::{slot, Mglru, ISOLATED, MIN_LRU_BATCH, MIN_NR_GENS};
use crate::sim::Sink;

/// DEF_PRIORITY (include/linux/mmzone.h).
const DEF_PRIORITY: u32 = 12;
/// MAX_LRU_BATCH = MIN_LRU_BATCH * 64.
const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;

impl Mglru {
    /// `do_try_to_free_pages` for a memory cgroup's charge: priority passes
    /// until `reclaim_batch` pages are reclaimed. A reclaim that frees
    /// nothing at any priority (the kernel would retry the charge, then
    /// OOM-kill) frees one page as `reclaim_batch = 1` does, so the run goes
    /// on.
    pub(super) fn reclaim_memcg<S: Sink>(&mut self, sink: &mut S) {
        let mut freed = 0;
        for priority in (0..=DEF_PRIORITY).rev() {
            freed += self.try_to_shrink_lruvec(priority, sink);
            if freed >= self.reclaim_batch {
                return;
            }
        }
        if freed == 0 {
            self.reclaim_pages(1, true, sink);
        }
    }

    /// `try_to_shrink_lruvec` at one priority; returns the pages reclaimed.
    fn try_to_shrink_lruvec<S: Sink>(&mut self, priority: u32, sink: &mut S) -> usize {
        let mut scanned = 0;
        let mut freed = 0;
        // get_nr_to_scan <= 0 (None: it aged) ends the pass.
        while let Some(nr_to_scan) = self.get_nr_to_scan(priority).filter(|&n| n > 0) {
            let (delta, f) = self.evict_folios(sink);
            freed += f;
            if delta == 0 {
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
        }
        self.end_pass(sink);
        freed
    }

    /// `should_run_aging` of 6.1-6.13: (whether to age, pages of the
    /// evictable types).
    pub(super) fn should_run_aging(&self) -> (bool, u64) {
        let t0 = !self.anon_evictable() as usize;
        if self.min_seq[t0] + MIN_NR_GENS > self.max_seq {
            return (true, 0);
        }
        let (mut total, mut young, mut old) = (0, 0, 0);
        for t in t0..2 {
            for seq in self.min_seq[t]..=self.max_seq {
                let n = self.lists[slot(seq)][t].len() as u64;
                total += n;
                if seq == self.max_seq {
                    young += n;
                } else if seq + MIN_NR_GENS == self.max_seq {
                    old += n;
                }
            }
        }
        if self.min_seq[t0] + MIN_NR_GENS < self.max_seq {
            return (false, total);
        }
        let age = young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total;
        (age, total)
    }

    /// `get_nr_to_scan`: the pages this pass may look at, or None when it
    /// aged instead (`try_to_inc_max_seq`, which always succeeds here).
    fn get_nr_to_scan(&mut self, priority: u32) -> Option<u64> {
        let (age, total) = self.should_run_aging();
        if !age || priority == DEF_PRIORITY {
            return Some(total >> priority);
        }
        self.age();
        None
    }

    /// `evict_folios`: one batch of `isolate_folios` and
    /// `shrink_folio_list`; returns (pages looked at as the kernel reports
    /// them, pages reclaimed).
    fn evict_folios<S: Sink>(&mut self, sink: &mut S) -> (u64, usize) {
        let mut scanned = 0;
        let mut freed = 0;
        let pick = self.isolate_type();
        for t in [pick.0, 1 - pick.0] {
            let Some(tier) = self.scan_tier(t, pick) else {
                continue;
            };
            let (mut looked, mut remaining) = (0, MAX_LRU_BATCH);
            let mut batch = std::mem::take(&mut self.batch);
            batch.clear();
            while let Some(s) = self.sort_or_isolate(t, tier) {
                looked += 1;
                if let Some(id) = s {
                    self.pages[id as usize].flags |= ISOLATED;
                    batch.push(id);
                }
                remaining -= 1;
                if remaining == 0 || batch.len() as u64 >= MIN_LRU_BATCH {
                    break;
                }
            }
            // shrink_folio_list, in the order of isolation, once the batch
            // is isolated: the rmap walk of one page may find another of
            // the batch young (lru_gen_look_around).
            for &id in &batch {
                self.pages[id as usize].flags &= !ISOLATED;
                if self.shrink_one(id, t, sink) == Scan::Freed {
                    freed += 1;
                }
            }
            let isolated = batch.len();
            self.batch = batch;
            // scan_folios reports nothing when it isolated nothing (and had
            // budget left): isolate_folios then tries the other type.
            if isolated > 0 || remaining == 0 {
                scanned = looked;
                break;
            }
        }
        scanned += self.try_to_inc_min_seq() as u64;
        let t0 = !self.anon_evictable() as usize;
        if self.nr_gens(t0) == MIN_NR_GENS {
            scanned = 0;
        }
        (scanned, freed)
    }
}
