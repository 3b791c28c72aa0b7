//! SIEVE with object sizes (Zhang et al., NSDI'24): the hand moves from the tail towards the
//! head, clearing visited bits, and evicts objects without one until the missed object fits;
//! new objects enter at the head. Matches libCacheSim's `Sieve` with sizes.

use super::{ListQueue, ListRule, ObjectCache, Store};
use crate::error::Result;
use crate::policy::classic::sieve::SieveConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{PolicyCtx, PolicyDef};

/// SIEVE's rule over its queue (front = head, newest): a hit sets the visited bit; the hand
/// (NIL: start at the tail) looks for the victim.
pub struct SieveRule {
    hand: u32,
}

pub type ObjSieve = ObjectCache<ListQueue<SieveRule>>;

impl PolicyDef for ObjSieve {
    const NAME: &'static str = "sieve";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "SIEVE (object sizes).";
    type Config = SieveConfig;
    fn build(_cfg: &SieveConfig, ctx: &PolicyCtx) -> Result<Self> {
        let rule = SieveRule { hand: NIL };
        Ok(ObjectCache::new(ctx.capacity, ListQueue::new(rule)))
    }
}

impl ListRule for SieveRule {
    #[inline]
    fn hit(&mut self, _q: &mut List, s: &mut Store, slot: u32) {
        s.arena.get_mut(slot).freq = 1;
    }
    #[inline]
    fn victim(&mut self, q: &mut List, s: &mut Store) -> u32 {
        let tail = q.back().expect("a cache over capacity is not empty");
        let mut v = if self.hand == NIL { tail } else { self.hand };
        loop {
            let o = s.arena.get_mut(v);
            if o.freq == 0 {
                break;
            }
            o.freq -= 1;
            v = q.prev_of(&s.arena, v).unwrap_or(tail);
        }
        self.hand = q.prev_of(&s.arena, v).unwrap_or(NIL);
        q.unlink(&mut s.arena, v);
        v
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
