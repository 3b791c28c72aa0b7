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
//! a `Pcg64Mcg` seeded with `seed` (default 1) samples uniformly, so the two agree in
//! distribution, not miss for miss (tests/libcachesim_sampled.rs checks the miss ratio on every
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
//! object is one 32-byte, 32-aligned tag (one load per sample), holding its class (kept from
//! its last two hit ages, so ranking does not compute it) and, in page mode, the frame the sink
//! is told on eviction (there is no per-page frame array: 32 B per resident page plus the 4-byte
//! key -> tag index per distinct page). Hits, evictions and densities are flat class-major
//! tables. The recent admissions keep their tag indices, updated when an eviction moves a tag,
//! so an eviction reads them without going through the index. The draws come from `Draws`,
//! `Pcg64Mcg`'s own stream generated eight outputs at a time with a lookahead: at the end of an
//! eviction the tags the eviction after next will sample (if the accesses between miss) are
//! prefetched, and each access moves that window by one, so on a trace that mostly misses the
//! samples' tags are cached before they are drawn. The candidates, their order and the ranking
//! (first of least density wins) are those of drawing and ranking one at a time.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use crate::trace::Kind;
use rand::{RngExt, SeedableRng, TryRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;

const HIT_AGE_CLASSES: usize = 16;
/// libCacheSim's row of the objects' application (id 1) in its 16 x 16 class table.
const CLASS_ROW: usize = 16;
const MAX_AGE: usize = 20_000;
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
/// Not a candidate (a recent admission since evicted: its index is NIL).
const SKIP: u32 = NIL;

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

/// A resident object: 32 bytes, aligned so that a tag is one cache line's quarter and a sample
/// one load. The last two hit ages are coarsened ages (at most `MAX_AGE`), and `class` is
/// [`hit_age_class`] of their sum, kept so that ranking a sample needs no computation of it.
/// `page`, `kind` and `dirty` are the page-mode frame (what the sink is told on eviction),
/// unused with object sizes.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Tag {
    timestamp: u64,
    page: u64,
    key: u32,
    size: f32,
    last_hit_age: u16,
    last_last_hit_age: u16,
    class: u8,
    explorer: bool,
    kind: Kind,
    dirty: bool,
}

/// PCG's multiplier (O'Neill, "PCG: A family of simple fast space-efficient statistically good
/// algorithms for random number generation", 2014), as `rand_pcg`'s `Mcg128Xsl64` uses it.
const PCG_MULTIPLIER: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;
/// States generated at once.
const PCG_BLOCK: usize = 8;
/// `PCG_MULTIPLIER^(k + 1)` for `k` in `0..PCG_BLOCK`.
const PCG_POWERS: [u128; PCG_BLOCK] = {
    let mut p = [0u128; PCG_BLOCK];
    let mut m = PCG_MULTIPLIER;
    let mut k = 0;
    while k < PCG_BLOCK {
        p[k] = m;
        m = m.wrapping_mul(PCG_MULTIPLIER);
        k += 1;
    }
    p
};
const DRAWS_RING: usize = 128;

/// `Pcg64Mcg::seed_from_u64(seed)`'s stream of 64-bit outputs, output for output (tested), with
/// a lookahead: an MCG's `k`-th state is the seed's times `multiplier^k`, so a block of eight
/// outputs is eight independent multiplies (not a chain of eight), buffered in a ring. The
/// policy draws from it through `rand`'s `random_range` exactly as it drew from `Pcg64Mcg`, and
/// can [`Draws::peek`] at outputs not drawn yet to prefetch what the next eviction will sample.
struct Draws {
    /// The state of the last output pushed into `ring`.
    state: u128,
    ring: [u64; DRAWS_RING],
    head: usize,
    len: usize,
}

#[inline(always)]
fn pcg_output(state: u128) -> u64 {
    // XSL RR: the high and low halves xor-ed, rotated by the state's top 6 bits.
    let rot = (state >> 122) as u32;
    (((state >> 64) as u64) ^ (state as u64)).rotate_right(rot)
}

