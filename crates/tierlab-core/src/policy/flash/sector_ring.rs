//! The resident pages of Spatial Clock and BS-CLOCK: a circle sorted by page
//! (sector) number with a clock hand (papers/bs-clock-flash-buffer.md,
//! section II, last paragraph, and Figure 3).
//!
//! Layout, chosen for the work a reference does:
//! - Per page id, one flags byte (`resident`, `referenced`, `dirty`,
//!   `written ahead`, `anon`), grown with the trace's distinct pages: a hit
//!   reads and sets one byte, O(1), and the hand reads the same byte.
//! - The circle is a ring of *chunks*, each a sorted array of up to [`CHUNK`]
//!   (page number, page id) pairs. The chunks' key ranges partition the page
//!   numbers (`lo..=hi`, the first starting at 0, the last ending at
//!   `u64::MAX`), so the chunk that holds (or would hold) a page is the one
//!   with the greatest `lo` at or below it, found in a `BTreeMap` of the
//!   chunks' `lo` (one entry per chunk, not per page), after first trying
//!   the chunk of the previous insertion (sequential traces land there).
//! - The hand is a position (chunk, index). It steps through a chunk's
//!   array in order and then to the next chunk in the ring.
//!
//! Cost per operation, n resident pages: a hit O(1); a hand step O(1); an
//! insertion O(log(n / CHUNK)) for the chunk search, O(log CHUNK + CHUNK)
//! for the binary search and the shift inside the chunk, and on a full chunk
//! a split (O(CHUNK) plus one index insertion); the eviction at the hand
//! O(CHUNK) for the shift, plus O(log n) to drop a chunk it empties. So
//! O(log n) per miss with CHUNK a constant, against a `BTreeMap` per page
//! before (three O(log n) tree walks per miss, each a cache miss per level).
//!
//! The order, the hand and every result are those of a doubly linked circle
//! sorted by page number: a page inserted just before the hand's page goes
//! behind the hand; after an eviction the hand is on the victim's successor
//! (wrapping from the highest page to the lowest).

use crate::policy::list::prefetch;
use crate::policy::Frame;
use crate::sim::PageId;
use crate::trace::Kind;
use std::collections::BTreeMap;

/// Most pages in one chunk.
pub(crate) const CHUNK: usize = 64;

const RESIDENT: u8 = 1;
const REFERENCED: u8 = 2;
const DIRTY: u8 = 4;
const WRITTEN_AHEAD: u8 = 8;
const ANON: u8 = 16;

/// A position in the circle: chunk slot and index in its array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    chunk: u32,
    idx: u32,
}

#[derive(Debug, Clone)]
struct Chunk {
    len: u32,
    prev: u32,
    next: u32,
    /// Key range of the chunk, inclusive (the ranges partition `u64`).
    lo: u64,
    hi: u64,
    pages: [u64; CHUNK],
    ids: [PageId; CHUNK],
}

impl Chunk {
    fn new(lo: u64, hi: u64) -> Self {
        Chunk {
            len: 0,
            prev: 0,
            next: 0,
            lo,
            hi,
            pages: [0; CHUNK],
            ids: [0; CHUNK],
        }
    }
}

/// The state of one resident page, as the policies see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageState {
    pub page: u64,
    pub id: PageId,
    pub referenced: bool,
    pub dirty: bool,
    pub written_ahead: bool,
    pub kind: Kind,
}

impl PageState {
    pub fn frame(&self) -> Frame {
        Frame {
            page: self.page,
            id: self.id,
            kind: self.kind,
            dirty: self.dirty,
        }
    }
}

/// Resident pages in a circle sorted by page number, with a clock hand.
#[derive(Debug)]
pub(crate) struct SectorRing {
    flags: Vec<u8>,
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    /// `lo` of every live chunk -> its slot; the first chunk's `lo` is 0.
    index: BTreeMap<u64, u32>,
    /// The chunk of the last insertion (tried before the index).
    finger: u32,
    hand: Pos,
    len: usize,
}

impl Default for SectorRing {
    fn default() -> Self {
        let mut c = Chunk::new(0, u64::MAX);
        c.prev = 0;
        c.next = 0;
        let mut index = BTreeMap::new();
        index.insert(0, 0);
        SectorRing {
            flags: Vec::new(),
            chunks: vec![c],
            free: Vec::new(),
            index,
            finger: 0,
            hand: Pos { chunk: 0, idx: 0 },
            len: 0,
        }
    }
}

