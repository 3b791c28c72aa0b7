//! The index of a [`super::SectorRing`]'s chunks: which chunk holds (or would hold) a page.

/// The `lo` of every live chunk in ascending order, with the chunk's slot,
/// in blocks of at most `2 * INDEX_BLOCK` entries (a B+-tree of two
/// levels): a lookup is two binary searches over compact arrays (the block
/// firsts, then one block), a split or drop of a chunk moves at most one
/// block's entries, and a block split or removal moves the block list.
/// `BTreeMap` walked one node per level with a linear scan in each
/// (mispredicted branches and a cache miss per level); one flat array made
/// each chunk split or drop move every entry above it.
#[derive(Debug, Clone)]
pub(super) struct ChunkIndex {
    /// The first `lo` of each block; the first is 0.
    pub(super) firsts: Vec<u64>,
    pub(super) blocks: Vec<IndexBlock>,
}

#[derive(Debug, Clone)]
pub(super) struct IndexBlock {
    pub(super) los: Vec<u64>,
    pub(super) slots: Vec<u32>,
}

pub(super) const INDEX_BLOCK: usize = 16;

impl ChunkIndex {
    pub(super) fn new() -> Self {
        ChunkIndex {
            firsts: vec![0],
            blocks: vec![IndexBlock {
                los: vec![0],
                slots: vec![0],
            }],
        }
    }

    /// The block that holds (or would hold) `lo`.
    #[inline]
    pub(super) fn block_of(&self, lo: u64) -> usize {
        // The first `lo` is 0, so at least one block starts at or below it.
        self.firsts.partition_point(|&f| f <= lo) - 1
    }

    /// The slot of the chunk with the greatest `lo` at or below `page`.
    #[inline]
    pub(super) fn find(&self, page: u64) -> u32 {
        let b = &self.blocks[self.block_of(page)];
        // Short enough to count without a dependent chain of loads.
        let i: usize = b.los.iter().map(|&l| (l <= page) as usize).sum();
        b.slots[i - 1]
    }

    /// The slot of the chunk whose `lo` is `lo` (tests).
    #[cfg(test)]
    pub(super) fn get(&self, lo: u64) -> Option<u32> {
        let b = &self.blocks[self.block_of(lo)];
        let i = b.los.binary_search(&lo).ok()?;
        Some(b.slots[i])
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.los.len()).sum()
    }

    pub(super) fn insert(&mut self, lo: u64, slot: u32) {
        let bi = self.block_of(lo);
        let b = &mut self.blocks[bi];
        let i = b.los.partition_point(|&l| l < lo);
        b.los.insert(i, lo);
        b.slots.insert(i, slot);
        if b.los.len() == 2 * INDEX_BLOCK {
            let upper = IndexBlock {
                los: b.los.split_off(INDEX_BLOCK),
                slots: b.slots.split_off(INDEX_BLOCK),
            };
            self.firsts.insert(bi + 1, upper.los[0]);
            self.blocks.insert(bi + 1, upper);
        }
    }

    pub(super) fn remove(&mut self, lo: u64) {
        let bi = self.block_of(lo);
        let b = &mut self.blocks[bi];
        let i = b.los.partition_point(|&l| l < lo);
        debug_assert_eq!(b.los[i], lo);
        b.los.remove(i);
        b.slots.remove(i);
        if b.los.is_empty() {
            self.firsts.remove(bi);
            self.blocks.remove(bi);
        } else if i == 0 {
            self.firsts[bi] = b.los[0];
        }
    }

    /// The first chunk now starts at 0 (after the chunk at 0 was removed).
    pub(super) fn first_starts_at_zero(&mut self) {
        self.firsts[0] = 0;
        self.blocks[0].los[0] = 0;
    }
}
