//! Results you can trust twice (issue 11): for EVERY registered policy (the
//! registry is the list), the same trace, configuration and seed give
//! bit-identical result rows (every field but the wall-clock
//! `policy_seconds`) across two runs, and the one-pass multi-instance path
//! (several sizes of every policy in one pass, on worker threads) gives the
//! same rows as separate single-instance runs. Multi-tier policies run on a
//! machine with as many tiers as they need, so none is left out.
//! (`conformance.rs` checks the per-reference contract and the checked
//! counters; this file compares the engine's whole output.)

mod common;

use common::{system, tiers_of};
use tierlab_core::device::System;
use tierlab_core::policy::{all_policies, PolicySpec};
use tierlab_core::sim::engine::{run, InstanceResult, InstanceSpec, RunOptions};
use tierlab_core::sim::MAX_TIERS;
use tierlab_core::trace::{open, TraceSpec};

/// A generated trace with File and Anon pages, reads and writes, a hot set
/// and a scan, from fixed seeds.
const TRACE: &str = "mix:0.6*zipf(alpha=0.9,pages=3000,write=0.3,seed=1)\
+0.3*zipf(alpha=0.7,pages=2000,kind=anon,write=0.4,seed=2)\
+0.1*scan(pages=6000),n=40000,seed=3";

const SIZES: [usize; 3] = [16, 400, 2500];

/// Everything in a result row that must be reproducible, as text: `{:?}`
/// prints floats exactly (shortest round-trip), so equal text means
/// bit-identical values.
fn row(r: &InstanceResult) -> String {
    format!(
        "{} {} {} {} {:?} {:?} {}",
        r.policy, r.label, r.params, r.capacity, r.stats, r.counters, r.resident_at_end
    )
}

fn replay(instances: &[InstanceSpec], sys: &System, threads: usize) -> Vec<String> {
    let opts = RunOptions {
        threads,
        batch: 5000,
        ..RunOptions::default()
    };
    let mut r = open(&TraceSpec::new(TRACE)).unwrap();
    let out = run(r.as_mut(), instances, sys, &opts, &mut |_| Ok(())).unwrap();
    assert_eq!(out.page_refs, 40_000);
    out.results.iter().map(row).collect()
}

#[test]
fn every_policy_gives_identical_rows_across_runs_and_paths() {
    let policies = all_policies();
    let mut covered = 0;
    for tiers in 1..=MAX_TIERS {
        let sys = system(tiers);
        let instances: Vec<InstanceSpec> = policies
            .iter()
            .filter(|p| tiers_of(p.name) == tiers)
            .flat_map(|p| {
                SIZES.map(|capacity| InstanceSpec {
                    policy: PolicySpec::new(p.name),
                    capacity,
                })
            })
            .collect();
        if instances.is_empty() {
            continue;
        }
        covered += instances.len() / SIZES.len();
        // Two runs (on worker threads, then one after another): the same rows.
        let together = replay(&instances, &sys, 2);
        assert_eq!(together, replay(&instances, &sys, 1), "{tiers} tiers");
        for (k, inst) in instances.iter().enumerate() {
            let alone = replay(std::slice::from_ref(inst), &sys, 1);
            assert_eq!(
                alone[0], together[k],
                "{} at {}: separate run differs from the one-pass run",
                inst.policy.name, inst.capacity
            );
        }
    }
    assert_eq!(covered, policies.len(), "some policy was not replayed");
}
