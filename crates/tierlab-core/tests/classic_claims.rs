//! The papers' qualitative claims on traces where they must hold.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{open, TraceSpec};

const LIRS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/lirs/");

fn misses(trace: &str, policies: &[&str], cap: usize) -> Vec<u64> {
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let inst: Vec<InstanceSpec> = policies
        .iter()
        .map(|p| InstanceSpec {
            policy: PolicySpec::parse(p).unwrap(),
            capacity: cap,
        })
        .collect();
    let mut r = open(&TraceSpec::new(format!("{LIRS}{trace}"))).unwrap();
    let out = run(r.as_mut(), &inst, &sys, &RunOptions::default(), &mut |_| {
        Ok(())
    })
    .unwrap();
    let m: Vec<u64> = out.results.iter().map(|r| r.stats.misses_total()).collect();
    println!("{trace} at {cap}: {policies:?} -> {m:?}");
    m
}

/// LIRS (Section 5) beats LRU by far on a loop larger than memory (1,011
/// pages here), where LRU misses on every reference.
#[test]
fn lirs_beats_lru_on_loops() {
    let m = misses(
        "loop.trace.gz",
        &["lru", "lirs", "lirs(libcachesim=true)"],
        500,
    );
    assert_eq!(m[0], 505_500, "LRU misses every reference of a loop");
    assert!(m[1] * 10 < m[0] * 6, "LIRS {} vs LRU {}", m[1], m[0]);
    assert!(
        m[2] * 10 < m[0] * 6,
        "LIRS (libCacheSim) {} vs LRU {}",
        m[2],
        m[0]
    );
}

/// CLOCK-Pro improves on CLOCK (the paper's Section 5 and Figure 6) on
/// traces with mixed reuse distances.
#[test]
fn clock_pro_improves_on_clock() {
    for (trace, cap) in [
        ("multi2.trace.gz", 1000),
        ("ps.trace.gz", 700),
        ("cpp.trace.gz", 200),
    ] {
        let m = misses(trace, &["clock", "clock-pro", "lirs"], cap);
        assert!(m[1] < m[0], "{trace}: CLOCK-Pro {} vs CLOCK {}", m[1], m[0]);
    }
}

/// CAR tracks ARC closely (the CAR paper's Table III: within a few percent).
#[test]
fn car_is_close_to_arc() {
    for (trace, cap) in [
        ("multi2.trace.gz", 1000),
        ("sprite.trace.gz", 500),
        ("ps.trace.gz", 700),
    ] {
        let m = misses(trace, &["arc", "car", "lru"], cap);
        let (arc, car) = (m[0] as f64, m[1] as f64);
        assert!(
            (car - arc).abs() / arc < 0.05,
            "{trace}: CAR {car} ARC {arc}"
        );
    }
}
