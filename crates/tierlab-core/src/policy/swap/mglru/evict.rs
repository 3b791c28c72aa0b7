//! MGLRU's eviction: scanning the oldest generation of the type and tier
//! chosen (`scan_folios`, `sort_folio`, `isolate_folio`), evicting a page with
//! its shadow entry (`lru_gen_eviction`), and the reclaim loop that runs it
//! until the target is met (`evict_folios`, `try_to_shrink_lruvec`), after
//! mm/vmscan.c and mm/workingset.c (see `mglru.rs`'s module documentation for
//! the mechanism). Cost: O(1) per page scanned.

use super::{
    mapped_key, slot, tier_from_refs, Mglru, ANON, DIRTY, ISOLATED, MAX_REFS, MIN_LRU_BATCH,
    MIN_NR_GENS, REFERENCED, WORKINGSET, YOUNG,
};
use crate::policy::list::NIL;
use crate::sim::{PageOut, Sink};
use crate::trace::Kind;

/// What one step of `scan_one` did with the page at the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scan {
    /// `sort_folio` moved it up a generation (protected by its tier).
    Sorted,
    /// Isolated, but found young: activated or kept.
    Kept,
    /// Isolated and reclaimed.
    Freed,
}

impl Mglru {
    /// Evicts page `id` (already unlinked) from type `t`.
    pub(super) fn evict<S: Sink>(&mut self, id: u32, t: usize, sink: &mut S) {
        let (refs, tier) = self.refs_tier(&self.pages[id as usize]);
        let p = &mut self.pages[id as usize];
        let ws = p.flags & WORKINGSET != 0;
        self.evicted[t][tier] += 1;
        let n = p.node;
        p.node = NIL;
        p.shadow_seq = self.min_seq[t];
        p.shadow_refs = refs;
        p.shadow_ws = ws;
        let out = PageOut {
            id,
            page: p.page,
            kind: if t == 0 { Kind::Anon } else { Kind::File },
            dirty: p.flags & DIRTY != 0,
            tier: 0,
        };
        p.flags &= ANON;
        p.refs = 0;
        let key = mapped_key(p.page, t == 0);
        if self.v6_1 && self.mapped.get(&key) == Some(&id) {
            self.mapped.remove(&key);
        }
        self.arena.release(n);
        self.resident -= 1;
        self.c_reclaimed[t] += 1;
        sink.evict(out);
    }

    /// One step of `scan_folios` + `shrink_folio_list` on the tail of type
    /// `t`'s oldest generation. Returns what became of the page; None when
    /// the type cannot be scanned (MIN_NR_GENS generations, or empty).
    pub(super) fn scan_one<S: Sink>(
        &mut self,
        t: usize,
        tier_idx: usize,
        sink: &mut S,
    ) -> Option<Scan> {
        Some(match self.sort_or_isolate(t, tier_idx)? {
            None => Scan::Sorted,
            Some(id) => self.shrink_one(id, t, sink),
        })
    }

    /// `scan_folios` for the page at the tail of type `t`'s oldest
    /// generation: `sort_folio` (Some(None): moved up a generation, protected
    /// by its tier) or `isolate_folio` (Some(Some(id)): unlinked, for
    /// `shrink_one`); None when the type cannot be scanned (MIN_NR_GENS
    /// generations, or empty).
    pub(super) fn sort_or_isolate(&mut self, t: usize, tier_idx: usize) -> Option<Option<u32>> {
        if self.nr_gens(t) <= MIN_NR_GENS {
            return None;
        }
        let old = slot(self.min_seq[t]);
        let n = self.lists[old][t].back()?;
        let id = *self.arena.get(n);
        // The next scan takes the node before this one, and reads its page's state: a chain of
        // two cache misses in a large cache. Start both now (the page's state as soon as that
        // node arrives), and the node after it, while this page is sorted.
        if let Some(prev) = self.lists[old][t].prev_of(&self.arena, n) {
            crate::policy::list::prefetch(&self.pages, *self.arena.get(prev) as usize);
            if let Some(next_prev) = self.lists[old][t].prev_of(&self.arena, prev) {
                self.arena.prefetch(next_prev);
            }
        }
        self.c_scanned[t] += 1;
        let p = self.pages[id as usize];
        let ws = p.flags & WORKINGSET != 0;
        self.lists[old][t].unlink(&mut self.arena, n);
        if self.v6_1 {
            let (refs, tier) = self.refs_tier(&p);
            if tier > tier_idx || refs == MAX_REFS {
                // sort_folio -> folio_inc_gen: LRU_REFS_MASK and
                // LRU_REFS_FLAGS cleared, to min_seq + 1, at the end
                // scanned first (list_move_tail).
                let q = &mut self.pages[id as usize];
                q.refs = 0;
                q.flags &= !(REFERENCED | WORKINGSET);
                self.link(id, self.min_seq[t] + 1, true);
                self.protected[t][tier] += 1;
                self.c_protected += 1;
                return Some(None);
            }
            // sort_folio of 6.1-6.11: a dirty file page waits for writeback.
            if self.sort_dirty(id, t) {
                return Some(None);
            }
            // isolate_folio.
            let q = &mut self.pages[id as usize];
            if q.flags & REFERENCED == 0 {
                q.refs = 0;
                q.flags &= !WORKINGSET;
            }
            q.flags &= !REFERENCED;
            self.isolated(id, t);
            return Some(Some(id));
        }
        let tier = tier_from_refs(p.refs, ws);
        // sort_folio: protected by its tier.
        if tier > tier_idx || (p.refs == MAX_REFS && ws) {
            self.pages[id as usize].refs = 0;
            self.link(id, self.min_seq[t] + 1, false);
            if !(p.refs == MAX_REFS && ws) {
                self.protected[t][tier] += 1;
            }
            self.c_protected += 1;
            return Some(None);
        }
        // isolate_folio: refs cleared unless PG_referenced (refs == 0 here
        // means no PG_referenced already).
        self.isolated(id, t);
        Some(Some(id))
    }

