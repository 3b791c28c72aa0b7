//! LHD, Least Hit Density: Beckmann, Chen & Cidon, "LHD: Improving Cache Hit Rate by Maximizing
//! Hit Density", NSDI 2018. An object's hit density is its probability of a hit divided by the
//! space-time it will occupy, `P[hit] / (S * E[L])` (Section 3); conditioned on its age `a` it is
//! estimated from the ages at which objects of its class were hit or evicted,
//! `hits(>= a) / sum_{x >= a} (x - a + 1) * events(x)`, computed in one pass from the oldest age
//! down (Section 4). Objects are classified by the sum of their last two hit ages, in 16
//! log-scale classes (Section 4). The statistics decay by an EWMA (0.9) at each
//! reconfiguration, every 2^20 accesses, and ages are coarsened by a power of two chosen from the
//! number of resident objects. Eviction samples candidates at random and evicts the one of least
//! hit density (Section 5, RankCache's sampling-based eviction).
//!
//! Defaults and details are libCacheSim's `LHD` (a port of the authors' simulator), followed
//! here: `associativity = 32` samples per eviction, but 8 until 50 reconfigurations have passed
//! (the authors' warm-up hack); the last `admissions = 8` newly admitted objects whose density
//! was below the running average of victims' are always candidates too; 1% of the cache is a
//! budget for "explorers" (an object becomes one with probability 1/32 per access during the
//! first 50 reconfigurations; its density gets +1, so it is kept); `MAX_AGE = 20000` coarsened
//! ages, an age at or past it ranks lowest; the initial age shift is 10 and is re-chosen at the
//! 5th and 25th reconfigurations; before the first reconfiguration the densities are the
//! authors' GDSF-like prior `(c + 1) / (a + 1)`, where `c` is the class's index in libCacheSim's
//! table (its objects all carry application id 1, so the 16 classes used are rows 16..31 there:
//! `c = 16 + class`). Time counts the accesses that hit or insert. In page mode every size is 1.
//!
//! Differences from libCacheSim: it samples with `next_rand() % n` from its own generator; here
//! the eviction samples are drawn uniformly (with replacement) from `policy/sampling.rs`'s
//! `IndexSampler` (SplitMix64, whose outputs are independent of each other, so they are generated
//! a vectorised block at a time and known before they are drawn) seeded with `seed` (default 1),
//! and the explorer draws from a second SplitMix64 stream (seed `seed ^ 0x6a09e667f3bcc909`,
//! five bits per draw), so that the accesses between two evictions do not shift the samples'
//! stream. The two agree with libCacheSim in distribution, not miss for miss
//! (tests/libcachesim_sampled.rs checks the miss ratio on every
//! trace and size of the conformance set). When the candidate count is at least the number of
//! resident objects every object is examined instead and ties go to the least recently
//! accessed, which makes the policy deterministic (hand-worked tests); sampled candidates tie
//! as in libCacheSim, the first examined wins. libCacheSim also takes a hit's new size into its
//! occupancy; tierlab's object-size mode keeps the size an object was admitted with (as for every
//! other policy) and ranks by the new one, as libCacheSim does.
//!
//! Per reference: O(1) amortised on a hit; O(associativity + admissions) per eviction; a
//! reconfiguration costs O(16 * MAX_AGE) every 2^20 accesses.
//!
//! Layout and memory (none of it changes a result: tests/policy_counts.rs pins them): a resident
//! object is two entries of the same index, an 8-byte `Stamp` (what ranking reads: the time of
//! its last access, its class, kept from its last two hit ages so that ranking does not compute
//! it, its explorer bit and, in page mode, its frame's kind and dirty bit, packed in one word)
//! and a 16-byte `Cold` entry (its key, its last two hit ages and, in page mode, the page the sink
//! is told on eviction), plus its size with object sizes: in page mode 24 B per resident page and
//! the 4-byte key -> index entry per distinct page. That entry is not cleared when its object is
//! evicted: a key is resident when its entry is below the resident count and the `Cold` entry
//! there holds the key (a hit reads that entry anyway), so an eviction does not store to a
//! random place of a table of every distinct page. Hits, evictions and densities are flat
//! class-major tables; the densities' last age column holds `f32::MIN`, and 16 more rows hold
//! each class's densities + 1 (an explorer's rank), so that in page mode (sizes all 1, no
//! division) a rank is one table load with no test; its rows are a power of two (32,768) apart,
//! so that the stamp's row bits, masked and shifted, or'ed with the clamped age are the place
//! (no multiply, no bounds test; 4 MiB of address space, of which the 2.56 MB of the 32 rows'
//! 20,000 columns are touched). The recent admissions keep their indices,
//! updated when an eviction moves an object, so an eviction reads them without going through the
//! index, and a bit mask of those still resident, so that ranking and the eviction's update visit
//! only them (and skip both after one test when none is). The eviction samples come from
//! `Samples`, a buffer of 512 draws refilled when an eviction would run short: with object sizes
//! the sampler's raw 64-bit outputs, each becoming an index of `0..n` (one multiply) only when it
//! is drawn; in page mode, where every sampled eviction draws from `0..capacity`, the indices
//! themselves, drawn a block at a time (`IndexSampler::fill`, the same draws). At the end of an
//! eviction the stamps that the eviction after next will sample
//! are prefetched (exactly those in page mode, where `n` is the capacity at every eviction), and
//! their `Cold` entries too once those are larger than an L2 (the victim's is read at once), so
//! on a trace that mostly misses they are cached before they are drawn. The candidates, their
//! order and the ranking (first of least density wins) are those of drawing and ranking one at a
//! time; the running compare is branch-free (`select_unpredictable`: the new least is found at
//! an unpredictable third of the samples). The candidates' count and the warm-up's end are kept
//! in fields set at each reconfiguration, an insertion's rank (age 0, class 0: the table's first
//! entry) is read without computing it, and the explorer draws of an output are a bit mask.
//!
//! Why (2026-11-27, benches/README.md "LHD on telegram, 2026-11-27 (sixth session)"): LHD was
//! instruction-bound at 1% of telegram and partly at 30% (callgrind: 510 instructions a
//! reference in the replay loop against `lru`'s 174); the changes above cut the multiplies, the
//! bounds tests, the second buffer test and the recent admissions' loops of an eviction, and the
//! call of a hit: 666 / 610 / 510 -> 521 / 482 / 411 instructions a reference at 1 / 10 / 30%,
//! 0.35 / 0.31 / 0.29 -> 0.40 / 0.36 / 0.37x of `lru` (same-process medians). What remains at
//! 10% and 30% is the latency of an eviction's dependent chain (samples' stamps, their ranks,
//! the compares, the victim's entry), not its instruction count. The branch-free compare matters most: written as `if less { .. }`, LLVM turned
//! it into branches once the indices came from a buffer, which cost a third of LHD's rate
//! (telegram 1%: 0.35 -> 0.25x of `lru`) in fewer instructions.
//!
//! Why the index is not cleared (2026-11-27, benches/README.md "LHD on telegram, 2026-11-27
//! (fifth session)"): on telegram (85% misses) the store of NIL to the victim's entry, a random
//! place in 4 MB, was among the largest costs of an eviction; without it 0.22-0.24x of `lru`
//! became 0.27-0.31x at 10% and 30%. The insertion and the page-mode eviction are inlined into
//! the access. Ranking the 8 samples with AVX-512 gathers, or as a tree of minima over integer
//! keys (density bits and place), measured slower than the running compare (same victims).
//!
//! Why the split (2026-11-27, benches/README.md "LHD on telegram, 2026-11-27 (later)"): with one
//! 32-byte tag per object the sampled array was 9.8 MB at 30% of telegram and the samples' loads
//! waited on memory although prefetched; the stamps are a quarter of it. Splitting alone was
//! slower (the victim's entry became a dependent miss per eviction) until the `Cold` entries of
//! the samples were prefetched with their stamps.
//!
//! Why this generator (2026-11-27, benches/README.md "Hyperbolic, LHD, LeCaR and Cacheus"): with
//! `Pcg64Mcg` the explorer draw of every access sat in the same stream as the samples, so the
//! next eviction's samples moved by one output per access and the lookahead had to be re-aimed
//! at every access; the samples of one eviction were drawn one at a time (128-bit multiplies and
//! `random_range`'s rejection test). Separate SplitMix64 streams make the next evictions' draws
//! fixed until they happen, and cheap.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, prefetch_unchecked, NIL};
use crate::policy::sampling::IndexSampler;
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::columns::{FLAG_ANON, FLAG_WRITE};
use crate::trace::Kind;
use serde::{Deserialize, Serialize};
use std::hint::select_unpredictable;

