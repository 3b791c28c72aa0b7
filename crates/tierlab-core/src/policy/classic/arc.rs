//! ARC (Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement
//! Cache", FAST 2003, Figure 4): T1 holds pages seen once recently, T2 pages
//! seen at least twice; B1 and B2 remember the ids of pages evicted from T1
//! and T2. A hit in B1 grows the target size `p` of T1 by max(|B2|/|B1|, 1)
//! (capped at c), a hit in B2 shrinks it by max(|B1|/|B2|, 1) (floored at 0);
//! REPLACE evicts T1's LRU page to B1 when |T1| > p (or |T1| = p and the
//! request hit in B2), else T2's LRU page to B2. ARC has no parameters.
//!
//! Follows libCacheSim's `ARC` where the paper leaves room: the adaptation
//! step is a real-valued ratio (not rounded), the directory is trimmed only
//! when a page must be evicted, and case IV tests |T1| + |B1| >= c then
//! "B1 non-empty" (the paper tests |T1| < c: the same when |T1| + |B1| = c).
//! With these, the miss counts equal libCacheSim's.

use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArcConfig {}

/// Which of ARC's four lists a page is on (CAR's clocks use the same four).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    T1,
    T2,
    B1,
    B2,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    loc: Loc,
}

pub struct Arc {
    cap: usize,
    p: TargetT1,
    d: Directory<Node>,
}

/// ARC's target size `p` of T1 (Figure 4; CAR's Figure 2 adapts it alike): a hit in B1 grows
/// it by max(|B2|/|B1|, 1) up to c, a hit in B2 shrinks it by max(|B1|/|B2|, 1) down to 0. The
/// step is the real-valued ratio, as in libCacheSim.
#[derive(Debug, Clone, Copy)]
pub(super) struct TargetT1 {
    p: f64,
    cap: f64,
}

impl TargetT1 {
    pub(super) fn new(cap: usize) -> Self {
        TargetT1 {
            p: 0.0,
            cap: cap as f64,
        }
    }
    #[inline]
    pub(super) fn get(&self) -> f64 {
        self.p
    }
    /// A request hit a ghost: in B1 (`in_b1`) or in B2, whose lengths are `b1` and `b2`.
    #[inline]
    pub(super) fn ghost_hit(&mut self, in_b1: bool, b1: usize, b2: usize) {
        let (b1, b2) = (b1 as f64, b2 as f64);
        self.p = if in_b1 {
            (self.p + (b2 / b1).max(1.0)).min(self.cap)
        } else {
            (self.p - (b1 / b2).max(1.0)).max(0.0)
        };
    }
}

/// The four lists of ARC and CAR over one arena of `N` nodes (resident pages in T1/T2, ghosts in
/// B1/B2; up to 2c entries) and the page-id table into it.
pub(super) struct Directory<N> {
    pub(super) arena: Arena<N>,
    pub(super) t1: List,
    pub(super) t2: List,
    pub(super) b1: List,
    pub(super) b2: List,
    pub(super) table: SlotTable,
}

impl<N> Directory<N> {
    pub(super) fn new(cap: usize) -> Self {
        Directory {
            arena: Arena::with_capacity(cap * 2),
            t1: List::default(),
            t2: List::default(),
            b1: List::default(),
            b2: List::default(),
            table: SlotTable::default(),
        }
    }
    /// Resident pages: |T1| + |T2|.
    pub(super) fn resident(&self) -> usize {
        self.t1.len() + self.t2.len()
    }
}

impl PolicyDef for Arc {
    const NAME: &'static str = "arc";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "ARC (Megiddo & Modha, FAST 2003): self-tuning balance of recency (T1/B1) and frequency (T2/B2).";
    type Config = ArcConfig;
    fn build(_cfg: &ArcConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Arc {
            cap: ctx.capacity,
            p: TargetT1::new(ctx.capacity),
            d: Directory::new(ctx.capacity),
        })
    }
}

impl Arc {
    fn list(&mut self, loc: Loc) -> &mut List {
        match loc {
            Loc::T1 => &mut self.d.t1,
            Loc::T2 => &mut self.d.t2,
            Loc::B1 => &mut self.d.b1,
            Loc::B2 => &mut self.d.b2,
        }
    }

    /// Moves the LRU page of `from` (T1 or T2) to the MRU end of ghost list `to`.
    fn demote<S: Sink>(&mut self, from: Loc, to: Loc, sink: &mut S) {
        let mut l = *self.list(from);
        let v = l.pop_back(&mut self.d.arena).expect("list is not empty");
        *self.list(from) = l;
        let n = self.d.arena.get_mut(v);
        n.loc = to;
        let out = n.f.out(0);
        let mut g = *self.list(to);
        g.push_front(&mut self.d.arena, v);
        *self.list(to) = g;
        sink.evict(out);
    }