impl SectorRing {
    /// Room for `n` distinct page ids (ids below `n`).
    pub fn grow(&mut self, n: usize) {
        if n > self.flags.len() {
            self.flags.resize(n, 0);
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether page id `id` is resident.
    #[inline(always)]
    pub fn is_resident(&self, id: PageId) -> bool {
        self.flags[id as usize] & RESIDENT != 0
    }

    /// Starts loading the flags of page id `id` (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, id: PageId) {
        prefetch(&self.flags, id as usize);
    }

    /// Records a reference to resident page `id`: sets its reference bit and,
    /// for a write, its dirty bit. O(1).
    #[inline(always)]
    pub fn touch(&mut self, id: PageId, write: bool) {
        let f = &mut self.flags[id as usize];
        *f |= REFERENCED | if write { DIRTY } else { 0 };
    }

    /// Whether resident page `id` was written ahead and not written since
    /// (BS-CLOCK's "unnecessary write" when it is written again).
    #[inline(always)]
    pub fn written_ahead_clean(&self, id: PageId) -> bool {
        self.flags[id as usize] & (WRITTEN_AHEAD | DIRTY) == WRITTEN_AHEAD
    }

    /// Clears the written-ahead mark of page `id`.
    #[inline(always)]
    pub fn clear_written_ahead(&mut self, id: PageId) {
        self.flags[id as usize] &= !WRITTEN_AHEAD;
    }

    #[inline(always)]
    fn at(&self, p: Pos) -> (u64, PageId) {
        let c = &self.chunks[p.chunk as usize];
        (c.pages[p.idx as usize], c.ids[p.idx as usize])
    }

    /// The page at position `p`.
    pub fn state(&self, p: Pos) -> PageState {
        let (page, id) = self.at(p);
        let f = self.flags[id as usize];
        PageState {
            page,
            id,
            referenced: f & REFERENCED != 0,
            dirty: f & DIRTY != 0,
            written_ahead: f & WRITTEN_AHEAD != 0,
            kind: if f & ANON != 0 {
                Kind::Anon
            } else {
                Kind::File
            },
        }
    }

    /// Marks the page at `p` clean and written ahead (a BS-CLOCK follower).
    pub fn mark_written_ahead(&mut self, p: Pos) {
        let (_, id) = self.at(p);
        let f = &mut self.flags[id as usize];
        *f = (*f & !DIRTY) | WRITTEN_AHEAD;
    }

    /// The position after `p` in page order (wrapping).
    #[inline(always)]
    pub fn next(&self, p: Pos) -> Pos {
        let c = &self.chunks[p.chunk as usize];
        if p.idx + 1 < c.len {
            Pos {
                chunk: p.chunk,
                idx: p.idx + 1,
            }
        } else {
            // Chunks other than a lone one are never empty.
            Pos {
                chunk: c.next,
                idx: 0,
            }
        }
    }

    /// Sweeps from the hand, clearing reference bits, and returns the first
    /// position whose bit is clear (the hand is left on it). The ring must
    /// not be empty. O(1) per page passed.
    pub fn sweep(&mut self) -> Pos {
        debug_assert!(self.len > 0);
        let mut h = self.hand;
        loop {
            let id = self.chunks[h.chunk as usize].ids[h.idx as usize];
            let f = &mut self.flags[id as usize];
            if *f & REFERENCED == 0 {
                self.hand = h;
                return h;
            }
            *f &= !REFERENCED;
            h = self.next(h);
        }
    }

    /// Removes the page at the hand and returns it; the hand moves to its
    /// successor. O(CHUNK), plus O(log n) when its chunk empties.
    pub fn evict_at_hand(&mut self) -> PageState {
        let h = self.hand;
        let st = self.state(h);
        self.flags[st.id as usize] = 0;
        self.len -= 1;
        let ci = h.chunk as usize;
        let c = &mut self.chunks[ci];
        let (i, n) = (h.idx as usize, c.len as usize);
        c.pages.copy_within(i + 1..n, i);
        c.ids.copy_within(i + 1..n, i);
        c.len -= 1;
        if i + 1 < n {
            return st; // the successor slid onto the hand
        }
        let next = c.next;
        self.hand = Pos {
            chunk: next,
            idx: 0,
        };
        if c.len == 0 && next != h.chunk {
            self.drop_chunk(h.chunk);
        }
        st
    }

    /// Unlinks the empty chunk `ci` (not the only one); its key range goes to
    /// its predecessor, or, for the first chunk, to its successor.
    fn drop_chunk(&mut self, ci: u32) {
        let Chunk {
            prev, next, lo, hi, ..
        } = self.chunks[ci as usize];
        self.index.remove(&lo);
        if lo == 0 {
            let n = &mut self.chunks[next as usize];
            self.index.remove(&n.lo);
            n.lo = 0;
            self.index.insert(0, next);
        } else {
            self.chunks[prev as usize].hi = hi;
        }
        self.chunks[prev as usize].next = next;
        self.chunks[next as usize].prev = prev;
        if self.finger == ci {
            self.finger = next;
        }
        self.free.push(ci);
    }

    /// The chunk whose key range holds `page`.
    #[inline]
    fn chunk_of(&self, page: u64) -> u32 {
        let f = &self.chunks[self.finger as usize];
        if f.lo <= page && page <= f.hi {
            return self.finger;
        }
        *self
            .index
            .range(..=page)
            .next_back()
            .expect("the first chunk starts at 0")
            .1
    }

    /// Inserts a non-resident page at its sorted position, reference bit
    /// clear, dirty as `frame` says. See the module docs for the cost.
    pub fn insert(&mut self, frame: Frame) {
        let mut ci = self.chunk_of(frame.page);
        if self.chunks[ci as usize].len as usize == CHUNK {
            ci = self.split(ci, frame.page);
        }
        let c = &mut self.chunks[ci as usize];
        let n = c.len as usize;
        let j = c.pages[..n].partition_point(|&p| p < frame.page);
        debug_assert!(j == n || c.pages[j] != frame.page, "page already resident");
        c.pages.copy_within(j..n, j + 1);
        c.ids.copy_within(j..n, j + 1);
        c.pages[j] = frame.page;
        c.ids[j] = frame.id;
        c.len += 1;
        if self.len == 0 {
            self.hand = Pos { chunk: ci, idx: 0 };
        } else if self.hand.chunk == ci && j as u32 <= self.hand.idx {
            self.hand.idx += 1;
        }
        self.finger = ci;
        self.len += 1;
        self.flags[frame.id as usize] = RESIDENT
            | if frame.dirty { DIRTY } else { 0 }
            | if frame.kind == Kind::Anon { ANON } else { 0 };
    }

    /// Splits the full chunk `ci` in two halves and returns the one whose key
    /// range holds `page`. The hand stays on its page.
    fn split(&mut self, ci: u32, page: u64) -> u32 {
        let half = CHUNK / 2;
        let (lo_new, hi_old, next_old) = {
            let c = &self.chunks[ci as usize];
            (c.pages[half], c.hi, c.next)
        };
        let mut d = Chunk::new(lo_new, hi_old);
        {
            let c = &self.chunks[ci as usize];
            d.pages[..CHUNK - half].copy_from_slice(&c.pages[half..]);
            d.ids[..CHUNK - half].copy_from_slice(&c.ids[half..]);
        }
        d.len = (CHUNK - half) as u32;
        d.prev = ci;
        d.next = next_old;
        let di = match self.free.pop() {
            Some(s) => {
                self.chunks[s as usize] = d;
                s
            }
            None => {
                self.chunks.push(d);
                (self.chunks.len() - 1) as u32
            }
        };
        let c = &mut self.chunks[ci as usize];
        c.len = half as u32;
        c.hi = lo_new - 1;
        c.next = di;
        self.chunks[next_old as usize].prev = di;
        self.index.insert(lo_new, di);
        if self.hand.chunk == ci && self.hand.idx as usize >= half {
            self.hand = Pos {
                chunk: di,
                idx: self.hand.idx - half as u32,
            };
        }
        if page >= lo_new {
            di
        } else {
            ci
        }
    }

    /// The hand's position.
    #[cfg(test)]
    fn hand(&self) -> Pos {
        self.hand
    }

    /// Resident page numbers in ring order starting at the hand (tests, debugging).
    pub fn order_from_hand(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len);
        let mut p = self.hand;
        for _ in 0..self.len {
            out.push(self.at(p).0);
            p = self.next(p);
        }
        out
    }

