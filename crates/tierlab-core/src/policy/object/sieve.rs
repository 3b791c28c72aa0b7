//! SIEVE with object sizes (Zhang et al., NSDI'24): the hand moves from the tail towards the
//! head, clearing visited bits, and evicts objects without one until the missed object fits;
//! new objects enter at the head. Matches libCacheSim's `Sieve` with sizes.

use super::Store;
use crate::error::Result;
use crate::policy::classic::sieve::SieveConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

pub struct ObjSieve {
    s: Store,
    /// Front = head (newest).
    q: List,
    /// The hand: the next object to examine, or NIL (start at the tail).
    hand: u32,
}

impl PolicyDef for ObjSieve {
    const NAME: &'static str = "sieve";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "SIEVE (object sizes).";
    type Config = SieveConfig;
    fn build(_cfg: &SieveConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjSieve {
            s: Store::new(ctx.capacity),
            q: List::default(),
            hand: NIL,
        })
    }
}

impl ObjSieve {
    fn evict_one<S: Sink>(&mut self, sink: &mut S) {
        let tail = self.q.back().expect("a cache over capacity is not empty");
        let mut v = if self.hand == NIL { tail } else { self.hand };
        loop {
            let o = self.s.arena.get_mut(v);
            if o.freq == 0 {
                break;
            }
            o.freq -= 1;
            v = self.q.prev_of(&self.s.arena, v).unwrap_or(tail);
        }
        self.hand = self.q.prev_of(&self.s.arena, v).unwrap_or(NIL);
        self.q.unlink(&mut self.s.arena, v);
        self.s.evict(v, sink);
    }
}

impl Policy for ObjSieve {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r).freq = 1;
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            self.evict_one(sink);
        }
        let slot = self.s.insert(r, 0);
        self.q.push_front(&mut self.s.arena, slot);
        sink.miss(r, 0);
    }
    fn grow(&mut self, n: usize) {
        self.s.grow(n);
    }
    fn resident(&self) -> usize {
        self.s.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn hand_worked() {
        // 10 bytes: a(4) b(4) (b at the head); a hits (visited). c(4): the hand starts at the
        // tail, clears a, moves to b and evicts it (the hand falls off the head: back to the
        // tail next time). a hits again. b(4): the hand clears a again, moves to c, evicts it.
        let t = [(1, 4), (2, 4), (1, 4), (3, 4), (1, 4), (2, 4)];
        assert_eq!(replay_objects("sieve", 10, &t), (2, 4, 16, 0));
    }
}
