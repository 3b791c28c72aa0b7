//! The conformance harness: a checking sink and drivers that run any
//! registered policy (by name, through the registry visitor) over page
//! references and assert the engine's contract on every reference:
//!
//! - exactly one of hit / miss / bypass per reference, about that page;
//! - a page is hit only while resident (in the tier the hit names), missed or
//!   bypassed only while not resident;
//! - resident pages, over all tiers, never exceed the capacity, and equal
//!   what the policy's `resident()` says;
//! - a page leaves memory only while resident, and its eviction is reported
//!   dirty exactly when it was written since it was loaded (or since it was
//!   last written back): so each dirty page is written back exactly once;
//! - write-backs and migrations only concern resident pages (migrations from
//!   the tier the page is in).
//!
//! Violations panic with the policy, the reference number and what happened.
//! Tests in tests/conformance.rs run it over every registered policy on
//! random and real traces; unit tests use [`replay_ids`].

use super::engine::fill_next_use;
use super::{PageId, PageOut, PageRef, RefBatch, RefFields, Sink, MAX_TIERS};
use crate::policy::{visit_policy, PolicyCtx, PolicyDef, PolicySpec, PolicyVisitor};
use crate::trace::{Event, Kind, Op};

const NOT_RESIDENT: u8 = u8::MAX;

/// What happened to one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Hit,
    Miss,
    Bypass,
}

/// Counters a checked run ends with (compared across runs for determinism).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckedCounts {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub bypasses: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub written_back: u64,
    pub migrations: u64,
    pub hits_by_tier: [u64; MAX_TIERS],
    /// Page ids in eviction order (a fingerprint of the policy's decisions).
    pub eviction_digest: u64,
}

/// The reference being handled.
#[derive(Debug, Clone, Copy)]
struct Current {
    seq: u64,
    id: PageId,
    page: u64,
    op: Op,
}

/// A sink that checks the policy contract and forwards to `inner`.
pub struct CheckSink<S: Sink> {
    pub inner: S,
    name: String,
    capacity: usize,
    tiers: usize,
    /// Tier of each resident page, or NOT_RESIDENT.
    tier: Vec<u8>,
    /// Written since loaded or last cleaned.
    dirty: Vec<bool>,
    resident: usize,
    current: Option<Current>,
    outcome: Option<Outcome>,
    pub counts: CheckedCounts,
}

impl<S: Sink> CheckSink<S> {
    pub fn new(inner: S, name: &str, capacity: usize, tiers: usize, distinct: usize) -> Self {
        CheckSink {
            inner,
            name: name.to_string(),
            capacity,
            tiers: tiers.max(1),
            tier: vec![NOT_RESIDENT; distinct],
            dirty: vec![false; distinct],
            resident: 0,
            current: None,
            outcome: None,
            counts: CheckedCounts::default(),
        }
    }

    fn fail(&self, msg: String) -> ! {
        let at = self
            .current
            .map(|c| format!("reference {} (page {}, {:?})", c.seq, c.page, c.op))
            .unwrap_or_else(|| "outside a reference".to_string());
        panic!("policy '{}' at {at}: {msg}", self.name)
    }

    /// Grows the per-page tables (page ids below `n`).
    pub fn grow(&mut self, n: usize) {
        if self.tier.len() < n {
            self.tier.resize(n, NOT_RESIDENT);
            self.dirty.resize(n, false);
        }
    }

    /// Call before handing `r` to the policy.
    pub fn begin(&mut self, r: &PageRef) {
        self.current = Some(Current {
            seq: r.seq(),
            id: r.id,
            page: r.page(),
            op: r.op(),
        });
        self.outcome = None;
    }

    /// Call after the policy handled `r`; `policy_resident` is its `resident()`.
    pub fn end(&mut self, policy_resident: usize) {
        if self.outcome.is_none() {
            self.fail("no hit, miss or bypass reported".into());
        }
        self.counts.accesses += 1;
        if self.resident > self.capacity {
            self.fail(format!(
                "{} pages resident, capacity {}",
                self.resident, self.capacity
            ));
        }
        if policy_resident != self.resident {
            self.fail(format!(
                "policy says {policy_resident} pages resident, its reports say {}",
                self.resident
            ));
        }
        self.current = None;
    }

    fn outcome(&mut self, r: &PageRef, o: Outcome) {
        match self.current {
            Some(c) if c.seq == r.seq() && c.id == r.id => {}
            _ => self.fail(format!("{o:?} reported for page {} out of turn", r.page())),
        }
        if let Some(prev) = self.outcome {
            self.fail(format!(
                "{o:?} reported after {prev:?} for the same reference"
            ));
        }
        self.outcome = Some(o);
    }

