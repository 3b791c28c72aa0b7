//! LRU with object sizes: evict the least recently used objects until the missed object fits.
//! Matches libCacheSim's `LRU` with sizes (objects and bytes missed).

use super::Store;
use crate::error::Result;
use crate::policy::classic::lru::LruConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

pub struct ObjLru {
    s: Store,
    /// Front = most recent.
    q: List,
}

impl PolicyDef for ObjLru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used (object sizes).";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjLru {
            s: Store::new(ctx.capacity),
            q: List::default(),
        })
    }
}

impl Policy for ObjLru {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r);
            self.q.move_to_front(&mut self.s.arena, slot);
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            let v = self
                .q
                .pop_back(&mut self.s.arena)
                .expect("a cache over capacity is not empty");
            self.s.evict(v, sink);
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
        // 10 bytes: a(4) b(4); a hits (b is now least recent); c(4) evicts b; a hits; b misses
        // and evicts c.
        let t = [(1, 4), (2, 4), (1, 4), (3, 4), (1, 4), (2, 4), (3, 4)];
        assert_eq!(replay_objects("lru", 10, &t), (2, 5, 20, 0));
        // An object of exactly the capacity is admitted and evicts everything.
        let t = [(1, 2), (2, 10), (1, 2), (3, 12)];
        assert_eq!(replay_objects("lru", 10, &t), (0, 4, 26, 1));
    }
}
