//! The resident pages of Spatial Clock and BS-CLOCK: a circle sorted by page
//! (sector) number with a clock hand (papers/bs-clock-flash-buffer.md,
//! section II, last paragraph, and Figure 3).
//!
//! Layout, chosen for the work a reference does:
//! - Per page id, one `u32`: the flags (`resident`, `referenced`, `dirty`,
//!   `written ahead`, `anon`) in the low byte, so a hit reads and sets one
//!   entry, O(1), and the hand reads the same entry; above them, for a page
//!   not resident, its *home*, the chunk it was last evicted from, tried on
//!   its next miss before the index (Zipf re-misses mostly land there).
//! - The circle is a ring of *chunks*, each a sorted array of [`CHUNK`]
//!   slots of (page number, page id) and a bit mask of the live slots. The
//!   chunks' key ranges partition the page numbers (`lo..=hi`, the first
//!   starting at 0, the last ending at `u64::MAX`), so the chunk that holds
//!   (or would hold) a page is the one with the greatest `lo` at or below
//!   it: tried first the chunk of the previous insertion (sequential traces
//!   land there, usually just after the previous page), then the hint of
//!   the page's bucket of 64 page numbers in the [`table`] (a direct array,
//!   O(1); Zipf insertions land there), then the home, then [`ChunkIndex`],
//!   a two-level sorted array of the chunks' `lo` (pages above the table's
//!   limit, stale hints).
//! - The array of chunks is reserved for the capacity up front (its growth
//!   by doubling copied every chunk in the middle of a replay).
//! - An eviction leaves a *tombstone* (the slot's live bit cleared, its page
//!   number kept so the array stays sorted); an insertion takes the free
//!   slot nearest its sorted position, shifting only the live pages between.
//!   The sorted position comes from one line of fences (the last page number
//!   of each cache line of the array) and one line of page numbers.
//! - The hand is a position (chunk, index). It steps through a chunk's live
//!   slots in order (bit scans of the mask) and then to the next chunk.
//!
//! Cost per operation, n resident pages: a hit O(1); a hand step O(1) (bit
//! scans skip tombstones, and every chunk but a lone one holds a live page);
//! an eviction O(1) (plus an index removal and at most `ASSIGN_MAX` bucket
//! writes when its chunk empties); an insertion O(1) for the chunk search
//! through the finger or the table (at most `HINT_STEPS` steps), else
//! O(log(n / CHUNK)) through the home or the index, O(1) for the position
//! (two cache lines), the shift to the nearest free slot (at most CHUNK;
//! a dozen on Zipf at 1%, none for most of telegram's appends), and on a
//! chunk of CHUNK live pages a split (O(CHUNK), one index insertion, which
//! moves at most one index block, and at most `ASSIGN_MAX` bucket writes).
//! The hand's walk is amortized O(1) per reference whatever n: each step
//! either clears a reference bit a hit set or stops at the victim, so the
//! steps of a replay are at most its references (per eviction at most
//! references / evictions, which follows the hit ratio, not n: telegram
//! 1.19 / 1.42 / 1.94, Zipf(0.9) 1.74 / 3.10 / 6.46 at 1% / 10% / 30%). The
//! one cost that grows with n is an index block split or removal (once per
//! 16 or more chunk splits or drops), which moves the list of blocks: about
//! n / 1500 entries of 48 bytes.
//!
//! The order, the hand and every result are those of a doubly linked circle
//! sorted by page number: a page inserted just before the hand's page goes
//! behind the hand; after an eviction the hand is on the victim's successor
//! (wrapping from the highest page to the lowest).

use crate::policy::list::{prefetch, prefetch_ptr};
use crate::policy::Frame;
use crate::sim::PageId;
use crate::trace::Kind;

mod chunk;
mod index;
mod table;
use chunk::{Chunk, CHUNK_KEY_LINES};
#[cfg(test)]
use chunk::{FENCES, LINE};
use index::ChunkIndex;
#[cfg(test)]
use index::INDEX_BLOCK;
use table::{BucketTable, HINT_STEPS};

/// Slots in one chunk (one bit each in the chunk's `u64` mask of live slots).
pub(crate) const CHUNK: usize = 64;