    fn check_tier(&self, tier: u8) {
        if tier as usize >= self.tiers {
            self.fail(format!("tier {tier} of a {}-tier system", self.tiers));
        }
    }
}

impl<S: Sink> Sink for CheckSink<S> {
    fn hit(&mut self, r: &PageRef, tier: u8) {
        self.outcome(r, Outcome::Hit);
        self.check_tier(tier);
        let t = self.tier[r.id as usize];
        if t != tier {
            if t == NOT_RESIDENT {
                self.fail(format!("hit on page {} which is not resident", r.page()));
            }
            self.fail(format!("hit in tier {tier} on a page in tier {t}"));
        }
        self.dirty[r.id as usize] |= r.op() == Op::Write;
        self.counts.hits += 1;
        self.counts.hits_by_tier[tier as usize] += 1;
        self.inner.hit(r, tier);
    }

    fn miss(&mut self, r: &PageRef, tier: u8) {
        self.outcome(r, Outcome::Miss);
        self.check_tier(tier);
        if self.tier[r.id as usize] != NOT_RESIDENT {
            self.fail(format!("miss on page {} which is resident", r.page()));
        }
        self.tier[r.id as usize] = tier;
        self.dirty[r.id as usize] = r.op() == Op::Write;
        self.resident += 1;
        self.counts.misses += 1;
        self.inner.miss(r, tier);
    }

    fn miss_bypass(&mut self, r: &PageRef) {
        self.outcome(r, Outcome::Bypass);
        if self.tier[r.id as usize] != NOT_RESIDENT {
            self.fail(format!("bypass of page {} which is resident", r.page()));
        }
        self.counts.misses += 1;
        self.counts.bypasses += 1;
        self.inner.miss_bypass(r);
    }

    fn evict(&mut self, p: PageOut) {
        let i = p.id as usize;
        if i >= self.tier.len() || self.tier[i] == NOT_RESIDENT {
            self.fail(format!("eviction of page {} which is not resident", p.page));
        }
        if self.tier[i] != p.tier {
            self.fail(format!(
                "eviction of page {} from tier {} but it is in tier {}",
                p.page, p.tier, self.tier[i]
            ));
        }
        if p.dirty != self.dirty[i] {
            self.fail(format!(
                "page {} evicted with dirty={} but it was {}written since loaded or cleaned",
                p.page,
                p.dirty,
                if self.dirty[i] { "" } else { "not " }
            ));
        }
        self.tier[i] = NOT_RESIDENT;
        self.dirty[i] = false;
        self.resident -= 1;
        self.counts.evictions += 1;
        self.counts.dirty_evictions += p.dirty as u64;
        self.counts.eviction_digest = self
            .counts
            .eviction_digest
            .wrapping_mul(0x100000001b3)
            .wrapping_add(p.id as u64 + 1);
        self.inner.evict(p);
    }

    fn write_back(&mut self, pages: &[PageOut]) {
        for (k, p) in pages.iter().enumerate() {
            let i = p.id as usize;
            if self.tier[i] == NOT_RESIDENT {
                self.fail(format!(
                    "write-back of page {} which is not resident",
                    p.page
                ));
            }
            if !self.dirty[i] {
                self.fail(format!("write-back of page {} which is clean", p.page));
            }
            if k > 0 && p.page != pages[k - 1].page + 1 {
                self.fail("bulk write-back of non-consecutive pages".into());
            }
            self.dirty[i] = false;
        }
        self.counts.written_back += pages.len() as u64;
        self.inner.write_back(pages);
    }

    fn migrate(&mut self, id: PageId, page: u64, from: u8, to: u8) {
        self.check_tier(to);
        let i = id as usize;
        if self.tier[i] != from {
            self.fail(format!(
                "migration of page {page} from tier {from} but it is in tier {}",
                self.tier[i]
            ));
        }
        self.tier[i] = to;
        self.counts.migrations += 1;
        self.inner.migrate(id, page, from, to);
    }

    fn event(&mut self, e: &Event) {
        self.inner.event(e);
    }
}

/// A sink that does nothing (for checked runs that need no accounting, and to measure a
/// policy alone).
#[derive(Debug, Default)]
pub struct NullSink;

impl Sink for NullSink {
    fn hit(&mut self, _r: &PageRef, _tier: u8) {}
    fn miss(&mut self, _r: &PageRef, _tier: u8) {}
    fn miss_bypass(&mut self, _r: &PageRef) {}
    fn evict(&mut self, _p: PageOut) {}
    fn write_back(&mut self, _pages: &[PageOut]) {}
    fn migrate(&mut self, _id: PageId, _page: u64, _from: u8, _to: u8) {}
}

