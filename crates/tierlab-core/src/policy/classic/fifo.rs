//! FIFO: evict the page that entered the cache first; hits change nothing.
//! Matches libCacheSim's `FIFO`.

use crate::error::Result;
use crate::policy::list::{table_glue, SlotFrames, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FifoConfig {}

/// A ring of `capacity` frames; the insertion point is also the victim. Dirty bits live apart
/// from the frames ([`SlotFrames`]), so a hit touches only the page's table entry and a bit that
/// stays in L1.
pub struct Fifo {
    frames: SlotFrames,
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
            frames: SlotFrames::with_slots(ctx.capacity),
            cap: ctx.capacity,
            hand: 0,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Fifo {
    table_glue!(table);

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            self.frames.touch(slot as usize, r);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.frames.len() < self.cap {
            self.frames.push(r)
        } else {
            let s = self.hand;
            self.frames.replace(s, r, &mut self.table, 0, sink);
            self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
            s
        };
        self.table.set(r.id, slot as u32);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.frames.len()
    }
}
