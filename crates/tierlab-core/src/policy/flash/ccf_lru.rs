//! CCF-LRU, Cold-Clean-First LRU (Li, Jin, Su, Cui & Yue, 2009; one of the
//! flash-aware LRUs the bs-clock paper surveys in section II).
//!
//! Two LRU lists: the cold-clean list holds clean pages referenced once (read
//! misses), the mixed list holds dirty pages and hot (re-referenced) clean
//! pages, each with a cold flag as in LRU-WSR.
//! - Read miss: the page enters the cold-clean list (MRU end), cold.
//! - Write miss: the page enters the mixed list (MRU end), not cold.
//! - Hit: the cold flag is cleared and the page moves to the MRU end of the
//!   mixed list (a cold-clean page becomes hot).
//! - Eviction: the LRU page of the cold-clean list if there is one. Otherwise
//!   the mixed list is scanned from its LRU end: a hot clean page is demoted to
//!   the cold-clean list (MRU end, cold); a dirty page with its cold flag
//!   clear gets a second chance (flag set, moved to the MRU end of the mixed
//!   list); the first cold dirty page is the victim. So the priority is
//!   cold clean, then cold dirty, then (after demotion) hot clean, then hot
//!   dirty.
//!
//! Choice where the paper's description is terse: demoted hot-clean pages are
//! not evicted during the scan that demotes them (as SNK-DB's implementation
//! does); when the scan demotes every page of the mixed list, the LRU
//! cold-clean page is evicted.

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcfLruConfig {}

#[derive(Debug, Clone, Copy)]
struct Node {
    frame: Frame,
    cold: bool,
    in_mixed: bool,
}

pub struct CcfLru {
    cap: usize,
    arena: Arena<Node>,
    cold_clean: List,
    mixed: List,
    table: SlotTable,
    demotions: u64,
    second_chances: u64,
}

impl PolicyDef for CcfLru {
    const NAME: &'static str = "ccf-lru";
    const ALIASES: &'static [&'static str] = &["ccflru"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str =
        "CCF-LRU (Li et al. 2009): evict cold clean pages first, then cold \
         dirty pages of a mixed LRU list with LRU-WSR's cold-flag second chance.";
    type Config = CcfLruConfig;
    fn build(_cfg: &CcfLruConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(CcfLru {
            cap: ctx.capacity,
            arena: Arena::with_capacity(ctx.capacity),
            cold_clean: List::default(),
            mixed: List::default(),
            table: SlotTable::default(),
            demotions: 0,
            second_chances: 0,
        })
    }
}

impl CcfLru {
    /// Pages in the cold-clean list and in the mixed list (tests).
    pub fn list_lengths(&self) -> (usize, usize) {
        (self.cold_clean.len(), self.mixed.len())
    }

    /// Chooses and unlinks the victim.
    fn victim(&mut self) -> u32 {
        if let Some(v) = self.cold_clean.pop_back(&mut self.arena) {
            return v;
        }
        while let Some(t) = self.mixed.back() {
            let n = self.arena.get_mut(t);
            if !n.frame.dirty {
                n.cold = true;
                n.in_mixed = false;
                self.demotions += 1;
                self.mixed.unlink(&mut self.arena, t);
                self.cold_clean.push_front(&mut self.arena, t);
            } else if !n.cold {
                n.cold = true;
                self.second_chances += 1;
                self.mixed.move_to_front(&mut self.arena, t);
            } else {
                self.mixed.unlink(&mut self.arena, t);
                return t;
            }
        }
        self.cold_clean
            .pop_back(&mut self.arena)
            .expect("full cache has a page")
    }
}

impl Policy for CcfLru {
    table_glue!(arena);

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.frame.dirty |= r.is_write();
            n.cold = false;
            if n.in_mixed {
                self.mixed.move_to_front(&mut self.arena, slot);
            } else {
                n.in_mixed = true;
                self.cold_clean.unlink(&mut self.arena, slot);
                self.mixed.push_front(&mut self.arena, slot);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let node = Node {
            frame: Frame::of(r),
            cold: !r.is_write(),
            in_mixed: r.is_write(),
        };
        let slot = if self.cold_clean.len() + self.mixed.len() == self.cap {
            let v = self.victim();
            let victim = self.arena.get(v).frame;
            self.table.forget_evicted(&victim, 0, sink);
            *self.arena.get_mut(v) = node;
            v
        } else {
            self.arena.alloc(node)
        };
        if node.in_mixed {
            self.mixed.push_front(&mut self.arena, slot);
        } else {
            self.cold_clean.push_front(&mut self.arena, slot);
        }
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.cold_clean.len() + self.mixed.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("demotions", self.demotions),
            ("second_chances", self.second_chances),
        ]
    }
}
