//! Hyperbolic caching: Blankstein, Sen & Freedman, "Hyperbolic Caching: Flexible Caching for
//! Web Applications", USENIX ATC 2017. Each resident item has the priority `p_i = n_i / t_i`
//! (the hyperbolic priority function of Section 3): `n_i` its references since it entered the
//! cache, `t_i` the time since it entered; to evict, the cache samples `S` resident items at
//! random and evicts the one of lowest priority (random sampling, as in Redis, instead of a
//! priority queue, because priorities decay at different rates and cross each other). The
//! paper's extensions (item cost and size, expiration, windowing; Section 4) are not what
//! libCacheSim implements and are not offered.
//!
//! Defaults are libCacheSim's `Hyperbolic`: `samples = 64` (libCacheSim's `n-sample`), time
//! counted in requests (`t_i` = the
//! number of references since insertion, at least 1 at an eviction), `n_i` starting at 1 on
//! insertion and counting hits. Samples are drawn with replacement, uniformly from the resident
//! pages; the lowest priority wins, ties going to the one inserted first. When `samples` is at
//! least the number of resident pages the whole cache is scanned instead, which makes the policy
//! deterministic (the exact evictions of the hand-worked tests).
//!
//! Difference from libCacheSim: libCacheSim draws a sample by picking a random non-empty bucket
//! of its hash table and taking the bucket's head (the most recently inserted object in that
//! bucket), with its own generator (`next_rand`, an LCG whose low bits index the buckets).
//! Objects that share a bucket with a newer one cannot be sampled, so its sampling is not
//! uniform and is not reproducible here. `seed` (default 1) seeds tierlab's `IndexSampler`
//! (`policy/sampling.rs`: SplitMix64, drawn a block at a time); the two agree
//! in distribution, not miss for miss: tests/reference/libcachesim_sampled_counts.json holds
//! libCacheSim's counts and crates/tierlab-core/tests/libcachesim_sampled.rs checks tierlab's
//! miss ratio against them within a stated tolerance on every trace and size.
//!
//! Object sizes: libCacheSim's priority ignores sizes (it evicts by `n/t` until the object
//! fits), and so does the object-size variant here (`policy::object::hyperbolic`).
//!
//! Per reference: O(1) on a hit; O(samples) per eviction. The samples read only a 16-byte
//! key per page (count, page id and insertion time, apart from the page's frame). In page mode
//! every eviction happens in a full cache, so the next eviction's samples are drawn from
//! `0..capacity` at the end of this one and their keys prefetched while the references in
//! between run (the same draws, in the same order); a block of 64 is ranked with vector
//! divisions and minimum reductions (`sampling::Argmin`), no branch per sample; with AVX-512
//! its 64 keys are loaded by gathers (tested equal to the scalar loads): 8 gathers of 8 lanes,
//! each lane the 8 bytes holding a key's count and the low half of its insertion time, which is
//! all of it before the 2^32nd reference (16 gathers after that). The count is a `u32` that
//! saturates: a page hit more than 2^32 - 1 times keeps that count, the only difference from an
//! unbounded count. Memory: the 16-byte key and a 16-byte frame per resident page, and a 4-byte
//! id -> slot entry per distinct page.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::sampling::{Argmin, Block, IndexSampler, RATIO_BLOCK};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HyperbolicConfig {
    /// Items sampled per eviction (the paper's and libCacheSim's 64).
    pub samples: usize,
    /// Seed of the sampling.
    pub seed: u64,
}

impl Default for HyperbolicConfig {
    fn default() -> Self {
        HyperbolicConfig {
            samples: 64,
            seed: 1,
        }
    }
}

impl HyperbolicConfig {
    pub fn validate(&self) -> Result<()> {
        if self.samples == 0 {
            return Err(Error::config(
                "policy 'hyperbolic': samples must be at least 1",
            ));
        }
        Ok(())
    }
}

/// Samples drawn (and their items prefetched) before the first of them is compared.
const BATCH: usize = RATIO_BLOCK;

