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

/// The resident pages of an offline policy: each frame's page and next use, and the table from
/// page to frame. MIN and opt-wb (policy/classic/optwb.rs) keep them alike and differ only in
/// which frame they empty. O(1) per request.
pub struct FutureFrames {
    pub cap: usize,
    pub frames: Vec<Frame>,
    /// Next use of the page in each frame.
    pub next: Vec<u64>,
    pub table: SlotTable,
}

impl FutureFrames {
    pub fn new(cap: usize) -> Self {
        FutureFrames {
            cap,
            frames: Vec::with_capacity(cap),
            next: Vec::with_capacity(cap),
            table: SlotTable::default(),
        }
    }
    /// If `r` hits: marks its frame dirty on a write, records its next use, returns the frame.
    #[inline]
    pub fn hit(&mut self, r: &PageRef) -> Option<usize> {
        let slot = self.table.get(r.id);
        if slot == NIL {
            return None;
        }
        let s = slot as usize;
        self.frames[s].dirty |= r.is_write();
        self.next[s] = r.next_use();
        Some(s)
    }
    /// Puts missed `r` in a free frame and returns it, or `None` when every frame is full.
    #[inline]
    pub fn fill(&mut self, r: &PageRef) -> Option<usize> {
        if self.frames.len() == self.cap {
            return None;
        }
        self.frames.push(Frame::of(r));
        self.next.push(r.next_use());
        let s = self.frames.len() - 1;
        self.table.set(r.id, s as u32);
        Some(s)
    }
    /// Evicts the page in frame `s` (reported to `sink`), puts missed `r` there and returns the
    /// page evicted.
    #[inline]
    pub fn replace<S: Sink>(&mut self, s: usize, r: &PageRef, sink: &mut S) -> Frame {
        let victim = self.frames[s];
        self.table.clear(victim.id);
        sink.evict(victim.out(0));
        self.frames[s] = Frame::of(r);
        self.next[s] = r.next_use();
        self.table.set(r.id, s as u32);
        victim
    }
}

pub struct Opt {
    f: FutureFrames,
    /// (next use, slot); entries whose next use no longer matches the frame
    /// are stale and skipped (lazy deletion).
    heap: BinaryHeap<(u64, u32)>,
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
            f: FutureFrames::new(ctx.capacity),
            heap: BinaryHeap::with_capacity(ctx.capacity * 2),
        })
    }
}

impl Opt {
    fn compact(&mut self) {
        // Rebuild from live entries so the heap stays O(capacity).
        self.heap = self
            .f
            .next
            .iter()
            .enumerate()
            .map(|(s, &n)| (n, s as u32))
            .collect();
    }
}

impl Policy for Opt {
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if let Some(s) = self.f.hit(r) {
            self.heap.push((r.next_use(), s as u32));
            if self.heap.len() > 4 * self.f.cap + 64 {
                self.compact();
            }
            sink.hit(r, 0);
            return;
        }
        if self.f.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let s = self.f.fill(r).unwrap_or_else(|| {
            let s = loop {
                let (n, s) = self.heap.pop().expect("heap holds every frame");
                if self.f.next[s as usize] == n {
                    break s as usize;
                }
            };
            self.f.replace(s, r, sink);
            s
        });
        self.heap.push((r.next_use(), s as u32));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.f.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.f.frames.len()
    }
}
