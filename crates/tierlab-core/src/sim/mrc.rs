//! Miss-ratio curves.
//!
//! - [`lru_mrc`]: the exact LRU curve at every requested size in one pass
//!   (Mattson et al., "Evaluation techniques for storage hierarchies", IBM
//!   Systems Journal 1970: LRU is a stack algorithm, so a reference hits in
//!   every memory at least as large as its stack distance). Stack distances
//!   are counted in O(log n) each with a Fenwick tree over access times that
//!   marks, for every page, only its latest access (Bennett & Kruskal 1975;
//!   Almási et al. 2002): the distance of a reference is the number of marks
//!   after the page's previous access, plus one.
//! - [`shards_mrc`]: SHARDS (Waldspurger et al., "Efficient MRC Construction
//!   with SHARDS", FAST 2015, Sections 3-4): only pages whose spatial hash
//!   falls under a threshold T (rate R = T / P, P = 2^24) are tracked; their
//!   stack distances are scaled by 1/R. Fixed-rate mode uses the paper's
//!   SHARDS_adj correction (Section 4.2: the difference between the expected
//!   and the actual number of sampled references is credited to the smallest
//!   distance, i.e. the sampled miss count is divided by the expected sample
//!   count N x R; both modes use it). Fixed-size mode (Section 3.2, `max_pages`) keeps at most
//!   `max_pages` sampled pages: when the set overflows, T drops to the largest
//!   hash in the set and the pages at or above it leave the sample; each
//!   reference then counts with weight 1/R in force when it was sampled.

use crate::error::{Error, Result};
use crate::sim::engine::Decoder;
use crate::sim::{PageRef, RefBatch};
use crate::trace::TraceReader;
use std::collections::BinaryHeap;

/// A miss-ratio curve: misses (exact, or estimated for SHARDS) per size.
#[derive(Debug, Clone, PartialEq)]
pub struct Mrc {
    /// Page references in the trace.
    pub accesses: u64,
    /// Distinct pages in the trace.
    pub distinct: u64,
    /// Page references whose stack distance was computed (all, when exact).
    pub sampled: u64,
    /// (size in pages, misses), in the order the sizes were given.
    pub points: Vec<(usize, u64)>,
}

impl Mrc {
    /// (size, miss ratio) pairs.
    pub fn ratios(&self) -> Vec<(usize, f64)> {
        self.points
            .iter()
            .map(|&(s, m)| (s, m as f64 / self.accesses.max(1) as f64))
            .collect()
    }
}

/// Mean absolute difference of the miss ratios of two curves over the same
/// sizes.
pub fn mean_abs_error(a: &Mrc, b: &Mrc) -> f64 {
    let (ra, rb) = (a.ratios(), b.ratios());
    assert_eq!(ra.len(), rb.len(), "curves over different sizes");
    let sum: f64 = ra
        .iter()
        .zip(&rb)
        .map(|(x, y)| {
            assert_eq!(x.0, y.0, "curves over different sizes");
            (x.1 - y.1).abs()
        })
        .sum();
    sum / ra.len().max(1) as f64
}

/// Fenwick tree over access times that grows as time advances.
#[derive(Debug, Default)]
struct Fenwick {
    tree: Vec<i64>,
    marks: Vec<bool>,
}