    /// The state of resident page `page` (O(log n); tests and tools).
    pub fn find(&self, page: u64) -> Option<PageState> {
        let ci = *self.index.range(..=page).next_back()?.1;
        let c = &self.chunks[ci as usize];
        let j = c.pages[..c.len as usize].binary_search(&page).ok()?;
        Some(self.state(Pos {
            chunk: ci,
            idx: j as u32,
        }))
    }

    /// Checks the invariants (tests): chunk ranges partition `u64` in ring
    /// order, every chunk is sorted within its range and non-empty (unless
    /// alone), the index names every chunk, flags agree with membership.
    #[cfg(test)]
    fn check(&self) {
        let first = self.index[&0];
        let mut ci = first;
        let mut expect_lo = 0u64;
        let mut count = 0;
        let mut chunks = 0;
        loop {
            let c = &self.chunks[ci as usize];
            assert_eq!(c.lo, expect_lo);
            assert_eq!(self.index[&c.lo], ci);
            assert!(c.len > 0 || self.len == 0);
            for k in 0..c.len as usize {
                assert!(c.lo <= c.pages[k] && c.pages[k] <= c.hi);
                if k > 0 {
                    assert!(c.pages[k - 1] < c.pages[k]);
                }
                assert!(self.flags[c.ids[k] as usize] & RESIDENT != 0);
            }
            count += c.len as usize;
            chunks += 1;
            assert_eq!(self.chunks[c.next as usize].prev, ci);
            if c.hi == u64::MAX {
                assert_eq!(c.next, first);
                break;
            }
            expect_lo = c.hi + 1;
            ci = c.next;
        }
        assert_eq!(chunks, self.index.len());
        assert_eq!(count, self.len);
        let resident = self.flags.iter().filter(|&&f| f & RESIDENT != 0).count();
        assert_eq!(resident, self.len);
        if self.len > 0 {
            assert!(self.hand.idx < self.chunks[self.hand.chunk as usize].len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn frame(page: u64, id: u32) -> Frame {
        Frame {
            page,
            id,
            kind: Kind::File,
            dirty: false,
        }
    }

    /// The ring against a `BTreeSet` model of the sorted circle and its hand,
    /// under random insertions, references and evictions (clustered and
    /// spread page numbers, sizes crossing many chunk splits and drops).
    #[test]
    fn matches_a_sorted_set_model() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (cap, span) in [
            (1usize, 10u64),
            (5, 20),
            (70, 200),
            (300, 1000),
            (1000, 1 << 40),
        ] {
            let mut ring = SectorRing::default();
            let ids = 4096usize;
            ring.grow(ids);
            let mut model: BTreeSet<u64> = BTreeSet::new();
            let mut referenced: BTreeSet<u64> = BTreeSet::new();
            let mut hand: Option<u64> = None;
            let page_of = |id: u64| id.wrapping_mul(span / 4096 + 1) % span.max(1);
            let mut id_of = std::collections::HashMap::new();
            let mut step = 0u64;
            for _ in 0..20_000 {
                let id = (rnd() % ids as u64) as u32;
                let page = page_of(id as u64);
                if *id_of.entry(page).or_insert(id) != id {
                    continue; // one id per page
                }
                if ring.is_resident(id) {
                    ring.touch(id, false);
                    referenced.insert(page);
                } else {
                    if model.len() == cap {
                        // model sweep
                        let mut h = hand.unwrap();
                        while referenced.remove(&h) {
                            h = *model
                                .range(h + 1..)
                                .next()
                                .unwrap_or_else(|| model.iter().next().unwrap());
                        }
                        let p = ring.sweep();
                        assert_eq!(ring.at(p).0, h);
                        let st = ring.evict_at_hand();
                        assert_eq!(st.page, h);
                        model.remove(&h);
                        hand = model
                            .range(h + 1..)
                            .next()
                            .or_else(|| model.iter().next())
                            .copied();
                    }
                    ring.insert(frame(page, id));
                    model.insert(page);
                    if hand.is_none() {
                        hand = Some(page);
                    }
                }
                step += 1;
                if step.is_multiple_of(97) {
                    ring.check();
                }
                assert_eq!(ring.len(), model.len());
                if let Some(h) = hand {
                    assert_eq!(ring.at(ring.hand()).0, h);
                }
            }
            let from_hand = ring.order_from_hand();
            let h = hand.unwrap();
            let expect: Vec<u64> = model.range(h..).chain(model.range(..h)).copied().collect();
            assert_eq!(from_hand, expect);
        }
    }
}
