//! SLRU, segmented LRU: Karedla, Love & Wherry, "Caching strategies to improve disk system
//! performance", IEEE Computer 27(3), 1994 (Section "Segmented LRU"). The cache is split into
//! LRU segments; a page enters the lowest (probationary) segment, a hit moves it to the MRU end of
//! the next segment up (a hit in the top, protected, segment moves it to that segment's MRU end),
//! a segment over its size pushes its LRU page down to the MRU end of the segment below, and the
//! page leaving the lowest segment is evicted.
//!
//! Defaults and the two variants (`libcachesim = false | true`):
//!
//! * `segments` (default 2 for the paper, whose SLRU has a probationary and a protected segment;
//!   default 4 with `libcachesim = true`, libCacheSim's `n-seg`) with equal shares `capacity / segments` (rounded down) each. In the paper
//!   (`libcachesim = false`) a new page always enters the probationary segment and may use what the
//!   upper segments do not (the protected segment is bounded, the probationary one takes the rest);
//!   eviction takes the probationary segment's LRU page, or the protected one's when the
//!   probationary segment is empty.
//! * libCacheSim's `SLRU` (`slru(libcachesim=true)`, 4 segments unless `segments` says otherwise,
//!   libCacheSim's default `n-seg=4`) bounds every segment to
//!   `capacity / segments` (integer division) and, while the cache fills, inserts a new page into
//!   the lowest segment that still has room (so early pages land in upper segments); once every
//!   segment is full it evicts from the lowest non-empty segment until the whole cache has room and
//!   inserts into the lowest segment (which can then stand above its bound until a demotion into
//!   it trims it). It admits nothing when a page does not fit the lowest segment's bound
//!   (`capacity < segments`: every reference bypasses). tests/libcachesim_conformance.rs checks
//!   this variant against pip `libcachesim`.
//!
//! Per reference: O(1) list moves; a hit can cascade one demotion per segment (at most
//! `segments`, a constant).

use crate::error::{Error, Result};
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlruConfig {
    /// Number of LRU segments (default: 2, the paper's SLRU; 4, libCacheSim's default, with
    /// `libcachesim = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<usize>,
    /// libCacheSim's insertion and bound rules (see the module doc).
    pub libcachesim: bool,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    f: Frame,
    seg: usize,
}

pub struct Slru {
    cap: usize,
    resident: usize,
    lcs: bool,
    /// Bound of each segment, in pages.
    max: Vec<usize>,
    segs: Vec<List>,
    arena: Arena<Node>,
    table: SlotTable,
}

impl PolicyDef for Slru {
    const NAME: &'static str = "slru";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Segmented LRU (Karedla et al. 1994); libcachesim=true for libCacheSim's SLRU.";
    type Config = SlruConfig;
    fn build(cfg: &SlruConfig, ctx: &PolicyCtx) -> Result<Self> {
        let segments = cfg.segments.unwrap_or(if cfg.libcachesim { 4 } else { 2 });
        if !(1..=16).contains(&segments) {
            return Err(Error::config(format!(
                "policy 'slru': segments must be in 1..=16, got {segments}"
            )));
        }
        Ok(Slru {
            cap: ctx.capacity,
            resident: 0,
            lcs: cfg.libcachesim,
            max: vec![ctx.capacity / segments; segments],
            segs: vec![List::default(); segments],
            arena: Arena::with_capacity(ctx.capacity),
            table: SlotTable::default(),
        })
    }
}

impl Slru {
    fn evict_from<S: Sink>(&mut self, seg: usize, sink: &mut S) {
        let v = self.segs[seg].pop_back(&mut self.arena).expect("segment");
        let f = self.arena.get(v).f;
        self.table.clear(f.id);
        self.arena.release(v);
        self.resident -= 1;
        sink.evict(f.out(0));
    }

    /// libCacheSim's cooling of segment `seg`: its LRU page goes down to the MRU end of the
    /// segment below (evicted from segment 0), which is then cooled while over its bound (the
    /// lowest segment can stand several pages over its bound, see the module doc).
    fn cool<S: Sink>(&mut self, seg: usize, sink: &mut S) {
        if seg == 0 {
            self.evict_from(0, sink);
            return;
        }
        let v = self.segs[seg]
            .pop_back(&mut self.arena)
            .expect("over bound");
        self.segs[seg - 1].push_front(&mut self.arena, v);
        self.arena.get_mut(v).seg = seg - 1;
        while self.segs[seg - 1].len() > self.max[seg - 1] {
            self.cool(seg - 1, sink);
        }
    }