impl Fenwick {
    fn ensure(&mut self, t: usize) {
        if t < self.marks.len() {
            return;
        }
        let n = (t + 1).next_power_of_two().max(1024);
        self.marks.resize(n, false);
        // Rebuild in O(n).
        self.tree = vec![0; n + 1];
        for i in 1..=n {
            self.tree[i] += self.marks[i - 1] as i64;
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                self.tree[j] += self.tree[i];
            }
        }
    }

    fn add(&mut self, t: usize, on: bool) {
        self.marks[t] = on;
        let d = if on { 1 } else { -1 };
        let mut i = t + 1;
        while i < self.tree.len() {
            self.tree[i] += d;
            i += i & i.wrapping_neg();
        }
    }

    /// Marks at times <= t.
    fn prefix(&self, t: usize) -> i64 {
        let mut i = (t + 1).min(self.tree.len() - 1);
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

const NONE: u64 = u64::MAX;

/// Stack distances of a stream of page ids (times are the calls' order).
#[derive(Debug, Default)]
struct StackDistance {
    fenwick: Fenwick,
    last: Vec<u64>,
    now: u64,
}

impl StackDistance {
    /// Distance (1-based LRU stack position) of a reference to `id`, or None
    /// for a first reference.
    fn access(&mut self, id: u32) -> Option<u64> {
        let i = id as usize;
        if self.last.len() <= i {
            self.last.resize(i + 1, NONE);
        }
        let t = self.now as usize;
        self.now += 1;
        self.fenwick.ensure(t);
        let prev = self.last[i];
        let d = if prev == NONE {
            None
        } else {
            let p = prev as usize;
            let after = self.fenwick.prefix(t) - self.fenwick.prefix(p);
            self.fenwick.add(p, false);
            Some(after as u64 + 1)
        };
        self.fenwick.add(t, true);
        self.last[i] = t as u64;
        d
    }

    /// Forgets page `id` (it leaves the sample).
    fn forget(&mut self, id: u32) {
        let i = id as usize;
        if let Some(&p) = self.last.get(i) {
            if p != NONE {
                self.fenwick.add(p as usize, false);
                self.last[i] = NONE;
            }
        }
    }
}

fn check_sizes(sizes: &[usize]) -> Result<usize> {
    if sizes.is_empty() {
        return Err(Error::config("mrc: give at least one size"));
    }
    Ok(*sizes.iter().max().expect("non-empty"))
}

/// Feeds every page reference of `reader` to `f`.
fn for_each_ref(reader: &mut dyn TraceReader, mut f: impl FnMut(&PageRef)) -> Result<(u64, u64)> {
    let mut dec = Decoder::default();
    let mut refs = RefBatch::default();
    let mut events = Vec::new();
    let mut n = 0u64;
    loop {
        refs.clear(n);
        events.clear();
        let more = dec.read(reader, 1 << 16, &mut refs, &mut events)?;
        for r in refs.iter() {
            f(&r);
        }
        n += refs.len() as u64;
        if !more {
            break;
        }
    }
    Ok((n, dec.distinct() as u64))
}

/// The exact LRU miss-ratio curve at `sizes` (pages), in one pass.
pub fn lru_mrc(reader: &mut dyn TraceReader, sizes: &[usize]) -> Result<Mrc> {
    let max = check_sizes(sizes)?;
    // hist[d] = references at stack distance d (d > max counted at max + 1).
    let mut hist = vec![0u64; max + 2];
    let mut cold = 0u64;
    let mut sd = StackDistance::default();
    let (n, distinct) = for_each_ref(reader, |r| match sd.access(r.id) {
        None => cold += 1,
        Some(d) => hist[(d as usize).min(max + 1)] += 1,
    })?;
    // misses(c) = cold + references at distance > c.
    let mut above = vec![0u64; max + 2];
    for d in (0..=max).rev() {
        above[d] = above[d + 1] + hist[d + 1];
    }
    Ok(Mrc {
        accesses: n,
        distinct,
        sampled: n,
        points: sizes.iter().map(|&c| (c, cold + above[c])).collect(),
    })
}

/// SHARDS sampling parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shards {
    /// Sampling rate R (0, 1]: the initial rate in fixed-size mode.
    pub rate: f64,
    /// Fixed-size mode: most sampled pages tracked at once.
    pub max_pages: Option<usize>,
    /// Seed of the spatial hash.
    pub seed: u64,
}

impl Default for Shards {
    fn default() -> Self {
        Shards {
            rate: 0.01,
            max_pages: None,
            seed: 0,
        }
    }
}

const P: u64 = 1 << 24;

