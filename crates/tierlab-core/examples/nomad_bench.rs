//! Runs the NOMAD microbenchmark through the tiered policies and prints their
//! counters: `cargo run --release --example nomad_bench -- [scale] [mode]`.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::synth_nomad::{Mode, NomadBench};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scale: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(256.0);
    let mode = match args.get(2).map(String::as_str) {
        Some("read") => Mode::Read,
        Some("write") => Mode::Write,
        _ => Mode::Mixed,
    };
    let fast_gib: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(16.0);
    let b = NomadBench::paper(scale, mode);
    let fast = (fast_gib * 262144.0 / scale).round() as usize;
    let tier = NomadBench::paper_tier_pages(scale);
    let mut reader = b.reader().unwrap();
    let spec = SystemSpec {
        tiers: vec!["nomad-local-dram".into(), "nomad-remote-dram".into()],
        ..SystemSpec::default()
    };
    let sys = System::resolve(&spec, &DeviceCatalog::default()).unwrap();
    let common = format!(
        "measure_from={}, sample_every=1000, fast_pages={fast}, inactive_ratio={}",
        b.warmup_len(),
        args.get(4).map(String::as_str).unwrap_or("12")
    );
    let inst: Vec<InstanceSpec> = ["tpp", "nomad", "ssp", "memtis"]
        .iter()
        .map(|p| InstanceSpec {
            policy: PolicySpec::parse(&format!("{p}({common})")).unwrap(),
            capacity: fast + tier as usize,
        })
        .collect();
    let out = run(
        &mut reader,
        &inst,
        &sys,
        &RunOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap();
    println!(
        "{:?} ws={} rss={} tier={} refs={}",
        mode, b.working_set, b.resident_set, tier, out.page_refs
    );
    for r in &out.results {
        let c: Vec<String> = r
            .counters
            .iter()
            .filter(|(k, _)| !k.contains('@'))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!("{}: {}", r.policy, c.join(" "));
    }
}