/// Index of the item of lowest priority `n / (now - t0)` among `len` items, read through `item`
/// (`(n, t0)`): all of them when `samples >= len`, else `samples` drawn with replacement. Ties
/// go to the smaller `t0` (inserted first), then to the first drawn (the same item drawn
/// twice). Shared by the page and object-size variants.
///
/// The draws are made `BATCH` at a time and `touch` is called on each before any is compared
/// (a caller can prefetch the item there): the samples are random places in an array larger
/// than the CPU's caches once the cache is large, and loading them all at once, instead of one
/// after the other, is what makes an eviction cheap. A block's priorities are then computed
/// together (vector divisions) and ranked by `Argmin` without a branch per sample. The draws,
/// their order and the winner are the same as drawing and comparing one at a time.
pub fn lowest(
    len: usize,
    samples: usize,
    now: u64,
    sampler: &mut IndexSampler,
    ranker: &mut Ranker,
    item: impl Fn(usize) -> (u64, u64),
    touch: impl Fn(usize),
) -> usize {
    if samples >= len {
        let key = |i: usize| {
            let (n, t0) = item(i);
            (priority(n, age(now, t0)), t0)
        };
        let mut best = usize::MAX;
        let mut best_key = (f64::INFINITY, u64::MAX);
        for i in 0..len {
            let k = key(i);
            if k < best_key {
                best = i;
                best_key = k;
            }
        }
        return best;
    }
    let mut drawn = [0u32; BATCH];
    let mut best = (usize::MAX, (f64::INFINITY, u64::MAX));
    let mut left = samples;
    while left > 0 {
        let b = left.min(BATCH);
        sampler.fill(len, &mut drawn[..b]);
        drawn[..b].iter().for_each(|&d| touch(d as usize));
        best = first_lowest(best, rank_block(&drawn[..b], now, ranker, &item));
        left -= b;
    }
    best.0
}

/// The lowest of `drawn` (at most `BATCH` indices) as `(index, (priority, t0))`, ties to the
/// smaller `t0`, then to the first drawn.
#[inline(always)]
fn rank_block(
    drawn: &[u32],
    now: u64,
    ranker: &mut Ranker,
    item: impl Fn(usize) -> (u64, u64),
) -> (usize, (f64, u64)) {
    let k = ranker.rank(drawn.len(), |count, age, t0| {
        for (k, &d) in drawn.iter().enumerate() {
            let (n, t) = item(d as usize);
            count[k] = n;
            age[k] = self::age(now, t);
            t0[k] = t;
        }
    });
    let key = (priority(ranker.count[k], ranker.age[k]), ranker.t0[k]);
    (drawn[k] as usize, key)
}

/// `rank_drawn` over one block of exactly `BATCH` draws, with the keys loaded by AVX-512
/// gathers (the same values, so the same winner); `None` where that does not apply.
#[inline(always)]
fn gathered_block(keys: &[Key], drawn: &[u32], now: u64, ranker: &mut Ranker) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if drawn.len() == BATCH && keys.len() < 1 << 30 && ranker.argmin.is_avx512() {
        let drawn: &[u32; BATCH] = drawn.try_into().ok()?;
        // SAFETY: AVX-512 was detected (the ranker chose its kernel), every draw is below
        // `keys.len()` (drawn from `0..len`), `2 * len` fits an i32 index, and while `now` is
        // below 2^32 every key, inserted at or before `now`, has a `t0` that fits 32 bits.
        let k = ranker.rank(BATCH, |count, age, t0| unsafe {
            if now < u32::MAX as u64 {
                gather_keys_avx512::<true>(keys, drawn, now, count, age, t0)
            } else {
                gather_keys_avx512::<false>(keys, drawn, now, count, age, t0)
            }
        });
        return Some(drawn[k] as usize);
    }
    None
}

/// The ages of 8 keys: `now - t0`, at least 1 (0 when `t0 > now`, as `saturating_sub`, then 1).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn ages_avx512(
    now: std::arch::x86_64::__m512i,
    t: std::arch::x86_64::__m512i,
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let not_future = _mm512_cmple_epu64_mask(t, now);
    _mm512_max_epu64(
        _mm512_maskz_sub_epi64(not_future, now, t),
        _mm512_set1_epi64(1),
    )
}

