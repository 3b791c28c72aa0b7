//! FAB, Flash-Aware Buffer management (Jo, Kang, Park, Kim & Lee, IEEE Trans.
//! Consumer Electronics 2006; described in papers/bs-clock-flash-buffer.md,
//! section II).
//!
//! Resident pages are grouped by flash block (`page / pages_per_block`); the
//! groups are kept in LRU order (a reference to any page of a block makes the
//! block most recent). The victim is the block with the most resident pages,
//! ties going to the least recently used block (a full block is therefore
//! chosen first); the whole block leaves the buffer at once, its dirty pages
//! written as large sequential writes. FAB values "large sequential writes"
//! over temporal locality and loses hit ratio for it (the paper's section II).
//!
//! Choices: `pages_per_block` defaults to 32 (a 128 KB large-block NAND erase
//! block of 64 x 2 KB pages, FAB's setting, at tierlab's 4 KB pages). The
//! dirty pages of the evicted block go to flash as one request per run of
//! consecutive page numbers (`Sink::write_back`, then `evict` of each page,
//! now clean), in ascending page order.
//!
//! Data structure: blocks sit in one list per resident-page count, each in
//! recency order. Every change of a block's count comes with a reference to
//! it, so moving the block to the MRU end of its new count's list keeps every
//! list in recency order, and the victim is the LRU block of the highest
//! non-empty list: O(1) per hit, O(1) expected per miss (the block index is
//! a hash map), O(k log k) for an eviction of k pages (sorting them by page
//! number): O(log pages_per_block) amortized per reference, as each page
//! loaded is evicted once. The replay loop's look-ahead loads the page-id
//! entry and the node of references to come (`Policy::prefetch`).

use crate::error::{Error, Result};
use crate::policy::list::{Arena, List, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FabConfig {
    /// Pages per flash block (the grouping unit).
    pub pages_per_block: u32,
}

impl Default for FabConfig {
    fn default() -> Self {
        FabConfig {
            pages_per_block: 32,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct PageNode {
    frame: Frame,
    group: u32,
}

#[derive(Debug, Clone, Copy)]
struct Group {
    block: u64,
    pages: List,
    count: u32,
}

pub struct Fab {
    cap: usize,
    ppb: u64,
    pages: Arena<PageNode>,
    groups: Arena<Group>,
    /// `buckets[c]`: blocks with `c` resident pages, MRU first.
    buckets: Vec<List>,
    max_count: usize,
    /// Resident block -> its group (a hash map: FAB never needs the blocks in order).
    index: FxHashMap<u64, u32>,
    table: SlotTable,
    resident: usize,
    out: Vec<Frame>,
    run: Vec<PageOut>,
    block_evictions: u64,
    full_block_evictions: u64,
}

impl PolicyDef for Fab {
    const NAME: &'static str = "fab";
    const ALIASES: &'static [&'static str] = &["flash-aware-buffer"];
    const FAMILY: &'static str = "flash";
    const SUMMARY: &'static str = "FAB (Jo et al., IEEE TCE'06): pages grouped by flash block \
         (pages_per_block); evict the whole block with the most pages, ties to the LRU block.";
    type Config = FabConfig;
    fn build(cfg: &FabConfig, ctx: &PolicyCtx) -> Result<Self> {
        if cfg.pages_per_block == 0 || cfg.pages_per_block > 1 << 16 {
            return Err(Error::config(format!(
                "policy 'fab': pages_per_block must be in 1..=65536, got {}",
                cfg.pages_per_block
            )));
        }
        Ok(Fab {
            cap: ctx.capacity,
            ppb: cfg.pages_per_block as u64,
            pages: Arena::with_capacity(ctx.capacity),
            groups: Arena::with_capacity(0),
            buckets: vec![List::default(); cfg.pages_per_block as usize + 1],
            max_count: 0,
            index: FxHashMap::default(),
            table: SlotTable::default(),
            resident: 0,
            out: Vec::new(),
            run: Vec::new(),
            block_evictions: 0,
            full_block_evictions: 0,
        })
    }
}

impl Fab {
    /// Resident blocks (tests).
    pub fn blocks(&self) -> usize {
        self.index.len()
    }

    fn evict_block<S: Sink>(&mut self, sink: &mut S) {
        while self.buckets[self.max_count].is_empty() {
            self.max_count -= 1;
        }
        let g = self.buckets[self.max_count]
            .pop_back(&mut self.groups)
            .expect("non-empty bucket");
        let group = *self.groups.get(g);
        self.block_evictions += 1;
        if group.count as u64 == self.ppb {
            self.full_block_evictions += 1;
        }
        self.out.clear();
        let mut list = group.pages;
        while let Some(p) = list.pop_back(&mut self.pages) {
            self.out.push(self.pages.get(p).frame);
            self.pages.release(p);
        }
        self.out.sort_unstable_by_key(|f| f.page);
        // One write per run of consecutive dirty pages.
        let mut i = 0;
        while i < self.out.len() {
            if !self.out[i].dirty {
                i += 1;
                continue;
            }
            self.run.clear();
            self.run.push(self.out[i].out(0));
            let mut j = i + 1;
            while j < self.out.len()
                && self.out[j].dirty
                && self.out[j].page == self.out[j - 1].page + 1
            {
                self.run.push(self.out[j].out(0));
                j += 1;
            }
            sink.write_back(&self.run);
            for f in &mut self.out[i..j] {
                f.dirty = false;
            }
            i = j;
        }
        for f in &self.out {
            self.table.clear(f.id);
            sink.evict(f.out(0));
        }
        self.resident -= self.out.len();
        self.index.remove(&group.block);
        self.groups.release(g);
    }
}

impl Policy for Fab {
    /// The page-id entry of the reference [`PREFETCH_FAR`] ahead and the node
    /// of the one [`PREFETCH_NEAR`] ahead (as `lru` does).
    ///
    /// [`PREFETCH_FAR`]: crate::policy::PREFETCH_FAR
    /// [`PREFETCH_NEAR`]: crate::policy::PREFETCH_NEAR
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table
            .prefetch_ahead(near, far, |s| self.pages.prefetch(s));
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let slot = self.table.get(r.id);
        if slot != NIL {
            let node = self.pages.get_mut(slot);
            node.frame.dirty |= r.is_write();
            let g = node.group;
            let c = self.groups.get(g).count as usize;
            self.buckets[c].move_to_front(&mut self.groups, g);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.resident == self.cap {
            self.evict_block(sink);
        }
        let block = r.page() / self.ppb;
        let g = match self.index.get(&block) {
            Some(&g) => {
                let c = self.groups.get(g).count as usize;
                self.buckets[c].unlink(&mut self.groups, g);
                g
            }
            None => {
                let g = self.groups.alloc(Group {
                    block,
                    pages: List::default(),
                    count: 0,
                });
                self.index.insert(block, g);
                g
            }
        };
        let p = self.pages.alloc(PageNode {
            frame: Frame::of(r),
            group: g,
        });
        let mut pages = self.groups.get(g).pages;
        pages.push_back(&mut self.pages, p);
        let grp = self.groups.get_mut(g);
        grp.pages = pages;
        grp.count += 1;
        let c = grp.count as usize;
        self.buckets[c].push_front(&mut self.groups, g);
        self.max_count = self.max_count.max(c);
        self.table.set(r.id, p);
        self.resident += 1;
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.resident
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("block_evictions", self.block_evictions),
            ("full_block_evictions", self.full_block_evictions),
        ]
    }
}
