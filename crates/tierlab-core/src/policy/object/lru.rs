//! LRU with object sizes: evict the least recently used objects until the missed object fits.
//! Matches libCacheSim's `LRU` with sizes (objects and bytes missed).

use super::{ObjectCache, Queue, Store};
use crate::error::Result;
use crate::policy::classic::lru::LruConfig;
use crate::policy::list::List;
use crate::policy::{PolicyCtx, PolicyDef};
use crate::sim::PageRef;

/// LRU's stack: front = most recent.
#[derive(Default)]
pub struct LruQueue(List);

pub type ObjLru = ObjectCache<LruQueue>;

impl PolicyDef for ObjLru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used (object sizes).";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjectCache::new(ctx.capacity, LruQueue::default()))
    }
}

impl Queue for LruQueue {
    fn hit(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        self.0.move_to_front(&mut s.arena, slot);
    }
    fn victim(&mut self, s: &mut Store) -> u32 {
        self.0
            .pop_back(&mut s.arena)
            .expect("a cache over capacity is not empty")
    }
    fn inserted(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        self.0.push_front(&mut s.arena, slot);
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
