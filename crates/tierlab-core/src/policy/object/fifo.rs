//! FIFO with object sizes: evict the oldest objects until the missed object fits. Matches
//! libCacheSim's `FIFO` with sizes (objects and bytes missed).

use super::Store;
use crate::error::Result;
use crate::policy::classic::fifo::FifoConfig;
use crate::policy::list::{List, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};

pub struct ObjFifo {
    s: Store,
    /// Front = newest.
    q: List,
}

impl PolicyDef for ObjFifo {
    const NAME: &'static str = "fifo";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "First in, first out (object sizes).";
    type Config = FifoConfig;
    fn build(_cfg: &FifoConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjFifo {
            s: Store::new(ctx.capacity),
            q: List::default(),
        })
    }
}

impl Policy for ObjFifo {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r);
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
        // 10 bytes: a(4) b(4) fit; c(4) evicts a; a(4) misses and evicts b; c hits;
        // d(11) is larger than the cache: missed, not admitted, counted.
        let t = [(1, 4), (2, 4), (3, 4), (1, 4), (3, 4), (4, 11)];
        assert_eq!(replay_objects("fifo", 10, &t), (1, 5, 27, 1));
        // One big object pushes out both small ones.
        let t = [(1, 3), (2, 3), (3, 9), (1, 3)];
        assert_eq!(replay_objects("fifo", 10, &t), (0, 4, 18, 0));
    }
}