    /// The paper's bounds: every segment but the lowest is bounded; the lowest takes the rest.
    fn paper_over(&self, s: usize) -> bool {
        s > 0 && self.segs[s].len() > self.max[s]
    }

    fn cool_paper(&mut self, seg: usize) {
        let mut s = seg;
        while self.paper_over(s) {
            let v = self.segs[s].pop_back(&mut self.arena).expect("over bound");
            self.segs[s - 1].push_front(&mut self.arena, v);
            self.arena.get_mut(v).seg = s - 1;
            s -= 1;
        }
    }
}

impl Policy for Slru {
    table_glue!(arena);

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        let top = self.segs.len() - 1;
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.f.dirty |= r.is_write();
            let s = n.seg;
            if s == top {
                self.segs[s].move_to_front(&mut self.arena, slot);
            } else {
                self.segs[s].unlink(&mut self.arena, slot);
                self.segs[s + 1].push_front(&mut self.arena, slot);
                self.arena.get_mut(slot).seg = s + 1;
                if self.lcs {
                    while self.segs[s + 1].len() > self.max[s + 1] {
                        self.cool(s + 1, sink);
                    }
                } else {
                    self.cool_paper(s + 1);
                }
            }
            sink.hit(r, 0);
            return;
        }
        let seg = if self.lcs {
            if self.max[0] == 0 {
                sink.miss_bypass(r);
                return;
            }
            match (0..self.segs.len()).find(|&i| self.segs[i].len() < self.max[i]) {
                Some(i) => i,
                None => {
                    while self.resident >= self.cap {
                        let s = (0..self.segs.len())
                            .find(|&i| !self.segs[i].is_empty())
                            .expect("a full cache has a page");
                        self.evict_from(s, sink);
                    }
                    0
                }
            }
        } else {
            if self.cap == 0 {
                sink.miss_bypass(r);
                return;
            }
            if self.resident == self.cap {
                let s = (0..self.segs.len())
                    .find(|&i| !self.segs[i].is_empty())
                    .expect("a full cache has a page");
                self.evict_from(s, sink);
            }
            0
        };
        let slot = self.arena.alloc(Node {
            f: Frame::of(r),
            seg,
        });
        self.segs[seg].push_front(&mut self.arena, slot);
        self.table.set(r.id, slot);
        self.resident += 1;
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.resident
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked_paper() {
        // Memory 4, 2 segments (protected bound 2). 1 2 3 4 fill probationary; 1 and 2 hit and
        // move up (protected: 2 1); 3 hits: protected over its bound pushes 1 down to the
        // probationary MRU end (prob: 1 4, prot: 3 2); 5 evicts 4 (prob LRU); 4 evicts 1; 2 hits.
        assert_eq!(
            replay_ids("slru", 4, &[1, 2, 3, 4, 1, 2, 3, 5, 4, 2]),
            (4, 6)
        );
    }

    #[test]
    fn hand_worked_libcachesim() {
        // Memory 4, 2 segments of 2 (libCacheSim rules): 1 2 go to segment 0, 3 4 to segment 1
        // (the lowest with room). 5: all full, evict segment 0's LRU (1), insert 5 into segment
        // 0. 3 hits (top: MRU). 2 hits: promoted, segment 1 holds 2 3 4, its LRU 4 goes down to
        // segment 0 (4 5), over its bound 2? no: 4 5 is 2 pages. 1 misses: evict segment 0's LRU
        // (5). 5 misses: evicts 4. 4 misses: evicts 1.
        let spec = "slru(libcachesim=true, segments=2)";
        assert_eq!(
            crate::sim::check::replay_spec_ids(spec, 4, &[1, 2, 3, 4, 5, 3, 2, 1, 5, 4]),
            (2, 8)
        );
        // Fewer pages than segments (4 by default, libCacheSim's): nothing fits a segment,
        // everything bypasses.
        assert_eq!(
            crate::sim::check::replay_spec_ids("slru(libcachesim=true)", 3, &[1, 1]),
            (0, 2)
        );
    }
}
