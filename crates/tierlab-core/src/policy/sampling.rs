//! Uniform random indices for the sampling policies (Hyperbolic, LHD, BeladySize), drawn a
//! block at a time.
//!
//! A sampling policy draws tens of candidates per eviction (Hyperbolic 64, BeladySize 128), and
//! on a trace that mostly misses the draws are most of its time. A sequential generator such as
//! PCG is a chain of dependent 128-bit multiplies, about 2 ns a draw here. This one is
//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
//! 2014), whose `k`-th output is a pure function of `seed + k * 0x9e3779b97f4a7c15`: a block of
//! draws has no dependency between its elements, and the same scalar code, compiled for AVX-512
//! or AVX2 where the CPU has them (chosen once, when the sampler is built), computes eight or
//! four at once. The stream is exactly `rand_xoshiro::SplitMix64::seed_from_u64(seed)`'s
//! (tested), on every CPU.
//!
//! An index is `floor(r * len / 2^64)` of a 64-bit output `r` (the multiply-shift of Lemire,
//! "Fast random integer generation in an interval", ACM TOMACS 2019, without its rejection
//! step): each index of `0..len` gets `floor` or `ceil` of `2^64 / len` of the outputs, so the
//! probabilities are uniform to within `len / 2^64` (below 1e-9 for any cache that fits in
//! memory), and every draw costs exactly one output, so a block's size never depends on the
//! values drawn.

/// SplitMix64's increment (the golden ratio in 64-bit fixed point).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function of a state.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `floor(r * len / 2^64)` for `len < 2^32`, from 32-bit halves (what vectorises: there is no
/// 64x64 -> 128-bit multiply in the vector units). Exact: `r * len = hi * len * 2^32 + lo * len`,
/// and adding the floored low part before the final shift does not change the floor. `len` is
/// a `u32` so that the compiler knows both factors of each product fit 32 bits and multiplies
/// with `vpmuludq` (32 x 32 -> 64 bits) rather than the slower 64-bit `vpmullq`.
#[inline(always)]
fn scale(r: u64, len: u32) -> u32 {
    let len = len as u64;
    let (hi, lo) = (r >> 32, r & 0xffff_ffff);
    ((hi * len + ((lo * len) >> 32)) >> 32) as u32
}

/// The `k+1`-th output after `state` (what makes a block's draws independent).
#[inline(always)]
fn output(state: u64, k: usize) -> u64 {
    mix(state.wrapping_add((k as u64).wrapping_add(1).wrapping_mul(GAMMA)))
}

/// Draws computed together: one AVX-512 vector of 64-bit lanes.
const LANES: usize = 8;

/// `(j + 1) * GAMMA` for the lanes `j` of a chunk: a chunk's states are its base plus these, so
/// no lane multiplies its position by `GAMMA` (the base moves by `LANES * GAMMA` a chunk).
const STEPS: [u64; LANES] = {
    let mut steps = [0u64; LANES];
    let mut j = 0;
    while j < LANES {
        steps[j] = ((j + 1) as u64).wrapping_mul(GAMMA);
        j += 1;
    }
    steps
};

/// The block body, compiled once per instruction set below (identical integer results): the
/// outputs `k + 1` after `state` for `k` in `0..out.len()`, `LANES` at a time.
#[inline(always)]
fn fill_block(state: u64, len: u32, out: &mut [u32]) {
    let mut base = state;
    let mut chunks = out.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (o, step) in chunk.iter_mut().zip(STEPS) {
            *o = scale(mix(base.wrapping_add(step)), len);
        }
        base = base.wrapping_add((LANES as u64).wrapping_mul(GAMMA));
    }
    for (o, step) in chunks.into_remainder().iter_mut().zip(STEPS) {
        *o = scale(mix(base.wrapping_add(step)), len);
    }
}

