//! LHD's eviction: the rank of an object (its hit density per size), and the choice of the
//! first of least rank among the sampled candidates and the recent admissions.

use super::core::LhdCore;
use super::layout::*;
use crate::policy::list::{prefetch, prefetch_unchecked, NIL};
use crate::policy::sampling::IndexSampler;
use crate::policy::Frame;
use crate::trace::Kind;
use std::hint::select_unpredictable;

/// Of the best so far (`victim`, `rank`) and candidate `i` of rank `d`, the first of least rank:
/// the candidate only when strictly less, as libCacheSim ranks. Without branches
/// (`select_unpredictable`): as a branch the running compare mispredicts about half the time on
/// random samples.
#[inline(always)]
pub(super) fn first_least((victim, rank): (usize, f32), i: usize, d: f32) -> (usize, f32) {
    let less = d < rank;
    (
        select_unpredictable(less, i, victim),
        select_unpredictable(less, d, rank),
    )
}

impl LhdCore {
    /// The size of the object at `i` (1 in page mode).
    #[inline(always)]
    pub(super) fn size_with<const UNIT: bool>(&self, i: usize) -> f32 {
        if UNIT {
            1.0
        } else {
            self.sizes[i]
        }
    }

    /// The rank of the object at `i`: its hit density (divided by its size unless `UNIT`), +1
    /// for an explorer, the lowest of all (`f32::MIN`) at the oldest age. Without branches:
    /// `d + 0.0 == d` for every density (`-0.0` becomes `0.0`, equal to it in every
    /// comparison); in page mode one load from the row of the class, or of the explorers' (the
    /// same `d + 1.0`, computed at the reconfiguration), whose last column is `f32::MIN`.
    #[inline(always)]
    pub(super) fn density_with<const UNIT: bool>(&self, i: usize) -> f32 {
        self.density_of::<UNIT>(self.stamps[i], i)
    }

    /// [`LhdCore::density_with`] of the object at `i` whose stamp is `s`.
    #[inline(always)]
    pub(super) fn density_of<const UNIT: bool>(&self, s: Stamp, i: usize) -> f32 {
        if UNIT {
            return unit_rank(&self.densities, self.now(), self.shift, s);
        }
        let age = self.age(s);
        let d = self.densities[s.class() * STRIDE + age];
        let explorer = s.explorer() as u8 as f32;
        if age == LAST_AGE {
            f32::MIN
        } else {
            d / self.sizes[i] + explorer
        }
    }

    #[inline(always)]
    pub(super) fn density(&self, s: Stamp, i: usize) -> f32 {
        if self.unit_sizes {
            self.density_of::<true>(s, i)
        } else {
            self.density_of::<false>(s, i)
        }
    }

    /// The rank of a new object (not an explorer) of size `size`, `density(stamp, i)` of its
    /// stamp: age 0, class 0, so the first entry of the table (divided by the size with object
    /// sizes; `x + 0.0`, the explorer's term, compares as `x`). Read from the table, so it is
    /// the current one after a reconfiguration (`new_rank_is_a_new_stamps_density`).
    #[inline(always)]
    pub(super) fn new_rank(&self, size: f32) -> f32 {
        const _: () = assert!(hit_age_class(MAX_AGE as u64) == 0);
        if self.unit_sizes {
            self.densities[0]
        } else {
            self.densities[0] / size
        }
    }

    /// Ranks the objects at `at` in order after `victim` of density `rank`, keeping the first
    /// of least density.
    #[inline(always)]
    pub(super) fn rank<const UNIT: bool>(
        &self,
        at: &[u32],
        mut victim: usize,
        mut rank: f32,
    ) -> (usize, f32) {
        for &i in at {
            (victim, rank) = first_least(
                (victim, rank),
                i as usize,
                self.density_with::<UNIT>(i as usize),
            );
        }
        (victim, rank)
    }

    /// The recent admissions still resident, ranked in the ring's order after `victim` of
    /// density `rank` (the first of least density).
    #[inline(always)]
    pub(super) fn rank_recent<const UNIT: bool>(
        &self,
        mut victim: usize,
        mut rank: f32,
    ) -> (usize, f32) {
        for (w, &word) in self.recent_live.iter().enumerate() {
            let mut live = word;
            while live != 0 {
                let k = w * 64 + live.trailing_zeros() as usize;
                live &= live - 1;
                let i = self.recent_at[k] as usize;
                (victim, rank) = first_least((victim, rank), i, self.density_with::<UNIT>(i));
            }
        }
        (victim, rank)
    }

