//! The frequency sketches behind W-TinyLFU (see `wtinylfu/mod.rs`).
//!
//! - [`FreqSketch`]: TinyLFU as Einziger, Friedman & Manes describe it ("TinyLFU: A Highly
//!   Efficient Cache Admission Policy", ACM ToS 13(4), 2017): a count-min sketch (Section 3.4;
//!   `depth` rows, each a power-of-two number of 4-bit counters, Section 3.4.2 "small
//!   counters": with a doorkeeper a counter never needs to exceed `W/C - 1 = 15`), the reset
//!   method (Section 3.3: every addition counts one sample; after `W` samples every counter is
//!   halved, integer division, and the sample count too) and the doorkeeper (Section 4.1: a
//!   Bloom filter in front of the sketch; an item not in it is only put in it, an item in it
//!   increments the sketch; an estimate adds 1 when the item is in the doorkeeper; a reset
//!   clears it).
//! - [`LcsCbf`]: libCacheSim's `minimalIncrementCBF` (dataStructure/minimalIncrementCBF.c),
//!   which its `WTinyLFU` uses instead: a counting Bloom filter of 32-bit counters sized for
//!   `entries` items at false-positive rate 0.001 (`bpe = -ln(0.001) / ln(2)^2` counters per
//!   item, `ceil(bpe * ln 2) = 10` hash functions); an addition increments all 10 counters (not
//!   only the smallest, despite the name; an index drawn twice is incremented twice), an
//!   estimate is the smallest; decay halves every counter; no doorkeeper.
//!
//! Hashing is XXH64 of the key's 8 bytes ([`xxh64_u64`], equal to the `xxhash-rust` crate's). For [`LcsCbf`] it is libCacheSim's exact
//! hashing, so decisions match miss for miss: `a` and `b` are the low 32 bits of XXH64 of the
//! object id's 8 little-endian bytes with seeds `0x12345678` and `0x12344321`, and the `i`-th
//! index is `(a + i*b) mod 2^32 mod counters`. [`FreqSketch`] hashes the page number once with
//! XXH64 (seed 0): the low half picks the key's counter block and doorkeeper word, the high
//! half its counters and bits within them by double hashing (Kirsch & Mitzenmacher 2006).
//!
//! [`FreqSketch`] also answers W-TinyLFU's admission test with less reading, always with the
//! plain estimate's answer (tested): a remembered estimate
//! ([`FreqSketch::estimate_remembered`]), an estimate from a note taken at the key's last
//! record and a stamp per counter block ([`FreqSketch::record_noting`],
//! [`FreqSketch::estimate_noted`]), and a comparison that reads the doorkeeper only when the
//! counters leave it open ([`FreqSketch::exceeds_hashed`]).

use crate::policy::list::prefetch;

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

/// XXH64 (Collet's specification) of `key`'s 8 little-endian bytes with `seed`: equal to
/// `xxhash_rust::xxh64::xxh64(&key.to_le_bytes(), seed)` (tested), written out for this one
/// input length so that it inlines into the sketch lookups (the crate's general function is
/// an out-of-line call).
#[inline(always)]
pub fn xxh64_u64(key: u64, seed: u64) -> u64 {
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    h ^= key.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// Count-min sketch of 4-bit counters with reset and a doorkeeper (the paper's TinyLFU).
///
/// Layout (the paper leaves it open; the estimates are a count-min sketch's all the same): the `depth` counters of one key lie in one 64-byte block aligned to a cache line, as
/// in Caffeine's `FrequencySketch` (a blocked count-min sketch), at `depth` distinct places
/// drawn by double hashing within the block, and its doorkeeper bits in one 64-bit word (a
/// blocked Bloom filter): one cache line each per lookup.
pub struct FreqSketch {
    /// Counters (one per byte; only values 0..=15 are used), in blocks of 64 aligned to
    /// cache lines (a `Vec<u8>` is not, and a key's block then straddled two lines).
    counters: Vec<Block>,
    block_mask: u32,
    depth: u32,
    /// Doorkeeper words.
    door: Vec<u64>,
    door_mask: u32,
    /// Samples since the last reset, and the sample size `W`.
    samples: u64,
    sample_size: u64,
    resets: u64,
    /// [`FreqSketch::estimate_remembered`]'s last estimate: the key's hash, its estimate, and
    /// its counter block and doorkeeper word, which a record must not have touched since.
    memo: Memo,
    /// Per counter block, the sample count of the last record that incremented a counter in
    /// it ([`FreqSketch::record_noting`]).
    stamps: Vec<u32>,
    /// Whether sample counts fit the stamps (`W < 2^32`).
    stamping: bool,
}

/// What [`FreqSketch::record_noting`] notes about a key just recorded: the sample count of
/// that record and the smallest of its counters after it; [`Noted::NONE`] when nothing can be
/// said (a reset came with the record, or `W` is too large for 32-bit stamps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noted {
    pub stamp: u32,
    pub min: u8,
}