/// Loads the `n` and `t0` of `keys[drawn[k]]` for the 64 draws into `count` and `t0`, and their
/// ages into `age`, 8 at a time by gathers: `Key` is `repr(C)`, 16 bytes, `n` at byte 4 and
/// `t0` at byte 8, so key `i` is at 8-byte index `2 i`. With `PACKED`, where every `t0` fits
/// 32 bits (a trace shorter than 2^32 references), one gather per 8 keys instead of two: the 8
/// bytes at byte 4 of a key are its `n` and the low half of its `t0` (little-endian), which is
/// then all of it. Gathers are most of an eviction's cost on a cache that fits the CPU's
/// caches.
///
/// # Safety
/// AVX-512F must be available, every `drawn[k] < keys.len()`, `2 * keys.len() < 2^31`, and with
/// `PACKED` every sampled key's `t0 < 2^32`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather_keys_avx512<const PACKED: bool>(
    keys: &[Key],
    drawn: &[u32; BATCH],
    now: u64,
    count: &mut [u64; BATCH],
    age: &mut [u64; BATCH],
    t0: &mut [u64; BATCH],
) {
    use std::arch::x86_64::*;
    debug_assert!(
        drawn
            .iter()
            .all(|&d| (d as usize) < keys.len()
                && (!PACKED || keys[d as usize].t0 <= u32::MAX as u64))
    );
    let base = keys.as_ptr() as *const u8;
    let now_v = _mm512_set1_epi64(now as i64);
    let low32 = _mm512_set1_epi64(u32::MAX as i64);
    for c in 0..BATCH / 8 {
        let idx = _mm256_loadu_si256(drawn.as_ptr().add(8 * c) as *const __m256i);
        let idx = _mm256_slli_epi32::<1>(idx);
        // The 8 bytes at byte 4: `n` in the low half, `t0`'s low half in the high one.
        let n_and_low_t0 = _mm512_i32gather_epi64::<8>(idx, base.add(4) as *const i64);
        let (n, t) = if PACKED {
            (
                _mm512_and_si512(n_and_low_t0, low32),
                _mm512_srli_epi64::<32>(n_and_low_t0),
            )
        } else {
            (
                _mm512_and_si512(n_and_low_t0, low32),
                _mm512_i32gather_epi64::<8>(idx, base.add(8) as *const i64),
            )
        };
        _mm512_storeu_si512(count.as_mut_ptr().add(8 * c) as *mut _, n);
        _mm512_storeu_si512(age.as_mut_ptr().add(8 * c) as *mut _, ages_avx512(now_v, t));
        _mm512_storeu_si512(t0.as_mut_ptr().add(8 * c) as *mut _, t);
    }
}

/// The vector ranking and the arrays a block's ranking fills, kept by the policy: made fresh for
/// each block the arrays were zeroed first, a tenth of an eviction. Places past a block's length
/// keep stale values, which the ranking masks.
pub struct Ranker {
    argmin: Argmin,
    count: Block,
    age: Block,
    t0: Block,
}

impl Ranker {
    /// The index in `0..len` of the lowest `(count / age, t0)`, first on ties, once `fill` has
    /// written the first `len` places of the three arrays (`count`, `age`, `t0`).
    #[inline(always)]
    fn rank(&mut self, len: usize, fill: impl FnOnce(&mut Block, &mut Block, &mut Block)) -> usize {
        fill(&mut self.count, &mut self.age, &mut self.t0);
        self.argmin
            .find_ratio(&self.count, &self.age, &self.t0, len)
    }
}

impl Default for Ranker {
    fn default() -> Self {
        Ranker {
            argmin: Argmin::default(),
            count: [0; BATCH],
            age: [0; BATCH],
            t0: [0; BATCH],
        }
    }
}

/// `t_i`, the references since insertion at `t0`, at least 1.
#[inline(always)]
fn age(now: u64, t0: u64) -> u64 {
    now.saturating_sub(t0).max(1)
}

