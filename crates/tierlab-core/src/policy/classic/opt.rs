//! Belady's MIN / OPT (Belady 1966): on a miss with a full cache, evict the
//! resident page whose next reference is farthest in the future (pages never
//! referenced again first). Offline: needs `PageRef::next_use`, so the engine
//! materialises the trace when an OPT instance is in the run. Like
//! libCacheSim's `Belady`, every missed page is inserted (no bypass), which is
//! optimal for miss count under demand paging.

use crate::error::Result;
use crate::policy::list::{SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptConfig {}

pub struct Opt {
    cap: usize,
    frames: Vec<Frame>,
    /// Next use of the page in each frame.
    next: Vec<u64>,
    /// (next use, slot); entries whose next use no longer matches the frame
    /// are stale and skipped (lazy deletion).
    heap: BinaryHeap<(u64, u32)>,
    table: SlotTable,
}

impl PolicyDef for Opt {
    const NAME: &'static str = "opt";
    const ALIASES: &'static [&'static str] = &["belady", "min"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str = "Belady's MIN (offline optimal miss count).";
    const NEEDS_FUTURE: bool = true;
    type Config = OptConfig;
    fn build(_cfg: &OptConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Opt {
            cap: ctx.capacity,
            frames: Vec::with_capacity(ctx.capacity),
            next: Vec::with_capacity(ctx.capacity),
            heap: BinaryHeap::with_capacity(ctx.capacity * 2),
            table: SlotTable::default(),
        })
    }
}

impl Opt {
    fn compact(&mut self) {
        // Rebuild from live entries so the heap stays O(capacity).
        self.heap = self
            .next
            .iter()
            .enumerate()
            .map(|(s, &n)| (n, s as u32))
            .collect();
    }
}

impl Policy for Opt {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let s = slot as usize;
            self.frames[s].dirty |= r.is_write();
            self.next[s] = r.next_use();
            self.heap.push((r.next_use(), slot));
            if self.heap.len() > 4 * self.cap + 64 {
                self.compact();
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let s = if self.frames.len() < self.cap {
            self.frames.push(Frame::of(r));
            self.next.push(r.next_use());
            self.frames.len() - 1
        } else {
            let s = loop {
                let (n, s) = self.heap.pop().expect("heap holds every frame");
                if self.next[s as usize] == n {
                    break s as usize;
                }
            };
            let victim = self.frames[s];
            self.table.clear(victim.id);
            sink.evict(victim.out(0));
            self.frames[s] = Frame::of(r);
            self.next[s] = r.next_use();
            s
        };
        self.table.set(r.id, s as u32);
        self.heap.push((r.next_use(), s as u32));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.frames.len()
    }
}
