use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, RunOptions};
use tierlab_core::trace::{open, TraceSpec};

mod cells;
use cells::grid;

#[test]
fn sprite_quick() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/lirs/sprite.trace.gz"
    );
    let mut r = open(&TraceSpec::new(path)).unwrap();
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let inst = grid(
        ["fifo", "lru", "clock", "opt"].map(PolicySpec::new),
        &[100, 1000],
    );
    let out = run(r.as_mut(), &inst, &sys, &RunOptions::default(), &mut |_| {
        Ok(())
    })
    .unwrap();
    for res in &out.results {
        println!(
            "{} {} {}",
            res.policy,
            res.capacity,
            res.stats.misses_total()
        );
    }
}
