//! Clock-2Q+: a 2Q with a CLOCK main queue and a correlation window, as libCacheSim's
//! `Clock2QPlus` defines it. The design follows Johnson & Shasha's 2Q ("2Q: a low overhead high
//! performance buffer management replacement algorithm", VLDB 1994, Section 2.2: a FIFO `A1in`
//! in front of the main queue, a ghost FIFO `A1out`, and the paper's "correlated reference
//! period" during which a re-reference does not count) with the main LRU replaced by CLOCK; it
//! has no paper of its own, so libCacheSim's implementation is the definition, and the defaults
//! are its defaults: `fifo_size_ratio = 0.1` (`A1in`, the paper's `Kin` is 25% of memory),
//! `ghost_size_ratio = 0.9` (`A1out`; the paper's `Kout` is 50% of memory), `move_to_main_threshold
//! = 1` and `corr_window_ratio = 0.5` (the correlation window, in pages admitted to the FIFO, as a
//! share of the FIFO's size).
//!
//! A new page enters the FIFO (of `floor(capacity * fifo_size_ratio)` pages; before the first
//! eviction a full FIFO sends new pages straight to main). A hit in the FIFO counts only if at
//! least `corr_window` pages were admitted to the FIFO since this one; a hit in main sets its
//! reference count. Eviction takes from main when main is over its size
//! (`capacity - fifo`) or the FIFO is empty, else from the FIFO: the FIFO's oldest page moves to
//! main if it has at least `move_to_main_threshold` counted hits (and the FIFO goes on), else it
//! is evicted and remembered in the ghost FIFO (`floor(capacity * ghost_size_ratio)` entries). A
//! page that misses while remembered enters main directly. Main is CLOCK: its oldest page with a
//! count goes back to the head with the count cleared, the first without one is evicted. A page
//! does not fit when the FIFO has at most one page (`capacity < 20` with the defaults): then
//! nothing is ever admitted, every reference bypasses, as in libCacheSim.
//!
//! Per reference: amortised O(1) (each page moves FIFO -> main once per stay; CLOCK's second
//! chances are paid for by the hits that set the counts). One id -> slot table serves resident
//! pages and the ghost FIFO's entries (a ghost's entry is its slot with [`GHOST`] set), so a
//! reference reads one table entry, which the replay loop's prefetch hint loads ahead of time,
//! and then the page's node (a 40-byte node per resident page: page, id, kind, dirty, count,
//! queue, admission number, links; 12 bytes per ghost; 4 bytes per distinct page).

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{check_fraction, Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Clock2QPlusConfig {
    pub fifo_size_ratio: f64,
    pub ghost_size_ratio: f64,
    pub move_to_main_threshold: u32,
    pub corr_window_ratio: f64,
}

impl Default for Clock2QPlusConfig {
    fn default() -> Self {
        Clock2QPlusConfig {
            fifo_size_ratio: 0.1,
            ghost_size_ratio: 0.9,
            move_to_main_threshold: 1,
            corr_window_ratio: 0.5,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    freq: u32,
    in_main: bool,
    /// Pages admitted to the FIFO when this one was (FIFO pages only).
    admitted: u64,
}

/// Marks a table entry that is a ghost's slot, not a resident page's.
const GHOST: u32 = 1 << 31;

pub struct Clock2QPlus {
    fifo_cap: usize,
    main_cap: usize,
    ghost_cap: usize,
    threshold: u32,
    corr_window: f64,
    arena: Arena<Node>,
    fifo: List,
    main: List,
    /// Page id -> resident slot, or `GHOST | ghost slot`, or [`NIL`].
    table: SlotTable,
    ghost: List,
    ghosts: Arena<u32>,
    admitted: u64,
    has_evicted: bool,
}

impl PolicyDef for Clock2QPlus {
    const NAME: &'static str = "clock2qplus";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "2Q with a CLOCK main queue and a correlation window (libCacheSim's Clock2QPlus).";
    type Config = Clock2QPlusConfig;
    fn build(cfg: &Clock2QPlusConfig, ctx: &PolicyCtx) -> Result<Self> {
        check_fraction(Self::NAME, "fifo_size_ratio", cfg.fifo_size_ratio)?;
        check_fraction(Self::NAME, "corr_window_ratio", cfg.corr_window_ratio)?;
        if !(cfg.ghost_size_ratio.is_finite() && cfg.ghost_size_ratio >= 0.0) {
            return Err(Error::config(format!(
                "policy 'clock2qplus': ghost_size_ratio must be >= 0, got {}",
                cfg.ghost_size_ratio
            )));
        }
        let fifo_cap = (ctx.capacity as f64 * cfg.fifo_size_ratio) as usize;
        let ghost_cap = (ctx.capacity as f64 * cfg.ghost_size_ratio) as usize;
        if ctx.capacity >= GHOST as usize || ghost_cap >= GHOST as usize {
            return Err(Error::config(format!(
                "policy 'clock2qplus': memory ({} pages) and the ghost FIFO ({ghost_cap} \
                 entries) must each be below 2^31",
                ctx.capacity
            )));
        }
        Ok(Clock2QPlus {
            fifo_cap,
            main_cap: ctx.capacity - fifo_cap,
            ghost_cap,
            threshold: cfg.move_to_main_threshold,
            corr_window: fifo_cap as f64 * cfg.corr_window_ratio,
            arena: Arena::with_capacity(ctx.capacity),
            fifo: List::default(),
            main: List::default(),
            table: SlotTable::default(),
            ghost: List::default(),
            ghosts: Arena::with_capacity(0),
            admitted: 0,
            has_evicted: false,
        })
    }
}

impl Clock2QPlus {
    fn evict_slot<S: Sink>(&mut self, v: u32, sink: &mut S) {
        let f = self.arena.get(v).f;
        self.table.clear(f.id);
        self.arena.release(v);
        sink.evict(f.out(0));
    }

    fn remember(&mut self, id: u32) {
        if self.ghost_cap == 0 {
            return;
        }
        if self.ghost.len() == self.ghost_cap {
            let g = self.ghost.pop_back(&mut self.ghosts).expect("full ghost");
            self.table.clear(*self.ghosts.get(g));
            self.ghosts.release(g);
        }
        let g = self.ghosts.alloc(id);
        self.ghost.push_front(&mut self.ghosts, g);
        self.table.set(id, GHOST | g);
    }

    fn evict_main<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.main.pop_back(&mut self.arena) {
            let n = self.arena.get_mut(v);
            if n.freq >= 1 {
                n.freq = 0;
                self.main.push_front(&mut self.arena, v);
            } else {
                self.evict_slot(v, sink);
                return;
            }
        }
    }

    fn evict_fifo<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.fifo.pop_back(&mut self.arena) {
            let n = self.arena.get_mut(v);
            if n.freq >= self.threshold {
                n.freq = 0;
                n.in_main = true;
                self.main.push_front(&mut self.arena, v);
            } else {
                let id = n.f.id;
                self.evict_slot(v, sink);
                self.remember(id);
                return;
            }
        }
    }

    fn evict<S: Sink>(&mut self, sink: &mut S) {
        self.has_evicted = true;
        if self.main.len() > self.main_cap || self.fifo.is_empty() {
            self.evict_main(sink);
        } else {
            self.evict_fifo(sink);
        }
    }
}

