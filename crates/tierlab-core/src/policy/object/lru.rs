//! LRU with object sizes: evict the least recently used objects until the missed object fits.
//! Matches libCacheSim's `LRU` with sizes (objects and bytes missed).

use super::{ListQueue, ListRule, ObjectCache, Store};
use crate::error::Result;
use crate::policy::classic::lru::LruConfig;
use crate::policy::list::List;
use crate::policy::{PolicyCtx, PolicyDef};

/// LRU's rule: a hit moves the object to the front; the victim is the back (least recent).
#[derive(Default)]
pub struct LruRule;

pub type ObjLru = ObjectCache<ListQueue<LruRule>>;

impl PolicyDef for ObjLru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used (object sizes).";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjectCache::new(ctx.capacity, ListQueue::default()))
    }
}

impl ListRule for LruRule {
    #[inline]
    fn hit(&mut self, q: &mut List, s: &mut Store, slot: u32) {
        q.move_to_front(&mut s.arena, slot);
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
