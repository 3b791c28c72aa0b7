//! Belady's MIN with object sizes: evict the resident objects whose next request is farthest
//! in the future (never-requested-again first) until the missed object fits; every object that
//! fits is inserted, as libCacheSim's `Belady` does. This is not the byte-optimal policy (that
//! is NP-hard; see BeladySize-style heuristics), only MIN's rule applied to sized objects.

use super::{ObjectCache, Queue, Store};
use crate::error::Result;
use crate::policy::classic::opt::OptConfig;
use crate::policy::list::NIL;
use crate::policy::{PolicyCtx, PolicyDef};
use crate::sim::PageRef;
use std::collections::BinaryHeap;

/// MIN's heap of (next use, object id); entries whose object is gone or has a later next use
/// are stale and skipped (lazy deletion). An object's `freq` holds its next use.
#[derive(Default)]
pub struct OptQueue {
    heap: BinaryHeap<(u64, u32)>,
}

pub type ObjOpt = ObjectCache<OptQueue>;

impl PolicyDef for ObjOpt {
    const NAME: &'static str = "opt";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Belady's MIN (object sizes).";
    const NEEDS_FUTURE: bool = true;
    type Config = OptConfig;
    fn build(_cfg: &OptConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(ObjectCache::new(ctx.capacity, OptQueue::default()))
    }
}

impl OptQueue {
    /// Whether heap entry `(n, id)` is live: the object is resident and next used at `n`.
    fn live(s: &Store, n: u64, id: u32) -> bool {
        let slot = s.slot_of_id(id);
        slot != NIL && s.arena.get(slot).freq == n
    }
    fn compact(&mut self, s: &Store) {
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap
            .into_iter()
            .filter(|&(n, id)| Self::live(s, n, id))
            .collect();
    }
}

impl Queue for OptQueue {
    fn first_freq(&self, r: &PageRef) -> u64 {
        r.next_use()
    }
    fn hit(&mut self, s: &mut Store, slot: u32, r: &PageRef) {
        s.arena.get_mut(slot).freq = r.next_use();
        self.heap.push((r.next_use(), r.id));
        if self.heap.len() > 4 * s.len() + 64 {
            self.compact(s);
        }
    }
    fn victim(&mut self, s: &mut Store) -> u32 {
        loop {
            let (n, id) = self
                .heap
                .pop()
                .expect("the heap holds every resident object");
            if Self::live(s, n, id) {
                return s.slot_of_id(id);
            }
        }
    }
    fn inserted(&mut self, _s: &mut Store, _slot: u32, r: &PageRef) {
        self.heap.push((r.next_use(), r.id));
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
