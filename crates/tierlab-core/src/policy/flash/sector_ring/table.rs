//! The bucket table of a [`super::SectorRing`]: per *bucket* of
//! `1 << BUCKET_SHIFT` consecutive page numbers, a *hint*, the chunk that
//! held the last page inserted from that bucket. A chunk search starts
//! there: the hint is usable when its chunk's key range starts at or below
//! the page (a dropped chunk's range is empty, `lo = u64::MAX`, so it never
//! is); the chunks' ranges partition the page numbers in ring order, so
//! from any such chunk the one holding the page is reached by stepping to
//! successors while the page lies above the range. At most [`HINT_STEPS`]
//! steps (a split since the hint was written moves part of the range to a
//! successor: usually one step), else the index; the search then rewrites
//! the hint. So a lookup is O(1) (or the index's O(log n)), and splits and
//! drops never touch the table (keeping every bucket exact would rewrite the
//! buckets of a range changing hands, all of a gap's on a trace whose pages
//! sit in clusters far apart).
//!
//! Covers page numbers below `to.len() << BUCKET_SHIFT`, grown on demand up
//! to a limit set from the capacity (4 buckets per cached page, at least
//! `2^16`, at most [`MAX_BUCKETS`]: 4 B per bucket); pages above go to the
//! home chunk and the index.

/// Page numbers per bucket: `page >> BUCKET_SHIFT` names its bucket.
pub(super) const BUCKET_SHIFT: u32 = 6;
/// Most buckets a table grows to (pages below `2^28`, 1 TiB at 4 KiB).
pub(super) const MAX_BUCKETS: usize = 1 << 22;
/// Fewest buckets a table may grow to, whatever the capacity.
pub(super) const MIN_BUCKETS: usize = 1 << 16;
/// Successor steps from a hint before the search gives up on it.
pub(super) const HINT_STEPS: usize = 4;
/// Most buckets a split or drop rewrites (see [`BucketTable::assign`]).
pub(super) const ASSIGN_MAX: u64 = 256;
/// A bucket without a hint (above any chunk slot).
pub(super) const NO_HINT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub(super) struct BucketTable {
    /// Bucket -> hint chunk, or [`NO_HINT`].
    pub(super) to: Vec<u32>,
    /// Most buckets this table grows to.
    pub(super) limit: usize,
}

impl BucketTable {
    /// A table for a ring of `cap` pages (see the module docs for the size).
    pub(super) fn for_capacity(cap: usize) -> Self {
        BucketTable {
            to: Vec::new(),
            limit: cap.saturating_mul(4).clamp(MIN_BUCKETS, MAX_BUCKETS),
        }
    }

    /// The bucket of `page`, growing the table to cover it when the limit
    /// allows (new buckets have no hint); `None` above the limit.
    #[inline(always)]
    pub(super) fn bucket(&mut self, page: u64) -> Option<usize> {
        let b = page >> BUCKET_SHIFT;
        if b < self.to.len() as u64 {
            return Some(b as usize);
        }
        if b >= self.limit as u64 {
            return None;
        }
        self.grow(b as usize);
        Some(b as usize)
    }

    /// Points the buckets whose first page lies in `lo..=hi` (a key range
    /// that just went to chunk `ci`) at `ci`, when they are at most
    /// [`ASSIGN_MAX`]; a larger range (a gap between clusters of pages)
    /// keeps its hints, each still a valid start or detected as stale.
    #[inline]
    pub(super) fn assign(&mut self, lo: u64, hi: u64, ci: u32) {
        let n = self.to.len() as u64;
        let first = lo.div_ceil(1 << BUCKET_SHIFT);
        let end = (hi >> BUCKET_SHIFT).saturating_add(1).min(n);
        if first < end && end - first <= ASSIGN_MAX {
            for h in &mut self.to[first as usize..end as usize] {
                *h = ci;
            }
        }
    }

    #[cold]
    fn grow(&mut self, b: usize) {
        let want = (b + 1).max(2 * self.to.len()).min(self.limit);
        self.to.resize(want, NO_HINT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growth on demand within the limit, new buckets without a hint.
    #[test]
    fn grows_to_cover_within_its_limit() {
        let mut t = BucketTable::for_capacity(0);
        assert_eq!(t.limit, MIN_BUCKETS);
        assert_eq!(t.bucket(5), Some(0));
        assert_eq!(t.to, vec![NO_HINT]);
        // Page 64 * 9 + 3 is in bucket 9; the table doubles or reaches it.
        assert_eq!(t.bucket(64 * 9 + 3), Some(9));
        assert_eq!(t.to.len(), 10);
        assert!(t.to.iter().all(|&h| h == NO_HINT));
        assert_eq!(t.bucket(64 * 10), Some(10));
        assert_eq!(t.to.len(), 20);
        // Above the limit: not covered, the table unchanged.
        assert_eq!(t.bucket((MIN_BUCKETS as u64) << BUCKET_SHIFT), None);
        assert_eq!(t.to.len(), 20);
        let big = BucketTable::for_capacity(1 << 30);
        assert_eq!(big.limit, MAX_BUCKETS);
        assert_eq!(BucketTable::for_capacity(100_000).limit, 400_000);
    }

    /// `assign` rewrites exactly the buckets whose first page is in the
    /// range, clipped to the table, and none when they are too many.
    #[test]
    fn assign_rewrites_the_buckets_starting_in_the_range() {
        let mut t = BucketTable::for_capacity(0);
        t.bucket(64 * 1000);
        let n = t.to.len();
        // Pages 65..=200: buckets 2 (128) and 3 (192); bucket 1 starts at 64.
        t.assign(65, 200, 7);
        let got: Vec<usize> = (0..n).filter(|&b| t.to[b] == 7).collect();
        assert_eq!(got, vec![2, 3]);
        // A range starting on a bucket boundary includes that bucket.
        t.assign(64, 64, 8);
        assert_eq!(t.to[1], 8);
        // A range inside one bucket past its first page: no bucket.
        t.assign(130, 150, 9);
        assert!(!t.to.contains(&9));
        // Clipped to the table.
        t.assign((n as u64 - 2) << BUCKET_SHIFT, u64::MAX, 5);
        assert_eq!(t.to[n - 2..], [5, 5]);
        assert_eq!(t.to[n - 3], NO_HINT);
        // More than ASSIGN_MAX buckets: left as they were.
        t.assign(0, (ASSIGN_MAX + 1) << BUCKET_SHIFT, 6);
        assert!(!t.to.contains(&6));
        t.assign(0, (ASSIGN_MAX - 1) << BUCKET_SHIFT, 6);
        assert_eq!(
            t.to.iter().filter(|&&h| h == 6).count(),
            ASSIGN_MAX as usize
        );
    }
}
