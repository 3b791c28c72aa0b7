//! Belady's MIN with object sizes: evict the resident objects whose next request is farthest
//! in the future (never-requested-again first) until the missed object fits; every object that
//! fits is inserted, as libCacheSim's `Belady` does. This is not the byte-optimal policy (that
//! is NP-hard; see BeladySize-style heuristics), only MIN's rule applied to sized objects.

use super::Store;
use crate::error::Result;
use crate::policy::classic::opt::OptConfig;
use crate::policy::list::NIL;
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use std::collections::BinaryHeap;

pub struct ObjOpt {
    s: Store,
    /// (next use, object id); entries whose object is gone or has a later next use are stale
    /// and skipped (lazy deletion).
    heap: BinaryHeap<(u64, u32)>,
}

impl PolicyDef for ObjOpt {
    const NAME: &'static str = "opt";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Belady's MIN (object sizes).";
    const NEEDS_FUTURE: bool = true;
    type Config = OptConfig;
    fn build(_cfg: &OptConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjOpt {
            s: Store::new(ctx.capacity),
            heap: BinaryHeap::new(),
        })
    }
}

impl ObjOpt {
    /// Whether heap entry `(n, id)` is live: the object is resident and next used at `n`.
    fn live(&self, n: u64, id: u32) -> bool {
        let slot = self.s.slot_of_id(id);
        slot != NIL && self.s.arena.get(slot).freq == n
    }
    fn compact(&mut self) {
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap
            .into_iter()
            .filter(|&(n, id)| self.live(n, id))
            .collect();
    }
}

impl Policy for ObjOpt {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        // `freq` holds the object's next use.
        let slot = self.s.slot(r);
        if slot != NIL {
            self.s.touch(slot, r).freq = r.next_use();
            self.heap.push((r.next_use(), r.id));
            if self.heap.len() > 4 * self.s.len() + 64 {
                self.compact();
            }
            sink.hit(r, 0);
            return;
        }
        if !self.s.admissible(r) {
            sink.miss_bypass(r);
            return;
        }
        while self.s.needs_room(r) {
            let id = loop {
                let (n, id) = self
                    .heap
                    .pop()
                    .expect("the heap holds every resident object");
                if self.live(n, id) {
                    break id;
                }
            };
            let v = self.s.slot_of_id(id);
            self.s.evict(v, sink);
        }
        self.s.insert(r, r.next_use());
        self.heap.push((r.next_use(), r.id));
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
        // 10 bytes: a(4) b(4) c(4): c evicts b (next used after a); a hits; b misses and
        // evicts c (never again) ... a(4) is next used at 4, b at 5.
        let t = [(1, 4), (2, 4), (3, 4), (1, 4), (2, 4)];
        assert_eq!(replay_objects("opt", 10, &t), (1, 4, 16, 0));
    }
}
