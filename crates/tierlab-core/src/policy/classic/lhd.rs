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
//! Per reference: O(1) amortised on a hit; O(associativity + admissions) per eviction, the
//! sampled candidates drawn and prefetched before any is ranked; a reconfiguration costs
//! O(16 * MAX_AGE) every 2^20 accesses.

use crate::error::{Error, Result};
use crate::policy::list::{prefetch, NIL};
use crate::policy::{Frame, Policy, PolicyCtx, PolicyDef};
use crate::sim::{PageId, PageRef, Sink};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

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
/// Sampled candidates drawn (and prefetched) before the first of them is ranked.
const BATCH: usize = 32;

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

#[derive(Debug, Clone, Copy)]
struct Tag {
    key: u32,
    timestamp: u64,
    last_hit_age: u64,
    last_last_hit_age: u64,
    size: f32,
    explorer: bool,
}

struct Class {
    hits: Vec<f32>,
    evictions: Vec<f32>,
    densities: Vec<f32>,
}

/// LHD's ranking over objects named by dense keys (page ids in page mode, slots in object-size
/// mode): shared by both modes.
pub struct LhdCore {
    assoc: usize,
    tags: Vec<Tag>,
    /// Key -> index in `tags`, or NIL.
    pos: Vec<u32>,
    classes: Vec<Class>,
    timestamp: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    shift: u32,
    ewma_objects: f32,
    ewma_mass: f32,
    recent: Vec<u32>,
    recent_head: usize,
    ewma_victim: f32,
    explorer_budget: i64,
    rng: Pcg64Mcg,
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
        let classes = (0..HIT_AGE_CLASSES)
            .map(|c| Class {
                hits: vec![0.0; MAX_AGE],
                evictions: vec![0.0; MAX_AGE],
                densities: (0..MAX_AGE)
                    .map(|a| (CLASS_ROW + c + 1) as f32 / (a + 1) as f32)
                    .collect(),
            })
            .collect();
        LhdCore {
            assoc: cfg.associativity,
            tags: Vec::new(),
            pos: Vec::new(),
            classes,
            timestamp: 0,
            next_reconfiguration: ACCS_PER_RECONFIGURATION,
            reconfigurations: 0,
            shift: 10,
            ewma_objects: 0.0,
            ewma_mass: 0.0,
            recent: vec![NIL; cfg.admissions],
            recent_head: 0,
            ewma_victim: 0.0,
            explorer_budget: (capacity as f64 * EXPLORER_BUDGET_FRACTION) as i64,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
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

    fn age(&self, t: &Tag) -> usize {
        let age = (self.timestamp - t.timestamp) >> self.shift;
        (age as usize).min(MAX_AGE - 1)
    }

    fn class(t: &Tag) -> usize {
        hit_age_class(t.last_hit_age + t.last_last_hit_age)
    }

    fn density(&self, t: &Tag) -> f32 {
        let age = self.age(t);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let mut d = self.classes[Self::class(t)].densities[age] / t.size;
        if t.explorer {
            d += 1.0;
        }
        d
    }

    /// An access to `key` (size `size`): a hit if it is resident, else its insertion.
    pub fn update(&mut self, key: u32, size: f32) {
        self.grow(key as usize + 1);
        let insert = self.pos[key as usize] == NIL;
        let i = if insert {
            self.pos[key as usize] = self.tags.len() as u32;
            self.tags.push(Tag {
                key,
                timestamp: 0,
                last_hit_age: 0,
                last_last_hit_age: MAX_AGE as u64,
                size,
                explorer: false,
            });
            self.tags.len() - 1
        } else {
            let i = self.pos[key as usize] as usize;
            let t = self.tags[i];
            let age = self.age(&t);
            self.classes[Self::class(&t)].hits[age] += 1.0;
            if t.explorer {
                self.explorer_budget += t.size as i64;
            }
            let t = &mut self.tags[i];
            t.last_last_hit_age = t.last_hit_age;
            t.last_hit_age = age as u64;
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
    }

    /// Chooses a victim, removes it and returns its key.
    pub fn evict(&mut self) -> u32 {
        let n = self.tags.len();
        let candidates = if self.reconfigurations > WARMUP_RECONFIGURATIONS {
            self.assoc
        } else {
            self.assoc.min(WARMUP_CANDIDATES)
        };
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
            // The draws are made a batch at a time and their tags prefetched before any is
            // ranked (same draws, same order, same ranking as one at a time): the tags are
            // random places in an array larger than the CPU's caches once the cache is large.
            for &key in &self.recent {
                if let Some(&p) = self.pos.get(key as usize) {
                    prefetch(&self.tags, p as usize);
                }
            }
            let mut drawn = [0usize; BATCH];
            let mut left = candidates;
            while left > 0 {
                let b = left.min(BATCH);
                for d in &mut drawn[..b] {
                    *d = self.rng.random_range(0..n);
                    prefetch(&self.tags, *d);
                }
                for &i in &drawn[..b] {
                    let d = self.density(&self.tags[i]);
                    if d < rank {
                        (victim, rank) = (i, d);
                    }
                }
                left -= b;
            }
            for k in 0..self.recent.len() {
                let key = self.recent[k];
                if !self.contains(key) {
                    continue;
                }
                let i = self.pos[key as usize] as usize;
                let d = self.density(&self.tags[i]);
                if d < rank {
                    (victim, rank) = (i, d);
                }
            }
        }
        assert!(victim != usize::MAX, "LHD evicts from a non-empty cache");
        self.ewma_victim = EWMA_DECAY * self.ewma_victim + (1.0 - EWMA_DECAY) * rank;
        let t = self.tags[victim];
        let age = self.age(&t);
        self.classes[Self::class(&t)].evictions[age] += 1.0;
        if t.explorer {
            self.explorer_budget += t.size as i64;
        }
        self.pos[t.key as usize] = NIL;
        self.tags.swap_remove(victim);
        if let Some(moved) = self.tags.get(victim) {
            self.pos[moved.key as usize] = victim as u32;
        }
        t.key
    }

    fn reconfigure(&mut self) {
        for cl in &mut self.classes {
            for a in 0..MAX_AGE {
                cl.hits[a] *= EWMA_DECAY;
                cl.evictions[a] *= EWMA_DECAY;
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
        for cl in &mut self.classes {
            for v in [&mut cl.hits, &mut cl.evictions] {
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
    }

    fn model_hit_density(&mut self) {
        for cl in &mut self.classes {
            let mut events = cl.hits[MAX_AGE - 1] + cl.evictions[MAX_AGE - 1];
            let mut hits = cl.hits[MAX_AGE - 1];
            let mut lifetime = events;
            for a in (0..MAX_AGE - 1).rev() {
                hits += cl.hits[a];
                events += cl.hits[a] + cl.evictions[a];
                lifetime += events;
                cl.densities[a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
    }
}

pub struct Lhd {
    cap: usize,
    core: LhdCore,
    frames: Vec<Frame>,
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
            frames: Vec::new(),
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
        prefetch(&self.frames, near as usize);
    }

    fn access<S: Sink>(&mut self, r: &PageRef, sink: &mut S) {
        if self.core.contains(r.id) {
            self.frames[r.id as usize].dirty |= r.is_write();
            self.core.update(r.id, 1.0);
            sink.hit(r, 0);
            return;
        }
        if self.cap == 0 {
            sink.miss_bypass(r);
            return;
        }
        if self.core.len() == self.cap {
            let v = self.core.evict();
            sink.evict(self.frames[v as usize].out(0));
        }
        self.frames[r.id as usize] = Frame::of(r);
        self.core.update(r.id, 1.0);
        sink.miss(r, 0);
    }

    fn grow(&mut self, n: usize) {
        self.core.grow(n);
        if self.frames.len() < n {
            self.frames.resize(
                n,
                Frame {
                    page: 0,
                    id: 0,
                    kind: crate::trace::Kind::File,
                    dirty: false,
                },
            );
        }
    }

    fn resident(&self) -> usize {
        self.core.len()
    }
}

#[cfg(test)]
mod tests {
    use super::hit_age_class;
    use crate::sim::check::{replay_ids, replay_spec_ids};

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
