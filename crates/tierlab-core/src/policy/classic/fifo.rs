//! FIFO: evict the page that entered the cache first; hits change nothing.
//! Matches libCacheSim's `FIFO`.

use crate::error::Result;
use crate::policy::list::{SlotBits, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FifoConfig {}

/// A ring of `capacity` frames; the insertion point is also the victim. Dirty bits live apart
/// from the frames, so a hit touches only the page's table entry and a bit that stays in L1.
pub struct Fifo {
    frames: Vec<Frame>,
    dirty: SlotBits,
    cap: usize,
    hand: usize,
    table: SlotTable,
}

impl PolicyDef for Fifo {
    const NAME: &'static str = "fifo";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "First in, first out.";
    type Config = FifoConfig;
    fn build(_cfg: &FifoConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Fifo {
            frames: Vec::with_capacity(ctx.capacity),
            dirty: SlotBits::with_slots(ctx.capacity),
            cap: ctx.capacity,
            hand: 0,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Fifo {
    #[inline(always)]
    fn prefetch(&self, _near: PageId, far: PageId) {
        self.table.prefetch(far);
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.dirty.set_if(slot as usize, r.is_write());
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.frames.len() < self.cap {
            self.frames.push(Frame::of(r));
            self.frames.len() - 1
        } else {
            let s = self.hand;
            let victim = Frame {
                dirty: self.dirty.get(s),
                ..self.frames[s]
            };
            self.table.clear(victim.id);
            sink.evict(victim.out(0));
            self.frames[s] = Frame::of(r);
            self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
            s
        };
        self.dirty.assign(slot, r.is_write());
        self.table.set(r.id, slot as u32);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.frames.len()
    }
}
