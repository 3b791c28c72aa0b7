//! FIFO: evict the page that entered the cache first; hits change nothing.
//! Matches libCacheSim's `FIFO`.

use crate::error::Result;
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FifoConfig {}

/// A ring of `capacity` frames; the insertion point is also the victim.
pub struct Fifo {
    frames: Vec<Frame>,
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
            cap: ctx.capacity,
            hand: 0,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Fifo {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| prefetch(&self.frames, s as usize));
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.frames[slot as usize].dirty |= r.is_write();
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.frames.len() < self.cap {
            self.table.set(r.id, self.frames.len() as u32);
            self.frames.push(Frame::of(r));
        } else {
            let victim = self.frames[self.hand];
            self.table.clear(victim.id);
            sink.evict(victim.out(0));
            self.frames[self.hand] = Frame::of(r);
            self.table.set(r.id, self.hand as u32);
            self.hand = (self.hand + 1) % self.cap;
        }
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.frames.len()
    }
}
