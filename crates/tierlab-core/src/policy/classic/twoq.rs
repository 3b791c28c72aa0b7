//! 2Q (Johnson & Shasha, "2Q: A Low Overhead High Performance Buffer
//! Management Replacement Algorithm", VLDB 1994, Section 2.2, the "full
//! version"): new pages enter A1in, a FIFO of at most `Kin` pages; a page
//! pushed out of A1in is remembered (id only) in A1out, a FIFO ghost of
//! `Kout` entries; a miss on a page remembered in A1out goes to Am, an LRU
//! holding the rest of memory. Hits in A1in change nothing (correlated
//! references), hits in Am move the page to the MRU end. The paper's
//! recommended sizes: Kin = 25% and Kout = 50% of the page slots (Section 2.3);
//! they are also libCacheSim's `TwoQ` defaults.
//!
//! Reclaim follows the paper's `reclaimfor`: when memory is full, take A1in's
//! oldest page if A1in holds more than Kin pages, else Am's LRU page. Sizes
//! are truncated as libCacheSim does (Kin = floor(kin * capacity), Kout =
//! floor(kout * capacity)) and Am is capped at capacity - Kin (a page
//! promoted from A1out into a full Am pushes out Am's LRU page even when A1in
//! is below Kin), which makes the miss counts equal to libCacheSim's. Below 4
//! pages Kin is 0 and, as in libCacheSim (whose `TwoQ_can_insert` admits only
//! what fits A1in), every reference bypasses the cache.

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, GhostFifo, List, PageNode, SlotTable, NIL};
use crate::policy::{check_fraction, Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TwoQConfig {
    /// Kin: size of A1in as a fraction of memory.
    pub kin: f64,
    /// Kout: entries of the A1out ghost FIFO as a fraction of memory.
    pub kout: f64,
}

impl Default for TwoQConfig {
    fn default() -> Self {
        TwoQConfig {
            kin: 0.25,
            kout: 0.5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    A1in,
    A1out,
    Am,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    loc: Loc,
}

impl PageNode for Node {
    fn page_id(&self) -> PageId {
        self.f.id
    }
}

pub struct TwoQ {
    cap: usize,
    kin: usize,
    am_cap: usize,
    arena: Arena<Node>,
    a1in: List,
    /// Ids of pages evicted from A1in, Kout of them at most.
    a1out: GhostFifo,
    am: List,
    table: SlotTable,
}

impl PolicyDef for TwoQ {
    const NAME: &'static str = "2q";
    const ALIASES: &'static [&'static str] = &["twoq"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "2Q (Johnson & Shasha, VLDB 1994): A1in FIFO, A1out ghost, Am LRU; Kin 25%, Kout 50%.";
    type Config = TwoQConfig;
    fn build(cfg: &TwoQConfig, ctx: &PolicyCtx) -> Result<Self> {
        check_fraction(Self::NAME, "kin", cfg.kin)?;
        check_fraction(Self::NAME, "kout", cfg.kout)?;
        let kin = (ctx.capacity as f64 * cfg.kin) as usize;
        Ok(TwoQ {
            cap: ctx.capacity,
            kin,
            am_cap: ctx.capacity - kin,
            arena: Arena::with_capacity(ctx.capacity * 2),
            a1in: List::default(),
            a1out: GhostFifo::new((ctx.capacity as f64 * cfg.kout) as usize),
            am: List::default(),
            table: SlotTable::default(),
        })
    }
}

impl TwoQ {
    fn evict_am<S: Sink>(&mut self, sink: &mut S) {
        let v = self.am.pop_back(&mut self.arena).expect("Am is not empty");
        let victim = self.arena.get(v).f;
        self.arena.release(v);
        self.table.forget_evicted(&victim, 0, sink);
    }

    /// The paper's `reclaimfor`: frees one page slot.
    fn reclaim<S: Sink>(&mut self, sink: &mut S) {
        if self.a1in.len() > self.kin || self.am.is_empty() {
            let v = self
                .a1in
                .pop_back(&mut self.arena)
                .expect("A1in is not empty");
            sink.evict(self.arena.get(v).f.out(0));
            if self.a1out.admit(&mut self.arena, &mut self.table, v) {
                self.arena.get_mut(v).loc = Loc::A1out;
            }
        } else {
            self.evict_am(sink);
        }
    }
}

impl Policy for TwoQ {
    table_glue!(arena);

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        let mut ghost = false;
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            match n.loc {
                Loc::A1in => {
                    n.f.dirty |= r.is_write();
                    sink.hit(r, 0);
                    return;
                }
                Loc::Am => {
                    n.f.dirty |= r.is_write();
                    self.am.move_to_front(&mut self.arena, slot);
                    sink.hit(r, 0);
                    return;
                }
                Loc::A1out => {
                    self.a1out.remove(&mut self.arena, &mut self.table, slot);
                    ghost = true;
                }
            }
        }
        if self.kin == 0 {
            sink.miss_bypass(r);
            return;
        }
        while self.a1in.len() + self.am.len() >= self.cap {
            self.reclaim(sink);
        }
        let node = if ghost {
            if self.am.len() >= self.am_cap {
                self.evict_am(sink);
            }
            Node {
                f: Frame::of(r),
                loc: Loc::Am,
            }
        } else {
            Node {
                f: Frame::of(r),
                loc: Loc::A1in,
            }
        };
        let s = self.arena.alloc(node);
        if ghost {
            self.am.push_front(&mut self.arena, s);
        } else {
            self.a1in.push_front(&mut self.arena, s);
        }
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.a1in.len() + self.am.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("a1out_entries", self.a1out.len() as u64)]
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 4: Kin = 1, Kout = 2, Am holds 3. 1 2 3 4 fill A1in (Am is
        // empty, A1in may exceed Kin). 5: A1in holds 4 > Kin, its oldest (1)
        // goes to A1out. 1 again: a ghost hit, admitted to Am; A1in's oldest
        // (2) goes to A1out. 1 then hits in Am; 2 is a ghost hit too.
        assert_eq!(replay_ids("2q", 4, &[1, 2, 3, 4, 5, 1, 1, 2, 2]), (2, 7));
        // A re-reference inside A1in is a hit but does not promote: a scan
        // of 6 new pages then flushes it out.
        assert_eq!(replay_ids("2q", 4, &[1, 1, 2, 3, 4, 5, 6, 7, 1]), (1, 8));
        // Below 4 pages Kin is 0: nothing fits A1in, every reference misses (libCacheSim).
        assert_eq!(replay_ids("2q", 3, &[1, 1, 1, 2, 1]), (0, 5));
    }
}
