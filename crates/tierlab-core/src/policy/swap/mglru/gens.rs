//! MGLRU's generations: linking pages, the aging walk (`folio_update_gen`,
//! `inc_max_seq`), and retiring generations (`inc_min_seq`,
//! `try_to_inc_min_seq`), split from `mglru.rs` (see its module
//! documentation for the mechanism).

use super::{
    slot, tier_from_refs, Mglru, ANON, MAX_NR_GENS, MAX_REFS, MIN_NR_GENS, REFERENCED, WORKINGSET,
    YOUNG,
};
use crate::policy::list::NIL;

impl Mglru {
    /// Unlinks a resident page from its generation list.
    pub(super) fn unlink(&mut self, id: u32) {
        let p = self.pages[id as usize];
        let t = (p.flags & ANON == 0) as usize;
        self.lists[p.gen as usize][t].unlink(&mut self.arena, p.node);
    }

    /// Links a resident page at the head (or tail) of generation `seq`.
    pub(super) fn link(&mut self, id: u32, seq: u64, tail: bool) {
        let p = &mut self.pages[id as usize];
        let t = (p.flags & ANON == 0) as usize;
        p.gen = slot(seq) as u8;
        let n = p.node;
        let l = &mut self.lists[slot(seq)][t];
        if tail {
            l.push_back(&mut self.arena, n);
        } else {
            l.push_front(&mut self.arena, n);
        }
    }

    /// `folio_update_gen` for a page the aging walk found young.
    pub(super) fn update_gen(&mut self, id: u32) {
        let p = &mut self.pages[id as usize];
        if self.v6_1 {
            // 6.1-6.13: every young page goes to max_seq, its refs counter,
            // PG_referenced and PG_workingset cleared.
            p.refs = 0;
            p.flags &= !(REFERENCED | WORKINGSET);
            self.unlink(id);
            self.link(id, self.max_seq, false);
            self.c_promoted += 1;
            return;
        }
        if p.refs == 0 && p.flags & WORKINGSET == 0 {
            p.refs = 1;
            return;
        }
        p.refs = 0;
        p.flags |= WORKINGSET;
        self.unlink(id);
        self.link(id, self.max_seq, false);
        self.c_promoted += 1;
    }

    /// `inc_min_seq`: moves the oldest generation of a type into the next,
    /// counting the pages as protected, and retires it.
    pub(super) fn inc_min_seq(&mut self, t: usize) {
        // A type that cannot be evicted (anon with swappiness 0) is not
        // sorted: its oldest generation becomes the youngest ("goto done").
        if t == 0 && !self.anon_evictable() {
            self.reset_ctrl_pos(t);
            self.min_seq[t] += 1;
            return;
        }
        let old = slot(self.min_seq[t]);
        let next = self.min_seq[t] + 1;
        while let Some(n) = self.lists[old][t].back() {
            let id = *self.arena.get(n);
            let p = self.pages[id as usize];
            let ws = p.flags & WORKINGSET != 0;
            self.lists[old][t].unlink(&mut self.arena, n);
            self.pages[id as usize].refs = 0;
            self.link(id, next, true);
            if self.v6_1 {
                // folio_inc_gen clears LRU_REFS_FLAGS too; 6.1-6.13 count
                // no protection here.
                self.pages[id as usize].flags &= !(REFERENCED | WORKINGSET);
            } else if !(p.refs == MAX_REFS && ws) {
                self.protected[t][tier_from_refs(p.refs, ws)] += 1;
            }
        }
        self.reset_ctrl_pos(t);
        self.min_seq[t] = next;
    }

    /// The aging: the page-table walk, then `inc_max_seq`.
    pub(super) fn age(&mut self) {
        let young = std::mem::take(&mut self.young);
        for &id in &young {
            let p = self.pages[id as usize];
            if p.node == NIL || p.flags & YOUNG == 0 {
                continue;
            }
            let anon = p.flags & ANON != 0;
            // should_skip_vma: anon VMAs are skipped with swappiness 0.
            if anon && !self.anon_evictable() {
                continue;
            }
            self.pages[id as usize].flags &= !YOUNG;
            self.update_gen(id);
        }
        self.young = young;
        self.young.clear();
        for t in 0..2 {
            if self.nr_gens(t) == MAX_NR_GENS {
                self.inc_min_seq(t);
            }
        }
        self.timestamps[slot(self.max_seq + 1)] = self.now;
        self.max_seq += 1;
        self.c_aging += 1;
    }

    /// `try_to_inc_min_seq`; true when a `min_seq` advanced.
    pub(super) fn try_to_inc_min_seq(&mut self) -> bool {
        let mut min_seq = self.min_seq;
        let mut success = false;
        for (t, seq) in min_seq.iter_mut().enumerate() {
            if t == 0 && !self.anon_evictable() {
                continue;
            }
            while *seq + MIN_NR_GENS <= self.max_seq && self.lists[slot(*seq)][t].is_empty() {
                *seq += 1;
            }
        }
        if self.swappiness() > 0 && self.v6_1 {
            // 6.1-6.13: anon is never ahead of file, and file advances only
            // up to anon's min_seq: while anon's oldest generation holds a
            // page, file's min_seq waits at it (even when that file
            // generation is empty), so scan_folios finds nothing on file and
            // isolate_folios turns to anon.
            min_seq[0] = min_seq[0].min(min_seq[1]);
            min_seq[1] = min_seq[0].max(self.min_seq[1]);
        } else if self.swappiness() > 0 {
            let seq = self.max_seq - MIN_NR_GENS;
            if min_seq[0] > seq && min_seq[1] < seq {
                min_seq[0] = seq;
            } else if min_seq[1] > seq && min_seq[0] < seq {
                min_seq[1] = seq;
            }
        }
        for (t, &seq) in min_seq.iter().enumerate() {
            if t == 0 && !self.anon_evictable() {
                continue;
            }
            // The coupling rule may lower a min_seq the loop raised, never
            // below the current one; generations it skipped are empty.
            if seq > self.min_seq[t] {
                self.reset_ctrl_pos(t);
                self.min_seq[t] = seq;
                success = true;
            }
        }
        success
    }
}
