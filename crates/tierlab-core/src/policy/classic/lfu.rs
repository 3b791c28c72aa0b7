//! LFU: evict the resident page with the fewest references since it entered
//! the cache; ties go to the page that reached that count first. This is the
//! in-cache ("perfect" only over resident pages) LFU with O(1) frequency
//! lists of Shah, Mitra & Matani ("An O(1) algorithm for implementing the LFU
//! cache eviction scheme", 2010, Section 3): one list per count, a page moves
//! to the tail of the next list on a hit, the victim is the head of the
//! lowest non-empty list. Counts are forgotten on eviction. Matches
//! libCacheSim's `LFU` miss for miss (same tie rule: first to reach the count).

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LfuConfig {}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    freq: usize,
}

pub struct Lfu {
    cap: usize,
    resident: usize,
    arena: Arena<Node>,
    /// `lists[f]`: pages referenced `f` times, in order of reaching `f`
    /// (front = first). Index 0 is unused.
    lists: Vec<List>,
    min_freq: usize,
    table: SlotTable,
}

impl PolicyDef for Lfu {
    const NAME: &'static str = "lfu";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "In-cache LFU with O(1) frequency lists (Shah et al. 2010); ties to the first to reach the count.";
    type Config = LfuConfig;
    fn build(_cfg: &LfuConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Lfu {
            cap: ctx.capacity,
            resident: 0,
            arena: Arena::with_capacity(ctx.capacity),
            lists: vec![List::default(); 2],
            min_freq: 1,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Lfu {
    table_glue!(arena);

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            let f = n.freq;
            n.freq = f + 1;
            if self.lists.len() <= f + 1 {
                self.lists.push(List::default());
            }
            self.lists[f].unlink(&mut self.arena, slot);
            self.lists[f + 1].push_back(&mut self.arena, slot);
            if self.min_freq == f && self.lists[f].is_empty() {
                self.min_freq = f + 1;
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let node = Node {
            f: Frame::of(r),
            freq: 1,
        };
        let slot = if self.resident == self.cap {
            let min = self.min_freq;
            let v = self.lists[min]
                .pop_front(&mut self.arena)
                .expect("the minimum frequency list is not empty");
            let victim = self.arena.get(v).f;
            self.table.forget_evicted(&victim, 0, sink);
            *self.arena.get_mut(v) = node;
            v
        } else {
            self.resident += 1;
            self.arena.alloc(node)
        };
        self.lists[1].push_back(&mut self.arena, slot);
        self.min_freq = 1;
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.resident
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 2: 1 1 2 (counts 1:2, 2:1); 3 evicts 2 (fewest); 2 evicts 3
        // (count 1 against 1's 2); 1 hits.
        assert_eq!(replay_ids("lfu", 2, &[1, 1, 2, 3, 2, 1]), (2, 4));
        // Ties go to the page that reached the count first: 1 2 (both 1),
        // 3 evicts 1.
        assert_eq!(replay_ids("lfu", 2, &[1, 2, 3, 2, 1]), (1, 4));
    }
}
