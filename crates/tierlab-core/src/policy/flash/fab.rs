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
//! non-empty list: O(1) per hit and per miss, O(k log k) for an eviction of k
//! pages (sorting them by page number): O(log pages_per_block) amortized per
//! reference, as each page loaded is evicted once.
//!
//! Layout (for speed; every decision is the same): one 16-byte entry per page
//! id holds the page's dense block number (given on the id's first sight, the
//! only time the block lookup is read), its offset in the block, its flags
//! and its link in the block's page list (a page id names one page, so its
//! block and offset never change); one 32-byte group per block ever seen
//! holds the block number, its place in its count's list and the heads of
//! `CHAINS` (3) singly linked page lists (the `n`-th page loaded joins list
//! `n % CHAINS`). A hit reads the entry and the group (and the group's list
//! neighbours, as LRU's hit reads its node's); the replay loop's look-ahead
//! loads the entry 16 references ahead and the group 6 ahead
//! (`Policy::prefetch`), and every reference walks the next victim's page
//! lists two entries further, so that the eviction's walk (dependent loads, in
//! `CHAINS` independent chains) finds them in cache. Memory: 16 B per distinct
//! page, 32 B per distinct block, and the block lookup: 4 B per block number up
//! to the highest seen below 2^22, a hash-map entry per block above.

use crate::error::{Error, Result};
use crate::policy::id_list::{id_links_in_field, IdList};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageOut, PageRef, Sink};
use crate::trace::Kind;
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

/// Blocks numbered below this are found by direct lookup (up to 16 MB, 4 bytes per block up to
/// the highest one seen), the rest through a hash map.
const DIRECT_BLOCKS: u64 = 1 << 22;

/// `Entry::block` of a page id not seen yet.
const UNSEEN: u32 = u32::MAX;
const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
const ANON: u8 = 4;

/// Per page id (16 bytes): its block (a dense block number, given when the id is first seen
/// and kept), its place in the block's page list and its page's state.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Entry {
    /// Dense block number (index into `groups`), or [`UNSEEN`].
    block: u32,
    /// The next page id of the block's resident pages, or [`NIL`].
    next: u32,
    /// `page % pages_per_block` (the page is `blocks[block] * pages_per_block + off`).
    off: u16,
    /// [`RESIDENT`], [`DIRTY`], [`ANON`].
    flags: u8,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            block: UNSEEN,
            next: NIL,
            off: 0,
            flags: 0,
        }
    }
}

/// A block's resident pages are kept in this many lists (the `n`-th page loaded goes to list
/// `n % CHAINS`), so an eviction's walk follows `CHAINS` independent chains of loads at once.
const CHAINS: usize = 3;

/// Per block ever seen (32 bytes): its block, its place in its count's list and its resident
/// pages.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Group {
    /// `page / pages_per_block`.
    block: u64,
    links: [[u32; 2]; 1],
    /// Resident pages (0: in no list).
    count: u32,
    /// First page id of each of the block's page lists (singly linked through `Entry::next`).
    heads: [u32; CHAINS],
}

impl Group {
    fn empty(block: u64) -> Group {
        Group {
            block,
            links: [[NIL; 2]],
            count: 0,
            heads: [NIL; CHAINS],
        }
    }
}
id_links_in_field!(Group);

pub struct Fab {
    cap: usize,
    ppb: u64,
    entries: Vec<Entry>,
    /// By dense block number.
    groups: Vec<Group>,
    /// `buckets[c]`: blocks with `c` resident pages, MRU first.
    buckets: Vec<IdList<0>>,
    max_count: usize,
    /// Block -> dense block number, read once per page id (when it is first seen): blocks
    /// below [`DIRECT_BLOCKS`] in `direct` (by block, [`UNSEEN`] for none yet), the others in
    /// `index`.
    direct: Vec<u32>,
    index: FxHashMap<u64, u32>,
    /// The last block looked up and its dense number (sequential first sights skip the map).
    last_block: (u64, u32),
    resident: usize,
    resident_blocks: usize,
    out: Vec<Frame>,
    run: Vec<PageOut>,
    block_evictions: u64,
    full_block_evictions: u64,
    /// The next victim as last seen (the back of the fullest list), or [`NIL`].
    pf_group: u32,
    /// Per page list of `pf_group`, the page whose entry was last prefetched ([`NIL`]: none
    /// left); all [`PENDING`] before the first.
    pf_pages: [u32; CHAINS],
    /// The page list `prefetch_victim` steps next.
    pf_chain: usize,
}

/// `Fab::pf_pages` before the victim's first page.
const PENDING: u32 = u32::MAX - 1;

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
            entries: Vec::new(),
            groups: Vec::new(),
            buckets: vec![IdList::default(); cfg.pages_per_block as usize + 1],
            max_count: 0,
            direct: Vec::new(),
            index: FxHashMap::default(),
            last_block: (u64::MAX, UNSEEN),
            resident: 0,
            resident_blocks: 0,
            out: Vec::new(),
            run: Vec::new(),
            block_evictions: 0,
            full_block_evictions: 0,
            pf_group: NIL,
            pf_pages: [NIL; CHAINS],
            pf_chain: 0,
        })
    }
}

impl Fab {
    /// Resident blocks (tests).
    pub fn blocks(&self) -> usize {
        self.resident_blocks
    }