const HIT_AGE_CLASSES: usize = 16;
/// libCacheSim's row of the objects' application (id 1) in its 16 x 16 class table.
const CLASS_ROW: usize = 16;
const MAX_AGE: usize = 20_000;
/// The oldest (coarsened) age: an object this old ranks lowest.
const LAST_AGE: usize = MAX_AGE - 1;
/// Entries of a per-class, per-age table.
const TABLE: usize = HIT_AGE_CLASSES * MAX_AGE;
/// The densities table's row stride: the power of two at or above `MAX_AGE`, so that a stamp's
/// row bits become the row's offset by a mask and a shift (no multiply), and a row's offset and
/// a clamped age are disjoint bits (their `|` is below the table's size: no bounds test). The
/// columns from `MAX_AGE` up are never read nor written (allocated zeroed, so never touched).
const STRIDE_LOG2: u32 = usize::BITS - (MAX_AGE - 1).leading_zeros();
const STRIDE: usize = 1 << STRIDE_LOG2;
const _: () = assert!(STRIDE >= MAX_AGE && STRIDE / 2 < MAX_AGE);
const ACCS_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
const EXPLORER_BUDGET_FRACTION: f64 = 0.01;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const WARMUP_CANDIDATES: usize = 8;
const WARMUP_RECONFIGURATIONS: u32 = 50;
/// Candidates drawn (and prefetched) before the first of them is ranked.
const BATCH: usize = 32;
/// At most this many of the next eviction's draws are foreseen and their tags prefetched.
const FORESEE: usize = 32;
/// The end of an eviction prefetches the samples of the eviction this many ahead.
const AHEAD: usize = 2;
/// Resident objects from which the end of an eviction prefetches the rest ([`Cold`], 16 bytes)
/// of the next evictions' samples as well as their stamps: 1 MB of it, the L2 of the CPU this
/// was measured on (benches/README.md, "LHD on telegram, 2026-11-27 (later)").
const COLD_PREFETCH_MIN: usize = (1 << 20) / std::mem::size_of::<Cold>();

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LhdConfig {
    /// Random candidates per eviction after the warm-up.
    pub associativity: usize,
    /// Recently admitted objects always considered for eviction.
    pub admissions: usize,
    /// Seed of the sampling and of the explorer draws.
    pub seed: u64,
}

impl Default for LhdConfig {
    fn default() -> Self {
        LhdConfig {
            associativity: 32,
            admissions: 8,
            seed: 1,
        }
    }
}

impl LhdConfig {
    pub fn validate(&self) -> Result<()> {
        if self.associativity == 0 {
            return Err(Error::config(
                "policy 'lhd': associativity must be at least 1",
            ));
        }
        Ok(())
    }
}

/// Bits of a [`Stamp`] below its timestamp.
const FLAG_BITS: u32 = 8;
/// A [`Stamp`]'s flags: the page-mode frame's kind (set for [`Kind::Anon`]) and dirty bit, the
/// class in the 4 bits from `CLASS_SHIFT` up, and the explorer bit just above them, so that the
/// 5 bits from `CLASS_SHIFT` are the object's row of the densities table (`16 * explorer +
/// class`, see `LhdCore::densities`).
/// The two frame bits are the reference's own flags' (`FLAG_ANON`, `FLAG_WRITE`), so that an
/// insertion's frame bits are the flags masked.
const KIND_BIT: u64 = FLAG_ANON as u64;
const DIRTY_BIT: u64 = FLAG_WRITE as u64;
const _: () = assert!(KIND_BIT | DIRTY_BIT == 3 && KIND_BIT != DIRTY_BIT);
const CLASS_SHIFT: u32 = 3;
const EXPLORER_BIT: u64 = (HIT_AGE_CLASSES as u64) << CLASS_SHIFT;
/// Rows of the densities table: one per class, then the same + 1 for explorers.
const ROWS: usize = 2 * HIT_AGE_CLASSES;
/// A stamp's row bits (class and explorer) in place.
const ROW_BITS: u64 = ((ROWS - 1) as u64) << CLASS_SHIFT;
/// Entries of the densities table.
const DENSITIES: usize = ROWS * STRIDE;
/// The frame's bits, kept when a hit re-stamps an object.
const FRAME_BITS: u64 = KIND_BIT | DIRTY_BIT;
const _: () = assert!(EXPLORER_BIT << 1 <= 1 << FLAG_BITS);

/// What ranking a resident object reads, in one word: the time of its last access (hit or
/// insertion) above `FLAG_BITS` bits that hold its class ([`hit_age_class`] of its last two hit
/// ages, kept so that ranking needs no computation of it), whether it is an explorer, and in
/// page mode its frame's kind and dirty bit. A sample is one 8-byte load, from an array a
/// quarter of the size of the 32-byte tags it was read from before (see `LhdCore::age` for how
/// the age is taken from the word without unpacking it). Timestamps stay below `2^56` (they count
/// accesses).
#[derive(Debug, Clone, Copy)]
struct Stamp(u64);

impl Stamp {
    #[inline(always)]
    fn new(timestamp: u64, class: usize, explorer: bool, frame: u64) -> Stamp {
        debug_assert!(timestamp < 1 << (64 - FLAG_BITS) && class < HIT_AGE_CLASSES);
        Stamp(
            (timestamp << FLAG_BITS)
                | ((class as u64) << CLASS_SHIFT)
                | ((explorer as u64) * EXPLORER_BIT)
                | (frame & FRAME_BITS),
        )
    }

