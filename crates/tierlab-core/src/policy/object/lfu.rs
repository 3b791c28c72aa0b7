//! LFU with object sizes: evict the resident objects with the fewest references (ties: first
//! to reach the count) until the missed object fits. The same O(1) frequency lists as page
//! mode (Shah, Mitra & Matani 2010); after an eviction empties the lowest list, the next
//! non-empty one is the minimum. Matches libCacheSim's `LFU` with sizes.

use super::{ObjectCache, Queue, Store};
use crate::error::Result;
use crate::policy::classic::lfu::LfuConfig;
use crate::policy::list::List;
use crate::policy::{PolicyCtx, PolicyDef};
use crate::sim::PageRef;

/// LFU's frequency lists: `lists[f]` holds the objects referenced `f` times, in order of
/// reaching `f` (front = first).
pub struct LfuQueue {
    lists: Vec<List>,
    min_freq: usize,
}

pub type ObjLfu = ObjectCache<LfuQueue>;

impl PolicyDef for ObjLfu {
    const NAME: &'static str = "lfu";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "In-cache LFU (object sizes).";
    type Config = LfuConfig;
    fn build(_cfg: &LfuConfig, ctx: &PolicyCtx) -> Result<Self> {
        let q = LfuQueue {
            lists: vec![List::default(); 2],
            min_freq: 1,
        };
        Ok(ObjectCache::new(ctx.capacity, q))
    }
}

impl Queue for LfuQueue {
    fn first_freq(&self, _r: &PageRef) -> u64 {
        1
    }
    fn hit(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        let o = s.arena.get_mut(slot);
        let f = o.freq as usize;
        o.freq += 1;
        if self.lists.len() <= f + 1 {
            self.lists.push(List::default());
        }
        self.lists[f].unlink(&mut s.arena, slot);
        self.lists[f + 1].push_back(&mut s.arena, slot);
        if self.min_freq == f && self.lists[f].is_empty() {
            self.min_freq = f + 1;
        }
    }
    fn victim(&mut self, s: &mut Store) -> u32 {
        while self.lists[self.min_freq].is_empty() {
            self.min_freq += 1;
        }
        self.lists[self.min_freq]
            .pop_front(&mut s.arena)
            .expect("the minimum frequency list is not empty")
    }
    fn inserted(&mut self, s: &mut Store, slot: u32, _r: &PageRef) {
        self.lists[1].push_back(&mut s.arena, slot);
        self.min_freq = 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::object::testing::replay_objects;

    #[test]
    fn hand_worked() {
        // 10 bytes: a(4) a b(4) (counts a:2 b:1); c(6) evicts b (fewest) then a; b misses,
        // evicts c (count 1, the only object).
        let t = [(1, 4), (1, 4), (2, 4), (3, 6), (2, 4)];
        assert_eq!(replay_objects("lfu", 10, &t), (1, 4, 18, 0));
    }
}
