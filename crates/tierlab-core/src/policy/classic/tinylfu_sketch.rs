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

    /// Records one access to `key` (a sample).
    pub fn record(&mut self, key: u64) {
        self.record_hashed(Self::hash(key))
    }

    /// [`FreqSketch::record`] of the key whose [`FreqSketch::hash`] is `h`: its counters are
    /// incremented if it is in the doorkeeper, else it is put there; one sample.
    #[inline(always)]
    pub fn record_hashed(&mut self, h: u64) {
        let p = self.place(h);
        let door = &mut self.door[p.word as usize];
        if *door & p.bits == p.bits {
            let s = self.spot(h);
            let b = &mut self.counters[p.block as usize];
            for i in 0..self.depth {
                b.bump(Self::counter(&s, i));
            }
        } else {
            *door |= p.bits;
        }
        self.samples += 1;
        if self.samples >= self.sample_size {
            self.reset();
        }
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