/// The priority `n / age`, as `Argmin::find_ratio` computes it. Both operands count references,
/// far below 2^63, where converting from i64 gives the same f64 as from u64 in one instruction
/// instead of several.
#[inline(always)]
fn priority(n: u64, age: u64) -> f64 {
    debug_assert!(n <= i64::MAX as u64 && age <= i64::MAX as u64);
    n as i64 as f64 / age as i64 as f64
}

/// The lowest of `drawn` (any number of indices, ranked `BATCH` at a time), ties to the
/// smaller `t0`, then to the first drawn.
pub fn rank_drawn(
    drawn: &[u32],
    now: u64,
    ranker: &mut Ranker,
    item: impl Fn(usize) -> (u64, u64),
) -> usize {
    drawn
        .chunks(BATCH)
        .fold((usize::MAX, (f64::INFINITY, u64::MAX)), |best, block| {
            first_lowest(best, rank_block(block, now, ranker, &item))
        })
        .0
}

/// Of two `(index, key)` candidates, the one of smaller key, `a` on ties (it was drawn first).
#[inline(always)]
fn first_lowest(a: (usize, (f64, u64)), b: (usize, (f64, u64))) -> (usize, (f64, u64)) {
    if b.1 < a.1 {
        b
    } else {
        a
    }
}

/// What an eviction compares, 16 bytes per resident page: the samples read only these, from
/// an array half the size of one holding whole 32-byte entries, so more of it stays cached.
/// The page id rides along so that, once the victim is known, its table entry and its frame
/// load together instead of one after the other.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Key {
    id: PageId,
    /// References since insertion, saturating (at 2^32 - 1 hits a page's count stops).
    n: u32,
    /// Insertion time.
    t0: u64,
}

/// Resident pages in a dense array (sampling picks an index); an eviction fills the victim's
/// place with the last page.
pub struct Hyperbolic {
    cap: usize,
    samples: usize,
    now: u64,
    keys: Vec<Key>,
    frames: Vec<Frame>,
    table: SlotTable,
    sampler: IndexSampler,
    ranker: Box<Ranker>,
    /// The next eviction's samples, drawn and prefetched at the one before.
    next_draws: Vec<u32>,
}

impl PolicyDef for Hyperbolic {
    const NAME: &'static str = "hyperbolic";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Hyperbolic caching (Blankstein et al., ATC 2017): evict the lowest n/t among 64 sampled pages (seeded).";
    type Config = HyperbolicConfig;
    fn build(cfg: &HyperbolicConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        Ok(Hyperbolic {
            cap: ctx.capacity,
            samples: cfg.samples,
            now: 0,
            keys: Vec::with_capacity(ctx.capacity),
            frames: Vec::with_capacity(ctx.capacity),
            table: SlotTable::default(),
            sampler: IndexSampler::new(cfg.seed),
            ranker: Box::default(),
            next_draws: Vec::new(),
        })
    }
}

impl Policy for Hyperbolic {
    /// A hit reads the page's table entry, key and (on a write) frame: start loading the
    /// table entry 16 references ahead and the key and frame 6 ahead.
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.table.prefetch_ahead(near, far, |s| {
            prefetch(&self.keys, s as usize);
            prefetch(&self.frames, s as usize);
        });
    }

    #[inline(always)]
    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        self.now += 1;
        let slot = self.table.get(r.id);
        if slot != NIL {
            let key = &mut self.keys[slot as usize];
            key.n = key.n.saturating_add(1);
            if r.is_write() {
                self.frames[slot as usize].dirty = true;
            }
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.keys.len() == self.cap {
            self.evict(sink);
        }
        self.table.set(r.id, self.keys.len() as u32);
        self.keys.push(Key {
            n: 1,
            id: r.id,
            t0: self.now,
        });
        self.frames.push(Frame::of(r));
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.table.grow(n);
    }

    fn resident(&self) -> usize {
        self.keys.len()
    }
}

