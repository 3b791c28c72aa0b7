//! LRU: evict the least recently used page. Matches libCacheSim's `LRU`.

use crate::error::Result;
use crate::policy::list::{Ring, SlotBits, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruConfig {}

/// The recency stack is a [`Ring`] of 8-byte links, so a hit (the common case) touches the
/// page's table entry, its links and its neighbours' links, and a bit in `dirty`; the page
/// number and kind are per-slot arrays read back only on eviction. Slots start at 1 (0 is the
/// ring's sentinel).
pub struct Lru {
    cap: usize,
    stack: Ring,
    ids: Vec<PageId>,
    pages: Vec<u64>,
    kinds: Vec<Kind>,
    dirty: SlotBits,
    table: SlotTable,
}

impl PolicyDef for Lru {
    const NAME: &'static str = "lru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Least recently used.";
    type Config = LruConfig;
    fn build(_cfg: &LruConfig, ctx: &PolicyCtx) -> Result<Self> {
        // Index 0 of the per-slot arrays is the ring's sentinel's, never used.
        let slots = ctx.capacity + 1;
        fn with_sentinel<T>(v: T, slots: usize) -> Vec<T> {
            let mut a = Vec::with_capacity(slots);
            a.push(v);
            a
        }
        Ok(Lru {
            cap: ctx.capacity,
            stack: Ring::with_slots(ctx.capacity),
            ids: with_sentinel(NIL, slots),
            pages: with_sentinel(0, slots),
            kinds: with_sentinel(Kind::File, slots),
            dirty: SlotBits::with_slots(slots),
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
            self.dirty.set_if(slot as usize, r.is_write());
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
            self.table.clear(self.ids[s]);
            sink.evict(PageOut {
                id: self.ids[s],
                page: self.pages[s],
                kind: self.kinds[s],
                dirty: self.dirty.get(s),
                tier: 0,
            });
            self.stack.move_to_front(v);
            self.ids[s] = r.id;
            self.pages[s] = r.page();
            self.kinds[s] = r.kind();
            v
        } else {
            self.ids.push(r.id);
            self.pages.push(r.page());
            self.kinds.push(r.kind());
            self.stack.push_new_front()
        };
        self.dirty.assign(slot as usize, r.is_write());
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