const RESIDENT: u32 = 1;
const REFERENCED: u32 = 2;
const DIRTY: u32 = 4;
const WRITTEN_AHEAD: u32 = 8;
const ANON: u32 = 16;
/// A page's entry holds its flags in the low byte and, when it is not
/// resident, its home chunk above ([`NO_HOME`]: none).
const HOME_SHIFT: u32 = 8;
const NO_HOME: u32 = u32::MAX >> HOME_SHIFT;

/// Bits `0..k` set (`k` at most 64).
#[inline(always)]
fn low_mask(k: u32) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

/// A position in the circle: chunk slot and index in its array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    chunk: u32,
    idx: u32,
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
#[derive(Debug, Clone)]
pub(crate) struct SectorRing {
    /// Per page id: its flags and, when it is not resident, its *home*, the
    /// chunk it was last evicted from; on its next miss that chunk is tried
    /// (and prefetched) before the index.
    flags: Vec<u32>,
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    /// `lo` of every live chunk -> its slot; the first chunk's `lo` is 0.
    index: ChunkIndex,
    /// Bucket of page numbers -> the chunk holding its first page: the
    /// chunk search for pages it covers (the index for the others).
    table: BucketTable,
    /// The chunk of the last insertion (tried before the index).
    finger: u32,
    /// The slot of the last insertion in `finger`: a sequential trace
    /// inserts just after it (checked before the binary search).
    finger_idx: u32,
    /// How often the finger held the page of recent insertions (+1 when it
    /// did, -4 when not, within 0..=64): above 32 (a sequential trace, the
    /// finger holding more than 80%) [`SectorRing::prefetch_page`] skips
    /// its hint, which the finger makes unnecessary.
    finger_score: u8,
    hand: Pos,
    len: usize,
}

impl Default for SectorRing {
    fn default() -> Self {
        let mut c = Chunk::new(0, u64::MAX);
        c.prev = 0;
        c.next = 0;
        let index = ChunkIndex::new();
        SectorRing {
            flags: Vec::new(),
            chunks: vec![c],
            free: Vec::new(),
            index,
            table: BucketTable::for_capacity(0),
            finger: 0,
            finger_idx: 0,
            finger_score: 0,
            hand: Pos { chunk: 0, idx: 0 },
            len: 0,
        }
    }
}

impl SectorRing {
    /// An empty ring with room reserved for the chunks of `cap` resident
    /// pages at an average of [`CHUNK`] / 4 live pages per chunk (a split
    /// leaves two halves of `CHUNK / 2`). Reserved, not touched: without it
    /// the array of chunks grew by doubling during the replay, each time
    /// copying every chunk (telegram at 30%: 7 MB of chunks).
    pub fn with_capacity(cap: usize) -> Self {
        let mut ring = SectorRing::default();
        ring.chunks.reserve(cap / (CHUNK / 4) + 1);
        ring.table = BucketTable::for_capacity(cap);
        ring
    }