    #[inline(always)]
    fn timestamp(self) -> u64 {
        self.0 >> FLAG_BITS
    }

    #[inline(always)]
    fn class(self) -> usize {
        (self.0 >> CLASS_SHIFT) as usize & (HIT_AGE_CLASSES - 1)
    }

    /// The row of the densities table: the class, 16 more for an explorer.
    #[inline(always)]
    fn row(self) -> usize {
        (self.0 >> CLASS_SHIFT) as usize & (ROWS - 1)
    }

    #[inline(always)]
    fn explorer(self) -> bool {
        self.0 & EXPLORER_BIT != 0
    }

    /// The offset of its row in the densities table, `row() * STRIDE`, from the bits in place.
    #[inline(always)]
    fn row_offset(self) -> usize {
        let offset = ((self.0 & ROW_BITS) << (STRIDE_LOG2 - CLASS_SHIFT)) as usize;
        debug_assert_eq!(offset, self.row() * STRIDE);
        offset
    }
}

/// The frame bits of a page of kind `kind`, dirty or not.
#[inline(always)]
fn frame_bits(kind: Kind, dirty: bool) -> u64 {
    ((kind == Kind::Anon) as u64 * KIND_BIT) | ((dirty as u64) * DIRTY_BIT)
}

/// The rest of a resident object, read on its hits and when it is evicted: 16 bytes, aligned so
/// that it is one load. The last two hit ages are coarsened ages (at most `MAX_AGE`). `page` is
/// the page-mode frame's page (what the sink is told on eviction, with the stamp's kind and dirty
/// bit), unused with object sizes.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Cold {
    page: u64,
    key: u32,
    last_hit_age: u16,
    last_last_hit_age: u16,
}

/// Raw outputs the buffer holds (SplitMix64, generated vectorised: see `policy/sampling.rs`):
/// when fewer than an eviction needs are left, the rest moves to the front and the buffer is
/// filled up again, about 60 evictions' worth of 8 at a time (it was 64 outputs at a time, and
/// the move, resize and call cost about 30 instructions an eviction).
const SAMPLE_BUF: usize = 512;

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
struct Samples {
    sampler: IndexSampler,
    /// 0: `raw` holds raw outputs; else `idx` holds indices of `0..range`.
    range: usize,
    raw: Vec<u64>,
    idx: Vec<u32>,
    /// `[head..tail]` of the buffer in use are the outputs not drawn yet, in the stream's order.
    head: usize,
    tail: usize,
}