    /// `recent_at[k] = at`, and its bit of `recent_live`.
    #[inline(always)]
    pub(super) fn set_recent(&mut self, k: usize, at: u32) {
        self.recent_at[k] = at;
        let (w, bit) = (k / 64, 1u64 << (k % 64));
        if at == NIL {
            self.recent_live[w] &= !bit;
        } else {
            self.recent_live[w] |= bit;
        }
    }

    /// Chooses a victim, removes it and returns its key.
    pub fn evict(&mut self) -> u32 {
        self.evict_frame().id
    }

    /// Chooses a victim, removes it and returns its frame (page mode: its page, kind and dirty
    /// bit; with object sizes only the key is meaningful).
    pub(super) fn evict_frame(&mut self) -> Frame {
        if self.unit_sizes {
            self.evict_with::<true>()
        } else {
            self.evict_with::<false>()
        }
    }

    /// The sampled candidates (the next `candidates` outputs, as indices of `0..n`) and the
    /// recent admissions, ranked a batch at a time in that order: the first of least density.
    pub(super) fn rank_batches<const UNIT: bool>(
        &self,
        candidates: usize,
        n: usize,
        victim: &mut usize,
        rank: &mut f32,
    ) {
        let (mut v, mut d) = (*victim, *rank);
        let mut drawn = [0u32; BATCH];
        for raw in self.samples.ahead()[..candidates].chunks(BATCH) {
            let drawn = &mut drawn[..raw.len()];
            for (i, &r) in drawn.iter_mut().zip(raw) {
                *i = IndexSampler::index_of(r, n) as u32;
                prefetch(&self.stamps, *i as usize);
                if !UNIT {
                    prefetch(&self.sizes, *i as usize);
                }
            }
            (v, d) = self.rank::<UNIT>(drawn, v, d);
        }
        (*victim, *rank) = self.rank_recent::<UNIT>(v, d);
    }

    /// [`LhdCore::rank_batches`] in page mode, same victim: the drawn indices (of `0..n`, `n`
    /// the capacity and the number of stamps, which the caller checked) were read two
    /// evictions ahead to prefetch their stamps (see the end of `evict_with`), and the recent
    /// admissions' are in the CPU's cache. The drawn ones and the recent admissions are ranked
    /// as two independent chains of compares, then the latter's least wins only if strictly
    /// less (it comes after all of the former's), as ranking them in one sequence does.
    #[inline(always)]
    pub(super) fn rank_unit(&self, candidates: usize) -> (usize, f32) {
        debug_assert_eq!(self.samples.range, self.stamps.len());
        let drawn = self.samples.idx_window(0, candidates);
        // The warm-up's 8 (all of telegram, for one) as a loop of a known count: unrolled.
        let (victim, rank) = if candidates == WARMUP_CANDIDATES {
            self.rank_drawn(&drawn[..WARMUP_CANDIDATES])
        } else {
            self.rank_drawn(drawn)
        };
        // On a trace that mostly misses the recent admissions are mostly evicted before an
        // eviction (telegram at 30%: none left at 9 evictions in 10): then one test.
        if !self.recent_any() {
            return (victim, rank);
        }
        let (recent, recent_rank) = self.rank_recent::<true>(usize::MAX, f32::MAX);
        if recent_rank < rank {
            (recent, recent_rank)
        } else {
            (victim, rank)
        }
    }

    /// A recent admission is still resident.
    #[inline(always)]
    pub(super) fn recent_any(&self) -> bool {
        self.recent_live.iter().any(|&w| w != 0)
    }

    /// The first of least rank of the stamps at `drawn` (indices below the number of stamps:
    /// `rank_unit`'s caller checked that it is the samples' range).
    #[inline(always)]
    pub(super) fn rank_drawn(&self, drawn: &[u32]) -> (usize, f32) {
        let (now, shift, densities) = (self.now(), self.shift, &*self.densities);
        let mut best = (usize::MAX, f32::MAX);
        for &i in drawn {
            let i = i as usize;
            // SAFETY: the indices are drawn from `0..range`, and `range` is the number of
            // stamps (the caller's assertion); no bounds test per candidate.
            let d = unit_rank(densities, now, shift, unsafe {
                *self.stamps.get_unchecked(i)
            });
            best = first_least(best, i, d);
        }
        best
    }

