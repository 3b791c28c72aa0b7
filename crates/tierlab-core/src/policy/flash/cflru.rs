//! CFLRU, Clean-First LRU (Park, Jung, Kang, Kim & Lee, CASES 2006; described
//! in papers/bs-clock-flash-buffer.md, section II).
//!
//! One LRU list split into a working region at the MRU end and a clean-first
//! region of `window` x buffer pages at the LRU end. The victim is the least
//! recently used clean page of the clean-first region; when that region holds
//! no clean page, the LRU page (dirty) is evicted. A larger window saves more
//! flash writes and loses more hits (the paper's section II).
//!
//! `window` is a fraction of the buffer; the paper's window size "is fixed
//! after experiments on a workload or adapted at run time"; the default 0.1
//! follows common implementations (e.g. SNK-DB) and REFERENCE.md. The region
//! holds at least one page: `ceil(window * capacity)` pages.
//!
//! Cost: a hit is O(1); an eviction scans at most the window.

use crate::error::Result;
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{check_fraction, Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CflruConfig {
    /// Clean-first region (window size w) as a fraction of the buffer.
    pub window: f64,
}

impl Default for CflruConfig {
    fn default() -> Self {
        CflruConfig { window: 0.1 }
    }
}

pub struct Cflru {
    cap: usize,
    window: usize,
    arena: Arena<Frame>,
    stack: List,
    table: SlotTable,
    clean_first_evictions: u64,
}

impl PolicyDef for Cflru {
    const NAME: &'static str = "cflru";
    const ALIASES: &'static [&'static str] = &["clean-first-lru"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "CFLRU (Park et al., CASES'06): evict the LRU clean page of the \
         clean-first window (window = fraction of the buffer), else the LRU page.";
    type Config = CflruConfig;
    fn build(cfg: &CflruConfig, ctx: &PolicyCtx) -> Result<Self> {
        check_fraction("cflru", "window", cfg.window)?;
        Ok(Cflru {
            cap: ctx.capacity,
            window: ((cfg.window * ctx.capacity as f64).ceil() as usize).max(1),
            arena: Arena::with_capacity(ctx.capacity),
            stack: List::default(),
            table: SlotTable::default(),
            clean_first_evictions: 0,
        })
    }
}

impl Cflru {
    /// Size of the clean-first region in pages.
    pub fn window_pages(&self) -> usize {
        self.window
    }

    fn victim(&mut self) -> u32 {
        let mut cur = self.stack.back();
        for _ in 0..self.window {
            let Some(s) = cur else { break };
            if !self.arena.get(s).dirty {
                self.clean_first_evictions += 1;
                return s;
            }
            cur = self.stack.prev_of(&self.arena, s);
        }
        self.stack.back().expect("full cache has a tail")
    }
}

impl Policy for Cflru {
    #[inline]
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
            let v = self.victim();
            self.stack.unlink(&mut self.arena, v);
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

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("clean_first_evictions", self.clean_first_evictions)]
    }
}
