//! LRU-WSR, LRU with Write Sequence Reordering (Jung, Shin, Kim & Lee, IEEE
//! Trans. Consumer Electronics 2008; one of the flash-aware LRUs the
//! bs-clock paper surveys in section II, refs [5]-[13]).
//!
//! LRU plus a cold flag per page. A reference clears the flag and moves the
//! page to the MRU end. On eviction the LRU page is examined: a clean page is
//! evicted; a dirty page whose cold flag is set is evicted; a dirty page whose
//! cold flag is clear gets a second chance: the flag is set and the page moves
//! to the MRU end. New pages enter at the MRU end with the flag clear. The
//! loop ends: every dirty page is skipped at most once per eviction.

use crate::error::Result;
use crate::policy::list::{table_glue, Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LruWsrConfig {}

#[derive(Debug, Clone, Copy)]
struct Node {
    frame: Frame,
    cold: bool,
}

pub struct LruWsr {
    cap: usize,
    arena: Arena<Node>,
    stack: List,
    table: SlotTable,
    second_chances: u64,
}

impl PolicyDef for LruWsr {
    const NAME: &'static str = "lru-wsr";
    const ALIASES: &'static [&'static str] = &["lruwsr"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "LRU-WSR (Jung et al., IEEE TCE'08): LRU where a dirty LRU page \
         with its cold flag clear gets a second chance (flag set, moved to MRU).";
    type Config = LruWsrConfig;
    fn build(_cfg: &LruWsrConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(LruWsr {
            cap: ctx.capacity,
            arena: Arena::with_capacity(ctx.capacity),
            stack: List::default(),
            table: SlotTable::default(),
            second_chances: 0,
        })
    }
}

impl Policy for LruWsr {
    table_glue!(arena);

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let n = self.arena.get_mut(slot);
            n.frame.dirty |= r.is_write();
            n.cold = false;
            self.stack.move_to_front(&mut self.arena, slot);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        let node = Node {
            frame: Frame::of(r),
            cold: false,
        };
        let slot = if self.stack.len() == self.cap {
            let v = loop {
                let t = self.stack.back().expect("full cache has a tail");
                let n = self.arena.get_mut(t);
                if n.frame.dirty && !n.cold {
                    n.cold = true;
                    self.second_chances += 1;
                    self.stack.move_to_front(&mut self.arena, t);
                } else {
                    break t;
                }
            };
            self.stack.unlink(&mut self.arena, v);
            let victim = self.arena.get(v).frame;
            self.table.forget_evicted(&victim, 0, sink);
            *self.arena.get_mut(v) = node;
            v
        } else {
            self.arena.alloc(node)
        };
        self.stack.push_front(&mut self.arena, slot);
        self.table.set(r.id, slot);
        sink.miss(r, 0);
    }

    fn resident(&self) -> usize {
        self.stack.len()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("second_chances", self.second_chances)]
    }
}
