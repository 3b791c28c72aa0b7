//! CLOCK (second chance, Corbató 1968): frames in a circle, a reference bit per
//! frame set on a hit; the hand clears set bits and evicts the first frame
//! whose bit is clear. `bits` > 1 gives the generalised counter clock (the
//! count saturates at 2^bits - 1 and the hand decrements it), as libCacheSim's
//! `Clock` with `n-bit-counter`; its default is 1 bit, as here.

use crate::error::{Error, Result};
use crate::policy::list::{table_glue, SlotBits, SlotFrames, SlotTable, NIL};
use crate::policy::{Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockConfig {
    /// Bits of the reference counter (1 = classic second chance).
    pub bits: u32,
}

impl Default for ClockConfig {
    fn default() -> Self {
        ClockConfig { bits: 1 }
    }
}

/// Per-slot state is split by how often it is touched: a hit reads the page's table entry and
/// sets a bit in `referenced` (or bumps `counts`) and a dirty bit, bit sets that stay in L1; the
/// page itself is only read back when the hand evicts the slot.
pub struct Clock {
    frames: SlotFrames,
    /// The reference bit of each slot (`bits` = 1).
    referenced: SlotBits,
    /// The reference counter of each slot (`bits` > 1).
    counts: Vec<u8>,
    cap: usize,
    hand: usize,
    max_count: u8,
    table: SlotTable,
}

impl PolicyDef for Clock {
    const NAME: &'static str = "clock";
    const ALIASES: &'static [&'static str] = &["second-chance"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "CLOCK / second chance (Corbato 1968); `bits` > 1 gives the counter clock.";
    type Config = ClockConfig;
    fn build(cfg: &ClockConfig, ctx: &PolicyCtx) -> Result<Self> {
        if !(1..=7).contains(&cfg.bits) {
            return Err(Error::config(format!(
                "policy 'clock': bits must be in 1..=7, got {}",
                cfg.bits
            )));
        }
        let one_bit = cfg.bits == 1;
        Ok(Clock {
            frames: SlotFrames::with_slots(ctx.capacity),
            referenced: SlotBits::with_slots(if one_bit { ctx.capacity } else { 0 }),
            counts: vec![0; if one_bit { 0 } else { ctx.capacity }],
            cap: ctx.capacity,
            hand: 0,
            max_count: ((1u32 << cfg.bits) - 1) as u8,
            table: SlotTable::default(),
        })
    }
}

impl Clock {
    /// The slot the hand evicts: the first at or after the hand whose count is 0, decrementing
    /// the counts it passes.
    #[inline(always)]
    fn sweep(&mut self) -> usize {
        if self.max_count == 1 {
            return self.referenced.sweep(self.hand, self.cap);
        }
        let mut hand = self.hand;
        while self.counts[hand] > 0 {
            self.counts[hand] -= 1;
            hand += 1;
            if hand == self.cap {
                hand = 0;
            }
        }
        hand
    }
}

impl Policy for Clock {
    table_glue!(table);

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let s = slot as usize;
            self.frames.touch(s, r);
            if self.max_count == 1 {
                self.referenced.set(s);
            } else if self.counts[s] < self.max_count {
                self.counts[s] += 1;
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let s = if self.frames.len() < self.cap {
            self.frames.push(r)
        } else {
            // The sweep leaves the victim's reference bit (count) clear: the new page starts so.
            let s = self.sweep();
            self.frames.replace(s, r, &mut self.table, 0, sink);
            self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
            s
        };
        self.table.set(r.id, s as u32);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.frames.len()
    }
}
