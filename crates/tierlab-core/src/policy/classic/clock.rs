//! CLOCK (second chance, Corbató 1968): frames in a circle, a reference bit per
//! frame set on a hit; the hand clears set bits and evicts the first frame
//! whose bit is clear. `bits` > 1 gives the generalised counter clock (the
//! count saturates at 2^bits - 1 and the hand decrements it), as libCacheSim's
//! `Clock` with `n-bit-counter`; its default is 1 bit, as here.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
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

pub struct Clock {
    frames: Vec<Frame>,
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
        Ok(Clock {
            frames: Vec::with_capacity(ctx.capacity),
            counts: Vec::with_capacity(ctx.capacity),
            cap: ctx.capacity,
            hand: 0,
            max_count: ((1u32 << cfg.bits) - 1) as u8,
            table: SlotTable::default(),
        })
    }
}

impl Policy for Clock {
    #[inline(always)]
    fn prefetch(&self, near: &PageRef, far: &PageRef) {
        self.table.prefetch_ahead(near, far, |s| {
            prefetch(&self.frames, s as usize);
            prefetch(&self.counts, s as usize);
        });
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        // The table is not cleared on eviction (that would be a random write per miss); an
        // entry counts only while its frame still holds the page.
        let slot = self.table.get(r.id);
        if slot != NIL && self.frames.get(slot as usize).is_some_and(|f| f.id == r.id) {
            let s = slot as usize;
            self.frames[s].dirty |= r.is_write();
            if self.counts[s] < self.max_count {
                self.counts[s] += 1;
            }
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
            self.counts.push(0);
        } else {
            while self.counts[self.hand] > 0 {
                self.counts[self.hand] -= 1;
                self.hand += 1;
                if self.hand == self.cap {
                    self.hand = 0;
                }
            }
            let victim = self.frames[self.hand];
            sink.evict(victim.out(0));
            self.frames[self.hand] = Frame::of(r);
            self.counts[self.hand] = 0;
            self.table.set(r.id, self.hand as u32);
            self.hand += 1;
            if self.hand == self.cap {
                self.hand = 0;
            }
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