impl Noted {
    pub const NONE: Noted = Noted {
        stamp: 0,
        min: u8::MAX,
    };
}

/// One remembered estimate (see [`FreqSketch::estimate_remembered`]).
#[derive(Clone, Copy)]
struct Memo {
    h: u64,
    est: u32,
    block: usize,
    word: usize,
    valid: bool,
}

/// Counter ceiling: 4-bit counters.
const MAX_COUNT: u8 = 15;
/// Doorkeeper bits per key.
const DOOR_HASHES: u32 = 4;

/// One cache line of counters.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; 64]);

impl Block {
    /// Counter `i` (`i < 64`).
    #[inline(always)]
    fn get(&self, i: usize) -> u8 {
        self.0[i]
    }
    /// Adds 1 to counter `i` unless it is at [`MAX_COUNT`]; its value after.
    #[inline(always)]
    fn bump(&mut self, i: usize) -> u8 {
        let c = &mut self.0[i];
        *c += (*c < MAX_COUNT) as u8;
        *c
    }
    /// Halves every counter (integer division).
    #[inline(always)]
    fn halve(&mut self) {
        for c in &mut self.0 {
            *c >>= 1;
        }
    }
}

/// Where one key's counters and doorkeeper bits are.
#[derive(Clone, Copy)]
struct Spot {
    /// The block's index (not its byte offset).
    block: usize,
    word: usize,
    /// Double-hashing start and (odd) step within a block or a word.
    c: u32,
    d: u32,
    e: u32,
    f: u32,
}

/// Where one key's counters and doorkeeper bits are, worked out from its hash
/// ([`FreqSketch::place`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The key's [`FreqSketch::hash`].
    pub h: u64,
    block: u32,
    word: u32,
    /// The key's doorkeeper bits within its word.
    bits: u64,
}

/// Most items a [`FreqSketch`] is sized for: 2^28 (1 GiB of counters at depth 4).
pub const MAX_SKETCH_ITEMS: usize = 1 << 28;

impl FreqSketch {
    /// A sketch for a cache of `items` entries: `depth * next_pow2(width)` counters
    /// (`width` 0: `next_pow2(items)`; `depth` counters per key), sample size
    /// `W = sample_factor * items`, a doorkeeper of `next_pow2(8 W)` bits and 4 bits per key.
    /// `items` and `width` count at most [`MAX_SKETCH_ITEMS`] (a cache in bytes, object-size
    /// mode, of 10^18 bytes would otherwise ask for exabytes of counters).
    pub fn new(items: usize, width: usize, depth: u32, sample_factor: u64) -> Self {
        let items = items.min(MAX_SKETCH_ITEMS);
        let depth = depth.clamp(1, 64);
        let width = if width == 0 {
            items
        } else {
            width.min(MAX_SKETCH_ITEMS)
        };
        let width = width.max(1).next_power_of_two();
        let blocks = (width * depth as usize).div_ceil(64).next_power_of_two();
        let sample_size = sample_factor.saturating_mul(items.max(1) as u64).max(1);
        let door_bits = sample_size
            .saturating_mul(8)
            .min(1 << 31)
            .next_power_of_two()
            .clamp(64, 1 << 31);
        FreqSketch {
            counters: vec![Block([0; 64]); blocks],
            block_mask: (blocks - 1) as u32,
            depth: depth.clamp(1, 64),
            door: vec![0; (door_bits / 64) as usize],
            door_mask: (door_bits / 64 - 1) as u32,
            samples: 0,
            sample_size,
            resets: 0,
            memo: Memo {
                h: 0,
                est: 0,
                block: 0,
                word: 0,
                valid: false,
            },
            stamps: vec![0; blocks],
            stamping: sample_size < u32::MAX as u64,
        }
    }