impl super::engine::EngineSink for NullSink {
    fn grow(&mut self, _n: usize) {}
    fn into_parts(self) -> (super::Stats, Option<Vec<super::accounting::DeviceRequest>>) {
        (super::Stats::default(), None)
    }
}

/// Page references from `(page, write)` pairs: dense ids in first-seen
/// order, `next_use` filled (so offline policies can run).
pub fn make_refs(pages: &[(u64, bool)]) -> RefBatch {
    let mut ids = rustc_hash::FxHashMap::default();
    let mut refs = RefBatch::default();
    for (seq, &(page, write)) in pages.iter().enumerate() {
        let n = ids.len() as u32;
        let id = *ids.entry(page).or_insert(n);
        refs.push(&RefFields {
            time: seq as u64,
            page,
            id,
            app: 0,
            op: if write { Op::Write } else { Op::Read },
            kind: if page % 3 == 0 {
                Kind::Anon
            } else {
                Kind::File
            },
            req_start: true,
        });
    }
    fill_next_use(&mut refs, ids.len());
    refs
}

/// Runs the policy `spec` over `refs` (from [`make_refs`] or the engine's
/// decoder, with `next_use` filled) under the checking sink.
pub fn check_policy(
    spec: &PolicySpec,
    capacity: usize,
    tiers: usize,
    refs: &RefBatch,
) -> crate::Result<CheckedCounts> {
    struct V<'a> {
        spec: &'a PolicySpec,
        capacity: usize,
        tiers: usize,
        refs: &'a RefBatch,
    }
    impl PolicyVisitor for V<'_> {
        type Out = crate::Result<CheckedCounts>;
        fn visit<P: PolicyDef>(self) -> Self::Out {
            let cfg = self.spec.config::<P>()?;
            let ctx = PolicyCtx {
                capacity: self.capacity,
                tiers: self.tiers,
                page_size: 4096,
            };
            let mut policy = P::build(&cfg, &ctx)?;
            let distinct = self
                .refs
                .ids
                .iter()
                .map(|&id| id as usize + 1)
                .max()
                .unwrap_or(0);
            let mut sink = CheckSink::new(NullSink, P::NAME, self.capacity, self.tiers, distinct);
            // Grow in steps, as the engine does batch by batch.
            let mut seen = 0usize;
            for r in self.refs.iter() {
                if r.id as usize >= seen {
                    seen = (r.id as usize + 1).next_power_of_two();
                    policy.grow(seen);
                    sink.grow(seen);
                }
                sink.begin(&r);
                policy.access(&r, &mut sink);
                sink.end(policy.resident());
            }
            Ok(sink.counts)
        }
    }
    visit_policy(
        &spec.name,
        V {
            spec,
            capacity,
            tiers,
            refs,
        },
    )?
}

/// (hits, misses) of the named policy (default parameters) on page ids, all
/// reads, under the checking sink.
pub fn replay_ids(policy: &str, capacity: usize, ids: &[u64]) -> (u64, u64) {
    let pages: Vec<(u64, bool)> = ids.iter().map(|&p| (p, false)).collect();
    let c = check_policy(&PolicySpec::new(policy), capacity, 1, &make_refs(&pages))
        .expect("known policy");
    (c.hits, c.misses)
}

/// (hits, misses) of a policy spec such as `slru(libcachesim=true)` on page ids, all reads,
/// under the checking sink.
pub fn replay_spec_ids(spec: &str, capacity: usize, ids: &[u64]) -> (u64, u64) {
    let pages: Vec<(u64, bool)> = ids.iter().map(|&p| (p, false)).collect();
    let spec = PolicySpec::parse(spec).expect("policy spec");
    let c = check_policy(&spec, capacity, 1, &make_refs(&pages)).expect("known policy");
    (c.hits, c.misses)
}

/// What a policy did, reference by reference, for comparing a policy with a reference model
/// of it: one of `Hit(id)`, `Miss(id)`, `Bypass(id)` per reference, after the `Evict(id)`s the
/// reference caused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Hit(PageId),
    Miss(PageId),
    Bypass(PageId),
    Evict(PageId),
}