/// The raw-output block body: outputs `1..=out.len()` after `state`.
#[inline(always)]
fn fill_raw_block(state: u64, out: &mut [u64]) {
    for (k, o) in out.iter_mut().enumerate() {
        *o = output(state, k);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn fill_raw_avx512(state: u64, out: &mut [u64]) {
    fill_raw_block(state, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_raw_avx2(state: u64, out: &mut [u64]) {
    fill_raw_block(state, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn fill_avx512(state: u64, len: u32, out: &mut [u32]) {
    fill_block(state, len, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2(state: u64, len: u32, out: &mut [u32]) {
    fill_block(state, len, out)
}

/// Which compilation of the block body this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
            {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Portable
    }
}

/// A seeded source of uniform indices, drawn in blocks (see the module doc).
#[derive(Debug, Clone)]
pub struct IndexSampler {
    /// SplitMix64's state: the next output is `mix(state + GAMMA)`.
    state: u64,
    kernel: Kernel,
}

impl IndexSampler {
    /// The stream of `rand_xoshiro::SplitMix64::seed_from_u64(seed)`.
    pub fn new(seed: u64) -> IndexSampler {
        IndexSampler {
            state: seed,
            kernel: Kernel::detect(),
        }
    }

    /// Fills `out` with indices drawn uniformly (with replacement) from `0..len`, one output of
    /// the stream each, in order. `len` must be in `1..=u32::MAX`.
    pub fn fill(&mut self, len: usize, out: &mut [u32]) {
        debug_assert!(len >= 1 && len <= u32::MAX as usize, "len {len}");
        let len = len as u32;
        match self.kernel {
            Kernel::Portable => fill_block(self.state, len, out),
            // SAFETY: the kernel was chosen by `Kernel::detect`, which checked that this CPU has
            // the features the function is compiled for.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { fill_avx2(self.state, len, out) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { fill_avx512(self.state, len, out) },
        }
        self.state = self
            .state
            .wrapping_add((out.len() as u64).wrapping_mul(GAMMA));
    }

    /// Fills `out` with the next raw 64-bit outputs of the stream, in order, for a caller that
    /// draws ahead of knowing the range: [`IndexSampler::index_of`] of an output is the index
    /// [`IndexSampler::fill`] would have drawn from it.
    pub fn fill_raw(&mut self, out: &mut [u64]) {
        match self.kernel {
            Kernel::Portable => fill_raw_block(self.state, out),
            // SAFETY: as in `fill`.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { fill_raw_avx2(self.state, out) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { fill_raw_avx512(self.state, out) },
        }
        self.state = self
            .state
            .wrapping_add((out.len() as u64).wrapping_mul(GAMMA));
    }

    /// The next raw 64-bit output of the stream.
    #[inline]
    pub fn next_raw(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// The index of `0..len` that the raw output `r` draws (`len` in `1..=u32::MAX`):
    /// `floor(r * len / 2^64)`, as [`scale`] computes it, here by one 64x64 -> 128-bit multiply
    /// (scalar code has one; tested equal).
    #[inline(always)]
    pub fn index_of(r: u64, len: usize) -> usize {
        debug_assert!(len >= 1 && len <= u32::MAX as usize, "len {len}");
        ((r as u128 * len as u128) >> 64) as usize
    }

    /// One index from `0..len` (the next output of the same stream).
    #[inline]
    pub fn index(&mut self, len: usize) -> usize {
        Self::index_of(self.next_raw(), len)
    }
}

/// Finds, among up to `RATIO_BLOCK` candidates of a sampling policy, the one of lowest key
/// `(num / den, minor)` (the ratio in `f64`, compared first; the first candidate on ties),
/// without a branch per candidate.
///
/// A running "keep the smaller" loop is a chain of dependent compares whose branch mispredicts
/// on random samples. Here the ratios are computed together (vector divisions), then three
/// independent passes over a fixed-size block (minimum ratio; minimum `minor` among the
/// candidates holding it; first index holding both) compile to vector minimum reductions, in
/// the same AVX-512 / AVX2 / portable versions as the draws. For a finite `f64 >= 0` the bits
/// as `u64` order as the values do, so the passes compare integers. Hyperbolic ranks its 64
/// samples with it (`num` the hits, `den` the age, `minor` the insertion time).
#[derive(Debug, Clone, Copy)]
pub struct Argmin {
    kernel: Kernel,
}

impl Default for Argmin {
    fn default() -> Self {
        Argmin {
            kernel: Kernel::detect(),
        }
    }
}

/// The most candidates `Argmin::find_ratio` ranks at once.
pub const RATIO_BLOCK: usize = 64;

/// A block of `RATIO_BLOCK` values, one per candidate.
pub type Block = [u64; RATIO_BLOCK];

/// The passes, compiled once per instruction set below (identical results). Fixed-size loops
/// with the places past `len` masked to the largest key, so that nothing has a remainder.
#[inline(always)]
fn argmin_ratio_body(num: &Block, den: &Block, minor: &Block, len: usize) -> usize {
    let mut major = [u64::MAX; RATIO_BLOCK];
    for k in 0..RATIO_BLOCK {
        // Both operands below 2^63 (the caller's contract), where converting from i64 gives
        // the same f64 as from u64, in one vector instruction with AVX-512.
        let ratio = (num[k] as i64 as f64 / den[k] as i64 as f64).to_bits();
        major[k] = if k < len { ratio } else { u64::MAX };
    }
    let low = major.iter().fold(u64::MAX, |m, &a| m.min(a));
    let mut low_minor = u64::MAX;
    for k in 0..RATIO_BLOCK {
        let live = k < len && major[k] == low;
        low_minor = low_minor.min(if live { minor[k] } else { u64::MAX });
    }
    let mut first = RATIO_BLOCK;
    for k in 0..RATIO_BLOCK {
        let hit = k < len && major[k] == low && minor[k] == low_minor;
        first = first.min(if hit { k } else { RATIO_BLOCK });
    }
    first
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn argmin_ratio_avx512(num: &Block, den: &Block, minor: &Block, len: usize) -> usize {
    argmin_ratio_body(num, den, minor, len)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn argmin_ratio_avx2(num: &Block, den: &Block, minor: &Block, len: usize) -> usize {
    argmin_ratio_body(num, den, minor, len)
}

impl Argmin {
    /// Whether the AVX-512 kernel was chosen (callers may then run AVX-512 code of their own).
    #[cfg(target_arch = "x86_64")]
    pub fn is_avx512(&self) -> bool {
        matches!(self.kernel, Kernel::Avx512)
    }

    /// The index in `0..len` of the lowest `(num[k] / den[k], minor[k])`, the first on ties.
    /// `len` in `1..=RATIO_BLOCK`; for `k < len`, `den[k] >= 1` and `num[k]`, `den[k]` below
    /// 2^63 (the places past `len` are ignored).
    #[inline]
    pub fn find_ratio(&self, num: &Block, den: &Block, minor: &Block, len: usize) -> usize {
        debug_assert!((1..=RATIO_BLOCK).contains(&len));
        debug_assert!((0..len).all(|k| den[k] >= 1 && (num[k] | den[k]) <= i64::MAX as u64));
        match self.kernel {
            Kernel::Portable => argmin_ratio_body(num, den, minor, len),
            // SAFETY: as in `IndexSampler::fill`, the kernel was chosen by `Kernel::detect`.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { argmin_ratio_avx2(num, den, minor, len) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { argmin_ratio_avx512(num, den, minor, len) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::SplitMix64;

    /// Every kernel this CPU can run.
    fn kernels_here() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                kernels.push(Kernel::Avx2);
            }
            if Kernel::detect() == Kernel::Avx512 {
                kernels.push(Kernel::Avx512);
            }
        }
        kernels
    }

    fn expected(rng: &mut SplitMix64, len: u64) -> u32 {
        ((rng.next_u64() as u128 * len as u128) >> 64) as u32
    }

    #[test]
    fn is_splitmix64_through_every_kernel() {
        let kernels = kernels_here();
        for kernel in kernels {
            for &(seed, len) in &[
                (1u64, 1usize),
                (2, 7),
                (3, 10_211),
                (u64::MAX, 1 << 20),
                (17, u32::MAX as usize),
            ] {
                let mut reference = SplitMix64::seed_from_u64(seed);
                let mut sampler = IndexSampler::new(seed);
                sampler.kernel = kernel;
                // Blocks of odd sizes, then single draws, continue one stream.
                for block in [64usize, 1, 13, 128, 3] {
                    let mut out = vec![0u32; block];
                    sampler.fill(len, &mut out);
                    for (k, &i) in out.iter().enumerate() {
                        assert_eq!(i, expected(&mut reference, len as u64), "{kernel:?} {k}");
                        assert!((i as usize) < len);
                    }
                    assert_eq!(
                        sampler.index(len) as u32,
                        expected(&mut reference, len as u64)
                    );
                    // Raw outputs continue the same stream, and index_of is fill's index.
                    let mut raw = vec![0u64; block];
                    let mut check = reference.clone();
                    sampler.fill_raw(&mut raw);
                    for &r in &raw {
                        assert_eq!(r, reference.next_u64(), "{kernel:?} raw");
                        let i = IndexSampler::index_of(r, len) as u32;
                        assert_eq!(i, expected(&mut check, len as u64));
                        assert_eq!(i, scale(r, len as u32));
                    }
                    assert_eq!(sampler.next_raw(), reference.next_u64());
                }
            }
        }
    }

    #[test]
    fn argmin_is_the_first_lowest_ratio_through_every_kernel() {
        use rand::RngExt;
        let kernels = kernels_here();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for kernel in kernels {
            let argmin = Argmin { kernel };
            for round in 0..3_000 {
                let len = 1 + round % RATIO_BLOCK;
                // Few distinct values, so that ties of the ratio (1/2 = 2/4 = 3/6), of the
                // minor key, and of both are common; garbage (zero denominators) past `len`.
                let range = 1 + (round % 5) as u64;
                let (mut num, mut den, mut minor) =
                    ([0u64; RATIO_BLOCK], [0; RATIO_BLOCK], [0; RATIO_BLOCK]);
                for k in 0..RATIO_BLOCK {
                    let scale = rng.random_range(1..4);
                    num[k] = rng.random_range(0..range) * scale;
                    den[k] = if k < len {
                        rng.random_range(1..=range) * scale
                    } else {
                        0
                    };
                    minor[k] = rng.random_range(0..range);
                }
                let key = |k: usize| (num[k] as f64 / den[k] as f64, minor[k]);
                let mut best = 0;
                for k in 1..len {
                    if key(k) < key(best) {
                        best = k;
                    }
                }
                let got = argmin.find_ratio(&num, &den, &minor, len);
                assert_eq!(got, best, "{kernel:?} len {len}: {num:?} {den:?} {minor:?}");
            }
            // Extremes of the operands' range.
            let mut num = [0u64; RATIO_BLOCK];
            let mut den = [1u64; RATIO_BLOCK];
            let mut minor = [u64::MAX; RATIO_BLOCK];
            (num[0], den[0]) = (i64::MAX as u64, 1);
            (num[1], den[1]) = (1, i64::MAX as u64);
            (num[2], den[2], minor[2]) = (1, i64::MAX as u64, 0);
            assert_eq!(argmin.find_ratio(&num, &den, &minor, 3), 2, "{kernel:?}");
            assert_eq!(argmin.find_ratio(&num, &den, &minor, 2), 1, "{kernel:?}");
            assert_eq!(argmin.find_ratio(&num, &den, &minor, 1), 0, "{kernel:?}");
        }
    }

    #[test]
    fn is_uniform() {
        // 700,000 draws over 7 cells: each count within 5 standard deviations (about 1,500) of
        // 100,000; a biased reduction (e.g. `r % len` of a 3-bit output) would be far off.
        let mut sampler = IndexSampler::new(9);
        let mut out = vec![0u32; 700_000];
        sampler.fill(7, &mut out);
        let mut counts = [0u64; 7];
        out.iter().for_each(|&i| counts[i as usize] += 1);
        for c in counts {
            assert!(c.abs_diff(100_000) < 1_500, "{counts:?}");
        }
    }
}