    /// The hash of `key` its lookups use (callers may keep it, as W-TinyLFU's nodes do).
    #[inline(always)]
    pub fn hash(key: u64) -> u64 {
        xxh64_u64(key, 0)
    }

    #[inline(always)]
    fn spot(&self, h: u64) -> Spot {
        let (lo, hi) = (h as u32, (h >> 32) as u32);
        Spot {
            block: (lo & self.block_mask) as usize,
            word: (lo.rotate_right(16) & self.door_mask) as usize,
            c: hi & 63,
            d: ((hi >> 6) & 63) | 1,
            e: (hi >> 12) & 63,
            f: ((hi >> 18) & 63) | 1,
        }
    }

    #[inline(always)]
    fn door_bits(s: &Spot) -> u64 {
        (0..DOOR_HASHES).fold(0u64, |m, i| {
            m | 1 << (s.e.wrapping_add(i.wrapping_mul(s.f)) & 63)
        })
    }

    /// The key's `i`-th counter's place in its block.
    #[inline(always)]
    fn counter(s: &Spot, i: u32) -> usize {
        (s.c.wrapping_add(i.wrapping_mul(s.d)) & 63) as usize
    }

    /// The place of the key whose [`FreqSketch::hash`] is `h`.
    #[inline(always)]
    pub fn place(&self, h: u64) -> Place {
        let s = self.spot(h);
        Place {
            h,
            block: s.block as u32,
            word: s.word as u32,
            bits: Self::door_bits(&s),
        }
    }