    /// `shrink_folio_list` (with `evict_folios`' put-back) for isolated page
    /// `id` of type `t`: kept (young) or reclaimed.
    pub(super) fn shrink_one<S: Sink>(&mut self, id: u32, t: usize, sink: &mut S) -> Scan {
        let p = self.pages[id as usize];
        let ws = p.flags & WORKINGSET != 0;
        if self.v6_1 && p.flags & (YOUNG | REFERENCED) != 0 {
            // 6.1-6.13: folio_check_references keeps or activates a young
            // page (its rmap walk clears the young bit and looks around);
            // a mapped page lru_gen_look_around found young while isolated
            // has PG_referenced and is kept ("folio_update_gen() tried to
            // promote this page?"). Either way evict_folios gives it
            // PG_active with LRU_REFS_MASK and LRU_REFS_FLAGS cleared ("don't
            // add rejected folios to the oldest generation"): max_seq.
            let q = &mut self.pages[id as usize];
            q.refs = 0;
            q.flags &= !(REFERENCED | WORKINGSET | YOUNG);
            self.link(id, self.max_seq, false);
            self.c_activated += 1;
            if p.flags & YOUNG != 0 {
                self.look_around(id, t == 0);
            }
            return Scan::Kept;
        }
        // folio_check_references: the young bit via the rmap walk.
        if p.flags & YOUNG != 0 {
            self.pages[id as usize].flags &= !YOUNG;
            if p.refs > 0 || ws {
                // lru_gen_set_refs -> FOLIOREF_ACTIVATE: PG_workingset,
                // refs cleared, PG_active -> max_seq.
                let q = &mut self.pages[id as usize];
                q.refs = 0;
                q.flags |= WORKINGSET;
                self.link(id, self.max_seq, false);
                self.c_activated += 1;
            } else {
                // FOLIOREF_KEEP: lru_gen_set_refs sets PG_referenced. On
                // the way back (evict_folios) an anon page goes to
                // max_seq - 1 (lru_gen_folio_seq, not in the swap cache);
                // a file page would land in the oldest generation, so it
                // gets PG_active with its LRU_REFS_FLAGS cleared ("don't
                // add rejected folios to the oldest generation"): also
                // max_seq - 1, but without PG_referenced. Anon pages read
                // back from swap stay in the swap cache in the kernel and
                // would be treated as file pages here; not modelled.
                self.pages[id as usize].refs = (t == 0) as u8;
                self.link(id, self.max_seq - 1, false);
                self.c_kept += 1;
            }
            return Scan::Kept;
        }
        // shrink_folio_list: a dirty file page is not written by reclaim.
        if self.pass_over_dirty(id, t) {
            return Scan::Kept;
        }
        self.evict(id, t, sink);
        Scan::Freed
    }