impl Samples {
    /// Raw outputs if `range` is 0, else indices of `0..range` (`range` at most `u32::MAX`).
    fn new(seed: u64, range: usize) -> Samples {
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
    fn ensure(&mut self, k: usize) {
        if self.tail - self.head < k {
            self.generate(k);
        }
    }

    #[cold]
    fn generate(&mut self, k: usize) {
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
    fn ahead(&self) -> &[u64] {
        debug_assert_eq!(self.range, 0);
        &self.raw[self.head..self.tail]
    }

    /// The indices not drawn yet (at least as many as the last `ensure` asked for).
    #[cfg(test)]
    fn ahead_idx(&self) -> &[u32] {
        debug_assert_ne!(self.range, 0);
        &self.idx[self.head..self.tail]
    }

    /// `ahead_idx()[from..from + len]`, where `ensure(k)` with `from + len <= k` was called
    /// since the last draw (the caller's duty), without the three bounds tests.
    #[inline(always)]
    fn idx_window(&self, from: usize, len: usize) -> &[u32] {
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
struct ExplorerDraws {
    sampler: IndexSampler,
    mask: u64,
}

const EXPLORE_BITS: u32 = EXPLORE_INVERSE_PROBABILITY.trailing_zeros();
const _: () = assert!(EXPLORE_INVERSE_PROBABILITY.is_power_of_two());
const _: () = assert!(EXPLORE_BITS == 5);
const _: () = assert!(HIT_AGE_CLASSES.is_power_of_two());
/// Draws an output gives.
const EXPLORE_DRAWS: u32 = 64 / EXPLORE_BITS;
/// Bit `5k` for each of an output's draws.
const EXPLORE_GROUPS: u64 = {
    let mut m = 0u64;
    let mut k = 0;
    while k < EXPLORE_DRAWS {
        m |= 1 << (EXPLORE_BITS * k);
        k += 1;
    }
    m
};
const EXPLORE_SENTINEL: u64 = 1 << (EXPLORE_BITS * EXPLORE_DRAWS);
/// The explorer stream's seed is the policy's seed xor this (the fractional part of sqrt(2)), so
/// that the two SplitMix64 streams of one seed do not overlap (they are the same sequence offset
/// by `(a - b) / gamma` outputs, a pseudo-random distance here).
const EXPLORER_SEED: u64 = 0x6a09_e667_f3bc_c909;

impl ExplorerDraws {
    fn new(seed: u64) -> ExplorerDraws {
        ExplorerDraws {
            sampler: IndexSampler::new(seed ^ EXPLORER_SEED),
            mask: 1,
        }
    }

    /// The next output's draws as a mask (see [`ExplorerDraws`]).
    #[inline]
    fn refill(&mut self) {
        let y = self.sampler.next_raw();
        // Bit `j` of `any`: one of bits `j..j + 5` of `y` is set.
        let any = y | y >> 1 | y >> 2 | y >> 3 | y >> 4;
        self.mask = (!any & EXPLORE_GROUPS) | EXPLORE_SENTINEL;
    }

    /// True with probability `1 / EXPLORE_INVERSE_PROBABILITY`.
    #[inline(always)]
    fn explore(&mut self) -> bool {
        if self.mask == 1 {
            self.refill();
        }
        let r = self.mask & 1 != 0;
        self.mask >>= EXPLORE_BITS;
        r
    }
}

/// LHD's ranking over objects named by dense keys (page ids in page mode, slots in object-size
/// mode): shared by both modes.
pub struct LhdCore {
    assoc: usize,
    /// Every size is 1 (page mode): a density is not divided by it (`x / 1.0 == x`).
    unit_sizes: bool,
    /// The resident objects, in two arrays of the same index (a swap-remove moves both): what
    /// ranking reads, and the rest.
    stamps: Vec<Stamp>,
    cold: Vec<Cold>,
    /// Their sizes with object sizes; empty in page mode (every size is 1).
    sizes: Vec<f32>,
    /// Key -> index in `stamps` and `cold`, NIL for a key never inserted, and possibly stale:
    /// an eviction does not clear its victim's entry (a store to a random place in an array of
    /// 4 bytes per distinct key, which a trace of mostly misses pays at almost every reference),
    /// so a key is resident exactly when its entry `p` is below `len()` and `cold[p].key` is the
    /// key ([`LhdCore::index`]): a resident index holds one resident key, and a resident key's
    /// entry is always its index.
    pos: Vec<u32>,
    /// Per class and coarsened age, class-major (`class * MAX_AGE + age`): the EWMA'd hits and
    /// evictions, and the hit densities modelled from them.
    hits: Box<[f32; TABLE]>,
    evictions: Box<[f32; TABLE]>,
    /// The last age's column (`MAX_AGE - 1`, where every object ranks lowest) holds `f32::MIN`,
    /// never modelled, so that a page-mode rank needs no test of the age. The 16 rows after the
    /// classes' hold the same densities + 1 (computed as the rank adds it): an explorer's rank
    /// in page mode, so that it is one table load (`f32::MIN + 1.0` is `f32::MIN`: an explorer
    /// at the last age still ranks lowest). Rows are `STRIDE` apart (see it): a row's offset and
    /// a clamped age index it with no multiply and no bounds test.
    densities: Box<[f32; DENSITIES]>,
    timestamp: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    /// `candidates_after(reconfigurations)` and `reconfigurations < WARMUP_RECONFIGURATIONS`,
    /// kept from one reconfiguration to the next (they change only there).
    candidates: usize,
    exploring: bool,
    shift: u32,
    ewma_objects: f32,
    ewma_mass: f32,
    /// The ring of recent admissions' keys, and each one's index in `stamps` (NIL when it is not
    /// resident): kept in step with `pos`, so that an eviction finds their tags without first
    /// reading `pos`.
    recent: Vec<u32>,
    recent_at: Vec<u32>,
    /// Bit `k % 64` of word `k / 64` is set when `recent_at[k]` is not NIL: ranking and an
    /// eviction's update visit only those (on a trace that mostly misses, the recent admissions
    /// are mostly evicted already, and the ring is then mostly NIL).
    recent_live: Vec<u64>,
    /// The ring's next place, below `recent.len()` (0 if it is empty).
    recent_head: usize,
    /// Bit `key % 64` of every key in `recent`: an inserted key whose bit is clear is not in it.
    recent_keys: u64,
    ewma_victim: f32,
    explorer_budget: i64,
    samples: Samples,
    explorers: ExplorerDraws,
}

/// The class of an object whose last two hit ages (coarsened) sum to `age`: the number of
/// doublings that bring `age` to `MAX_AGE` or more, at most 15; 15 for 0 (libCacheSim's
/// `hitAgeClass`, a loop of doublings, computed here from the leading zeros; tested against it).
#[inline]
const fn hit_age_class(age: u64) -> usize {
    const MAX: u64 = MAX_AGE as u64;
    if age == 0 {
        return HIT_AGE_CLASSES - 1;
    }
    if age >= MAX {
        return 0;
    }
    // `age << log` has `MAX`'s bit length; one doubling more if it is still below `MAX`.
    let log = age.leading_zeros() - MAX.leading_zeros();
    let log = (log + ((age << log) < MAX) as u32) as usize;
    if log < HIT_AGE_CLASSES - 1 {
        log
    } else {
        HIT_AGE_CLASSES - 1
    }
}

/// The explorers' rows of the densities table: each class's + 1.
fn explorer_rows(densities: &mut [f32; DENSITIES]) {
    let (classes, explorers) = densities.split_at_mut(HIT_AGE_CLASSES * STRIDE);
    for (e, c) in explorers.chunks_mut(STRIDE).zip(classes.chunks(STRIDE)) {
        for (e, &d) in e[..MAX_AGE].iter_mut().zip(&c[..MAX_AGE]) {
            *e = d + 1.0;
        }
    }
}

/// A zeroed table of `N` entries on the heap (its pages are not touched until written).
fn zeroed<const N: usize>() -> Box<[f32; N]> {
    vec![0.0; N]
        .into_boxed_slice()
        .try_into()
        .expect("N entries")
}

/// Random candidates of an eviction after `reconfigurations` reconfigurations.
fn candidates_after(assoc: usize, reconfigurations: u32) -> usize {
    if reconfigurations > WARMUP_RECONFIGURATIONS {
        assoc
    } else {
        assoc.min(WARMUP_CANDIDATES)
    }
}

/// Of the best so far (`victim`, `rank`) and candidate `i` of rank `d`, the first of least rank:
/// the candidate only when strictly less, as libCacheSim ranks. Without branches
/// (`select_unpredictable`): LLVM made the running compare a branch, mispredicted about half the
/// time on random samples (0.25x of `lru` on telegram against 0.36x).
#[inline(always)]
fn first_least((victim, rank): (usize, f32), i: usize, d: f32) -> (usize, f32) {
    let less = d < rank;
    (
        select_unpredictable(less, i, victim),
        select_unpredictable(less, d, rank),
    )
}

/// [`LhdCore::age`] with `now` in a stamp's form (every flag bit set).
#[inline(always)]
fn age_of(now: u64, shift: u32, s: Stamp) -> usize {
    let age = (now - s.0) >> (shift + FLAG_BITS);
    (age as usize).min(LAST_AGE)
}

/// The page-mode rank of `s`: one load from its row of `densities` (an explorer's row holds the
/// density + 1, the last column `f32::MIN`), at the offset of the row's bits or'ed with the
/// clamped age (disjoint bits, below the table's size).
#[inline(always)]
fn unit_rank(densities: &[f32; DENSITIES], now: u64, shift: u32, s: Stamp) -> f32 {
    densities[s.row_offset() | age_of(now, shift, s)]
}

impl LhdCore {
    /// `capacity` in the unit of the sizes (pages, or bytes); `unit_sizes`: every size passed to
    /// [`LhdCore::update`] is 1.0 (page mode).
    pub fn new(cfg: &LhdConfig, capacity: usize, unit_sizes: bool) -> LhdCore {
        let mut densities = zeroed::<DENSITIES>();
        for (c, row) in densities
            .chunks_mut(STRIDE)
            .take(HIT_AGE_CLASSES)
            .enumerate()
        {
            for (a, d) in row[..MAX_AGE].iter_mut().enumerate() {
                *d = match a {
                    LAST_AGE => f32::MIN,
                    a => (CLASS_ROW + c + 1) as f32 / (a + 1) as f32,
                };
            }
        }
        explorer_rows(&mut densities);
        // Page mode: room for every resident page up front, as the list policies' arenas have.
        // Grown by doubling instead, a fresh instance copied its arrays mid-replay (a run of
        // `policies.py` at 30% of telegram read 0.32x of `lru` where the `throughput` example,
        // whose repeats reuse the freed memory, read 0.37x). Object sizes: `capacity` is bytes.
        let room = if unit_sizes { capacity } else { 0 };
        LhdCore {
            assoc: cfg.associativity,
            unit_sizes,
            stamps: Vec::with_capacity(room),
            cold: Vec::with_capacity(room),
            sizes: Vec::new(),
            pos: Vec::new(),
            hits: zeroed(),
            evictions: zeroed(),
            densities,
            timestamp: 0,
            next_reconfiguration: ACCS_PER_RECONFIGURATION,
            reconfigurations: 0,
            candidates: candidates_after(cfg.associativity, 0),
            exploring: 0 < WARMUP_RECONFIGURATIONS,
            shift: 10,
            ewma_objects: 0.0,
            ewma_mass: 0.0,
            recent: vec![NIL; cfg.admissions],
            recent_at: vec![NIL; cfg.admissions],
            recent_live: vec![0; cfg.admissions.div_ceil(64)],
            recent_head: 0,
            recent_keys: 0,
            ewma_victim: 0.0,
            explorer_budget: (capacity as f64 * EXPLORER_BUDGET_FRACTION) as i64,
            // Page mode: every sampled eviction draws from `0..capacity` (see `Samples`).
            samples: Samples::new(
                cfg.seed,
                if unit_sizes && capacity <= u32::MAX as usize {
                    capacity
                } else {
                    0
                },
            ),
            explorers: ExplorerDraws::new(cfg.seed),
        }
    }

    /// The replay loop's hint (see [`Policy::prefetch`]): `far`'s index entry now, `near`'s
    /// stamp and the rest of it (its index entry arrived since it was `far`; a hit reads both).
    #[inline(always)]
    pub fn prefetch(&self, near: u32, far: u32) {
        prefetch(&self.pos, far as usize);
        if let Some(&p) = self.pos.get(near as usize) {
            prefetch(&self.stamps, p as usize);
            prefetch(&self.cold, p as usize);
        }
    }

    pub fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, NIL);
        }
    }

    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.index(key).is_some()
    }

