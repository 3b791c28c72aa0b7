//! LRU: evict the least recently used page. Matches libCacheSim's `LRU`.

use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruConfig {}

pub struct Lru {
    cap: usize,
    arena: Arena<Frame>,
    stack: List,
    table: SlotTable,
}

impl PolicyDef for Lru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used.";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Lru {
            cap: ctx.capacity,
            arena: Arena::with_capacity(ctx.capacity),
            stack: List::default(),
            table: SlotTable::default(),
        })
    }
}

impl Policy for Lru {
    #[inline(always)]
    fn prefetch(&self, near: &PageRef, far: &PageRef) {
        self.table
            .prefetch_ahead(near, far, |s| self.arena.prefetch(s));
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.arena.get_mut(slot).dirty |= r.is_write();
            self.stack.move_to_front(&mut self.arena, slot);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.stack.len() == self.cap {
            // Reuse the victim's slot: no allocation in the steady state.
            let v = self
                .stack
                .pop_back(&mut self.arena)
                .expect("full cache has a tail");
            let victim = *self.arena.get(v);
            self.table.clear(victim.id);
            sink.evict(victim.out(0));
            *self.arena.get_mut(v) = Frame::of(r);
            v
        } else {
            self.arena.alloc(Frame::of(r))
        };
        self.stack.push_front(&mut self.arena, slot);
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.stack.len()
    }
}
