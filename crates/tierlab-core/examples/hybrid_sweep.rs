//! Prints the hybrid-memory paper's sweep (Figures 4-7) for one trace:
//! `cargo run --release -p tierlab-core --example hybrid_sweep -- TRACE [FORMAT] [SCHEDULE]`
//! where TRACE is a file or a generator spec such as
//! `session:preset=browser,refs=400000,seed=1`.

use tierlab_core::policy::hybrid::experiment::{mean_ratio, sweep, POLICIES};
use tierlab_core::trace::TraceSpec;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(trace) = args.first() else {
        eprintln!("usage: hybrid_sweep TRACE [FORMAT] [SCHEDULE]");
        std::process::exit(2);
    };
    let mut spec = TraceSpec::new(trace);
    if let Some(f) = args.get(1).filter(|f| !f.is_empty() && *f != "-") {
        spec = spec.with_format(f);
    }
    if let Some(s) = args.get(2) {
        spec.options
            .insert("schedule".into(), toml::Value::String(s.clone()));
    }
    const LRU_NO_PROMOTE: &str = "hybrid-lru(promote=false)";
    let pcts: Vec<u32> = (1..=10).map(|i| i * 10).collect();
    // The paper's policies, plus the LRU baseline without promotion on PCM hits
    // (the other reading of "LRU on the same hybrid memory").
    let mut policies = POLICIES.to_vec();
    policies.push(LRU_NO_PROMOTE);
    let (cells, footprint) = sweep(&spec, &policies, &pcts, 0.05)?;
    println!("footprint {footprint} pages");
    println!(
        "{:<25} {:>4} {:>8} {:>7} {:>7} {:>12} {:>14} {:>10} {:>8} {:>8} {:>8} {:>9} {:>8}",
        "policy",
        "size",
        "pages",
        "hit",
        "fg_hit",
        "fg_time",
        "energy_nj",
        "pcm_w",
        "mig_up",
        "mig_dn",
        "wear_max",
        "life_rep",
        "fg_evict"
    );
    for c in &cells {
        println!(
            "{:<25} {:>3}% {:>8} {:>7.4} {:>7.4} {:>12.0} {:>14.4e} {:>10} {:>8} {:>8} {:>8} {:>9.3e} {:>8}",
            c.policy,
            c.size_pct,
            c.capacity,
            c.hit_ratio,
            c.fg_hit_ratio,
            c.fg_time,
            c.energy_nj,
            c.pcm_writes,
            c.migrations_up,
            c.migrations_down,
            c.wear_max,
            c.lifetime_replays,
            c.fg_storage_evictions
        );
    }
    for base in ["hybrid-lru", LRU_NO_PROMOTE] {
        for p in policies.iter().filter(|p| **p != base) {
            println!(
                "{p}: mean over sizes vs {base}: fg time {:.3}, energy {:.3}",
                mean_ratio(&cells, p, base, |c| c.fg_time),
                mean_ratio(&cells, p, base, |c| c.energy_nj)
            );
        }
    }
    Ok(())
}
