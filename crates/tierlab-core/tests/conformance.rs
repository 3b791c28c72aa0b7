//! The conformance harness over EVERY registered policy (the registry is the
//! list: a policy added later runs here without touching this file), on
//! random traces with reads and writes and on a real trace:
//! the per-reference contract of `sim::check` (one outcome per reference,
//! residency, capacity, dirty write-back exactly once), hits + misses =
//! accesses, determinism across runs, and identical results between one
//! multi-size pass of the engine and separate runs.

use proptest::prelude::*;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::{all_policies, PolicySpec};
use tierlab_core::sim::check::{check_policy, make_refs};
use tierlab_core::sim::engine::{fill_next_use, run, Decoder, InstanceSpec, RunOptions};
use tierlab_core::sim::{RefBatch, MAX_TIERS};
use tierlab_core::trace::{open, read_all, TraceSpec};

const SPRITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/traces/lirs/sprite.trace.gz"
);

fn names() -> Vec<&'static str> {
    all_policies().iter().map(|p| p.name).collect()
}

/// A deterministic random trace: a hot set and a cold tail, 30% writes.
fn random_trace(seed: u64, n: usize, pages: u64) -> Vec<(u64, bool)> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let r = next();
            let page = if r % 4 == 0 {
                r % pages
            } else {
                (r >> 8) % (pages / 8).max(1)
            };
            (page, (r >> 40) % 10 < 3)
        })
        .collect()
}

/// The fewest memory tiers the policy accepts (tiered and hybrid policies
/// reject a single-tier system when they are built). The checker counts
/// capacity over all tiers and follows pages across migrations.
fn tiers_of(name: &str) -> usize {
    let refs = make_refs(&[(1, false)]);
    (1..=MAX_TIERS)
        .find(|&t| check_policy(&PolicySpec::new(name), 4, t, &refs).is_ok())
        .unwrap_or_else(|| panic!("{name} cannot be built with its defaults"))
}

#[test]
fn every_policy_keeps_the_contract_on_random_traces() {
    for seed in 0..4 {
        let refs = make_refs(&random_trace(seed, 4000, 300));
        for name in names() {
            for cap in [1, 2, 7, 32, 100, 400] {
                let spec = PolicySpec::new(name);
                let a = check_policy(&spec, cap, tiers_of(name), &refs).unwrap();
                assert_eq!(a.hits + a.misses, a.accesses, "{name} cap {cap}");
                assert_eq!(a.accesses, refs.len() as u64);
                let b = check_policy(&spec, cap, tiers_of(name), &refs).unwrap();
                assert_eq!(a, b, "{name} cap {cap}: two runs differ");
            }
        }
    }
}

fn sprite_refs(limit: usize) -> RefBatch {
    let mut r = open(&TraceSpec::new(SPRITE)).unwrap();
    let recs = read_all(r.as_mut()).unwrap();
    let mut dec = Decoder::default();
    let mut refs = RefBatch::default();
    let mut ev = Vec::new();
    dec.decode(&recs, &mut refs, &mut ev).unwrap();
    refs.truncate(limit);
    fill_next_use(&mut refs, dec.distinct());
    refs
}

#[test]
fn every_policy_keeps_the_contract_on_a_real_trace() {
    let refs = sprite_refs(40_000);
    for name in names() {
        for cap in [50, 1000] {
            let c = check_policy(&PolicySpec::new(name), cap, tiers_of(name), &refs).unwrap();
            assert_eq!(c.hits + c.misses, refs.len() as u64, "{name} {cap}");
        }
    }
}

#[test]
fn one_multi_size_pass_equals_separate_runs() {
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let sizes = [20, 300, 2000];
    let opts = RunOptions {
        limit: Some(30_000),
        batch: 4096,
        ..RunOptions::default()
    };
    // Policies that run on the default (single-tier) system; multi-tier
    // policies are covered by the checked runs above.
    let all: Vec<InstanceSpec> = names()
        .iter()
        .filter(|p| tiers_of(p) == 1)
        .flat_map(|p| {
            sizes.map(|c| InstanceSpec {
                policy: PolicySpec::new(p),
                capacity: c,
            })
        })
        .collect();
    let mut r = open(&TraceSpec::new(SPRITE)).unwrap();
    let together = run(r.as_mut(), &all, &sys, &opts, &mut |_| Ok(())).unwrap();
    for (k, inst) in all.iter().enumerate() {
        let mut r = open(&TraceSpec::new(SPRITE)).unwrap();
        let alone = run(
            r.as_mut(),
            std::slice::from_ref(inst),
            &sys,
            &opts,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(
            together.results[k].stats, alone.results[0].stats,
            "{} at {}",
            inst.policy.name, inst.capacity
        );
        let s = &alone.results[0].stats;
        assert_eq!(s.hits_total() + s.misses_total(), s.accesses);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The contract holds for every policy on arbitrary small traces.
    #[test]
    fn contract_holds_on_arbitrary_traces(
        pages in proptest::collection::vec((0u64..40, any::<bool>()), 1..400),
        cap in 1usize..24,
    ) {
        let refs = make_refs(&pages);
        for name in names() {
            let c = check_policy(&PolicySpec::new(name), cap, tiers_of(name), &refs).unwrap();
            prop_assert_eq!(c.hits + c.misses, refs.len() as u64);
        }
    }

    /// Belady's OPT never misses more than any policy.
    #[test]
    fn opt_is_a_lower_bound(
        pages in proptest::collection::vec((0u64..60, any::<bool>()), 1..600),
        cap in 1usize..40,
    ) {
        let refs = make_refs(&pages);
        let opt = check_policy(&PolicySpec::new("opt"), cap, 1, &refs).unwrap().misses;
        for name in names() {
            let c = check_policy(&PolicySpec::new(name), cap, tiers_of(name), &refs).unwrap();
            prop_assert!(opt <= c.misses, "{} missed {} < OPT {}", name, c.misses, opt);
        }
    }

    /// LRU is a stack algorithm: its misses never rise when memory grows.
    #[test]
    fn lru_inclusion(
        pages in proptest::collection::vec((0u64..80, any::<bool>()), 1..800),
    ) {
        let refs = make_refs(&pages);
        let mut prev = u64::MAX;
        for cap in 1..=90 {
            let m = check_policy(&PolicySpec::new("lru"), cap, 1, &refs).unwrap().misses;
            prop_assert!(m <= prev, "LRU misses rose from {} to {} at {}", prev, m, cap);
            prev = m;
        }
    }
}
