//! A cache larger than the trace's footprint is a fair question: every policy, at a capacity
//! far beyond what the machine could hold (10^18 pages, and the largest capacity tierlab
//! accepts), replays a small trace without aborting (the engine builds it at
//! `sim::engine::NEVER_FULL` pages, exact while the distinct pages fit), and gives the answer a
//! cache that never fills must give: every reference after a page's first touch hits.

mod common;

use common::{system, tiers_of};
use tierlab_core::device::System;
use tierlab_core::policy::{all_policies, PolicySpec, MAX_CAPACITY};
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions, RunOutput};
use tierlab_core::trace::{open, TraceSpec};

const TRACE: &str = "zipf:alpha=0.9,pages=3000,n=20000,write=0.3,seed=1";

fn replay(instances: &[InstanceSpec], sys: &System) -> tierlab_core::Result<RunOutput> {
    let mut r = open(&TraceSpec::new(TRACE)).unwrap();
    run(
        r.as_mut(),
        instances,
        sys,
        &RunOptions::default(),
        &mut |_| Ok(()),
    )
}

#[test]
fn every_policy_at_a_capacity_beyond_the_footprint_hits_after_the_first_touch() {
    for p in all_policies() {
        let sys = system(tiers_of(p.name));
        let instances: Vec<InstanceSpec> = [1_000_000_000_000_000_000, MAX_CAPACITY]
            .iter()
            .map(|&c| InstanceSpec {
                policy: PolicySpec::new(p.name),
                capacity: c,
            })
            .collect();
        let out = replay(&instances, &sys).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        for res in &out.results {
            assert_eq!(
                res.stats.misses_total(),
                out.distinct_pages,
                "{} at {} pages: misses are the first touches",
                p.name,
                res.capacity
            );
            assert!(
                res.resident_at_end as u64 <= out.distinct_pages,
                "{}",
                p.name
            );
        }
    }
}

#[test]
fn a_capacity_beyond_the_largest_is_refused_with_one_line() {
    let sys = system(1);
    let instances = [InstanceSpec {
        policy: PolicySpec::new("lru"),
        capacity: MAX_CAPACITY + 1,
    }];
    let e = replay(&instances, &sys).unwrap_err().to_string();
    assert!(e.contains("larger than the largest size"), "{e}");
}