impl Hyperbolic {
    fn evict<S: Sink>(&mut self, sink: &mut S) {
        let len = self.keys.len();
        let keys = &self.keys;
        let item = |i: usize| (keys[i].n as u64, keys[i].t0);
        let i = if self.samples >= len {
            lowest(
                len,
                self.samples,
                self.now,
                &mut self.sampler,
                &mut self.ranker,
                item,
                |_| {},
            )
        } else {
            // An eviction only happens in a full cache, so every eviction draws from
            // `0..capacity`: the next one's samples are drawn now, the same draws in the same
            // order as drawing them then, and their keys load while the references in between
            // run. (Drawing two evictions ahead was measured no faster.)
            if self.next_draws.is_empty() {
                self.next_draws.resize(self.samples, 0);
                self.sampler.fill(len, &mut self.next_draws);
            }
            let i = match gathered_block(keys, &self.next_draws, self.now, &mut self.ranker) {
                Some(i) => i,
                None => rank_drawn(&self.next_draws, self.now, &mut self.ranker, item),
            };
            // The victim's table entry and frame load together, while the next eviction's
            // samples are drawn.
            self.table.prefetch(self.keys[i].id);
            prefetch(&self.frames, i);
            self.sampler.fill(len, &mut self.next_draws);
            for &d in &self.next_draws {
                prefetch(&self.keys, d as usize);
            }
            i
        };
        let victim = self.keys.swap_remove(i).id;
        let frame = self.frames.swap_remove(i);
        debug_assert_eq!(frame.id, victim);
        self.table.clear(victim);
        if let Some(moved) = self.keys.get(i) {
            self.table.set(moved.id, i as u32);
        }
        sink.evict(frame.out(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::check::{replay_ids, replay_spec_ids};
    use rand::{RngExt, SeedableRng};

    #[test]
    fn gathered_keys_rank_as_the_scalar_loads() {
        // Random keys with many ties, counts up to u32::MAX, insertion times around `now` (some
        // in its future, whose age is 1): the gathered block must pick the same index as
        // `rank_drawn`, on every block, where this CPU has AVX-512 (elsewhere it declines).
        // Half the rounds put `now` past 2^32 (the two-gather path), half near 0 or just below
        // 2^32 (one gather, `t0` in its 32 bits).
        let mut rng = rand_xoshiro::SplitMix64::seed_from_u64(7);
        let mut ranker = Ranker::default();
        for round in 0..2_000 {
            let len = rng.random_range(1..5_000usize);
            let base = [0, u32::MAX as u64 - 2_000, 1 << 32, u64::MAX >> 2][round % 4];
            let now = base + rng.random_range(0..1_000u64);
            let keys: Vec<Key> = (0..len)
                .map(|i| Key {
                    n: match round % 3 {
                        0 => rng.random_range(1..4),
                        1 => rng.random_range(1..u32::MAX),
                        _ => u32::MAX,
                    },
                    id: i as PageId,
                    t0: rng.random_range(base..now + 8),
                })
                .collect();
            let drawn: Vec<u32> = (0..BATCH)
                .map(|_| rng.random_range(0..len as u32))
                .collect();
            let item = |i: usize| (keys[i].n as u64, keys[i].t0);
            let want = rank_drawn(&drawn, now, &mut ranker, item);
            match gathered_block(&keys, &drawn, now, &mut ranker) {
                Some(got) => assert_eq!(got, want, "round {round}"),
                None => assert!(!ranker.argmin.is_avx512()),
            }
        }
        assert_eq!(
            gathered_block(&[], &[0; 3], 1, &mut ranker),
            None,
            "short blocks decline"
        );
    }

    #[test]
    fn hand_worked_exhaustive() {
        // Memory 2, samples 64 >= 2: every eviction scans the whole cache.
        // t=1: 1 in (n=1, t0=1); t=2: 1 hits (n=2); t=3: 2 in (n=1, t0=3);
        // t=4: 3 misses: p(1) = 2/3, p(2) = 1/1: evict 1 (the older, less popular per unit of
        // time); 3 in (t0=4). t=5: 2 hits (n=2). t=6: 1 misses: p(2) = 2/3, p(3) = 1/2: evict 3.
        // t=7: 3 misses: p(2) = 2/4, p(1) = 1/1: evict 2. t=8: 1 hits.
        assert_eq!(
            replay_ids("hyperbolic", 2, &[1, 1, 2, 3, 2, 1, 3, 1]),
            (3, 5)
        );
        // Memory 3: 1 1 1 (n=3, t0=1), 2 (t0=4), 4 (t0=5); t=6: 3 misses: p(1) = 3/5,
        // p(2) = 1/2, p(4) = 1/1: evict 2, where LRU evicts 1; t=7: 1 hits.
        assert_eq!(replay_ids("hyperbolic", 3, &[1, 1, 1, 2, 4, 3, 1]), (3, 4));
        assert_eq!(replay_ids("lru", 3, &[1, 1, 1, 2, 4, 3, 1]), (2, 5));
        // Ties go to the first inserted. Memory 3: 1 1 (n=2, t0=1), 2 (t0=3), 4 (t0=4); t=5:
        // 3 misses: p(1) = 2/4 = p(2) = 1/2, p(4) = 1/1: evict 1; t=6: 2 hits; t=7: 1 misses.
        assert_eq!(replay_ids("hyperbolic", 3, &[1, 1, 2, 4, 3, 2, 1]), (2, 5));
    }

    #[test]
    fn drawing_ahead_changes_nothing() {
        // Page mode draws an eviction's samples at the eviction before and ranks them in blocks
        // of 64; the object-size variant draws them at the eviction itself. With unit sizes every
        // eviction happens in a full cache of the same size, so the two must agree miss for miss
        // (a draw out of order or a wrong tie would show here): one block, several blocks
        // (100 = 64 + 36), one sample, and an exhaustive scan.
        let pages = crate::sim::check::skewed_pages(7, 40_000, 300, 5_000, 4);
        let objects: Vec<(u64, u32)> = pages.iter().map(|&p| (p, 1)).collect();
        for spec in [
            "hyperbolic",
            "hyperbolic(samples=100, seed=4)",
            "hyperbolic(samples=1, seed=9)",
            "hyperbolic(samples=500)",
        ] {
            let (hits, misses) = replay_spec_ids(spec, 250, &pages);
            let (ohits, omisses, _, _) =
                crate::policy::object::testing::replay_objects(spec, 250, &objects);
            assert_eq!((hits, misses), (ohits, omisses), "{spec}");
            assert!(misses > 5_000 && hits > 5_000, "{spec}: {hits} {misses}");
        }
    }

    #[test]
    fn sampled_is_seeded() {
        use crate::policy::PolicySpec;
        use crate::sim::check::{check_policy, mod_skewed_refs};
        let refs = mod_skewed_refs(5, 20_000, 400);
        let run = |s: &str| check_policy(&PolicySpec::parse(s).unwrap(), 100, 1, &refs).unwrap();
        let a = run("hyperbolic(samples=4, seed=5)");
        assert_eq!(a, run("hyperbolic(samples=4, seed=5)"));
        assert_ne!(
            a.eviction_digest,
            run("hyperbolic(samples=4, seed=6)").eviction_digest
        );
        // One sample is random eviction; a sample larger than the cache is exhaustive and
        // ignores the seed.
        assert_eq!(
            run("hyperbolic(samples=100, seed=1)"),
            run("hyperbolic(samples=500, seed=2)")
        );
        // On this skewed workload the frequency-aware priority beats random eviction.
        let one = run("hyperbolic(samples=1)");
        assert!(a.hits > one.hits, "{} vs {}", a.hits, one.hits);
    }

    #[test]
    fn bad_config_is_an_error() {
        use crate::policy::PolicySpec;
        use crate::sim::check::{check_policy, make_refs};
        let refs = make_refs(&[(1, false)]);
        let e = check_policy(
            &PolicySpec::parse("hyperbolic(samples=0)").unwrap(),
            2,
            1,
            &refs,
        )
        .unwrap_err();
        assert!(e.to_string().contains("samples"), "{e}");
        let _ = replay_spec_ids("hyperbolic(samples=1)", 1, &[1]);
    }
}
