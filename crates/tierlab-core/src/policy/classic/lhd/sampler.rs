//! LHD's two random streams: the eviction samples ([`Samples`]) and the explorer draws
//! ([`ExplorerDraws`]), each a SplitMix64 stream of its own.

use super::layout::{EXPLORE_INVERSE_PROBABILITY, HIT_AGE_CLASSES};
use crate::policy::sampling::IndexSampler;

/// Raw outputs the buffer holds (SplitMix64, generated vectorised: see `policy/sampling.rs`):
/// when fewer than an eviction needs are left, the rest moves to the front and the buffer is
/// filled up again, about 60 evictions' worth of 8 at a time.
pub(super) const SAMPLE_BUF: usize = 512;

/// The eviction samples' stream: outputs of an [`IndexSampler`], generated a block at a time into
/// a buffer so that the policy can see the next evictions' draws before it makes them (and
/// prefetch the tags they will sample). With object sizes the buffer holds raw 64-bit outputs,
/// each becoming an index of `0..n` only when it is drawn ([`IndexSampler::index_of`], `n` the
/// resident objects then), so the draws are exactly those of `IndexSampler::fill(n, ..)`
/// whatever `n` was when they were generated. In page mode every sampled eviction draws from
/// `0..capacity` (the cache is full), so the buffer holds those indices, drawn by
/// `IndexSampler::fill(capacity, ..)` a block at a time: the end of an eviction, which
/// prefetches the eviction after next's samples, and the ranking read the same indices, with
/// no multiply in either (the same draws: `indexed_samples_are_the_fill_of_the_range`).
pub(super) struct Samples {
    pub(super) sampler: IndexSampler,
    /// 0: `raw` holds raw outputs; else `idx` holds indices of `0..range`.
    pub(super) range: usize,
    pub(super) raw: Vec<u64>,
    pub(super) idx: Vec<u32>,
    /// `[head..tail]` of the buffer in use are the outputs not drawn yet, in the stream's order.
    pub(super) head: usize,
    pub(super) tail: usize,
}

impl Samples {
    /// Raw outputs if `range` is 0, else indices of `0..range` (`range` at most `u32::MAX`).
    pub(super) fn new(seed: u64, range: usize) -> Samples {
        debug_assert!(range <= u32::MAX as usize);
        Samples {
            sampler: IndexSampler::new(seed),
            range,
            raw: vec![0; if range == 0 { SAMPLE_BUF } else { 0 }],
            idx: vec![0; if range == 0 { 0 } else { SAMPLE_BUF }],
            head: 0,
            tail: 0,
        }
    }

    /// At least `k` outputs not drawn yet are in the buffer.
    #[inline(always)]
    pub(super) fn ensure(&mut self, k: usize) {
        if self.tail - self.head < k {
            self.generate(k);
        }
    }

    #[cold]
    pub(super) fn generate(&mut self, k: usize) {
        let (head, tail) = (self.head, self.tail);
        self.head = 0;
        self.tail = tail - head;
        // More candidates than the buffer holds (a large `associativity`): a larger one.
        let len = |len: usize| {
            if len < k {
                k.next_multiple_of(SAMPLE_BUF)
            } else {
                len
            }
        };
        if self.range == 0 {
            self.raw.copy_within(head..tail, 0);
            let len = len(self.raw.len());
            self.raw.resize(len, 0);
            self.sampler.fill_raw(&mut self.raw[self.tail..]);
        } else {
            self.idx.copy_within(head..tail, 0);
            let len = len(self.idx.len());
            self.idx.resize(len, 0);
            self.sampler.fill(self.range, &mut self.idx[self.tail..]);
        }
        self.tail = self.raw.len().max(self.idx.len());
    }

    /// The raw outputs not drawn yet (at least as many as the last `ensure` asked for).
    #[inline(always)]
    pub(super) fn ahead(&self) -> &[u64] {
        debug_assert_eq!(self.range, 0);
        &self.raw[self.head..self.tail]
    }