    /// Inlined into the page-mode access, as `insert` is.
    #[inline(always)]
    pub(super) fn evict_with<const UNIT: bool>(&mut self) -> Frame {
        let n = self.stamps.len();
        // The same for the next eviction: only a reconfiguration changes it, and an eviction
        // does not tick.
        let candidates = self.candidates;
        let sampled = candidates < n;
        // Page mode's samples are indices of `0..capacity`, made when generated.
        let indexed = UNIT && self.samples.range != 0;
        let look = candidates.min(FORESEE);
        let mut victim = usize::MAX;
        let mut rank = f32::MAX;
        if !sampled {
            let mut oldest = u64::MAX;
            for i in 0..n {
                let d = self.density_with::<UNIT>(i);
                let t = self.stamps[i].timestamp();
                if d < rank || (d == rank && t < oldest) {
                    (victim, rank, oldest) = (i, d, t);
                }
            }
        } else {
            // This eviction's candidates, and the next one's draws (whose stamps were
            // prefetched at the eviction before) and the one after it's (prefetched at the
            // end of this one): one test for the buffer.
            self.samples.ensure(AHEAD * candidates + look);
            if indexed {
                assert!(
                    n == self.samples.range,
                    "page-mode LHD samples only a full cache"
                );
                (victim, rank) = self.rank_unit(candidates);
            } else {
                // A batch at a time: the batch's indices, their stamps prefetched (mostly
                // loaded already, see the end), then the ranking. The stamps are random places
                // in an array larger than the CPU's caches once the cache is large.
                self.rank_batches::<UNIT>(candidates, n, &mut victim, &mut rank);
            }
            self.samples.head += candidates;
        }
        assert!(victim != usize::MAX, "LHD evicts from a non-empty cache");
        self.ewma_victim = EWMA_DECAY * self.ewma_victim + (1.0 - EWMA_DECAY) * rank;
        let s = self.stamps[victim];
        let c = self.cold[victim];
        let age = self.age(s);
        self.evictions[s.class() * MAX_AGE + age] += 1.0;
        if s.explorer() {
            self.explorer_budget += self.size_with::<UNIT>(victim) as i64;
        }
        let (victim_at, last) = (victim as u32, (n - 1) as u32);
        let any_recent = self.recent_any();
        for w in 0..if any_recent {
            self.recent_live.len()
        } else {
            0
        } {
            let word = self.recent_live[w];
            if word == 0 {
                continue;
            }
            let (mut live, mut gone) = (word, 0);
            while live != 0 {
                let bit = live.trailing_zeros();
                live &= live - 1;
                let at = &mut self.recent_at[w * 64 + bit as usize];
                if *at == victim_at {
                    *at = NIL;
                    gone |= 1 << bit;
                } else if *at == last {
                    *at = victim_at;
                }
            }
            self.recent_live[w] = word & !gone;
        }
        self.stamps.swap_remove(victim);
        self.cold.swap_remove(victim);
        if !UNIT {
            self.sizes.swap_remove(victim);
        }
        if let Some(moved) = self.cold.get(victim) {
            self.pos[moved.key as usize] = victim as u32;
        }
        // Foresee: the next eviction draws the next `candidates` outputs (their stamps were
        // prefetched at the end of the eviction before), the one after it the following ones,
        // from `0..n` again if the cache is full then (always in page mode). The latter's stamps
        // are loaded now, at least an access ahead of the eviction before theirs. And the rest
        // of them: the victim's is read at once (its key, its page), a dependent miss to memory
        // per eviction if not loaded by then. Only where the rest is larger than the CPU's L2
        // (where it is not, the loads are there already).
        if sampled {
            let cold = n >= COLD_PREFETCH_MIN;
            let load = |i: usize| {
                prefetch_unchecked(&self.stamps, i);
                if cold {
                    prefetch_unchecked(&self.cold, i);
                }
            };
            if indexed {
                for &i in self.samples.idx_window((AHEAD - 1) * candidates, look) {
                    load(i as usize);
                }
            } else {
                for &r in &self.samples.ahead()[(AHEAD - 1) * candidates..][..look] {
                    load(IndexSampler::index_of(r, n));
                }
            }
        }
        Frame {
            page: c.page,
            id: c.key,
            kind: if s.0 & KIND_BIT != 0 {
                Kind::Anon
            } else {
                Kind::File
            },
            dirty: s.0 & DIRTY_BIT != 0,
        }
    }
}
