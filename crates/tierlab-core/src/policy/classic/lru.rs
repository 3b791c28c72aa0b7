//! LRU: evict the least recently used page. Matches libCacheSim's `LRU`.

use crate::error::Result;
use crate::policy::list::{Ring, SlotFrames, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruConfig {}

/// The recency stack is a [`Ring`] of 8-byte links, so a hit (the common case) touches the
/// page's table entry, its links and its neighbours' links, and a dirty bit; the pages
/// ([`SlotFrames`]) are read back only on eviction. Slots start at 1 (0 is the ring's sentinel,
/// and an unused frame).
pub struct Lru {
    cap: usize,
    stack: Ring,
    frames: SlotFrames,
    table: SlotTable,
}

impl PolicyDef for Lru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used.";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        let mut frames = SlotFrames::with_slots(ctx.capacity + 1);
        frames.push_unused();
        Ok(Lru {
            cap: ctx.capacity,
            stack: Ring::with_slots(ctx.capacity),
            frames,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Lru {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.stack.prefetch(s));
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.frames.touch(slot as usize, r);
            self.stack.move_to_front(slot);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.stack.slots() == self.cap {
            // Reuse the victim's slot: no allocation in the steady state.
            let v = self.stack.back().expect("full cache has a back");
            let s = v as usize;
            self.frames.replace(s, r, &mut self.table, 0, sink);
            self.stack.move_to_front(v);
            v
        } else {
            let s = self.frames.push(r);
            let v = self.stack.push_new_front();
            debug_assert_eq!(s, v as usize, "frame and ring slots are numbered alike");
            v
        };
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.stack.slots()
    }
}