impl Policy for Clock2QPlus {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table.prefetch(far);
        let s = self.table.lookup(near);
        if s < GHOST {
            self.arena.prefetch(s);
        } else if s != NIL {
            self.ghosts.prefetch(s & !GHOST);
        }
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot < GHOST {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            if n.in_main || (self.admitted - n.admitted) as f64 >= self.corr_window {
                n.freq += 1;
            }
            sink.hit(r, 0);
            return;
        }
        let hit_on_ghost = slot != NIL;
        if hit_on_ghost {
            let g = slot & !GHOST;
            self.ghost.unlink(&mut self.ghosts, g);
            self.ghosts.release(g);
            self.table.clear(r.id);
        }
        if self.fifo_cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        while self.fifo.len() + self.main.len() + 1 > self.fifo_cap + self.main_cap {
            self.evict(sink);
        }
        let to_main = if hit_on_ghost {
            true
        } else if self.fifo_cap <= 1 {
            sink.miss_bypass(r);
            return;
        } else {
            !self.has_evicted && self.fifo.len() >= self.fifo_cap
        };
        let slot = self.arena.alloc(Node {
            f: Frame::of(r),
            freq: 0,
            in_main: to_main,
            admitted: 0,
        });
        if to_main {
            self.main.push_front(&mut self.arena, slot);
        } else {
            self.admitted += 1;
            self.arena.get_mut(slot).admitted = self.admitted;
            self.fifo.push_front(&mut self.arena, slot);
        }
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.arena.live()
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::{replay_ids, replay_spec_ids};

    #[test]
    fn hand_worked() {
        // Memory 20: FIFO 2, main 18, ghost 18, correlation window 1 admission.
        // Too small a FIFO admits nothing: memory 19 has a FIFO of 1 page.
        assert_eq!(replay_ids("clock2qplus", 19, &[1, 1, 1]), (0, 3));
        // Memory 20. 1 2 fill the FIFO; 3..=20 go to main (the FIFO is full before any
        // eviction). 2 hits inside the window (0 admissions since it, < 1): not counted. 21:
        // main is not over 18, so the FIFO evicts 1 (uncounted) into the ghost. 1: ghost hit;
        // the FIFO evicts 2; 1 enters main (19 pages). 22: main is over 18: CLOCK evicts its
        // oldest, 3. 3 (not remembered) misses: the FIFO evicts 21.
        let mut ids: Vec<u64> = (1..=20).collect();
        ids.extend([2, 21, 1, 22, 3]);
        assert_eq!(replay_ids("clock2qplus", 20, &ids), (1, 24));
        // 1 hits one admission after it (counted: 1 >= window 1), 2 inside the window. 21: the
        // FIFO moves 1 to main and evicts 2; 22: main (19) evicts 3; 1 hits in main.
        let mut ids: Vec<u64> = (1..=20).collect();
        ids.extend([1, 2, 21, 22, 1]);
        assert_eq!(replay_ids("clock2qplus", 20, &ids), (3, 22));
        // With a window of 1.98 admissions 1's hit does not count: 21 evicts 1, 22 evicts 2,
        // and 1 comes back from the ghost.
        assert_eq!(
            replay_spec_ids("clock2qplus(corr_window_ratio=0.99)", 20, &ids),
            (2, 23)
        );
    }
}