    /// Room for `n` distinct page ids (ids below `n`).
    pub fn grow(&mut self, n: usize) {
        if n > self.flags.len() {
            self.flags.resize(n, NO_HOME << HOME_SHIFT);
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

    /// Starts loading the entry of page id `far` (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, near: PageId, far: PageId) {
        prefetch(&self.flags, far as usize);
        let _ = near;
    }

    /// Starts loading the first two lines (fences, header) of the chunk
    /// that page `page`'s bucket hint names, about [`crate::policy::PREFETCH_FAR`]
    /// references before `page` is referenced: on a miss its insertion
    /// reads them first, and the table entry, then the header, then the
    /// fences and a line of page numbers made a chain of dependent loads.
    /// Wasted on a hit (whether `page` is resident is not known yet: its
    /// entry is being loaded by [`SectorRing::prefetch`]). A hint only.
    #[inline(always)]
    pub fn prefetch_page(&self, page: u64) {
        if self.finger_score > 32 {
            return;
        }
        if let Some(&h) = self.table.to.get((page >> table::BUCKET_SHIFT) as usize) {
            self.prefetch_chunk_lines::<0, 2>(h);
        }
    }

    /// Starts loading what the hand reads in chunk `ci`: its header, page
    /// numbers and page ids (the hand enters it next; its slot in `chunks`
    /// is anywhere, so no hardware prefetcher follows the ring).
    #[inline(always)]
    fn prefetch_for_hand(&self, ci: u32) {
        self.prefetch_chunk_lines::<1, { std::mem::size_of::<Chunk>() / 64 }>(ci);
    }

    /// Starts loading chunk `ci`'s header and page numbers.
    #[inline(always)]
    fn prefetch_chunk(&self, ci: u32) {
        self.prefetch_chunk_lines::<0, { CHUNK_KEY_LINES }>(ci);
    }

    /// Starts loading the 64-byte lines `FROM..TO` (from its start) of chunk `ci`, when there
    /// is such a chunk (bounds known at compile time: the loop unrolls).
    #[inline(always)]
    fn prefetch_chunk_lines<const FROM: usize, const TO: usize>(&self, ci: u32) {
        if let Some(c) = self.chunks.get(ci as usize) {
            let base = (c as *const Chunk).cast::<u8>();
            for line in FROM..TO {
                prefetch_ptr(base.wrapping_add(line * 64));
            }
        }
    }

    /// Records a hit on resident page `id` in one read and one write of its
    /// entry: sets its reference bit and, for a write, its dirty bit and
    /// clears its written-ahead mark. Returns whether that write hit a page
    /// written ahead and not written since (BS-CLOCK's "unnecessary write").
    /// O(1).
    #[inline(always)]
    pub fn hit(&mut self, id: PageId, write: bool) -> bool {
        let f = &mut self.flags[id as usize];
        let old = *f;
        if write {
            *f = (old & !WRITTEN_AHEAD) | REFERENCED | DIRTY;
            old & (WRITTEN_AHEAD | DIRTY) == WRITTEN_AHEAD
        } else {
            *f = old | REFERENCED;
            false
        }
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

    /// The position after `p` in page order (wrapping): the next live slot
    /// of its chunk, else the first live slot of the next chunk (chunks
    /// other than a lone one always hold a live slot).
    #[inline(always)]
    pub fn next(&self, p: Pos) -> Pos {
        let c = &self.chunks[p.chunk as usize];
        match c.live_from(p.idx + 1) {
            Some(idx) => Pos {
                chunk: p.chunk,
                idx,
            },
            None => Pos {
                chunk: c.next,
                idx: self.chunks[c.next as usize].live.trailing_zeros(),
            },
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
            let from = h.chunk;
            h = self.next(h);
            if h.chunk != from {
                self.prefetch_for_hand(self.chunks[h.chunk as usize].next);
            }
        }
    }

    /// Removes the page at the hand and returns its page number (the caller
    /// read its state with [`SectorRing::state`] already); the hand moves to
    /// its successor. O(1): the slot becomes a tombstone (no shift), plus
    /// O(log n) when its chunk empties.
    pub fn evict_at_hand(&mut self) -> u64 {
        let h = self.hand;
        let c = &mut self.chunks[h.chunk as usize];
        let (page, id) = (
            c.pages[h.idx as usize & (CHUNK - 1)],
            c.ids[h.idx as usize & (CHUNK - 1)],
        );
        c.live &= !(1u64 << h.idx);
        self.flags[id as usize] = h.chunk.min(NO_HOME) << HOME_SHIFT;
        self.len -= 1;
        let c = &mut self.chunks[h.chunk as usize];
        // Tombstones at the end are free slots.
        c.trim();
        if let Some(idx) = c.live_from(h.idx + 1) {
            self.hand.idx = idx;
        } else {
            let (next, empty) = (c.next, c.live == 0);
            if empty && next != h.chunk {
                self.drop_chunk(h.chunk);
            }
            self.hand = Pos {
                chunk: next,
                idx: self.chunks[next as usize].live.trailing_zeros() & 63,
            };
            self.prefetch_for_hand(self.chunks[next as usize].next);
        }
        // The next sweep reads the flags of the pages after the hand.
        let c = &self.chunks[self.hand.chunk as usize];
        let i = self.hand.idx as usize;
        // Four slots from the hand (past the end of the chunk: the ids
        // there are stale or 0, a wasted hint), no bounds tests: a
        // prefetch of any address is harmless.
        let flags = self.flags.as_ptr();
        for k in 0..4 {
            let id = c.ids[(i + k) & (CHUNK - 1)];
            prefetch_ptr(flags.wrapping_add(id as usize));
        }
        page
    }

    /// Unlinks the empty chunk `ci` (not the only one); its key range goes to
    /// its predecessor, or, for the first chunk, to its successor.
    #[cold]
    #[inline(never)]
    fn drop_chunk(&mut self, ci: u32) {
        let Chunk {
            prev, next, lo, hi, ..
        } = self.chunks[ci as usize];
        self.index.remove(lo);
        if lo == 0 {
            self.chunks[next as usize].lo = 0;
            self.index.first_starts_at_zero();
            self.table.assign(lo, hi, next);
        } else {
            self.chunks[prev as usize].hi = hi;
            self.table.assign(lo, hi, prev);
        }
        self.chunks[prev as usize].next = next;
        self.chunks[next as usize].prev = prev;
        // An empty key range: no page's home any more.
        let c = &mut self.chunks[ci as usize];
        (c.lo, c.hi) = (u64::MAX, 0);
        if self.finger == ci {
            self.finger = next;
        }
        self.free.push(ci);
    }

    /// The chunk whose key range holds `page`: the chunk of the previous
    /// insertion when it does, else the one found from the page's bucket
    /// hint (see [`table`]; the hint is rewritten), else `home` when it
    /// does, else the one the index names.
    #[inline]
    fn chunk_of(&mut self, page: u64, home: u32) -> u32 {
        let f = &self.chunks[self.finger as usize];
        if f.lo <= page && page <= f.hi {
            self.finger_score = (self.finger_score + 1).min(64);
            return self.finger;
        }
        self.finger_score = self.finger_score.saturating_sub(4);
        let Some(b) = self.table.bucket(page) else {
            return self.chunk_of_slow(page, home);
        };
        let mut ci = self.table.to[b];
        if let Some(c) = self.chunks.get(ci as usize) {
            if c.lo <= page {
                for _ in 0..HINT_STEPS {
                    let c = &self.chunks[ci as usize];
                    if page <= c.hi {
                        self.prefetch_chunk(ci);
                        return ci;
                    }
                    ci = c.next;
                }
            }
        }
        let ci = self.chunk_of_slow(page, home);
        self.table.to[b] = ci;
        ci
    }

    /// [`SectorRing::chunk_of`] without the finger and the table.
    #[inline(never)]
    fn chunk_of_slow(&self, page: u64, home: u32) -> u32 {
        if let Some(c) = self.chunks.get(home as usize) {
            if c.lo <= page && page <= c.hi && home != NO_HOME {
                return home;
            }
        }
        let ci = self.index.find(page);
        self.prefetch_chunk(ci);
        ci
    }

    /// Inserts a non-resident page at its sorted position, reference bit
    /// clear, dirty as `frame` says: into the tombstone or free slot nearest
    /// its position, shifting only the live pages in between. See the module
    /// docs for the cost.
    pub fn insert(&mut self, frame: Frame) {
        let mut ci = self.chunk_of(frame.page, self.flags[frame.id as usize] >> HOME_SHIFT);
        if self.chunks[ci as usize].live == u64::MAX {
            ci = self.split(ci, frame.page);
        }
        let c = &mut self.chunks[ci as usize];
        let n = c.used;
        let f = self.finger_idx;
        let j = if ci == self.finger
            && f < n
            && c.pages[f as usize] < frame.page
            && (f + 1 == n || c.pages[f as usize + 1] > frame.page)
        {
            f + 1
        } else {
            c.rank(frame.page)
        };
        debug_assert!(
            j == n || c.pages[j as usize] != frame.page || c.live & (1 << j) == 0,
            "page already resident"
        );
        // Free slots: tombstones below `used`, and slot `used` itself.
        let free = !c.live & low_mask(n + 1);
        let right = if j < 64 { free >> j } else { 0 };
        let left = free & low_mask(j);
        // A tombstone holding this very page is at `j` (distance 0, taken on
        // the right); on a tie the right slot is taken.
        let go_right =
            right != 0 && (left == 0 || right.trailing_zeros() + 64 <= j + left.leading_zeros());
        let (pos, d) = if go_right {
            let d = j + right.trailing_zeros();
            let (j_, d_) = (j as usize, d as usize);
            c.put_moving_up(j_, d_, frame.page, frame.id);
            if self.hand.chunk == ci && j <= self.hand.idx && self.hand.idx < d {
                self.hand.idx += 1;
            }
            c.refence(j_, d_ + 1);
            (j, d)
        } else {
            let d = 63 - left.leading_zeros();
            let (j_, d_) = (j as usize, d as usize);
            c.put_moving_down(d_, j_ - 1, frame.page, frame.id);
            if self.hand.chunk == ci && d < self.hand.idx && self.hand.idx < j {
                self.hand.idx -= 1;
            }
            c.refence(d_, j_);
            (j - 1, d)
        };
        c.live |= 1u64 << d;
        c.used = c.used.max(d + 1);
        if self.len == 0 {
            self.hand = Pos {
                chunk: ci,
                idx: pos,
            };
        }
        self.finger = ci;
        self.finger_idx = pos;
        self.len += 1;
        self.flags[frame.id as usize] = RESIDENT
            | if frame.dirty { DIRTY } else { 0 }
            | if frame.kind == Kind::Anon { ANON } else { 0 };
    }

    /// Splits the full chunk `ci` (every slot live) in two halves and returns
    /// the one whose key range holds `page`. The hand stays on its page.
    #[cold]
    #[inline(never)]
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
        d.refence(0, CHUNK);
        d.used = (CHUNK - half) as u32;
        d.live = low_mask(d.used);
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
        c.used = half as u32;
        c.live = low_mask(c.used);
        c.pages[half..].fill(u64::MAX);
        c.refence(half, CHUNK);
        c.hi = lo_new - 1;
        c.next = di;
        self.chunks[next_old as usize].prev = di;
        self.index.insert(lo_new, di);
        self.table.assign(lo_new, hi_old, di);
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
        let ci = self.index.find(page);
        let c = &self.chunks[ci as usize];
        let j = c.pages[..c.used as usize].binary_search(&page).ok()?;
        if c.live & (1 << j) == 0 {
            return None;
        }
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
        let first = self.index.get(0).unwrap();
        let all: Vec<u64> = self
            .index
            .blocks
            .iter()
            .flat_map(|b| b.los.iter().copied())
            .collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        for (f, b) in self.index.firsts.iter().zip(&self.index.blocks) {
            assert_eq!(*f, b.los[0]);
            assert!(b.los.len() < 2 * INDEX_BLOCK && b.los.len() == b.slots.len());
        }
        let mut ci = first;
        let mut expect_lo = 0u64;
        let mut count = 0;
        let mut chunks = 0;
        loop {
            let c = &self.chunks[ci as usize];
            assert_eq!(c.lo, expect_lo);
            assert_eq!(self.index.get(c.lo), Some(ci));
            assert!(c.live != 0 || self.len == 0);
            assert_eq!(c.live & !low_mask(c.used), 0);
            assert!(c.pages[c.used as usize..].iter().all(|&p| p == u64::MAX));
            for k in 0..FENCES {
                assert_eq!(c.fences[k], c.pages[k * LINE + LINE - 1]);
            }
            for k in 0..c.used as usize {
                assert!(c.lo <= c.pages[k] && c.pages[k] <= c.hi);
                if k > 0 {
                    assert!(c.pages[k - 1] < c.pages[k]);
                }
                if c.live & (1 << k) != 0 {
                    assert!(self.flags[c.ids[k] as usize] & RESIDENT != 0);
                }
            }
            count += c.live.count_ones() as usize;
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
        // The table's hints lead to the chunk the index names (on a copy:
        // a search rewrites the hint it used); every bucket of a small
        // table, 4096 spread over a large one.
        let mut probe = self.clone();
        let n = self.table.to.len();
        for b in (0..n).step_by(n.div_ceil(4096).max(1)) {
            for page in [b as u64 * 64, b as u64 * 64 + 37, b as u64 * 64 + 63] {
                let want = self.index.find(page);
                assert_eq!(probe.chunk_of(page, NO_HOME), want, "page {page}");
                assert_eq!(probe.chunk_of(page, NO_HOME), want, "page {page}");
            }
        }
        assert_eq!(count, self.len);
        let resident = self.flags.iter().filter(|&&f| f & RESIDENT != 0).count();
        assert_eq!(resident, self.len);
        if self.len > 0 {
            let c = &self.chunks[self.hand.chunk as usize];
            assert!(c.live & (1 << self.hand.idx) != 0);
        }
    }
}

#[cfg(test)]
mod tests;