    /// The index of `key` in the stamps if it is resident (see `pos`: an entry is checked
    /// against the key held at its index).
    #[inline(always)]
    fn index(&self, key: u32) -> Option<usize> {
        let p = *self.pos.get(key as usize)? as usize;
        (p < self.cold.len() && self.cold[p].key == key).then_some(p)
    }

    pub fn len(&self) -> usize {
        self.stamps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stamps.is_empty()
    }

    /// `now - timestamp`, coarsened by the shift, at most `LAST_AGE`, from the stamp's word:
    /// with `now` in the same form and every flag bit set, the difference of the words is
    /// `(now - timestamp) << FLAG_BITS` plus the flags' complement (below `2^FLAG_BITS`), which
    /// the shift by `FLAG_BITS` more drops.
    #[inline(always)]
    fn age(&self, s: Stamp) -> usize {
        age_of(self.now(), self.shift, s)
    }

    /// `now` in a stamp's form with every flag bit set (see [`LhdCore::age`]).
    #[inline(always)]
    fn now(&self) -> u64 {
        self.timestamp << FLAG_BITS | ((1 << FLAG_BITS) - 1)
    }

    /// The size of the object at `i` (1 in page mode).
    #[inline(always)]
    fn size_with<const UNIT: bool>(&self, i: usize) -> f32 {
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
    fn density_with<const UNIT: bool>(&self, i: usize) -> f32 {
        self.density_of::<UNIT>(self.stamps[i], i)
    }

    /// [`LhdCore::density_with`] of the object at `i` whose stamp is `s`.
    #[inline(always)]
    fn density_of<const UNIT: bool>(&self, s: Stamp, i: usize) -> f32 {
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
    fn density(&self, s: Stamp, i: usize) -> f32 {
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
    fn new_rank(&self, size: f32) -> f32 {
        const _: () = assert!(hit_age_class(MAX_AGE as u64) == 0);
        if self.unit_sizes {
            self.densities[0]
        } else {
            self.densities[0] / size
        }
    }

    /// An access to `key` (size `size`): a hit if it is resident, else its insertion. Returns
    /// its index in the stamps.
    pub fn update(&mut self, key: u32, size: f32) -> usize {
        self.grow(key as usize + 1);
        match self.index(key) {
            None => self.insert(key, size, 0, 0),
            Some(i) => {
                self.hit(i, size);
                i
            }
        }
    }

    /// A hit on the object at `i`.
    #[inline]
    fn hit(&mut self, i: usize, size: f32) {
        self.hit_stamp(i, self.stamps[i], size);
    }

    /// A hit on the object at `i` whose stamp is `s` (the page-mode access passes the stamp
    /// with the reference's dirty bit or'ed in: it is kept in the new stamp). Inlined into the
    /// page-mode access: there the call's register saves were a fifth of a hit.
    #[inline(always)]
    fn hit_stamp(&mut self, i: usize, s: Stamp, size: f32) {
        debug_assert!(!self.unit_sizes || size == 1.0);
        let age = self.age(s);
        self.hits[s.class() * MAX_AGE + age] += 1.0;
        if s.explorer() {
            let was = if self.unit_sizes { 1.0 } else { self.sizes[i] };
            self.explorer_budget += was as i64;
        }
        let explore = self.explorers.explore();
        let explorer = explore && self.exploring && self.explorer_budget > 0;
        let c = &mut self.cold[i];
        c.last_last_hit_age = c.last_hit_age;
        c.last_hit_age = age as u16;
        let class = hit_age_class(c.last_hit_age as u64 + c.last_last_hit_age as u64);
        self.stamps[i] = Stamp::new(self.timestamp, class, explorer, s.0);
        if !self.unit_sizes {
            self.sizes[i] = size;
        }
        if explorer {
            self.explorer_budget -= size as i64;
        }
        self.tick();
    }

    /// The insertion of `key` (not resident), with its frame's page and bits (page mode; 0
    /// with object sizes); returns its index in the stamps. Inlined into the access (a call's
    /// saving and restoring of registers was about 17 instructions a miss).
    #[inline(always)]
    fn insert(&mut self, key: u32, size: f32, page: u64, frame: u64) -> usize {
        debug_assert!(!self.unit_sizes || size == 1.0);
        let i = self.stamps.len();
        self.pos[key as usize] = i as u32;
        // A recent admission evicted and now back is a candidate again (its key is).
        if self.recent_keys >> (key % 64) & 1 != 0 {
            for k in 0..self.recent.len() {
                if self.recent[k] == key {
                    self.set_recent(k, i as u32);
                }
            }
        }
        let explore = self.explorers.explore();
        let explorer = explore && self.exploring && self.explorer_budget > 0;
        if explorer {
            self.explorer_budget -= size as i64;
        }
        // A new object's last two hit ages are 0 and `MAX_AGE` (class 0).
        let class = hit_age_class(MAX_AGE as u64);
        let stamp = Stamp::new(self.timestamp, class, explorer, frame);
        self.stamps.push(stamp);
        self.cold.push(Cold {
            page,
            key,
            last_hit_age: 0,
            last_last_hit_age: MAX_AGE as u16,
        });
        if !self.unit_sizes {
            self.sizes.push(size);
        }
        if !explore && !self.recent.is_empty() && self.new_rank(size) < self.ewma_victim {
            debug_assert_eq!(self.new_rank(size), self.density(stamp, i));
            let k = self.recent_head;
            self.recent[k] = key;
            self.set_recent(k, i as u32);
            self.recent_head = if k + 1 == self.recent.len() { 0 } else { k + 1 };
            self.recent_keys = self
                .recent
                .iter()
                .filter(|&&k| k != NIL)
                .fold(0, |m, &k| m | 1 << (k % 64));
        }
        self.tick();
        i
    }

    /// The clock, and the reconfiguration every `ACCS_PER_RECONFIGURATION` accesses.
    #[inline(always)]
    fn tick(&mut self) {
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCS_PER_RECONFIGURATION;
            self.reconfigurations += 1;
            self.candidates = candidates_after(self.assoc, self.reconfigurations);
            self.exploring = self.reconfigurations < WARMUP_RECONFIGURATIONS;
        }
    }

    /// Ranks the objects at `at` in order after `victim` of density `rank`, keeping the first
    /// of least density.
    #[inline(always)]
    fn rank<const UNIT: bool>(&self, at: &[u32], mut victim: usize, mut rank: f32) -> (usize, f32) {
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
    fn rank_recent<const UNIT: bool>(&self, mut victim: usize, mut rank: f32) -> (usize, f32) {
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
    fn set_recent(&mut self, k: usize, at: u32) {
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
    fn evict_frame(&mut self) -> Frame {
        if self.unit_sizes {
            self.evict_with::<true>()
        } else {
            self.evict_with::<false>()
        }
    }

    /// The sampled candidates (the next `candidates` outputs, as indices of `0..n`) and the
    /// recent admissions, ranked a batch at a time in that order: the first of least density.
    fn rank_batches<const UNIT: bool>(
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
    fn rank_unit(&self, candidates: usize) -> (usize, f32) {
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
    fn recent_any(&self) -> bool {
        self.recent_live.iter().any(|&w| w != 0)
    }

    /// The first of least rank of the stamps at `drawn` (indices below the number of stamps:
    /// `rank_unit`'s caller checked that it is the samples' range).
    #[inline(always)]
    fn rank_drawn(&self, drawn: &[u32]) -> (usize, f32) {
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
    fn evict_with<const UNIT: bool>(&mut self) -> Frame {
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

    fn reconfigure(&mut self) {
        for v in [&mut self.hits, &mut self.evictions] {
            for x in v.iter_mut() {
                *x *= EWMA_DECAY;
            }
        }
        self.adapt_age_coarsening();
        self.model_hit_density();
    }

    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.stamps.len() as f32;
        self.ewma_mass = self.ewma_mass * EWMA_DECAY + 1.0;
        let objects = self.ewma_objects / self.ewma_mass;
        let optimal = objects / (AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32);
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let mut log2 = 1u32;
        while ((1u64 << log2) as f32) < optimal {
            log2 += 1;
        }
        let delta = log2 as i32 - self.shift as i32;
        self.shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_mass *= 8.0;
        let classes = self
            .hits
            .chunks_mut(MAX_AGE)
            .chain(self.evictions.chunks_mut(MAX_AGE));
        for v in classes {
            if delta < 0 {
                // Stretch.
                let d = (-delta) as u32;
                let tail: f32 = v[(MAX_AGE >> d)..MAX_AGE - 1].iter().sum();
                v[MAX_AGE - 1] += tail;
                for a in (0..MAX_AGE - 1).rev() {
                    v[a] = v[a >> d] / (1u32 << d) as f32;
                }
            } else if delta > 0 {
                // Compress.
                let d = delta as u32;
                for a in 0..(MAX_AGE >> d) {
                    v[a] = (0..(1usize << d)).map(|i| v[(a << d) + i]).sum();
                }
                for x in &mut v[(MAX_AGE >> d)..MAX_AGE - 1] {
                    *x = 0.0;
                }
            }
        }
    }

    fn model_hit_density(&mut self) {
        let classes = self
            .hits
            .chunks(MAX_AGE)
            .zip(self.evictions.chunks(MAX_AGE))
            .zip(self.densities.chunks_mut(STRIDE));
        for ((hit, evicted), density) in classes {
            let mut events = hit[MAX_AGE - 1] + evicted[MAX_AGE - 1];
            let mut hits = hit[MAX_AGE - 1];
            let mut lifetime = events;
            // The last age's density is never modelled (it stays `f32::MIN`, see `densities`).
            for a in (0..LAST_AGE).rev() {
                hits += hit[a];
                events += hit[a] + evicted[a];
                lifetime += events;
                density[a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
        explorer_rows(&mut self.densities);
    }
}

pub struct Lhd {
    cap: usize,
    core: LhdCore,
}

impl PolicyDef for Lhd {
    const NAME: &'static str = "lhd";
    const FAMILY: &'static str = "classic";
    const SUMMARY: &'static str =
        "Least hit density (Beckmann et al., NSDI 2018): evict the sampled object of least hits per space-time (seeded).";
    type Config = LhdConfig;
    fn build(cfg: &LhdConfig, ctx: &PolicyCtx) -> Result<Self> {
        cfg.validate()?;
        Ok(Lhd {
            cap: ctx.capacity,
            core: LhdCore::new(cfg, ctx.capacity, true),
        })
    }
    fn visit_object_mode<V: crate::policy::PolicyVisitor>(v: V) -> Option<V::Out> {
        Some(v.visit::<crate::policy::object::lhd::ObjLhd>())
    }
}

impl Policy for Lhd {
    #[inline(always)]
    fn prefetch(&self, near: PageId, far: PageId) {
        self.core.prefetch(near, far);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if let Some(p) = self.core.index(r.id) {
            let s = Stamp(self.core.stamps[p].0 | (r.is_write() as u64 * DIRTY_BIT));
            self.core.hit_stamp(p, s, 1.0);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.core.len() == self.cap {
            let frame = self.core.evict_with::<true>();
            sink.evict(frame.out(0));
        }
        self.core.grow(r.id as usize + 1);
        let frame = frame_bits(r.kind(), r.is_write());
        self.core.insert(r.id, 1.0, r.page(), frame);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.core.grow(n);
    }

    fn resident(&self) -> usize {
        self.core.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{
        candidates_after, hit_age_class, ExplorerDraws, Lhd, LhdConfig, LhdCore, Samples, Stamp,
        EXPLORER_SEED, FRAME_BITS, HIT_AGE_CLASSES, MAX_AGE, NIL, STRIDE, WARMUP_RECONFIGURATIONS,
    };
    use crate::policy::sampling::IndexSampler;
    use crate::sim::check::{replay_ids, replay_spec_ids};
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::SplitMix64;

    #[test]
    fn samples_are_one_splitmix64_stream() {
        // Outputs drawn in uneven steps, with the buffer regenerated between them and
        // lookahead asked of different lengths, are SplitMix64's stream in order, and a drawn
        // output's index is the one `IndexSampler::fill` draws.
        for seed in [0u64, 1, 7, u64::MAX] {
            let mut reference = SplitMix64::seed_from_u64(seed);
            let mut filled = IndexSampler::new(seed);
            let mut samples = Samples::new(seed, 0);
            for step in 0..2_000usize {
                let (take, look) = (1 + step % 37, step % 50);
                samples.ensure(take + look);
                assert!(samples.ahead().len() >= take + look);
                let n = 1 + step * 7919 % 1_000_003;
                let mut expected = vec![0u32; take];
                filled.fill(n, &mut expected);
                for (k, &r) in samples.ahead()[..take].iter().enumerate() {
                    assert_eq!(
                        r,
                        reference.next_u64(),
                        "seed {seed} step {step} output {k}"
                    );
                    assert_eq!(IndexSampler::index_of(r, n) as u32, expected[k]);
                }
                samples.head += take;
            }
        }
    }

    #[test]
    fn indexed_samples_are_the_fill_of_the_range() {
        // Page mode: the buffer of indices of `0..range`, drawn in uneven steps with lookahead
        // of different lengths (more than a buffer at times), is `IndexSampler::fill(range, ..)`
        // of the same stream, which is `index_of` of SplitMix64's outputs in order: the draws
        // of the raw buffer for a constant `n`.
        for (seed, range) in [
            (0u64, 1usize),
            (1, 7),
            (7, 1_000_003),
            (u64::MAX, u32::MAX as usize),
        ] {
            let mut reference = SplitMix64::seed_from_u64(seed);
            let mut filled = IndexSampler::new(seed);
            let mut samples = Samples::new(seed, range);
            for step in 0..2_000usize {
                let (take, look) = (1 + step % 37, (step * 13) % 700);
                samples.ensure(take + look);
                assert!(samples.ahead_idx().len() >= take + look);
                let mut expected = vec![0u32; take];
                filled.fill(range, &mut expected);
                for (k, &i) in samples.ahead_idx()[..take].iter().enumerate() {
                    assert_eq!(i, expected[k], "seed {seed} step {step} draw {k}");
                    let r = reference.next_u64();
                    assert_eq!(i as usize, IndexSampler::index_of(r, range));
                }
                samples.head += take;
            }
        }
    }

    #[test]
    fn cached_candidates_and_warmup_change_at_reconfigurations() {
        // `candidates` and `exploring` are kept between reconfigurations: after every access,
        // across the reconfigurations that end the warm-up (the 50th: no more explorers; the
        // 51st: `associativity` candidates instead of 8), they equal what the count gives, and
        // each sampled eviction draws that many (the buffer's head moves by as many).
        let mut core = LhdCore::new(&LhdConfig::default(), 200, true);
        core.reconfigurations = WARMUP_RECONFIGURATIONS - 2;
        let mut x = 5u64;
        let mut seen = [0usize; 2];
        for _ in 0..4 {
            core.next_reconfiguration = 3_000;
            for _ in 0..3_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let key = ((x >> 33) % 600) as u32;
                if !core.contains(key) && core.len() == 200 {
                    let (head, candidates) = (core.samples.head, core.candidates);
                    core.evict();
                    let head_now = core.samples.head;
                    // The buffer is refilled (its head back to 0) before the draws, or not.
                    assert!(head_now == head + candidates || head_now == candidates);
                    seen[(candidates == 32) as usize] += 1;
                }
                core.update(key, 1.0);
                let done = core.reconfigurations;
                assert_eq!(core.candidates, candidates_after(32, done), "after {done}");
                assert_eq!(
                    core.exploring,
                    done < WARMUP_RECONFIGURATIONS,
                    "after {done}"
                );
            }
        }
        assert_eq!(core.reconfigurations, WARMUP_RECONFIGURATIONS + 2);
        assert!(seen[0] > 100 && seen[1] > 100, "{seen:?}");
    }

    #[test]
    fn new_rank_is_a_new_stamps_density() {
        // The rank an insertion compares with the victims' average is the density of the
        // stamp it pushes (no explorer), in both modes, under the prior and after
        // reconfigurations re-modelled the table and re-chose the age shift.
        for unit in [true, false] {
            let mut core = LhdCore::new(&LhdConfig::default(), 100, unit);
            let mut x = 11u64;
            let mut ranks = Vec::new();
            for access in 0..(5u64 << 20) + 1_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let key = ((x >> 33) % 400) as u32;
                if access % 4_099 == 0 && !core.is_empty() {
                    let size = if unit { 1.0 } else { core.sizes[0] };
                    let stamp = Stamp::new(core.timestamp, 0, false, access & 3);
                    let rank = core.new_rank(size);
                    assert_eq!(rank, core.density(stamp, 0), "access {access}");
                    ranks.push(rank);
                }
                if !core.contains(key) && core.len() == 100 {
                    core.evict();
                }
                core.update(key, if unit { 1.0 } else { 1.0 + (key % 5) as f32 });
            }
            assert_eq!(core.reconfigurations, 5);
            ranks.sort_by(f32::total_cmp);
            ranks.dedup();
            // The prior's, then one per re-modelled table at least.
            assert!(ranks.len() >= 5, "{ranks:?}");
        }
    }

    #[test]
    fn explorer_draws_are_five_bits_of_splitmix64() {
        // Twelve draws per output, low bits first; each is 0 with probability 1/32 (the
        // masks of draws, refilled after each output's twelfth, give exactly those).
        let mut reference = SplitMix64::seed_from_u64(3 ^ EXPLORER_SEED);
        let mut draws = ExplorerDraws::new(3);
        let mut zeros = 0;
        for _ in 0..100_000 {
            let r = reference.next_u64();
            for k in 0..12 {
                let explore = draws.explore();
                assert_eq!(explore, (r >> (5 * k)) & 31 == 0);
                zeros += explore as u32;
            }
        }
        // 1.2M draws: 37,500 expected, standard deviation about 190.
        assert!(zeros.abs_diff(37_500) < 1_000, "{zeros}");
    }

    #[test]
    fn classes_are_libcachesims_loop() {
        // libCacheSim's hitAgeClass: double the age until it reaches MAX_AGE, at most 15 times.
        fn by_doubling(age: u64) -> usize {
            if age == 0 {
                return HIT_AGE_CLASSES - 1;
            }
            let (mut age, mut log) = (age, 0);
            while age < MAX_AGE as u64 && log < HIT_AGE_CLASSES - 1 {
                age <<= 1;
                log += 1;
            }
            log
        }
        for age in (0..=2 * MAX_AGE as u64 + 10).chain([u64::MAX / 2, u64::MAX]) {
            assert_eq!(hit_age_class(age), by_doubling(age), "age {age}");
        }
    }

    #[test]
    fn recent_admissions_track_their_tags() {
        // The recent admissions' tag indices equal what `pos` says of their keys (NIL if not
        // resident) after every access and eviction, over evictions that move tags, keys that
        // come back while still in the ring, and the sampled path (capacity 50 > 8 candidates).
        let cfg = LhdConfig::default();
        let mut core = LhdCore::new(&cfg, 50, true);
        let mut x = 12345u64;
        let mut tracked = 0;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = ((x >> 33) % 120) as u32;
            if !core.contains(key) && core.len() == 50 {
                let v = core.evict();
                assert!(!core.contains(v));
            }
            core.update(key, 1.0);
            for (r, (&k, &at)) in core.recent.iter().zip(&core.recent_at).enumerate() {
                let expected = core.index(k).map_or(NIL, |p| p as u32);
                assert_eq!(at, expected, "recent key {k}");
                let live = core.recent_live[r / 64] >> (r % 64) & 1 != 0;
                assert_eq!(live, at != NIL, "recent {r}: live bit");
                tracked += (at != NIL) as usize;
            }
        }
        assert!(tracked > 0, "no recent admission was ever resident");
    }

    #[test]
    fn stamps_pack_and_age_exactly() {
        // The stamp's fields come back as packed, and its age taken from the word is the
        // coarsened difference of the timestamps, clamped to the last age, for every shift,
        // flag pattern and a difference on either side of each multiple of 2^shift.
        let mut core = LhdCore::new(&LhdConfig::default(), 10, true);
        for shift in [0u32, 1, 5, 10, 17, 30] {
            core.shift = shift;
            for &(ts, delta) in &[(0u64, 0u64), (5, 1), (1 << 40, 3), (12_345, 1 << 20)] {
                for d in [
                    delta,
                    (delta << shift) + 1,
                    (delta << shift).saturating_sub(1),
                ] {
                    core.timestamp = ts + d;
                    for class in 0..HIT_AGE_CLASSES {
                        for explorer in [false, true] {
                            for frame in 0..4u64 {
                                let s = Stamp::new(ts, class, explorer, frame);
                                assert_eq!(s.timestamp(), ts);
                                assert_eq!(s.class(), class);
                                assert_eq!(s.explorer(), explorer);
                                assert_eq!(s.row(), class + HIT_AGE_CLASSES * explorer as usize);
                                assert_eq!(s.0 & FRAME_BITS, frame);
                                let age = ((d >> shift) as usize).min(MAX_AGE - 1);
                                assert_eq!(core.age(s), age, "ts {ts} d {d} shift {shift}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn explorer_rows_are_each_class_plus_one() {
        // Before and after a reconfiguration (the prior, then the modelled densities), an
        // explorer's row is its class's + 1, and the last age ranks lowest in both.
        let mut core = LhdCore::new(&LhdConfig::default(), 100, true);
        let mut x = 7u64;
        for round in 0..2 {
            for c in 0..HIT_AGE_CLASSES {
                for a in 0..MAX_AGE {
                    let d = core.densities[c * STRIDE + a];
                    let e = core.densities[(HIT_AGE_CLASSES + c) * STRIDE + a];
                    assert_eq!(e, d + 1.0, "round {round} class {c} age {a}");
                }
                assert_eq!(core.densities[c * STRIDE + MAX_AGE - 1], f32::MIN);
            }
            for _ in 0..(1 << 20) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let key = ((x >> 33) % 300) as u32;
                if !core.contains(key) && core.len() == 100 {
                    core.evict();
                }
                core.update(key, 1.0);
            }
        }
        assert!(core.reconfigurations >= 1);
    }

    #[test]
    fn evictions_report_the_frame() {
        // The page, kind and dirty bit of every evicted page are those it was loaded with (and
        // written since), over a capacity whose evictions sample and move entries.
        use crate::policy::{Policy, PolicyCtx, PolicyDef};
        use crate::sim::check::make_refs;
        use crate::sim::{PageId, PageOut, PageRef, Sink};
        use crate::trace::Kind;
        #[derive(Default)]
        struct Evicted(Vec<PageOut>);
        impl Sink for Evicted {
            fn hit(&mut self, _r: &PageRef, _tier: u8) {}
            fn miss(&mut self, _r: &PageRef, _tier: u8) {}
            fn miss_bypass(&mut self, _r: &PageRef) {}
            fn evict(&mut self, p: PageOut) {
                self.0.push(p);
            }
            fn write_back(&mut self, _pages: &[PageOut]) {}
            fn migrate(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {}
        }
        let mut x = 99u64;
        let pages: Vec<(u64, bool)> = (0..50_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (1_000_000 + 7 * ((x >> 33) % 400), (x >> 20) & 7 < 2)
            })
            .collect();
        let refs = make_refs(&pages);
        let ctx = PolicyCtx {
            capacity: 60,
            tiers: 1,
            page_size: 4096,
        };
        let mut lhd = Lhd::build(&LhdConfig::default(), &ctx).unwrap();
        lhd.grow(400);
        let mut sink = Evicted::default();
        let mut dirty = std::collections::HashMap::new();
        let mut checked = [0usize; 2];
        for i in 0..refs.len() {
            let r = refs.get(i);
            let before = sink.0.len();
            lhd.access(&r, &mut sink);
            for p in &sink.0[before..] {
                assert_eq!(p.kind == Kind::Anon, p.page % 3 == 0, "page {}", p.page);
                assert_eq!(p.dirty, dirty.remove(&p.page).unwrap(), "page {}", p.page);
                checked[p.dirty as usize] += 1;
            }
            *dirty.entry(r.page()).or_insert(false) |= r.is_write();
        }
        assert!(checked[0] > 1_000 && checked[1] > 1_000, "{checked:?}");
    }

    #[test]
    fn classes() {
        // Sum of the last two hit ages: 0 -> the top class; 20000 and more (a new object:
        // 0 + MAX_AGE) -> class 0; each halving below 20000 one class up.
        assert_eq!(hit_age_class(0), 15);
        assert_eq!(hit_age_class(20_000), 0);
        assert_eq!(hit_age_class(19_999), 1);
        assert_eq!(hit_age_class(10_000), 1);
        assert_eq!(hit_age_class(9_999), 2);
        assert_eq!(hit_age_class(1), 15);
    }

    #[test]
    fn hand_worked_prior() {
        // Before the first reconfiguration with the initial age shift of 10, every age below
        // 1024 accesses is 0, so the prior density is (17 + class) for every page: a new page
        // or one hit once (last two hit ages 0 + 20000: class 0) has 17; a page hit twice
        // (0 + 0: class 15) has 32. Memory 2 (whole-cache scans: 8 candidates >= 2):
        // 1 1 1 (class 15), 2 (class 0); 3 evicts 2 (LRU would evict 1); 1 hits.
        assert_eq!(replay_ids("lhd", 2, &[1, 1, 1, 2, 3, 1]), (3, 3));
        assert_eq!(replay_ids("lru", 2, &[1, 1, 1, 2, 3, 1]), (2, 4));
        // Equal densities: the least recently accessed goes. 1 2; 3 evicts 1; 1 evicts 2 (3 is
        // newer); 3 hits.
        assert_eq!(replay_ids("lhd", 2, &[1, 2, 3, 1, 3]), (1, 4));
    }

    #[test]
    fn sampled_is_seeded() {
        use crate::policy::PolicySpec;
        use crate::sim::check::{check_policy, mod_skewed_refs};
        let refs = mod_skewed_refs(5, 20_000, 400);
        let run = |s: &str| check_policy(&PolicySpec::parse(s).unwrap(), 100, 1, &refs).unwrap();
        let a = run("lhd(seed=5)");
        assert_eq!(a, run("lhd(seed=5)"));
        assert_ne!(a.eviction_digest, run("lhd(seed=6)").eviction_digest);
        let e = check_policy(
            &PolicySpec::parse("lhd(associativity=0)").unwrap(),
            2,
            1,
            &refs,
        )
        .unwrap_err();
        assert!(e.to_string().contains("associativity"), "{e}");
        let _ = replay_spec_ids("lhd(admissions=0)", 3, &[1, 2, 3, 4]);
    }
}
