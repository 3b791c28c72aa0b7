//! A chunk of a [`super::SectorRing`]: a sorted array of [`CHUNK`] slots of (page number, page
//! id), a bit mask of the live ones, and a line of fences that finds a page's rank in two loads.

use super::{low_mask, CHUNK};
use crate::sim::PageId;

/// Page numbers per cache line of a chunk's array.
pub(super) const LINE: usize = 8;
/// One fence per line but the last.
pub(super) const FENCES: usize = CHUNK / LINE - 1;

/// One cache line of fences and live bits, one of header, then the arrays
/// (the page numbers line-aligned, so a line of the search is one line).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(super) struct Chunk {
    /// `fences[k] == pages[LINE * k + LINE - 1]`: the rank of a page is
    /// found from this line and one line of `pages`, two loads where a
    /// binary search over 64 slots made six dependent ones.
    pub(super) fences: [u64; FENCES],
    /// Bit k set: slot k holds a resident page. A slot below `used` whose
    /// bit is clear is a tombstone: it keeps the number of the page evicted
    /// from it (so the array stays sorted) until an insertion fills it.
    pub(super) live: u64,
    /// Key range of the chunk, inclusive (the ranges partition `u64`).
    pub(super) lo: u64,
    pub(super) hi: u64,
    /// Slots in use from the front, live or dead: `pages[..used]` is
    /// strictly increasing, and `pages[used..]` hold `u64::MAX`.
    pub(super) used: u32,
    pub(super) prev: u32,
    pub(super) next: u32,
    pub(super) _pad: [u32; 9],
    pub(super) pages: [u64; CHUNK],
    pub(super) ids: [PageId; CHUNK],
}

/// Lines of a [`Chunk`] up to its page numbers' (fences, header, page numbers; not the ids).
pub(super) const CHUNK_KEY_LINES: usize =
    (std::mem::size_of::<Chunk>() - std::mem::size_of::<[PageId; CHUNK]>()) / 64 + 1;

impl Chunk {
    pub(super) fn new(lo: u64, hi: u64) -> Self {
        Chunk {
            fences: [u64::MAX; FENCES],
            live: 0,
            lo,
            hi,
            used: 0,
            prev: 0,
            next: 0,
            _pad: [0; 9],
            pages: [u64::MAX; CHUNK],
            ids: [0; CHUNK],
        }
    }

    /// How many slots hold a page number below `page` (live or not): its
    /// sorted position. Branch-free: one line of fences, then one line of
    /// page numbers.
    #[inline(always)]
    pub(super) fn rank(&self, page: u64) -> u32 {
        let k: usize = self.fences.iter().map(|&f| (f < page) as usize).sum();
        let line = &self.pages[k * LINE..k * LINE + LINE];
        (k * LINE + line.iter().map(|&x| (x < page) as usize).sum::<usize>()) as u32
    }

    /// Refreshes the fences of the lines that hold slots `a..b`.
    #[inline(always)]
    pub(super) fn refence(&mut self, a: usize, b: usize) {
        for k in a / LINE..b.div_ceil(LINE).min(FENCES) {
            self.fences[k] = self.pages[k * LINE + LINE - 1];
        }
    }

    /// Sets `used` to one past the last live slot; the free slots above it
    /// hold `u64::MAX` again.
    #[inline(always)]
    pub(super) fn trim(&mut self) {
        let (old, new) = (self.used, 64 - self.live.leading_zeros());
        if new < old {
            if new + 1 == old {
                // The usual case (the slot below is live): one store, where
                // `fill` called `memset`.
                self.pages[new as usize & (CHUNK - 1)] = u64::MAX;
            } else {
                self.pages[new as usize..old as usize].fill(u64::MAX);
            }
            self.refence(new as usize, old as usize);
            self.used = new;
        }
    }

    /// Puts (`page`, `id`) at slot `j` and moves the entries at `j..d` one
    /// slot up, into the free slot `d` (`j <= d < CHUNK`). With nothing to
    /// move (the free slot is `j` itself: an append, or a tombstone at the
    /// position), two stores: `copy_within` calls `memmove` even for zero
    /// entries. (A carried swap loop instead of `memmove` executed more
    /// instructions: on Zipf an insertion moves a dozen entries on average.)
    #[inline(always)]
    pub(super) fn put_moving_up(&mut self, j: usize, d: usize, page: u64, id: PageId) {
        debug_assert!(j <= d && d < CHUNK);
        if d > j {
            self.pages.copy_within(j..d, j + 1);
            self.ids.copy_within(j..d, j + 1);
        }
        self.pages[j & (CHUNK - 1)] = page;
        self.ids[j & (CHUNK - 1)] = id;
    }

    /// Puts (`page`, `id`) at slot `j` and moves the entries at `d + 1..=j`
    /// one slot down, into the free slot `d` (`d <= j < CHUNK`); see
    /// [`Chunk::put_moving_up`].
    #[inline(always)]
    pub(super) fn put_moving_down(&mut self, d: usize, j: usize, page: u64, id: PageId) {
        debug_assert!(d <= j && j < CHUNK);
        if j > d {
            self.pages.copy_within(d + 1..j + 1, d);
            self.ids.copy_within(d + 1..j + 1, d);
        }
        self.pages[j & (CHUNK - 1)] = page;
        self.ids[j & (CHUNK - 1)] = id;
    }

    /// The first live slot at or after `i`, if any.
    #[inline(always)]
    pub(super) fn live_from(&self, i: u32) -> Option<u32> {
        let m = self.live & !low_mask(i);
        (m != 0).then(|| m.trailing_zeros())
    }
}
