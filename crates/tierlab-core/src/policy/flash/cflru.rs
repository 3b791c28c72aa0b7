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
//! Cost: O(1) per reference. The clean-first region (the last `window`
//! pages of the LRU list) is tracked as it moves: a boundary slot marks its
//! MRU end, each slot has an in-region bit, and the region's clean pages are
//! linked in a second list in LRU order. A page enters the region only at its
//! MRU end (when a page above it is evicted or moved out), and leaves it when
//! it is hit (moved to the front) or evicted, so the region's clean list stays
//! in LRU order; the victim is its back, else the LRU page. Same victims as
//! scanning the window from the LRU end, as the paper describes it
//! (tests/policy_counts.rs pins the results).

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, List, SlotBits, SlotTable, NIL};
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
    /// Links of the region's clean pages, slot for slot with `arena`.
    clean_links: Arena<()>,
    /// The region's clean pages, MRU first.
    clean: List,
    /// Slots in the clean-first region.
    in_region: SlotBits,
    /// Pages in the region (`min(window, resident)`).
    region_len: usize,
    /// The region's MRU-end slot (NIL when empty).
    boundary: u32,
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
            clean_links: Arena::with_capacity(ctx.capacity),
            clean: List::default(),
            in_region: SlotBits::with_slots(ctx.capacity),
            region_len: 0,
            boundary: NIL,
            clean_first_evictions: 0,
        })
    }
}

impl Cflru {
    /// Size of the clean-first region in pages.
    pub fn window_pages(&self) -> usize {
        self.window
    }

    /// The LRU clean page of the region, else the LRU page.
    #[inline]
    fn victim(&mut self) -> u32 {
        if let Some(s) = self.clean.back() {
            self.clean_first_evictions += 1;
            return s;
        }
        self.stack.back().expect("full cache has a tail")
    }

    /// Takes `s` (in the region, still linked in the stack) out of the region.
    #[inline]
    fn leave_region(&mut self, s: u32) {
        if self.boundary == s {
            // The next page towards the LRU end becomes the MRU end of the region.
            self.boundary = self.stack.next_of(&self.arena, s).unwrap_or(NIL);
        }
        if !self.arena.get(s).dirty {
            self.clean.unlink(&mut self.clean_links, s);
        }
        self.in_region.assign(s as usize, false);
        self.region_len -= 1;
    }

    /// Grows the region by the page just above its MRU end while it holds fewer than `window`
    /// pages and pages are left above it (at most one step per reference: the region loses or
    /// the stack gains at most one page at a time).
    #[inline]
    fn fill_region(&mut self) {
        if self.region_len >= self.window || self.region_len >= self.stack.len() {
            return;
        }
        let s = if self.boundary == NIL {
            self.stack.back()
        } else {
            self.stack.prev_of(&self.arena, self.boundary)
        }
        .expect("a page above the region");
        self.boundary = s;
        self.in_region.set(s as usize);
        self.region_len += 1;
        if !self.arena.get(s).dirty {
            // Enters at the MRU end, so the clean list stays in LRU order.
            self.clean.push_front(&mut self.clean_links, s);
        }
    }
}

impl Policy for Cflru {
    table_glue!(arena);

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            if self.in_region.get(slot as usize) {
                self.leave_region(slot);
                self.arena.get_mut(slot).dirty |= r.is_write();
                self.stack.move_to_front(&mut self.arena, slot);
                self.fill_region();
            } else {
                self.arena.get_mut(slot).dirty |= r.is_write();
                self.stack.move_to_front(&mut self.arena, slot);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let slot = if self.stack.len() == self.cap {
            let v = self.victim();
            self.leave_region(v);
            self.stack.unlink(&mut self.arena, v);
            let victim = *self.arena.get(v);
            self.table.forget_evicted(&victim, 0, sink);
            *self.arena.get_mut(v) = Frame::of(r);
            v
        } else {
            let s = self.arena.alloc(Frame::of(r));
            let l = self.clean_links.alloc(());
            debug_assert_eq!(s, l, "the clean links follow the arena slot for slot");
            self.in_region.grow(s as usize + 1);
            s
        };
        self.stack.push_front(&mut self.arena, slot);
        self.fill_region();
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.stack.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("clean_first_evictions", self.clean_first_evictions)]
    }
}