    /// Starts loading the counter block and doorkeeper word of `key` (a hint, no state
    /// change): the replay loop calls it a few references ahead, so that on a large cache,
    /// whose sketch and doorkeeper are far larger than the CPU's caches, `record` does not wait
    /// for memory.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.prefetch_hashed(Self::hash(key))
    }

    /// [`FreqSketch::prefetch`] of the key whose [`FreqSketch::hash`] is `h`.
    #[inline(always)]
    pub fn prefetch_hashed(&self, h: u64) {
        let s = self.spot(h);
        prefetch(&self.counters, s.block);
        prefetch(&self.door, s.word);
    }

    /// Starts loading only the counter block of the key whose hash is `h` (a hint): what
    /// [`FreqSketch::exceeds_hashed`] reads first, and mostly alone.
    #[inline(always)]
    pub fn prefetch_counters_hashed(&self, h: u64) {
        prefetch(&self.counters, self.spot(h).block);
    }

    /// Records one access to `key` (a sample).
    pub fn record(&mut self, key: u64) {
        self.record_hashed(Self::hash(key))
    }

    /// [`FreqSketch::record`] of the key whose [`FreqSketch::hash`] is `h`.
    #[inline(always)]
    pub fn record_hashed(&mut self, h: u64) {
        self.record_at::<false>(self.place(h));
    }

    /// [`FreqSketch::record_hashed`], noting this record's sample count and the key's smallest
    /// counter after it. Until the next reset the key stays in the doorkeeper (only a reset
    /// clears it), so while no later record has incremented a counter in its block (the
    /// block's stamp is at most this record's) its estimate is that counter plus 1
    /// ([`FreqSketch::estimate_noted`]): the counter block is read now, while the replay
    /// loop's hint has it in cache, instead of at the admission test.
    #[inline(always)]
    pub fn record_noting(&mut self, h: u64) -> Noted {
        self.record_at::<true>(self.place(h))
    }

    /// The record of the key at `p`, in one pass. With `NOTE` ([`FreqSketch::record_noting`])
    /// the smallest counter is taken from the values the increment writes (the key's `depth`
    /// places in its block are distinct: the step is odd, so `c + i d mod 64` differ for
    /// `i < 64`), or read when the record only sets doorkeeper bits; without it
    /// ([`FreqSketch::record_hashed`]) nothing is noted and a record that only sets doorkeeper
    /// bits reads no counter block (a memory access on a large sketch).
    #[inline(always)]
    fn record_at<const NOTE: bool>(&mut self, p: Place) -> Noted {
        let (block, word) = (p.block as usize, p.word as usize);
        // A remembered estimate whose counter block or doorkeeper word this record may change
        // is forgotten (conservatively: another key's counters in the same block too).
        if block == self.memo.block || word == self.memo.word {
            self.memo.valid = false;
        }
        let door = &mut self.door[word];
        let min = if *door & p.bits == p.bits {
            let s = self.spot(p.h);
            let b = &mut self.counters[block];
            // Branch-free: hot keys' counters sit at the ceiling half the time.
            let mut bump = |i: u32| b.bump(Self::counter(&s, i));
            let min = if self.depth == 4 {
                let [x, y, z, w] = [0, 1, 2, 3].map(&mut bump);
                x.min(y).min(z.min(w))
            } else {
                (0..self.depth).map(bump).fold(MAX_COUNT, u8::min)
            };
            // Sample counts stay below `W` (a reset halves them), so they fit when stamping.
            self.stamps[block] = (self.samples + 1) as u32;
            min
        } else {
            *door |= p.bits;
            if NOTE {
                self.min_count(&self.spot(p.h)) as u8
            } else {
                MAX_COUNT
            }
        };
        self.samples += 1;
        if self.samples >= self.sample_size {
            self.reset();
            return Noted::NONE;
        }
        if !NOTE || !self.stamping {
            return Noted::NONE;
        }
        Noted {
            stamp: self.samples as u32,
            min,
        }
    }

    /// The estimate of the key whose hash is `h` from what [`FreqSketch::record_noting`]
    /// noted at its last record, when that still holds (no reset since, which the caller
    /// vouches for by dropping notes at a reset, and no increment in its block since);
    /// `None` otherwise.
    #[inline(always)]
    pub fn estimate_noted(&self, h: u64, noted: Noted) -> Option<u32> {
        if noted.min == Noted::NONE.min {
            return None;
        }
        let block = self.spot(h).block;
        (self.stamps[block] <= noted.stamp).then_some(noted.min as u32 + 1)
    }

    /// Starts loading what [`FreqSketch::estimate_noted`] reads (a hint).
    #[inline(always)]
    pub fn prefetch_noted(&self, h: u64) {
        prefetch(&self.stamps, self.spot(h).block);
    }

    /// Estimated frequency of `key` (count-min over the rows, plus 1 if in the doorkeeper).
    pub fn estimate(&self, key: u64) -> u32 {
        self.estimate_hashed(Self::hash(key))
    }

    /// [`FreqSketch::estimate`] of the key whose [`FreqSketch::hash`] is `h`.
    #[inline(always)]
    pub fn estimate_hashed(&self, h: u64) -> u32 {
        let s = self.spot(h);
        let bits = Self::door_bits(&s);
        self.min_count(&s) + (self.door[s.word] & bits == bits) as u32
    }

    /// Whether the estimate of the key whose [`FreqSketch::hash`] is `h` exceeds `k`, i.e.
    /// `estimate_hashed(h) > k`, reading the doorkeeper only when the counters leave it open:
    /// the estimate is the counters' minimum `m` plus 0 or 1, so `m > k` admits and `m < k`
    /// rejects whatever the doorkeeper holds. W-TinyLFU's admission test on a miss-heavy
    /// trace mostly decides on the counters (the candidate's minimum is mostly below the
    /// victim's estimate), which saves the doorkeeper word, a cache line at random.
    #[inline(always)]
    pub fn exceeds_hashed(&self, h: u64, k: u32) -> bool {
        let s = self.spot(h);
        let m = self.min_count(&s);
        if m != k {
            return m > k;
        }
        let bits = Self::door_bits(&s);
        self.door[s.word] & bits == bits
    }

    /// [`FreqSketch::estimate_hashed`], remembered: asked again for the same key while no
    /// record has touched its counter block or doorkeeper word and no reset has happened, it
    /// answers from memory (the estimate is a function of those two lines alone, so the
    /// answer is the same). W-TinyLFU's main victim mostly stays the victim for many
    /// admission tests.
    #[inline(always)]
    pub fn estimate_remembered(&mut self, h: u64) -> u32 {
        if self.memo.valid && self.memo.h == h {
            return self.memo.est;
        }
        let s = self.spot(h);
        let est = self.estimate_hashed(h);
        self.memo = Memo {
            h,
            est,
            block: s.block,
            word: s.word,
            valid: true,
        };
        est
    }

    /// The smallest of the key's `depth` counters.
    #[inline(always)]
    fn min_count(&self, s: &Spot) -> u32 {
        let b = &self.counters[s.block];
        let min = if self.depth == 4 {
            // The default depth, unrolled: two independent minima instead of a chain.
            let [x, y, z, w] = [0, 1, 2, 3].map(|i| b.get(Self::counter(s, i)));
            x.min(y).min(z.min(w))
        } else {
            (0..self.depth).fold(MAX_COUNT, |m, i| m.min(b.get(Self::counter(s, i))))
        };
        min as u32
    }

    /// Section 3.3's reset: halve every counter and the sample count; clear the doorkeeper.
    fn reset(&mut self) {
        for b in &mut self.counters {
            b.halve();
        }
        self.door.fill(0);
        self.memo.valid = false;
        self.samples /= 2;
        self.resets += 1;
    }

    pub fn resets(&self) -> u64 {
        self.resets
    }
}

