//! S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction",
//! SOSP 2023, Section 4 and Algorithm 1): a small FIFO S (10% of memory), a
//! main FIFO M (the rest) and a ghost FIFO G of ids (as many entries as M).
//! New pages enter S (or M if their id is in G). Each page has a 2-bit
//! frequency counter incremented on hits. When S is evicted from, its oldest
//! page moves to M if its counter exceeds the threshold, else it leaves memory
//! and its id enters G; M evicts like a 2-bit CLOCK (reinsert with counter - 1
//! while the counter is positive).
//!
//! Parameters and edge cases follow libCacheSim's `S3FIFO` (REFERENCE.md), so
//! that miss counts equal its: `small_ratio` 0.1, `ghost_ratio` 0.9 of memory,
//! and `move_to_main_threshold` 2 (a page moves to M after at least 2 hits in
//! S; the paper's Algorithm 1 moves it after 1, i.e. threshold 1; set
//! `move_to_main_threshold = 1` for the paper's rule). Like libCacheSim:
//! S gets floor(0.1 c) slots, G floor(0.9 c) entries; M is evicted from when it
//! is over its size or S is empty; a page moved from S to M starts with
//! counter 0; M's reinsertion sets the counter to min(count, 3) - 1; and a
//! page that is not a ghost is not admitted at all (it is a bypassed miss)
//! when S has a single slot (capacity below 20), which libCacheSim does
//! because it refuses objects as large as S. Also as libCacheSim (since its
//! `has_evicted` change): until memory has been full once, a new page that
//! finds S full goes straight to M, so the cold start fills M instead of
//! cycling everything through S.

