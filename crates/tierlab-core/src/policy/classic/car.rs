//! CAR (Bansal & Modha, "CAR: Clock with Adaptive Replacement", FAST 2004,
//! Section III and Figure 2): ARC's adaptation with two CLOCKs instead of two
//! LRU lists. T1 and T2 are clocks of resident pages with a reference bit set
//! on hits (hits move nothing); B1 and B2 are LRU lists of the ids evicted
//! from T1 and T2. The target size p of T1 grows by max(1, |B2|/|B1|) on a
//! B1 hit and shrinks by max(1, |B1|/|B2|) on a B2 hit. `replace` sweeps T1
//! when |T1| >= max(1, p) (a referenced page there moves to T2's tail with
//! its bit cleared, an unreferenced one is demoted to B1), else T2 (a
//! referenced page goes back to T2's tail, an unreferenced one to B2). The
//! directory is kept to |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c
//! as in the figure. CAR has no parameters; like our ARC, the adaptation step
//! is the real-valued ratio.

use super::arc::{Directory, Loc, TargetT1};
use crate::error::Result;
use crate::policy::list::NIL;
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CarConfig {}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    loc: Loc,
    referenced: bool,
}

/// Clocks: back = the hand's position (head), front = tail (newest).
/// Ghost lists: front = MRU, back = LRU.
pub struct Car {
    cap: usize,
    p: TargetT1,
    d: Directory<Node>,
}

impl PolicyDef for Car {
    const NAME: &'static str = "car";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "CAR (Bansal & Modha, FAST 2004): ARC's adaptation over two CLOCKs.";
    type Config = CarConfig;
    fn build(_cfg: &CarConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Car {
            cap: ctx.capacity,
            p: TargetT1::new(ctx.capacity),
            d: Directory::new(ctx.capacity),
        })
    }
}

impl Car {
    fn forget_lru(&mut self, ghost: Loc) {
        let v = match ghost {
            Loc::B1 => self.d.b1.pop_back(&mut self.d.arena),
            _ => self.d.b2.pop_back(&mut self.d.arena),
        }
        .expect("ghost list is not empty");
        self.d.table.clear(self.d.arena.get(v).f.id);
        self.d.arena.release(v);
    }

    fn replace<S: Sink>(&mut self, sink: &mut S) {
        loop {
            if self.d.t1.len() as f64 >= self.p.get().max(1.0) {
                let h = self
                    .d
                    .t1
                    .pop_back(&mut self.d.arena)
                    .expect("T1 is not empty");
                let n = self.d.arena.get_mut(h);
                if !n.referenced {
                    n.loc = Loc::B1;
                    let out = n.f.out(0);
                    self.d.b1.push_front(&mut self.d.arena, h);
                    sink.evict(out);
                    return;
                }
                n.referenced = false;
                n.loc = Loc::T2;
                self.d.t2.push_front(&mut self.d.arena, h);
            } else {
                let h = self
                    .d
                    .t2
                    .pop_back(&mut self.d.arena)
                    .expect("T2 is not empty");
                let n = self.d.arena.get_mut(h);
                if !n.referenced {
                    n.loc = Loc::B2;
                    let out = n.f.out(0);
                    self.d.b2.push_front(&mut self.d.arena, h);
                    sink.evict(out);
                    return;
                }
                n.referenced = false;
                self.d.t2.push_front(&mut self.d.arena, h);
            }
        }
    }
}

impl Policy for Car {
    /// The table entry of the reference 16 ahead and the node of the one 6 ahead, as ARC.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.d
            .table
            .prefetch_ahead(near, far, |s| self.d.arena.prefetch(s));
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.d.table.get(r.id);
        let loc = (slot != NIL).then(|| self.d.arena.get(slot).loc);
        if matches!(loc, Some(Loc::T1) | Some(Loc::T2)) {
            let n = self.d.arena.get_mut(slot);
            n.referenced = true;
            n.f.dirty |= r.is_write();
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let in_ghost = loc.is_some();
        if self.d.t1.len() + self.d.t2.len() == self.cap {
            self.replace(sink);
            if !in_ghost && self.d.t1.len() + self.d.b1.len() == self.cap {
                self.forget_lru(Loc::B1);
            } else if !in_ghost
                && self.d.t1.len() + self.d.t2.len() + self.d.b1.len() + self.d.b2.len()
                    == 2 * self.cap
            {
                self.forget_lru(Loc::B2);
            }
        }
        let node = Node {
            f: Frame::of(r),
            loc: Loc::T1,
            referenced: false,
        };
        match loc {
            None => {
                let s = self.d.arena.alloc(node);
                self.d.t1.push_front(&mut self.d.arena, s);
                self.d.table.set(r.id, s);
            }
            Some(g) => {
                self.p
                    .ghost_hit(g == Loc::B1, self.d.b1.len(), self.d.b2.len());
                if g == Loc::B1 {
                    self.d.b1.unlink(&mut self.d.arena, slot);
                } else {
                    self.d.b2.unlink(&mut self.d.arena, slot);
                }
                *self.d.arena.get_mut(slot) = Node {
                    loc: Loc::T2,
                    ..node
                };
                self.d.t2.push_front(&mut self.d.arena, slot);
            }
        }
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.d.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.d.resident()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 2: 1 2 1 3: at 3, replace sweeps T1 (|T1| = 2 >= max(1, 0)):
        // 1 is referenced and moves to T2, 2 is demoted to B1. Then 2 comes
        // back from B1 (p grows to 1), replace evicts 3 (T1, unreferenced),
        // and 1 still hits.
        assert_eq!(replay_ids("car", 2, &[1, 2, 1, 3, 2, 1]), (2, 4));
    }
}
