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
//! uniform and is not reproducible here. `seed` (default 1) seeds a `Pcg64Mcg`; the two agree
//! in distribution, not miss for miss: tests/reference/libcachesim_sampled_counts.json holds
//! libCacheSim's counts and crates/tierlab-core/tests/libcachesim_sampled.rs checks tierlab's
//! miss ratio against them within a stated tolerance on every trace and size.
//!
//! Object sizes: libCacheSim's priority ignores sizes (it evicts by `n/t` until the object
//! fits), and so does the object-size variant here (`policy::object::hyperbolic`).
//!
//! Per reference: O(1) on a hit; O(samples) per eviction. The samples read only a 16-byte
//! key per page (count and insertion time, apart from the page's frame), all drawn and
//! prefetched before the first is compared, so an eviction waits about one memory latency
//! instead of one per sample (benches/README.md, "Hyperbolic, LHD, LeCaR and Cacheus").

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, SlotTable, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
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
const BATCH: usize = 64;

/// Index of the item of lowest priority `n / (now - t0)` among `len` items, read through `item`
/// (`(n, t0)`): all of them when `samples >= len`, else `samples` drawn with replacement. Ties
/// go to the smaller `t0` (inserted first). Shared by the page and object-size variants.
///
/// The draws are made `BATCH` at a time and `touch` is called on each before any is compared
/// (a caller can prefetch the item there): the samples are random places in an array larger
/// than the CPU's caches once the cache is large, and loading them all at once, instead of one
/// after the other, is what makes an eviction cheap. The draws, their order and the comparisons
/// are the same as drawing and comparing one at a time.
pub fn lowest(
    len: usize,
    samples: usize,
    now: u64,
    rng: &mut Pcg64Mcg,
    item: impl Fn(usize) -> (u64, u64),
    touch: impl Fn(usize),
) -> usize {
    // Both operands count references, far below 2^63, where converting from i64 gives the same
    // f64 as from u64 in one instruction instead of several.
    let float = |x: u64| {
        debug_assert!(x <= i64::MAX as u64);
        x as i64 as f64
    };
    let key = |i: usize| {
        let (n, t0) = item(i);
        (float(n) / float(now.saturating_sub(t0).max(1)), t0)
    };
    let mut best = usize::MAX;
    let mut best_key = (f64::INFINITY, u64::MAX);
    let mut consider = |i: usize| {
        let k = key(i);
        if k < best_key {
            best = i;
            best_key = k;
        }
    };
    if samples >= len {
        (0..len).for_each(&mut consider);
    } else {
        let mut drawn = [0usize; BATCH];
        let mut left = samples;
        while left > 0 {
            let b = left.min(BATCH);
            for d in &mut drawn[..b] {
                *d = rng.random_range(0..len);
                touch(*d);
            }
            drawn[..b].iter().for_each(|&i| consider(i));
            left -= b;
        }
    }
    best
}

/// What an eviction compares, 16 bytes per resident page: the samples read only these, from
/// an array half the size of one holding whole 32-byte entries, so more of it stays cached.
#[derive(Debug, Clone, Copy)]
struct Key {
    /// References since insertion.
    n: u64,
    /// Insertion time.
    t0: u64,
}

/// Resident pages in a dense array (sampling picks an index): `keys[i]` and `frames[i]` are
/// the same page, moved together when an eviction fills the victim's place with the last page.
pub struct Hyperbolic {
    cap: usize,
    samples: usize,
    now: u64,
    keys: Vec<Key>,
    frames: Vec<Frame>,
    table: SlotTable,
    rng: Pcg64Mcg,
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
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
        })
    }
    fn visit_object_mode<V: crate::policy::PolicyVisitor>(v: V) -> Option<V::Out> {
        Some(v.visit::<crate::policy::object::hyperbolic::ObjHyperbolic>())
    }
}

impl Policy for Hyperbolic {
    /// A hit reads the page's table entry, key and frame: start loading the entry 16
    /// references ahead and the key and frame 6 ahead.
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
            self.keys[slot as usize].n += 1;
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
        self.keys.push(Key { n: 1, t0: self.now });
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
        let keys = &self.keys;
        let i = lowest(
            keys.len(),
            self.samples,
            self.now,
            &mut self.rng,
            |i| (keys[i].n, keys[i].t0),
            |i| prefetch(keys, i),
        );
        self.keys.swap_remove(i);
        let victim = self.frames.swap_remove(i);
        self.table.clear(victim.id);
        if let Some(moved) = self.frames.get(i) {
            self.table.set(moved.id, i as u32);
        }
        sink.evict(victim.out(0));
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::check::{replay_ids, replay_spec_ids};

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