fn hash(page: u64, seed: u64) -> u64 {
    // splitmix64 finaliser.
    let mut z = page ^ seed.wrapping_mul(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    (z ^ (z >> 31)) % P
}

/// The SHARDS estimate of the LRU miss-ratio curve at `sizes`.
pub fn shards_mrc(reader: &mut dyn TraceReader, sizes: &[usize], cfg: &Shards) -> Result<Mrc> {
    let max = check_sizes(sizes)?;
    if !(cfg.rate > 0.0 && cfg.rate <= 1.0) {
        return Err(Error::config(format!(
            "mrc: SHARDS rate must be in (0, 1], got {}",
            cfg.rate
        )));
    }
    if cfg.max_pages == Some(0) {
        return Err(Error::config("mrc: SHARDS max_pages must be at least 1"));
    }
    let mut threshold = ((cfg.rate * P as f64).round() as u64).clamp(1, P);
    // Weighted histogram over scaled distances, as in `lru_mrc`.
    let mut hist = vec![0f64; max + 2];
    let mut cold = 0f64;
    let mut sampled = 0u64;
    let mut sd = StackDistance::default();
    // Fixed-size mode: sampled pages by hash (max-heap) and membership.
    let mut heap: BinaryHeap<(u64, u32)> = BinaryHeap::new();
    let mut member: Vec<bool> = Vec::new();
    let mut in_sample = 0usize;
    let (n, distinct) = for_each_ref(reader, |r| {
        let h = hash(r.page(), cfg.seed);
        if h >= threshold {
            return;
        }
        let i = r.id as usize;
        if cfg.max_pages.is_some() {
            if member.len() <= i {
                member.resize(i + 1, false);
            }
            if !member[i] {
                member[i] = true;
                in_sample += 1;
                heap.push((h, r.id));
            }
        }
        let rate = threshold as f64 / P as f64;
        let w = 1.0 / rate;
        sampled += 1;
        match sd.access(r.id) {
            None => cold += w,
            Some(d) => {
                let scaled = (d as f64 / rate).ceil() as usize;
                hist[scaled.min(max + 1)] += w;
            }
        }
        if let Some(limit) = cfg.max_pages {
            while in_sample > limit {
                // Lower T to the largest sampled hash; drop pages at or above it.
                let (top, _) = *heap.peek().expect("sample is not empty");
                threshold = top;
                while let Some(&(h, id)) = heap.peek() {
                    if h < threshold {
                        break;
                    }
                    heap.pop();
                    member[id as usize] = false;
                    in_sample -= 1;
                    sd.forget(id);
                }
            }
        }
    })?;
    let mut above = vec![0f64; max + 2];
    for d in (0..=max).rev() {
        above[d] = above[d + 1] + hist[d + 1];
    }
    // SHARDS_adj: normalise by the expected weighted sample count, which is
    // the trace length N (each sampled reference weighs 1/R), not by the
    // weighted count actually sampled; in fixed-size mode too (on OLTP this
    // cuts the fixed-size error about tenfold).
    let total = n as f64;
    let points = sizes
        .iter()
        .map(|&c| {
            let m = if total > 0.0 {
                ((cold + above[c]) / total).min(1.0) * n as f64
            } else {
                0.0
            };
            (c, m.round() as u64)
        })
        .collect();
    Ok(Mrc {
        accesses: n,
        distinct,
        sampled,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_distances_by_hand() {
        // a b c a b b d a: distances -, -, -, 3, 3, 1, -, 3 (b and d since a).
        let mut sd = StackDistance::default();
        let got: Vec<Option<u64>> = [0, 1, 2, 0, 1, 1, 3, 0]
            .iter()
            .map(|&i| sd.access(i))
            .collect();
        assert_eq!(
            got,
            vec![None, None, None, Some(3), Some(3), Some(1), None, Some(3)]
        );
    }

    #[test]
    fn fenwick_survives_growth() {
        let mut sd = StackDistance::default();
        for t in 0..5000u32 {
            sd.access(t % 700);
        }
        // A cyclic scan over 700 pages: every reuse is at distance 700.
        assert_eq!(sd.access(5000 % 700), Some(700));
    }
}
