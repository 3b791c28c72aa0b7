//! LFU with object sizes: evict the resident objects with the fewest references (ties: first
//! to reach the count) until the missed object fits. The same O(1) frequency lists as page
//! mode (Shah, Mitra & Matani 2010); after an eviction empties the lowest list, the next
//! non-empty one is the minimum. Matches libCacheSim's `LFU` with sizes.

use super::Store;
use crate::error::Result;
use crate::policy::classic::lfu::LfuConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

pub struct ObjLfu {
    s: Store,
    /// `lists[f]`: objects referenced `f` times, in order of reaching `f` (front = first).
    lists: Vec<List>,
    min_freq: usize,
}

impl PolicyDef for ObjLfu {
    const NAME: &'static str = "lfu";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "In-cache LFU (object sizes).";
    type Config = LfuConfig;
    fn build(_cfg: &LfuConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjLfu {
            s: Store::new(ctx.capacity),
            lists: vec![List::default(); 2],
            min_freq: 1,
        })
    }
}

impl Policy for ObjLfu {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            let o = self.s.touch(slot, r);
            let f = o.freq as usize;
            o.freq += 1;
            if self.lists.len() <= f + 1 {
                self.lists.push(List::default());
            }
            self.lists[f].unlink(&mut self.s.arena, slot);
            self.lists[f + 1].push_back(&mut self.s.arena, slot);
            if self.min_freq == f && self.lists[f].is_empty() {
                self.min_freq = f + 1;
            }
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            while self.lists[self.min_freq].is_empty() {
                self.min_freq += 1;
            }
            let v = self.lists[self.min_freq]
                .pop_front(&mut self.s.arena)
                .expect("the minimum frequency list is not empty");
            self.s.evict(v, sink);
        }
        let slot = self.s.insert(r, 1);
        self.lists[1].push_back(&mut self.s.arena, slot);
        self.min_freq = 1;
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
        // 10 bytes: a(4) a b(4) (counts a:2 b:1); c(6) evicts b (fewest) then a; b misses,
        // evicts c (count 1, the only object).
        let t = [(1, 4), (1, 4), (2, 4), (3, 6), (2, 4)];
        assert_eq!(replay_objects("lfu", 10, &t), (1, 4, 18, 0));
    }
}