use crate::error::{Error, Result};
use crate::policy::list::{table_glue, Arena, GhostFifo, List, PageNode, SlotTable, NIL};
use crate::policy::{check_fraction, Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct S3FifoConfig {
    /// Size of the small FIFO S as a fraction of memory.
    pub small_ratio: f64,
    /// Entries of the ghost FIFO G as a fraction of memory.
    pub ghost_ratio: f64,
    /// Hits in S needed to move to M on eviction from S.
    pub move_to_main_threshold: u32,
}

impl Default for S3FifoConfig {
    fn default() -> Self {
        S3FifoConfig {
            small_ratio: 0.1,
            ghost_ratio: 0.9,
            move_to_main_threshold: 2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loc {
    Small,
    Main,
    Ghost,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    loc: Loc,
    freq: u32,
}

impl PageNode for Node {
    fn page_id(&self) -> PageId {
        self.f.id
    }
}

pub struct S3Fifo {
    cap: usize,
    small_cap: usize,
    main_cap: usize,
    threshold: u32,
    arena: Arena<Node>,
    /// Front = newest.
    small: List,
    main: List,
    ghost: GhostFifo,
    table: SlotTable,
    moved_to_main: u64,
    /// Whether memory has been full once.
    has_evicted: bool,
}

impl S3FifoConfig {
    /// Checks the parameters (page and object-size mode share them).
    pub fn validate(&self) -> Result<()> {
        check_fraction(S3Fifo::NAME, "small_ratio", self.small_ratio)?;
        if !(self.ghost_ratio.is_finite() && (0.0..=8.0).contains(&self.ghost_ratio)) {
            return Err(Error::config(format!(
                "policy 's3fifo': ghost_ratio must be in [0, 8], got {}",
                self.ghost_ratio
            )));
        }
        if self.move_to_main_threshold == 0 {
            return Err(Error::config(
                "policy 's3fifo': move_to_main_threshold must be at least 1",
            ));
        }
        Ok(())
    }
}

impl PolicyDef for S3Fifo {
    const NAME: &'static str = "s3fifo";
    const ALIASES: &'static [&'static str] = &["s3-fifo"];
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "S3-FIFO (Yang et al., SOSP 2023): small, main and ghost FIFOs; libCacheSim's threshold 2.";
    type Config = S3FifoConfig;
    fn build(cfg: &S3FifoConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        let small_cap = (ctx.capacity as f64 * cfg.small_ratio) as usize;
        Ok(S3Fifo {
            cap: ctx.capacity,
            small_cap,
            main_cap: ctx.capacity - small_cap,
            threshold: cfg.move_to_main_threshold,
            arena: Arena::with_capacity(ctx.capacity * 2),
            small: List::default(),
            main: List::default(),
            ghost: GhostFifo::new((ctx.capacity as f64 * cfg.ghost_ratio) as usize),
            table: SlotTable::default(),
            moved_to_main: 0,
            has_evicted: false,
        })
    }
}

impl S3Fifo {
    fn evict_small<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.small.pop_back(&mut self.arena) {
            let n = self.arena.get_mut(v);
            if n.freq >= self.threshold {
                n.loc = Loc::Main;
                n.freq = 0;
                self.main.push_front(&mut self.arena, v);
                self.moved_to_main += 1;
            } else {
                sink.evict(n.f.out(0));
                if self.ghost.admit(&mut self.arena, &mut self.table, v) {
                    self.arena.get_mut(v).loc = Loc::Ghost;
                }
                return;
            }
        }
    }

    fn evict_main<S: Sink>(&mut self, sink: &mut S) {
        while let Some(v) = self.main.pop_back(&mut self.arena) {
            let n = self.arena.get_mut(v);
            if n.freq >= 1 {
                n.freq = n.freq.min(3) - 1;
                self.main.push_front(&mut self.arena, v);
            } else {
                let f = n.f;
                self.arena.release(v);
                self.table.forget_evicted(&f, 0, sink);
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    table_glue!(arena);

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        let mut ghost = false;
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            if n.loc != Loc::Ghost {
                n.freq += 1;
                n.f.dirty |= r.is_write();
                sink.hit(r, 0);
                return;
            }
            self.ghost.remove(&mut self.arena, &mut self.table, slot);
            ghost = true;
        }
        if self.small_cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        while self.small.len() + self.main.len() >= self.cap {
            self.has_evicted = true;
            if self.main.len() > self.main_cap || self.small.is_empty() {
                self.evict_main(sink);
            } else {
                self.evict_small(sink);
            }
        }
        let loc = if ghost {
            Loc::Main
        } else if self.small_cap <= 1 {
            sink.miss_bypass(r);
            return;
        } else if !self.has_evicted && self.small.len() >= self.small_cap {
            // Until memory first fills, pages that find S full go to M.
            Loc::Main
        } else {
            Loc::Small
        };
        let s = self.arena.alloc(Node {
            f: Frame::of(r),
            loc,
            freq: 0,
        });
        if loc == Loc::Main {
            self.main.push_front(&mut self.arena, s);
        } else {
            self.small.push_front(&mut self.arena, s);
        }
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.small.len() + self.main.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("moved_to_main", self.moved_to_main)]
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Capacity 20: S = 2 slots, M = 18, G = 18 entries. 1 and 2 fill S;
        // 3 finds S full before any eviction and goes to M: all stay resident.
        let (hits, misses) = replay_ids("s3fifo", 20, &[1, 2, 3, 1, 2, 3]);
        assert_eq!((hits, misses), (3, 3));
        // Capacity 3 has no S slot at all (floor(0.3) = 0): every miss bypasses.
        assert_eq!(replay_ids("s3fifo", 3, &[1, 1, 1]), (0, 3));
        // Capacity 20, 22 distinct pages once, then page 1 (evicted from S to
        // G once memory filled) comes back: a ghost hit, admitted to M.
        let mut ids: Vec<u64> = (1..=22).collect();
        ids.extend([3, 1, 1]);
        // Pages 1, 2 in S; 3..=20 fill M; 21 evicts 1 (freq 0) to G and 22
        // evicts 2; then 3 hits in M, 1 misses (ghost) and then hits.
        assert_eq!(replay_ids("s3fifo", 20, &ids), (2, 23));
    }
}
