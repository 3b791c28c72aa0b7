//! SIEVE (Zhang et al., "SIEVE is Simpler than LRU: an Efficient Turn-Key
//! Eviction Algorithm for Web Caches", NSDI 2024, Section 3 and Figure 2):
//! one FIFO queue, a visited bit per object set on a hit, and a hand that
//! moves from the tail (oldest) towards the head, clearing visited bits and
//! evicting the first unvisited object; the hand stays where the victim was
//! (it continues from the victim's newer neighbour, wrapping to the tail).
//! New objects go to the head and are not visited. Hits do not move objects.
//! Matches libCacheSim's `Sieve` miss for miss (no parameters).

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, List, SlotBits, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SieveConfig {}

/// Visited and dirty bits live apart from the queue's nodes, one bit per slot, so a hit (the
/// common case) touches only the page's table entry and two bits that stay in L1; the nodes are
/// read only by the hand and on insertion.
pub struct Sieve {
    cap: usize,
    arena: Arena<Frame>,
    visited: SlotBits,
    dirty: SlotBits,
    /// Front = head (newest), back = tail (oldest).
    queue: List,
    /// The hand (a slot), or NIL: start from the tail.
    hand: u32,
    table: SlotTable,
}

impl PolicyDef for Sieve {
    const NAME: &'static str = "sieve";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "SIEVE (Zhang et al., NSDI 2024): FIFO with a visited bit and a sweeping hand.";
    type Config = SieveConfig;
    fn build(_cfg: &SieveConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Sieve {
            cap: ctx.capacity,
            arena: Arena::with_capacity(ctx.capacity),
            visited: SlotBits::with_slots(ctx.capacity),
            dirty: SlotBits::with_slots(ctx.capacity),
            queue: List::default(),
            hand: NIL,
            table: SlotTable::default(),
        })
    }
}

impl Sieve {
    /// Evicts one object and returns its slot (unlinked, still allocated).
    fn evict<S: Sink>(&mut self, sink: &mut S) -> u32 {
        let tail = self.queue.back().expect("full cache");
        let mut obj = if self.hand == NIL { tail } else { self.hand };
        while self.visited.get(obj as usize) {
            self.visited.assign(obj as usize, false);
            obj = self
                .queue
                .prev_of(&self.arena, obj)
                .unwrap_or_else(|| self.queue.back().expect("non-empty"));
        }
        self.hand = self.queue.prev_of(&self.arena, obj).unwrap_or(NIL);
        self.queue.unlink(&mut self.arena, obj);
        let victim = Frame {
            dirty: self.dirty.get(obj as usize),
            ..*self.arena.get(obj)
        };
        self.table.forget_evicted(&victim, 0, sink);
        obj
    }
}

impl Policy for Sieve {
    table_glue!(table);

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.visited.set(slot as usize);
            self.dirty.set_if(slot as usize, r.is_write());
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.queue.len() == self.cap {
            let s = self.evict(sink);
            *self.arena.get_mut(s) = Frame::of(r);
            s
        } else {
            self.arena.alloc(Frame::of(r))
        };
        // The evicted slot's visited bit is clear (the hand stopped on it).
        self.visited.assign(slot as usize, false);
        self.dirty.assign(slot as usize, r.is_write());
        self.queue.push_front(&mut self.arena, slot);
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 3: 1 2 3 fill; 1 hit (visited). 4: hand starts at the tail
        // (1), clears its bit, evicts 2; the hand stays at 3. 1 hits. 5: 3 is
        // unvisited and goes. 2 and 3 then miss.
        assert_eq!(replay_ids("sieve", 3, &[1, 2, 3, 1, 4, 1, 5, 2, 3]), (2, 7));
    }
}
