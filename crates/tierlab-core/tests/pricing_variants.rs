//! Pricing variants (`RunOptions::variants`): one replay priced under several systems gives, for
//! each, exactly the stats of a replay on that system alone (bit for bit: the same requests are
//! priced in the same order), and a variant that would change what is counted is refused.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions, RunOutput};
use tierlab_core::trace::{open, TraceSpec};

/// File and Anon pages, reads and writes, a hot set and a scan, from fixed seeds.
const TRACE: &str = "mix:0.6*zipf(alpha=0.9,pages=3000,write=0.3,seed=1)\
+0.3*zipf(alpha=0.7,pages=2000,kind=anon,write=0.4,seed=2)\
+0.1*scan(pages=6000),n=40000,seed=3";

fn system(tiers: &[&str], file_store: &str, swap: Option<&str>) -> System {
    let spec = SystemSpec {
        tiers: tiers.iter().map(|s| s.to_string()).collect(),
        file_store: file_store.into(),
        swap: swap.map(str::to_string),
        write_miss_fetch: false,
    };
    System::resolve(&spec, &DeviceCatalog::default()).unwrap()
}

fn instances(policies: &[&str], sizes: &[usize]) -> Vec<InstanceSpec> {
    policies
        .iter()
        .flat_map(|p| {
            sizes.iter().map(|&capacity| InstanceSpec {
                policy: PolicySpec::new(p),
                capacity,
            })
        })
        .collect()
}

fn replay(
    inst: &[InstanceSpec],
    sys: &System,
    variants: &[System],
) -> tierlab_core::Result<RunOutput> {
    let opts = RunOptions {
        threads: 2,
        batch: 5000,
        variants: variants.to_vec(),
        ..RunOptions::default()
    };
    let mut r = open(&TraceSpec::new(TRACE)).unwrap();
    run(r.as_mut(), inst, sys, &opts, &mut |_| Ok(()))
}

/// Every variant's stats equal those of a run on the variant's system alone.
fn check_same_as_separate_runs(inst: &[InstanceSpec], base: &System, variants: &[System]) {
    let priced = replay(inst, base, variants).unwrap();
    let alone = replay(inst, base, &[]).unwrap();
    for (p, a) in priced.results.iter().zip(&alone.results) {
        assert_eq!(
            p.stats, a.stats,
            "{} at {}: base pricing",
            p.policy, p.capacity
        );
        assert_eq!(p.variant_stats.len(), variants.len());
    }
    for (k, v) in variants.iter().enumerate() {
        let separate = replay(inst, v, &[]).unwrap();
        for (p, s) in priced.results.iter().zip(&separate.results) {
            assert_eq!(
                p.variant_stats[k], s.stats,
                "{} at {}: variant {k}",
                p.policy, p.capacity
            );
            // A variant with other costs must price differently, or the test shows nothing.
            if s.stats.misses_total() > 0 {
                assert_ne!(
                    p.variant_stats[k].total_time_ns(),
                    p.stats.total_time_ns(),
                    "{} at {}: variant {k} priced as the base",
                    p.policy,
                    p.capacity
                );
            }
        }
    }
}

#[test]
fn variants_price_one_replay_as_separate_runs_would() {
    let base = system(&["dram"], "flash-ufs31", Some("emram-swap"));
    let variants = [
        system(&["dram"], "microsd-samsung-c10", Some("emram-swap")),
        system(&["cxl-dram"], "ufs", Some("zram")),
    ];
    let inst = instances(
        &["clock", "four-area", "lru", "linux-two-list"],
        &[100, 1500],
    );
    check_same_as_separate_runs(&inst, &base, &variants);
}

#[test]
fn variants_price_migrations_between_tiers() {
    let base = system(&["dram", "pcm"], "nvme", Some("nvme"));
    let variants = [system(&["cxl-dram", "pcm-table1"], "ufs", Some("ufs"))];
    let inst = instances(&["clock-dwf"], &[200, 2000]);
    let out = replay(&inst, &base, &variants).unwrap();
    assert!(out
        .results
        .iter()
        .any(|r| r.stats.migrations_up + r.stats.migrations_down > 0));
    check_same_as_separate_runs(&inst, &base, &variants);
}

#[test]
fn a_variant_that_changes_what_is_counted_is_refused() {
    let base = system(&["dram"], "nvme", Some("nvme"));
    let inst = instances(&["clock"], &[100]);
    for (variant, what) in [
        (
            system(&["dram", "pcm"], "nvme", Some("nvme")),
            "number of memory tiers",
        ),
        (system(&["pcm"], "nvme", Some("nvme")), "endurance"),
        (system(&["dram"], "nvme", None), "swap device"),
    ] {
        let err = replay(&inst, &base, &[variant]).unwrap_err().to_string();
        assert!(
            err.contains("pricing variant 1") && err.contains(what),
            "{err}"
        );
    }
}
