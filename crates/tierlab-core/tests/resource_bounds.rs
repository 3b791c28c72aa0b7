//! Resource bounds (issue 11): replay memory is proportional to the cache and
//! the distinct pages, never to the trace length. A generated trace streams
//! from the synth generator (never materialised); replaying 50M accesses must
//! raise the process's peak RSS (VmHWM, Linux) by no more than a small
//! constant over a 1M-access replay of the same page set, where holding the
//! trace would need 50M x 24+ bytes (over 1 GiB).
//!
//! This file holds one test so that the process's peak belongs to it alone.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{open, TraceSpec};

/// Peak resident set of this process in KiB.
fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Replays `n` accesses cycling over 200k pages with LRU at 20k pages;
/// returns (page refs, distinct pages).
fn replay(n: u64) -> (u64, u64) {
    // A loop is the cheapest generator per access (the test measures memory,
    // not policies) and touches every page: the worst case for LRU.
    let spec = format!("loop:pages=200000,n={n},write=0.2,seed=1");
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let instances: Vec<InstanceSpec> = ["lru"]
        .iter()
        .map(|p| InstanceSpec {
            policy: PolicySpec::new(p),
            capacity: 20_000,
        })
        .collect();
    let mut r = open(&TraceSpec::new(spec)).unwrap();
    let out = run(
        r.as_mut(),
        &instances,
        &sys,
        &RunOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap();
    for res in &out.results {
        assert_eq!(res.stats.accesses, n);
    }
    (out.page_refs, out.distinct_pages)
}

#[test]
fn replay_memory_does_not_grow_with_trace_length() {
    let Some(_) = vm_hwm_kib() else {
        eprintln!("no /proc/self/status: skipped");
        return;
    };
    let (refs, distinct) = replay(1_000_000);
    assert_eq!((refs, distinct), (1_000_000, 200_000));
    let after_short = vm_hwm_kib().unwrap();
    let (refs, distinct) = replay(50_000_000);
    assert_eq!((refs, distinct), (50_000_000, 200_000));
    let after_long = vm_hwm_kib().unwrap();
    let growth_mib = after_long.saturating_sub(after_short) / 1024;
    eprintln!(
        "peak RSS: {} MiB after 1M accesses, {} MiB after 50M (+{growth_mib} MiB)",
        after_short / 1024,
        after_long / 1024
    );
    // 50x the trace, same pages and cache: the peak may move by allocator
    // noise only (the trace itself would be > 1 GiB).
    assert!(growth_mib < 32, "peak RSS grew by {growth_mib} MiB");
    assert!(
        after_long / 1024 < 400,
        "peak RSS {} MiB",
        after_long / 1024
    );
}
