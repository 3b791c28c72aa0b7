//! SIZE: evict the largest object. Williams, Abrams, Standridge, Abdulla & Fox, "Removal
//! policies in network caches for World-Wide Web documents", SIGCOMM 1996 (Section 3, the
//! "SIZE" primary key). No parameters.
//!
//! The order among objects of equal size is not a recency or frequency order: like libCacheSim's
//! `Size`, the objects sit in a binary max-heap on size (1-based array; a new object is appended
//! and sifted up only past strictly smaller parents; the victim is the root, replaced by the last
//! element, which sifts down only below a strictly larger child; a hit re-sifts the object with
//! its current size). In page mode every size is 1, so nothing ever moves: the first page is
//! evicted first, and after that each eviction takes the page that was last in the array at the
//! previous eviction. tests/libcachesim_conformance.rs checks it against pip `libcachesim`.
//!
//! Object sizes: every entry keeps its `size`, which is 1 in page mode (capacity in pages);
//! adding object sizes later only has to fill it from the trace and count bytes.
//!
//! Per reference: O(log n) (heap sifts; none at all with equal sizes).

use crate::error::Result;
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SizeConfig {}

#[derive(Debug, Clone, Copy)]
struct Entry {
    f: Frame,
    size: u64,
    /// Position in `heap` (1-based).
    pos: usize,
}

pub struct Size {
    cap: usize,
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// `heap[0]` unused.
    heap: Vec<u32>,
    table: SlotTable,
}

impl PolicyDef for Size {
    const NAME: &'static str = "size";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Evict the largest object (Williams et al. 1996); ties in libCacheSim's heap order.";
    type Config = SizeConfig;
    fn build(_cfg: &SizeConfig, ctx: &PolicyCtx) -> Result<Self> {
        Ok(Size {
            cap: ctx.capacity,
            entries: Vec::with_capacity(ctx.capacity),
            free: Vec::new(),
            heap: vec![NIL],
            table: SlotTable::default(),
        })
    }
}

impl Size {
    fn size_at(&self, i: usize) -> u64 {
        self.entries[self.heap[i] as usize].size
    }

    fn place(&mut self, i: usize, s: u32) {
        self.heap[i] = s;
        self.entries[s as usize].pos = i;
    }

    fn up(&mut self, mut i: usize) {
        let s = self.heap[i];
        let size = self.entries[s as usize].size;
        while i > 1 && self.size_at(i / 2) < size {
            self.place(i, self.heap[i / 2]);
            i /= 2;
        }
        self.place(i, s);
    }

    fn down(&mut self, mut i: usize) {
        let s = self.heap[i];
        let size = self.entries[s as usize].size;
        let n = self.heap.len();
        loop {
            let mut c = 2 * i;
            if c >= n {
                break;
            }
            if c + 1 < n && self.size_at(c) < self.size_at(c + 1) {
                c += 1;
            }
            if size >= self.size_at(c) {
                break;
            }
            self.place(i, self.heap[c]);
            i = c;
        }
        self.place(i, s);
    }
}

impl Policy for Size {
    /// The table entry of the reference 16 ahead and the entry of the one 6 ahead.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| prefetch(&self.entries, s as usize));
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let e = &mut self.entries[slot as usize];
            e.f.dirty |= r.is_write();
            // The size is the same in page mode; re-sift as a size change would.
            let (old, new, pos) = (e.size, 1, e.pos);
            e.size = new;
            if old < new {
                self.up(pos);
            } else {
                self.down(pos);
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.heap.len() - 1 == self.cap {
            let v = self.heap[1];
            let last = self.heap.pop().expect("non-empty heap");
            if self.heap.len() > 1 {
                self.place(1, last);
                self.down(1);
            }
            let f = self.entries[v as usize].f;
            self.table.clear(f.id);
            self.free.push(v);
            sink.evict(f.out(0));
        }
        let e = Entry {
            f: Frame::of(r),
            size: 1,
            pos: 0,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.entries[s as usize] = e;
                s
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        };
        self.heap.push(s);
        self.up(self.heap.len() - 1);
        self.table.set(r.id, s);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.heap.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::replay_ids;

    #[test]
    fn hand_worked() {
        // Memory 3, unit sizes: heap [1 2 3]. 4 evicts the root 1, the last (3) moves to the
        // root: [3 2 4]. 5 evicts 3: [4 2 5]. 2 hits (no move). 3 evicts 4: [5 2 3]. 4 evicts 5.
        // 2 hits.
        assert_eq!(replay_ids("size", 3, &[1, 2, 3, 4, 5, 2, 3, 4, 2]), (2, 7));
    }
}
