//! FIFO with object sizes: evict the oldest objects until the missed object fits. Matches
//! libCacheSim's `FIFO` with sizes (objects and bytes missed).

use super::{ListQueue, ListRule, ObjectCache, Store};
use crate::error::Result;
use crate::policy::classic::fifo::FifoConfig;
use crate::policy::list::List;
use crate::policy::{PolicyCtx, PolicyDef};

/// FIFO's rule: a hit changes nothing; the victim is the oldest insertion.
#[derive(Default)]
pub struct FifoRule;

pub type ObjFifo = ObjectCache<ListQueue<FifoRule>>;

impl PolicyDef for ObjFifo {
    const NAME: &'static str = "fifo";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "First in, first out (object sizes).";
    type Config = FifoConfig;
    fn build(_cfg: &FifoConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjectCache::new(ctx.capacity, ListQueue::default()))
    }
}

impl ListRule for FifoRule {
    #[inline]
    fn hit(&mut self, _q: &mut List, _s: &mut Store, _slot: u32) {}
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn hand_worked() {
        // 10 bytes: a(4) b(4) fit; c(4) evicts a; a(4) misses and evicts b; c hits;
        // d(11) is larger than the cache: missed, not admitted, counted.
        let t = [(1, 4), (2, 4), (3, 4), (1, 4), (3, 4), (4, 11)];
        assert_eq!(replay_objects("fifo", 10, &t), (1, 5, 27, 1));
        // One big object pushes out both small ones.
        let t = [(1, 3), (2, 3), (3, 9), (1, 3)];
        assert_eq!(replay_objects("fifo", 10, &t), (0, 4, 18, 0));
    }
}