impl Draws {
    fn new(seed: u64) -> Draws {
        Draws {
            state: Pcg64Mcg::seed_from_u64(seed).state(),
            ring: [0; DRAWS_RING],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn refill(&mut self) {
        debug_assert!(self.len + PCG_BLOCK <= DRAWS_RING);
        let s = self.state;
        for (k, m) in PCG_POWERS.iter().enumerate() {
            self.ring[(self.head + self.len + k) % DRAWS_RING] = pcg_output(s.wrapping_mul(*m));
        }
        self.state = s.wrapping_mul(PCG_POWERS[PCG_BLOCK - 1]);
        self.len += PCG_BLOCK;
    }

    /// The output `k` draws from now (`k < DRAWS_RING - PCG_BLOCK`), without drawing it.
    #[inline]
    fn peek(&mut self, k: usize) -> u64 {
        while self.len <= k {
            self.refill();
        }
        self.ring[(self.head + k) % DRAWS_RING]
    }
}

impl TryRng for Draws {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> std::result::Result<u32, Infallible> {
        // As `Mcg128Xsl64`: the low half of a 64-bit output.
        self.try_next_u64().map(|r| r as u32)
    }

    #[inline]
    fn try_next_u64(&mut self) -> std::result::Result<u64, Infallible> {
        if self.len == 0 {
            self.refill();
        }
        let r = self.ring[self.head];
        self.head = (self.head + 1) % DRAWS_RING;
        self.len -= 1;
        Ok(r)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> std::result::Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let r = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        Ok(())
    }
}

/// The index `random_range(0..n)` draws from the 64-bit output `r` (Canon's method on the
/// output's low 32 bits, `rand`'s for `n <= u32::MAX`), unless it takes a second output to
/// correct its bias (probability below `n / 2^32`): a prediction, for prefetching only.
#[inline(always)]
fn foreseen_index(r: u64, n: usize) -> usize {
    ((r as u32 as u64 * n as u64) >> 32) as usize
}

/// LHD's ranking over objects named by dense keys (page ids in page mode, slots in object-size
/// mode): shared by both modes.
pub struct LhdCore {
    assoc: usize,
    tags: Vec<Tag>,
    /// Key -> index in `tags`, or NIL.
    pos: Vec<u32>,
    /// Per class and coarsened age, class-major (`class * MAX_AGE + age`): the EWMA'd hits and
    /// evictions, and the hit densities modelled from them.
    hits: Vec<f32>,
    evictions: Vec<f32>,
    densities: Vec<f32>,
    timestamp: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    shift: u32,
    ewma_objects: f32,
    ewma_mass: f32,
    /// The ring of recent admissions' keys, and each one's index in `tags` (NIL when it is not
    /// resident): kept in step with `pos`, so that an eviction finds their tags without first
    /// reading `pos`.
    recent: Vec<u32>,
    recent_at: Vec<u32>,
    recent_head: usize,
    ewma_victim: f32,
    explorer_budget: i64,
    rng: Draws,
}

fn hit_age_class(age: u64) -> usize {
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

impl LhdCore {
    /// `capacity` in the unit of the sizes (pages, or bytes).
    pub fn new(cfg: &LhdConfig, capacity: usize) -> LhdCore {
        let densities = (0..HIT_AGE_CLASSES)
            .flat_map(|c| (0..MAX_AGE).map(move |a| (CLASS_ROW + c + 1) as f32 / (a + 1) as f32))
            .collect();
        LhdCore {
            assoc: cfg.associativity,
            tags: Vec::new(),
            pos: Vec::new(),
            hits: vec![0.0; HIT_AGE_CLASSES * MAX_AGE],
            evictions: vec![0.0; HIT_AGE_CLASSES * MAX_AGE],
            densities,
            timestamp: 0,
            next_reconfiguration: ACCS_PER_RECONFIGURATION,
            reconfigurations: 0,
            shift: 10,
            ewma_objects: 0.0,
            ewma_mass: 0.0,
            recent: vec![NIL; cfg.admissions],
            recent_at: vec![NIL; cfg.admissions],
            recent_head: 0,
            ewma_victim: 0.0,
            explorer_budget: (capacity as f64 * EXPLORER_BUDGET_FRACTION) as i64,
            rng: Draws::new(cfg.seed),
        }
    }

    /// The replay loop's hint (see [`Policy::prefetch`]): `far`'s index entry now, `near`'s tag
    /// (its index entry arrived since it was `far`).
    #[inline(always)]
    pub fn prefetch(&self, near: u32, far: u32) {
        prefetch(&self.pos, far as usize);
        if let Some(&p) = self.pos.get(near as usize) {
            prefetch(&self.tags, p as usize);
        }
    }

    pub fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, NIL);
        }
    }

    #[inline]
    pub fn contains(&self, key: u32) -> bool {
        self.pos.get(key as usize).is_some_and(|&p| p != NIL)
    }

    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    #[inline(always)]
    fn age(&self, t: &Tag) -> usize {
        let age = (self.timestamp - t.timestamp) >> self.shift;
        (age as usize).min(MAX_AGE - 1)
    }

    #[inline(always)]
    fn density(&self, t: &Tag) -> f32 {
        let age = self.age(t);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let mut d = self.densities[t.class as usize * MAX_AGE + age] / t.size;
        if t.explorer {
            d += 1.0;
        }
        d
    }

    /// Random candidates of the next eviction.
    #[inline(always)]
    fn candidates(&self) -> usize {
        if self.reconfigurations > WARMUP_RECONFIGURATIONS {
            self.assoc
        } else {
            self.assoc.min(WARMUP_CANDIDATES)
        }
    }