    /// Forgets the LRU entry of a list (a ghost list, or T1 without a ghost).
    fn drop_lru(&mut self, loc: Loc) -> Frame {
        let mut l = *self.list(loc);
        let v = l.pop_back(&mut self.d.arena).expect("list is not empty");
        *self.list(loc) = l;
        let f = self.d.arena.get(v).f;
        self.d.table.clear(f.id);
        self.d.arena.release(v);
        f
    }

    /// REPLACE(x, p) of the paper.
    fn replace<S: Sink>(&mut self, in_b2: bool, sink: &mut S) {
        let t1 = self.d.t1.len() as f64;
        if (!self.d.t1.is_empty() && (t1 > self.p.get() || (t1 == self.p.get() && in_b2)))
            || self.d.t2.is_empty()
        {
            self.demote(Loc::T1, Loc::B1, sink);
        } else {
            self.demote(Loc::T2, Loc::B2, sink);
        }
    }
}

impl Policy for Arc {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.d
            .table
            .prefetch_ahead(near, far, |s| self.d.arena.prefetch(s));
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.d.table.get(r.id);
        let mut ghost: Option<Loc> = None;
        if slot != NIL {
            let loc = self.d.arena.get(slot).loc;
            match loc {
                Loc::T1 => {
                    self.d.t1.unlink(&mut self.d.arena, slot);
                    self.d.t2.push_front(&mut self.d.arena, slot);
                    let n = self.d.arena.get_mut(slot);
                    n.loc = Loc::T2;
                    n.f.dirty |= r.is_write();
                    sink.hit(r, 0);
                    return;
                }
                Loc::T2 => {
                    self.d.t2.move_to_front(&mut self.d.arena, slot);
                    self.d.arena.get_mut(slot).f.dirty |= r.is_write();
                    sink.hit(r, 0);
                    return;
                }
                Loc::B1 => {
                    self.p.ghost_hit(true, self.d.b1.len(), self.d.b2.len());
                    self.d.b1.unlink(&mut self.d.arena, slot);
                }
                Loc::B2 => {
                    self.p.ghost_hit(false, self.d.b1.len(), self.d.b2.len());
                    self.d.b2.unlink(&mut self.d.arena, slot);
                }
            }
            self.d.arena.release(slot);
            self.d.table.clear(r.id);
            ghost = Some(loc);
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.d.t1.len() + self.d.t2.len() >= self.cap {
            if let Some(g) = ghost {
                self.replace(g == Loc::B2, sink);
            } else if self.d.t1.len() + self.d.b1.len() >= self.cap {
                // Case IV(A): L1 is full.
                if !self.d.b1.is_empty() {
                    self.drop_lru(Loc::B1);
                    self.replace(false, sink);
                } else {
                    let f = self.drop_lru(Loc::T1);
                    sink.evict(f.out(0));
                }
            } else {
                // Case IV(B).
                if self.d.t1.len() + self.d.t2.len() + self.d.b1.len() + self.d.b2.len()
                    >= 2 * self.cap
                    && !self.d.b2.is_empty()
                {
                    self.drop_lru(Loc::B2);
                }
                self.replace(false, sink);
            }
        }
        let loc = if ghost.is_some() { Loc::T2 } else { Loc::T1 };
        let s = self.d.arena.alloc(Node {
            f: Frame::of(r),
            loc,
        });
        let mut l = *self.list(loc);
        l.push_front(&mut self.d.arena, s);
        *self.list(loc) = l;
        self.d.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.d.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.d.resident()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("p_final", self.p.get() as u64)]
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 2: 1 1 (1 to T2), 2 (T1), 3: |T1| + |B1| = 1 < 2, REPLACE
        // with p = 0 evicts T1's 2 to B1. 2 again: a B1 hit, p = 1, REPLACE
        // (|T1| = 1 = p, not a B2 hit: T2's 1 goes to B2); 2 enters T2.
        // 1: a B2 hit (p back to 0), 3 leaves T1 for B1; then 2 and 1 hit.
        assert_eq!(replay_ids("arc", 2, &[1, 1, 2, 3, 2, 1, 2, 1]), (3, 5));
        // A scan does not flush pages seen twice (T2), unlike LRU.
        let ids = [1, 1, 2, 2, 3, 4, 5, 6, 1, 2];
        assert_eq!(replay_ids("arc", 3, &ids), (4, 6));
        assert_eq!(replay_ids("lru", 3, &ids), (2, 8));
    }
}