/// libCacheSim's counting Bloom filter (`minimalIncrementCBF`), see the module doc.
pub struct LcsCbf {
    counters: Vec<u32>,
    /// `counters.len()` and its [`FastMod`].
    len: FastMod,
    hashes: u32,
    decays: u64,
}

/// `x mod n` for 32-bit `x` by two multiplications instead of a division (Lemire, Kaser &
/// Kurz, "Faster Remainder by Direct Computation", Software: Practice and Experience 49(6),
/// 2019, Section 3: with `c = ceil(2^64 / n)`, `x mod n = ((c x mod 2^64) n) / 2^64`, exact for
/// every 32-bit `x` and `n`). libCacheSim's filter takes ten remainders per lookup; a 32-bit
/// division is several times slower than this.
#[derive(Clone, Copy)]
pub struct FastMod {
    n: u32,
    c: u64,
}

impl FastMod {
    /// `n` must be at least 1.
    pub fn new(n: u32) -> Self {
        assert!(n > 0, "FastMod of 0");
        FastMod {
            n,
            c: (u64::MAX / n as u64).wrapping_add(1),
        }
    }
    #[inline(always)]
    pub fn modulo(self, x: u32) -> u32 {
        let low = self.c.wrapping_mul(x as u64);
        ((low as u128 * self.n as u128) >> 64) as u32
    }
}

const SEED0: u64 = 0x1234_5678;
const SEED1: u64 = 0x1234_4321;

impl LcsCbf {
    /// Counters libCacheSim allocates for `entries` (an `int` in C: larger values wrap), with
    /// its literals for ln(2)^2 and ln(2) (not `f64::consts`, so the rounding is its own).
    #[allow(clippy::approx_constant)]
    pub fn counters_for(entries: i64) -> (usize, u32) {
        let entries = entries as i32;
        let bpe = -(0.001f64.ln()) / 0.480453013918201;
        let hashes = (0.693147180559945 * bpe).ceil() as u32;
        let n = (bpe * entries as f64).ceil().min(i32::MAX as f64) as i64;
        let n = if n < hashes as i64 {
            2 * hashes as i64
        } else {
            n
        };
        (n as usize, hashes)
    }

    pub fn new(counters: usize, hashes: u32) -> Self {
        let len =
            u32::try_from(counters).expect("libCacheSim's filter has fewer than 2^32 counters");
        LcsCbf {
            counters: vec![0; counters],
            len: FastMod::new(len),
            hashes,
            decays: 0,
        }
    }

    #[inline]
    fn index(&self, a: u32, b: u32, i: u32) -> usize {
        self.len.modulo(a.wrapping_add(i.wrapping_mul(b))) as usize
    }

    /// The two hashes of `key` (`a` in the low half, `b` in the high half), which callers may
    /// keep, as W-TinyLFU's nodes do.
    #[inline(always)]
    pub fn hash(key: u64) -> u64 {
        (xxh64_u64(key, SEED0) & 0xFFFF_FFFF) | xxh64_u64(key, SEED1) << 32
    }

