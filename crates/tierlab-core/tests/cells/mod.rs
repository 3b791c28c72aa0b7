//! What the tests that run a grid of policy x size cells share: the
//! grid itself (`capture.rs`, `smoke.rs` too), and for the tests that replay
//! the cells of a reference file (`libcachesim_conformance.rs`,
//! `libcachesim_object_conformance.rs`, `libcachesim_sampled.rs`,
//! `libcachesim_sketch_conformance.rs`, `policy_counts.rs`) reading its sizes
//! and policies and running every cell in one pass over a trace.
#![allow(dead_code)] // each test binary uses its own subset

use serde_json::Value;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions, RunOutput};
use tierlab_core::trace::{open, TraceSpec};

/// A reference file's list of cache sizes.
pub fn json_sizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap() as usize)
        .collect()
}

/// The keys of a reference file's object (its policies), in the file's order.
pub fn json_keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// One instance per policy x size: policies outer, sizes inner.
pub fn grid(policies: impl IntoIterator<Item = PolicySpec>, sizes: &[usize]) -> Vec<InstanceSpec> {
    policies
        .into_iter()
        .flat_map(|policy| {
            sizes.iter().map(move |&capacity| InstanceSpec {
                policy: policy.clone(),
                capacity,
            })
        })
        .collect()
}

/// Replays `trace` once through every instance on the default machine, on two
/// threads; `object_sizes`: one object per request, sized from the trace.
pub fn replay_cells(trace: &TraceSpec, inst: &[InstanceSpec], object_sizes: bool) -> RunOutput {
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let mut r = open(trace).unwrap_or_else(|e| panic!("{}: {e}", trace.path.display()));
    let opts = RunOptions {
        threads: 2,
        object_sizes,
        ..RunOptions::default()
    };
    run(r.as_mut(), inst, &sys, &opts, &mut |_| Ok(())).unwrap()
}