    /// An access to `key` (size `size`): a hit if it is resident, else its insertion. Returns
    /// its index in the tags.
    pub fn update(&mut self, key: u32, size: f32) -> usize {
        self.grow(key as usize + 1);
        let insert = self.pos[key as usize] == NIL;
        let i = if insert {
            let i = self.tags.len();
            self.pos[key as usize] = i as u32;
            self.tags.push(Tag {
                timestamp: 0,
                page: 0,
                key,
                size,
                last_hit_age: 0,
                last_last_hit_age: MAX_AGE as u16,
                class: hit_age_class(MAX_AGE as u64) as u8,
                explorer: false,
                kind: Kind::File,
                dirty: false,
            });
            // A recent admission evicted and now back is a candidate again (its key is).
            for (k, at) in self.recent.iter().zip(&mut self.recent_at) {
                if *k == key {
                    *at = i as u32;
                }
            }
            i
        } else {
            let i = self.pos[key as usize] as usize;
            let t = self.tags[i];
            let age = self.age(&t);
            self.hits[t.class as usize * MAX_AGE + age] += 1.0;
            if t.explorer {
                self.explorer_budget += t.size as i64;
            }
            let t = &mut self.tags[i];
            t.last_last_hit_age = t.last_hit_age;
            t.last_hit_age = age as u16;
            t.class = hit_age_class(t.last_hit_age as u64 + t.last_last_hit_age as u64) as u8;
            i
        };
        let explore = self.rng.random_range(0..EXPLORE_INVERSE_PROBABILITY) == 0;
        let explorer =
            explore && self.explorer_budget > 0 && self.reconfigurations < WARMUP_RECONFIGURATIONS;
        let t = &mut self.tags[i];
        t.timestamp = self.timestamp;
        t.size = size;
        t.explorer = explorer;
        if explorer {
            self.explorer_budget -= size as i64;
        }
        if insert && !explore && !self.recent.is_empty() {
            let t = self.tags[i];
            if self.density(&t) < self.ewma_victim {
                let n = self.recent.len();
                self.recent[self.recent_head % n] = key;
                self.recent_at[self.recent_head % n] = i as u32;
                self.recent_head += 1;
            }
        }
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCS_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
        // The next eviction, if the next access misses, draws the next `candidates` outputs:
        // this access moved that window by one, so the tag of the one output it gained is
        // loaded now (see `evict`).
        let (n, c) = (self.tags.len(), self.candidates());
        if c < n {
            let c = c.min(FORESEE);
            let (near, far) = (self.rng.peek(c - 1), self.rng.peek(2 * c));
            prefetch(&self.tags, foreseen_index(near, n));
            prefetch(&self.tags, foreseen_index(far, n));
        }
        i
    }

    /// Ranks the tags at `at` (SKIP: none) in order, keeping the first of least density.
    #[inline(always)]
    fn rank(&self, at: &[u32], victim: &mut usize, rank: &mut f32) {
        for &i in at {
            if i == SKIP {
                continue;
            }
            let d = self.density(&self.tags[i as usize]);
            let less = d < *rank;
            *victim = if less { i as usize } else { *victim };
            *rank = if less { d } else { *rank };
        }
    }

    /// Chooses a victim, removes it and returns its key.
    pub fn evict(&mut self) -> u32 {
        self.evict_tag().key
    }