    #[inline(always)]
    fn ab(h: u64) -> (u32, u32) {
        (h as u32, (h >> 32) as u32)
    }

    /// Starts loading the counters of `key` (a hint, see [`FreqSketch::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.prefetch_hashed(Self::hash(key))
    }

    /// [`LcsCbf::prefetch`] of the key whose [`LcsCbf::hash`] is `h`.
    #[inline(always)]
    pub fn prefetch_hashed(&self, h: u64) {
        let (a, b) = Self::ab(h);
        for i in 0..self.hashes {
            prefetch(&self.counters, self.index(a, b, i));
        }
    }

    pub fn add(&mut self, key: u64) {
        self.add_hashed(Self::hash(key))
    }

    /// [`LcsCbf::add`] of the key whose [`LcsCbf::hash`] is `h`.
    #[inline]
    pub fn add_hashed(&mut self, h: u64) {
        let (a, b) = Self::ab(h);
        for i in 0..self.hashes {
            let x = self.index(a, b, i);
            self.counters[x] = self.counters[x].wrapping_add(1);
        }
    }

    pub fn estimate(&self, key: u64) -> u32 {
        self.estimate_hashed(Self::hash(key))
    }

    /// [`LcsCbf::estimate`] of the key whose [`LcsCbf::hash`] is `h`.
    #[inline]
    pub fn estimate_hashed(&self, h: u64) -> u32 {
        let (a, b) = Self::ab(h);
        (0..self.hashes)
            .map(|i| self.counters[self.index(a, b, i)])
            .min()
            .unwrap_or(0)
    }

    pub fn decay(&mut self) {
        for c in &mut self.counters {
            *c >>= 1;
        }
        self.decays += 1;
    }

    pub fn decays(&self) -> u64 {
        self.decays
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh64_u64_is_xxh64() {
        use xxhash_rust::xxh64::xxh64;
        let mut k = 1u64;
        for i in 0..10_000u64 {
            for seed in [0, SEED0, SEED1, i] {
                assert_eq!(xxh64_u64(k, seed), xxh64(&k.to_le_bytes(), seed));
            }
            k = k.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(i);
        }
        for k in [0, u64::MAX, 1 << 63, 42] {
            assert_eq!(xxh64_u64(k, 0), xxh64(&k.to_le_bytes(), 0));
        }
    }

    #[test]
    fn fast_mod_is_the_remainder() {
        let mut x = 7u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 32) as u32
        };
        for n in [
            1,
            2,
            3,
            7,
            20,
            14378,
            65536,
            1 << 28,
            (1 << 28) + 3,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let m = FastMod::new(n);
            for x in [0, 1, n - 1, n, n.wrapping_add(1), u32::MAX, u32::MAX - 1] {
                assert_eq!(m.modulo(x), x % n, "{x} mod {n}");
            }
            for _ in 0..20_000 {
                let x = next();
                assert_eq!(m.modulo(x), x % n, "{x} mod {n}");
            }
        }
        for _ in 0..20_000 {
            let n = next().max(1);
            let x = next();
            assert_eq!(FastMod::new(n).modulo(x), x % n, "{x} mod {n}");
        }
    }

    #[test]
    fn lcs_cbf_size_is_libcachesims() {
        // bpe = 14.3775..., 10 hashes; 1000 entries -> ceil(14377.5) counters.
        assert_eq!(LcsCbf::counters_for(1000), (14378, 10));
        // Too few counters: 2 * hashes.
        assert_eq!(LcsCbf::counters_for(0), (20, 10));
    }

    #[test]
    fn lcs_cbf_counts_and_decays() {
        let mut c = LcsCbf::new(14378, 10);
        for _ in 0..5 {
            c.add(42);
        }
        c.add(7);
        assert!(c.estimate(42) >= 5);
        assert!(c.estimate(7) >= 1);
        c.decay();
        assert!(c.estimate(42) >= 2);
        assert_eq!(c.decays(), 1);
    }

    #[test]
    fn shortcuts_answer_as_the_estimate() {
        // A small sketch (64 items: 4 blocks, W = 128 samples, so collisions and resets are
        // frequent) under a skewed random sequence of records: every shortcut of the admission
        // test must give the plain estimate's answer, and the noted estimate must be available
        // often (else it would save nothing; with 4 blocks a block is often written).
        let mut s = FreqSketch::new(64, 0, 4, 2);
        let mut x = 3u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        // Per key: what its last record noted, and the reset count then.
        let mut notes: std::collections::HashMap<u64, (Noted, u64)> = Default::default();
        let (mut noted_hits, mut checks) = (0, 0);
        for _ in 0..20_000 {
            let key = next(300) * next(300) / 300;
            let h = FreqSketch::hash(key);
            let resets = s.resets();
            notes.insert(key, (s.record_noting(h), resets));
            // A victim and a candidate among the keys recorded so far.
            let (v, c) = (next(300) * next(300) / 300, next(300) * next(300) / 300);
            let (hv, hc) = (FreqSketch::hash(v), FreqSketch::hash(c));
            let k = s.estimate_hashed(hv);
            assert_eq!(s.estimate_remembered(hv), k);
            assert_eq!(s.estimate_remembered(hv), k);
            let e = s.estimate_hashed(hc);
            for j in [k.saturating_sub(1), k, k + 1] {
                assert_eq!(s.exceeds_hashed(hc, j), e > j);
            }
            if let Some(&(n, at)) = notes.get(&c) {
                // The policy drops notes at a reset; so does this test.
                if at == s.resets() {
                    checks += 1;
                    if let Some(ne) = s.estimate_noted(hc, n) {
                        assert_eq!(ne, e, "key {c}");
                        noted_hits += 1;
                    }
                }
            }
        }
        assert!(s.resets() > 100);
        assert!(noted_hits * 10 > checks, "{noted_hits} of {checks}");
        // Nothing noted when a record brings a reset.
        let mut t = FreqSketch::new(1, 0, 4, 1);
        assert_eq!(t.record_noting(FreqSketch::hash(9)), Noted::NONE);
        assert_eq!(t.resets(), 1);
    }

    #[test]
    fn record_notes_the_smallest_counter() {
        // The one-pass record (increment and smallest counter together) against the plain
        // estimate just after it, which is that counter plus the doorkeeper's 1, at the
        // unrolled default depth and the general one; keys collide in 4 blocks, counters
        // saturate and resets come every 128 samples.
        for depth in [4, 3, 7] {
            let mut s = FreqSketch::new(64, 0, depth, 2);
            let mut x = 5u64;
            let (mut noted, mut increments) = (0, 0);
            for _ in 0..20_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let key = ((x >> 33) % 200) * ((x >> 13) % 200) / 200;
                let h = FreqSketch::hash(key);
                let sp = s.spot(h);
                let bits = FreqSketch::door_bits(&sp);
                let increments_now = s.door[sp.word] & bits == bits;
                let resets = s.resets();
                let n = s.record_noting(h);
                if s.resets() != resets {
                    assert_eq!(n, Noted::NONE);
                    continue;
                }
                assert_eq!(n.stamp as u64, s.samples);
                assert_eq!(
                    n.min as u32 + 1,
                    s.estimate_hashed(h),
                    "depth {depth} key {key}"
                );
                noted += 1;
                increments += increments_now as u32;
            }
            assert!(noted > 15_000 && increments > 3_000, "{noted} {increments}");
        }
    }

    #[test]
    fn sketch_doorkeeper_saturation_and_reset() {
        // 64 items, W = 10 * 64 samples.
        let mut s = FreqSketch::new(64, 0, 4, 10);
        assert_eq!(s.estimate(5), 0);
        s.record(5); // doorkeeper only
        assert_eq!(s.estimate(5), 1);
        s.record(5);
        assert!(s.estimate(5) >= 2);
        for _ in 0..100 {
            s.record(5);
        }
        // 15 in the sketch + 1 from the doorkeeper.
        assert_eq!(s.estimate(5), 16);
        // Reach W samples: counters halve, the doorkeeper empties.
        let left = 640 - 102;
        for k in 0..left as u64 {
            s.record(1000 + k);
        }
        assert_eq!(s.resets(), 1);
        assert_eq!(s.estimate(5), 7);
    }
}