    /// The indices not drawn yet (at least as many as the last `ensure` asked for).
    #[cfg(test)]
    pub(super) fn ahead_idx(&self) -> &[u32] {
        debug_assert_ne!(self.range, 0);
        &self.idx[self.head..self.tail]
    }

    /// `ahead_idx()[from..from + len]`, where `ensure(k)` with `from + len <= k` was called
    /// since the last draw (the caller's duty), without the three bounds tests.
    #[inline(always)]
    pub(super) fn idx_window(&self, from: usize, len: usize) -> &[u32] {
        let start = self.head + from;
        debug_assert!(start + len <= self.tail && self.tail <= self.idx.len());
        // SAFETY: `ensure(k)` leaves `head + k <= tail <= idx.len()`, and `from + len <= k`.
        unsafe { self.idx.get_unchecked(start..start + len) }
    }
}

/// The explorer draws' stream: one fair draw from `0..EXPLORE_INVERSE_PROBABILITY` (32) per
/// access, five bits of a SplitMix64 output at a time (twelve draws an output, low bits first),
/// from a stream of its own, so that the eviction samples' stream is not shifted by the accesses
/// in between. Only whether a draw is 0 matters: an output becomes a mask with bit `5k` set when
/// its `k`-th five bits are all 0, and a sentinel bit at 60, so that a draw is the low bit and a
/// shift by 5, and the mask is 1 exactly when the output's twelve draws are used.
pub(super) struct ExplorerDraws {
    pub(super) sampler: IndexSampler,
    pub(super) mask: u64,
}

pub(super) const EXPLORE_BITS: u32 = EXPLORE_INVERSE_PROBABILITY.trailing_zeros();
const _: () = assert!(EXPLORE_INVERSE_PROBABILITY.is_power_of_two());
const _: () = assert!(EXPLORE_BITS == 5);
const _: () = assert!(HIT_AGE_CLASSES.is_power_of_two());
/// Draws an output gives.
pub(super) const EXPLORE_DRAWS: u32 = 64 / EXPLORE_BITS;
/// Bit `5k` for each of an output's draws.
pub(super) const EXPLORE_GROUPS: u64 = {
    let mut m = 0u64;
    let mut k = 0;
    while k < EXPLORE_DRAWS {
        m |= 1 << (EXPLORE_BITS * k);
        k += 1;
    }
    m
};
pub(super) const EXPLORE_SENTINEL: u64 = 1 << (EXPLORE_BITS * EXPLORE_DRAWS);
/// The explorer stream's seed is the policy's seed xor this (the fractional part of sqrt(2)), so
/// that the two SplitMix64 streams of one seed do not overlap (they are the same sequence offset
/// by `(a - b) / gamma` outputs, a pseudo-random distance here).
pub(super) const EXPLORER_SEED: u64 = 0x6a09_e667_f3bc_c909;

impl ExplorerDraws {
    pub(super) fn new(seed: u64) -> ExplorerDraws {
        ExplorerDraws {
            sampler: IndexSampler::new(seed ^ EXPLORER_SEED),
            mask: 1,
        }
    }

    /// The next output's draws as a mask (see [`ExplorerDraws`]).
    #[inline]
    pub(super) fn refill(&mut self) {
        let y = self.sampler.next_raw();
        // Bit `j` of `any`: one of bits `j..j + 5` of `y` is set.
        let any = y | y >> 1 | y >> 2 | y >> 3 | y >> 4;
        self.mask = (!any & EXPLORE_GROUPS) | EXPLORE_SENTINEL;
    }

    /// True with probability `1 / EXPLORE_INVERSE_PROBABILITY`.
    #[inline(always)]
    pub(super) fn explore(&mut self) -> bool {
        if self.mask == 1 {
            self.refill();
        }
        let r = self.mask & 1 != 0;
        self.mask >>= EXPLORE_BITS;
        r
    }
}