/// Replays page ids (all reads; dense ids in first-seen order, as [`make_refs`] gives) through
/// `policy` and lists what it did; `watch` sees the policy after each reference.
pub fn steps<P: crate::policy::Policy>(
    policy: &mut P,
    ids: &[u64],
    mut watch: impl FnMut(&P),
) -> Vec<Step> {
    struct Rec(Vec<Step>);
    impl Sink for Rec {
        fn hit(&mut self, r: &PageRef, _: u8) {
            self.0.push(Step::Hit(r.id));
        }
        fn miss(&mut self, r: &PageRef, _: u8) {
            self.0.push(Step::Miss(r.id));
        }
        fn miss_bypass(&mut self, r: &PageRef) {
            self.0.push(Step::Bypass(r.id));
        }
        fn evict(&mut self, p: PageOut) {
            self.0.push(Step::Evict(p.id));
        }
        fn write_back(&mut self, _: &[PageOut]) {}
        fn migrate(&mut self, _: PageId, _: u64, _: u8, _: u8) {}
    }
    let pages: Vec<(u64, bool)> = ids.iter().map(|&p| (p, false)).collect();
    let refs = make_refs(&pages);
    let distinct = refs.ids.iter().map(|&i| i as usize + 1).max().unwrap_or(0);
    policy.grow(distinct);
    let mut rec = Rec(Vec::new());
    for r in refs.iter() {
        policy.access(&r, &mut rec);
        watch(policy);
    }
    rec.0
}

/// Builds policy `P` with `cfg` for `capacity` pages in one tier (for tests that drive one
/// directly, e.g. with [`steps`]).
pub fn build<P: PolicyDef>(cfg: &P::Config, capacity: usize) -> P {
    let ctx = PolicyCtx {
        capacity,
        tiers: 1,
        page_size: 4096,
    };
    P::build(cfg, &ctx).expect("valid configuration")
}

/// `len` reads of page `x % (1 + y)`, `x` and `y` uniform below `range` (small pages most
/// often), drawn from a `Pcg64Mcg` seeded with `seed`: the skewed trace of the sampled policies'
/// seeding tests.
pub fn mod_skewed_refs(seed: u64, len: usize, range: u64) -> RefBatch {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let pages: Vec<(u64, bool)> = (0..len)
        .map(|_| {
            (
                rng.random_range(0..range) % (1 + rng.random_range(0..range)),
                false,
            )
        })
        .collect();
    make_refs(&pages)
}

/// `len` page numbers, random from `seed`: one in `1 / cold_share` from `0..cold`, the rest
/// from `0..hot` (a few hot pages re-referenced among a wider cold set, so small caches see hits,
/// evictions and returns).
pub fn skewed_pages(seed: u64, len: usize, hot: u64, cold: u64, cold_share: u32) -> Vec<u64> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..len)
        .map(|_| {
            if rng.random_range(0..cold_share) == 0 {
                rng.random_range(0..cold)
            } else {
                rng.random_range(0..hot)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(cap: usize) -> (CheckSink<NullSink>, RefBatch) {
        let refs = make_refs(&[(10, false), (11, true), (10, false)]);
        (CheckSink::new(NullSink, "test", cap, 1, 2), refs)
    }

    #[test]
    #[should_panic(expected = "not resident")]
    fn hit_on_a_page_not_resident_fails() {
        let (mut s, refs) = sink(4);
        s.begin(&refs.get(0));
        s.hit(&refs.get(0), 0);
    }

    #[test]
    #[should_panic(expected = "capacity 1")]
    fn exceeding_capacity_fails() {
        let (mut s, refs) = sink(1);
        s.begin(&refs.get(0));
        s.miss(&refs.get(0), 0);
        s.end(1);
        s.begin(&refs.get(1));
        s.miss(&refs.get(1), 0);
        s.end(2);
    }

    #[test]
    #[should_panic(expected = "evicted with dirty=false")]
    fn a_written_page_evicted_clean_fails() {
        let (mut s, refs) = sink(1);
        s.begin(&refs.get(1));
        s.miss(&refs.get(1), 0);
        s.end(1);
        s.evict(PageOut {
            id: refs.ids[1],
            page: 11,
            kind: refs.get(1).kind(),
            dirty: false,
            tier: 0,
        });
    }

    #[test]
    #[should_panic(expected = "after Miss")]
    fn two_outcomes_for_one_reference_fail() {
        let (mut s, refs) = sink(2);
        s.begin(&refs.get(0));
        s.miss(&refs.get(0), 0);
        s.miss_bypass(&refs.get(0));
    }

    #[test]
    fn a_correct_sequence_passes() {
        let (mut s, refs) = sink(1);
        s.begin(&refs.get(0));
        s.miss(&refs.get(0), 0);
        s.end(1);
        s.begin(&refs.get(1));
        s.evict(PageOut {
            id: refs.ids[0],
            page: 10,
            kind: refs.get(0).kind(),
            dirty: false,
            tier: 0,
        });
        s.miss(&refs.get(1), 0);
        s.end(1);
        assert_eq!(s.counts.misses, 2);
        assert_eq!(s.counts.evictions, 1);
    }
}