    fn evict_tag(&mut self) -> Tag {
        let n = self.tags.len();
        let candidates = self.candidates();
        let mut victim = usize::MAX;
        let mut rank = f32::MAX;
        if candidates >= n {
            let mut oldest = u64::MAX;
            for i in 0..n {
                let t = &self.tags[i];
                let d = self.density(t);
                if d < rank || (d == rank && t.timestamp < oldest) {
                    (victim, rank, oldest) = (i, d, t.timestamp);
                }
            }
        } else {
            // In stages, a batch at a time (same draws, same order, same ranking as one at a
            // time): all draws, their tags prefetched (mostly loaded already, see the end);
            // then each one's density entry found and prefetched; then the ranking. The tags
            // are random places in an array larger than the CPU's caches once the cache is
            // large.
            let mut drawn = [0u32; BATCH];
            let mut left = candidates;
            while left > 0 {
                let b = left.min(BATCH);
                for d in &mut drawn[..b] {
                    *d = self.rng.random_range(0..n) as u32;
                    prefetch(&self.tags, *d as usize);
                }
                self.rank(&drawn[..b], &mut victim, &mut rank);
                left -= b;
            }
            for at in self.recent_at.chunks(BATCH) {
                let b = at.len();
                drawn[..b].copy_from_slice(at);
                self.rank(&drawn[..b], &mut victim, &mut rank);
            }
        }
        assert!(victim != usize::MAX, "LHD evicts from a non-empty cache");
        self.ewma_victim = EWMA_DECAY * self.ewma_victim + (1.0 - EWMA_DECAY) * rank;
        let t = self.tags[victim];
        let age = self.age(&t);
        self.evictions[t.class as usize * MAX_AGE + age] += 1.0;
        if t.explorer {
            self.explorer_budget += t.size as i64;
        }
        self.pos[t.key as usize] = NIL;
        let last = (n - 1) as u32;
        for at in &mut self.recent_at {
            if *at == victim as u32 {
                *at = NIL;
            } else if *at == last {
                *at = victim as u32;
            }
        }
        self.tags.swap_remove(victim);
        if let Some(moved) = self.tags.get(victim) {
            self.pos[moved.key as usize] = victim as u32;
        }
        // Foresee the next eviction: if the next access misses, its update draws one output
        // (the explorer draw) and its eviction the `candidates` after it, from `0..n` again
        // (in page mode the cache is full then). Their tags, and the recent admissions', are
        // loaded now, an access ahead; each access since moves the window (see `update`).
        let c = self.candidates();
        if c < n {
            let c = c.min(FORESEE);
            for k in c + 2..=2 * c + 1 {
                let r = self.rng.peek(k);
                prefetch(&self.tags, foreseen_index(r, n));
            }
        }
        t
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
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.tags.len() as f32;
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
            .zip(self.densities.chunks_mut(MAX_AGE));
        for ((hit, evicted), density) in classes {
            let mut events = hit[MAX_AGE - 1] + evicted[MAX_AGE - 1];
            let mut hits = hit[MAX_AGE - 1];
            let mut lifetime = events;
            for a in (0..MAX_AGE - 1).rev() {
                hits += hit[a];
                events += hit[a] + evicted[a];
                lifetime += events;
                density[a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
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
            core: LhdCore::new(cfg, ctx.capacity),
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
        if let Some(&p) = self.core.pos.get(r.id as usize).filter(|&&p| p != NIL) {
            self.core.tags[p as usize].dirty |= r.is_write();
            self.core.update(r.id, 1.0);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.core.len() == self.cap {
            let v = self.core.evict_tag();
            let frame = Frame {
                page: v.page,
                id: v.key,
                kind: v.kind,
                dirty: v.dirty,
            };
            sink.evict(frame.out(0));
        }
        let i = self.core.update(r.id, 1.0);
        let t = &mut self.core.tags[i];
        (t.page, t.kind, t.dirty) = (r.page(), r.kind(), r.is_write());
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
    use super::{hit_age_class, Draws, LhdConfig, LhdCore, NIL};
    use crate::sim::check::{replay_ids, replay_spec_ids};
    use rand::{Rng, RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn draws_are_pcg64mcg() {
        // Output for output, through the draws the policy makes (explorer draws from 0..32,
        // sampled indices from 0..n, u32 and u64 outputs), across blocks and the ring's end,
        // with peeks (which must not draw) in between.
        for seed in [0u64, 1, 2, 0xdead_beef, u64::MAX] {
            let (mut pcg, mut draws) = (Pcg64Mcg::seed_from_u64(seed), Draws::new(seed));
            for step in 0..5_000usize {
                draws.peek(step % 40);
                match step % 4 {
                    0 => assert_eq!(pcg.random_range(0..32u64), draws.random_range(0..32u64)),
                    1 => {
                        let n = 1 + step * 7919 % 1_000_003;
                        assert_eq!(pcg.random_range(0..n), draws.random_range(0..n));
                    }
                    2 => assert_eq!(pcg.next_u32(), draws.next_u32()),
                    _ => assert_eq!(pcg.next_u64(), draws.next_u64()),
                }
            }
            // peek(k) is the output k draws later.
            let ahead: Vec<u64> = (0..50).map(|k| draws.peek(k)).collect();
            let drawn: Vec<u64> = (0..50).map(|_| pcg.next_u64()).collect();
            assert_eq!(ahead, drawn);
            let drawn: Vec<u64> = (0..50).map(|_| draws.next_u64()).collect();
            assert_eq!(ahead, drawn);
        }
    }

    #[test]
    fn recent_admissions_track_their_tags() {
        // The recent admissions' tag indices equal what `pos` says of their keys (NIL if not
        // resident) after every access and eviction, over evictions that move tags, keys that
        // come back while still in the ring, and the sampled path (capacity 50 > 8 candidates).
        let cfg = LhdConfig::default();
        let mut core = LhdCore::new(&cfg, 50);
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
            for (&k, &at) in core.recent.iter().zip(&core.recent_at) {
                let expected = core.pos.get(k as usize).copied().unwrap_or(NIL);
                assert_eq!(at, expected, "recent key {k}");
                tracked += (at != NIL) as usize;
            }
        }
        assert!(tracked > 0, "no recent admission was ever resident");
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