    /// The dense block number of `r`'s page, given on its id's first sight.
    #[cold]
    #[inline(never)]
    fn first_sight(&mut self, r: &PageRef) -> u32 {
        let block = r.page() / self.ppb;
        let next = self.groups.len() as u32;
        let b = if self.last_block.0 == block {
            self.last_block.1
        } else if block < DIRECT_BLOCKS {
            let i = block as usize;
            if i >= self.direct.len() {
                self.direct.resize((i + 1).next_power_of_two(), UNSEEN);
            }
            if self.direct[i] == UNSEEN {
                self.direct[i] = next;
            }
            self.direct[i]
        } else {
            *self.index.entry(block).or_insert(next)
        };
        self.last_block = (block, b);
        if b == next {
            self.groups.push(Group::empty(block));
        }
        let e = &mut self.entries[r.id as usize];
        e.block = b;
        e.off = (r.page() % self.ppb) as u16;
        b
    }

    /// Walks the next victim's page lists ahead of the eviction: they are linked through the
    /// entries, so the eviction's walk is chains of dependent loads, each a cache miss unless
    /// loaded before. Each reference steps two of the victim's [`CHAINS`] lists by one entry
    /// (the one after the entry prefetched two references before, by then in cache), or
    /// prefetches the victim's group when the victim changed. Only a hint: it changes nothing
    /// the policy decides by.
    #[inline(always)]
    fn prefetch_victim(&mut self) {
        let v = self.buckets[self.max_count].tail();
        if v != self.pf_group {
            self.pf_group = v;
            self.pf_pages = [PENDING; CHAINS];
            prefetch(&self.groups, v as usize);
            return;
        }
        for _ in 0..2 {
            let c = self.pf_chain;
            self.pf_chain = (c + 1) % CHAINS;
            let next = match self.pf_pages[c] {
                NIL => continue,
                PENDING => self.groups[v as usize].heads[c],
                p => self.entries[p as usize].next,
            };
            self.pf_pages[c] = next;
            prefetch(&self.entries, next as usize);
        }
    }

    fn evict_block<S: Sink>(&mut self, sink: &mut S) {
        self.pf_group = NIL;
        self.pf_pages = [NIL; CHAINS];
        while self.buckets[self.max_count].is_empty() {
            self.max_count -= 1;
        }
        let g = self.buckets[self.max_count].pop_back(&mut self.groups);
        let gr = &mut self.groups[g as usize];
        let group = std::mem::replace(gr, Group::empty(gr.block));
        // The next victim's pages (its group is in cache: the unlink above wrote its link).
        let next = self.buckets[self.max_count].tail();
        if next != NIL {
            let heads = self.groups[next as usize].heads;
            for &h in &heads {
                prefetch(&self.entries, h as usize);
            }
            // And the group of the one after it.
            prefetch(
                &self.groups,
                self.groups[next as usize].links[0][0] as usize,
            );
            self.pf_group = next;
            self.pf_pages = heads;
        }
        self.block_evictions += 1;
        if group.count as u64 == self.ppb {
            self.full_block_evictions += 1;
        }
        self.resident_blocks -= 1;
        let base = group.block * self.ppb;
        self.out.clear();
        // The lists interleaved, one entry of each in turn, so that their loads overlap.
        let mut ids = group.heads;
        let mut left = group.count;
        while left > 0 {
            for id in &mut ids {
                if *id == NIL {
                    continue;
                }
                let e = &mut self.entries[*id as usize];
                self.out.push(Frame {
                    page: base + e.off as u64,
                    id: *id,
                    kind: if e.flags & ANON != 0 {
                        Kind::Anon
                    } else {
                        Kind::File
                    },
                    dirty: e.flags & DIRTY != 0,
                });
                e.flags = 0;
                *id = std::mem::replace(&mut e.next, NIL);
                left -= 1;
            }
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
            sink.evict(f.out(0));
        }
        self.resident -= self.out.len();
    }
}

impl Policy for Fab {
    /// The page-id entry of the reference [`PREFETCH_FAR`] ahead and the block's group of the
    /// one [`PREFETCH_NEAR`] ahead.
    ///
    /// [`PREFETCH_FAR`]: crate::policy::PREFETCH_FAR
    /// [`PREFETCH_NEAR`]: crate::policy::PREFETCH_NEAR
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.entries, far as usize);
        if let Some(e) = self.entries.get(near as usize) {
            if e.block != UNSEEN {
                prefetch(&self.groups, e.block as usize);
            }
        }
    }

    #[inline]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        let e = &mut self.entries[r.id as usize];
        if e.flags & RESIDENT != 0 {
            if r.is_write() {
                e.flags |= DIRTY;
            }
            let g = e.block;
            let c = self.groups[g as usize].count as usize;
            self.buckets[c].move_to_front(&mut self.groups, g);
            sink.hit(r, 0);
            self.prefetch_victim();
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.resident == self.cap {
            self.evict_block(sink);
        }
        let mut g = self.entries[r.id as usize].block;
        if g == UNSEEN {
            g = self.first_sight(r);
        }
        let grp = &mut self.groups[g as usize];
        let c = grp.count as usize;
        let head = std::mem::replace(&mut grp.heads[c % CHAINS], r.id);
        grp.count += 1;
        if c == 0 {
            self.resident_blocks += 1;
        } else {
            self.buckets[c].unlink(&mut self.groups, g);
        }
        self.buckets[c + 1].push_front(&mut self.groups, g);
        self.max_count = self.max_count.max(c + 1);
        let e = &mut self.entries[r.id as usize];
        e.next = head;
        e.flags = RESIDENT
            | if r.is_write() { DIRTY } else { 0 }
            | if r.kind() == Kind::Anon { ANON } else { 0 };
        self.resident += 1;
        sink.miss(r, 0);
        self.prefetch_victim();
    }

    fn grow(&mut self, n: usize) {
        if self.entries.len() < n {
            self.entries.resize(n, Entry::default());
        }
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