    /// `lru_gen_look_around` (6.1-6.13, memory-cgroup reclaim, which has no
    /// page-table walk at hand): eviction's rmap walk found page `id` young,
    /// so the PTEs around it are scanned too: the window of MIN_LRU_BATCH
    /// pages around it inside its PTE table (the aligned PTRS_PER_PMD = 512
    /// pages; page numbers stand for virtual addresses, one mapping), and
    /// every resident page of the same type found young there loses its
    /// young bit and is activated (`folio_clear_lru_refs`, `folio_activate`:
    /// to `max_seq`, refs counter, PG_referenced and PG_workingset cleared),
    /// or, if it is isolated in the same batch, gets PG_referenced.
    fn look_around(&mut self, id: u32, anon: bool) {
        const PTRS_PER_PMD: u64 = 512;
        let page = self.pages[id as usize].page;
        let (mut start, mut end) = (page & !(PTRS_PER_PMD - 1), (page | (PTRS_PER_PMD - 1)) + 1);
        if end - start > MIN_LRU_BATCH {
            if page - start < MIN_LRU_BATCH / 2 {
                end = start + MIN_LRU_BATCH;
            } else if end - page < MIN_LRU_BATCH / 2 {
                start = end - MIN_LRU_BATCH;
            } else {
                (start, end) = (page - MIN_LRU_BATCH / 2, page + MIN_LRU_BATCH / 2);
            }
        }
        let max_gen = slot(self.max_seq) as u8;
        for q in start..end {
            let Some(&n) = self.mapped.get(&mapped_key(q, anon)) else {
                continue;
            };
            let p = &mut self.pages[n as usize];
            if p.node == NIL || p.flags & YOUNG == 0 {
                continue;
            }
            p.flags &= !YOUNG;
            if p.flags & ISOLATED != 0 {
                // Isolated in the same batch (no generation): PG_referenced,
                // for shrink_folio_list.
                p.flags |= REFERENCED;
            } else if p.gen != max_gen {
                p.refs = 0;
                p.flags &= !(REFERENCED | WORKINGSET);
                self.unlink(n);
                self.link(n, self.max_seq, false);
                self.c_looked_around += 1;
            }
        }
    }

    /// Evicts the tail of the oldest non-empty generation (type `first`
    /// first), whatever its tier or young bit: the way out when nothing
    /// else frees a page (see the module documentation).
    pub(super) fn force_evict<S: Sink>(&mut self, first: usize, sink: &mut S) {
        for t in [first, 1 - first] {
            for seq in self.min_seq[t]..=self.max_seq {
                if let Some(n) = self.lists[slot(seq)][t].back() {
                    let id = *self.arena.get(n);
                    self.lists[slot(seq)][t].unlink(&mut self.arena, n);
                    self.c_scanned[t] += 1;
                    self.c_forced += 1;
                    self.evict(id, t, sink);
                    return;
                }
            }
        }
    }

    /// Reclaims `reclaim_batch` pages (`try_to_shrink_lruvec` rounds).
    pub(super) fn reclaim<S: Sink>(&mut self, sink: &mut S) {
        if self.min_ttl > 0 && self.working_set_protected(self.now) {
            self.c_min_ttl_oom += 1;
        }
        if self.v6_1 && self.reclaim_batch > 1 {
            self.reclaim_memcg(sink);
        } else {
            let target = self.reclaim_batch.min(self.resident).max(1);
            self.reclaim_pages(target, true, sink);
        }
        self.end_pass(sink);
    }

    /// Frees up to `target` pages; without `force`, gives up (returning
    /// fewer) where the forced eviction would have run.
    pub(super) fn reclaim_pages<S: Sink>(
        &mut self,
        target: usize,
        force: bool,
        sink: &mut S,
    ) -> usize {
        let mut freed = 0;
        // Bound on steps without progress before forcing an eviction.
        let limit = 4 * self.resident + 64;
        let mut idle = 0;
        while freed < target {
            let pick = self.isolate_type();
            let first = pick.0;
            if idle > limit {
                // The pass cannot free a page: it ends here, and the
                // flusher it woke (every file page taken dirty) gets a turn.
                if self.end_pass(sink) {
                    idle = 0;
                    continue;
                }
                if !force {
                    break;
                }
                self.force_evict(first, sink);
                freed += 1;
                idle = 0;
                continue;
            }
            self.try_to_inc_min_seq();
            if self.evictable_min_seq() + MIN_NR_GENS > self.max_seq {
                // With swappiness 0 and no file pages this repeats until
                // the bound above forces an eviction (the kernel OOM-kills).
                self.age();
                idle += 1;
                continue;
            }
            let mut done = None;
            for t in [first, 1 - first] {
                let Some(tier) = self.scan_tier(t, pick) else {
                    continue;
                };
                if let Some(f) = self.scan_one(t, tier, sink) {
                    done = Some(f == Scan::Freed);
                    break;
                }
            }
            match done {
                Some(true) => {
                    freed += 1;
                    idle = 0;
                }
                Some(false) => idle += 1,
                None => {
                    // Neither type can be scanned: age.
                    self.age();
                    idle += 1;
                }
            }
        }
        freed
    }
}
