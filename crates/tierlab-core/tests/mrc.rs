//! Miss-ratio curves: the exact one-pass LRU curve equals per-size LRU runs at
//! every size; SHARDS stays close to it.

use proptest::prelude::*;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::check::{check_policy, make_refs};
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::sim::mrc::{lru_mrc, mean_abs_error, shards_mrc, Shards};
use tierlab_core::trace::{open, Access, Kind, Op, Record, TraceReader, TraceSpec};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/");

/// An in-memory trace of single-page reads.
struct Pages(Vec<u64>, usize);

impl TraceReader for Pages {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> tierlab_core::Result<bool> {
        let end = (self.1 + max).min(self.0.len());
        for (k, &p) in self.0[self.1..end].iter().enumerate() {
            out.push(Record::Access(Access::page(
                (self.1 + k) as u64,
                p,
                Op::Read,
                Kind::File,
            )));
        }
        self.1 = end;
        Ok(end < self.0.len())
    }
    fn page_size(&self) -> u32 {
        4096
    }
    fn format(&self) -> &'static str {
        "memory"
    }
}

#[test]
fn exact_mrc_equals_lru_runs_at_every_size_on_sprite() {
    let path = format!("{TRACES}lirs/sprite.trace.gz");
    let sizes: Vec<usize> = (1..=60).map(|k| k * k * 2).collect(); // 2 .. 7200
    let mut r = open(&TraceSpec::new(&path)).unwrap();
    let mrc = lru_mrc(r.as_mut(), &sizes).unwrap();
    let sys = System::resolve(&SystemSpec::default(), &DeviceCatalog::default()).unwrap();
    let inst: Vec<InstanceSpec> = sizes
        .iter()
        .map(|&c| InstanceSpec {
            policy: PolicySpec::new("lru"),
            capacity: c,
        })
        .collect();
    let mut r = open(&TraceSpec::new(&path)).unwrap();
    let out = run(r.as_mut(), &inst, &sys, &RunOptions::default(), &mut |_| {
        Ok(())
    })
    .unwrap();
    for (res, &(size, misses)) in out.results.iter().zip(&mrc.points) {
        assert_eq!(res.capacity, size);
        assert_eq!(res.stats.misses_total(), misses, "size {size}");
    }
    // The two sizes the engine's own smoke numbers pin (libCacheSim's too).
    let mut r = open(&TraceSpec::new(&path)).unwrap();
    let m = lru_mrc(r.as_mut(), &[100, 1000]).unwrap();
    assert_eq!(m.points, vec![(100, 105079), (1000, 12544)]);
}

#[test]
fn shards_is_close_to_exact_on_oltp() {
    let path = format!("{TRACES}arc/OLTP.lis.zst");
    let sizes: Vec<usize> = (1..=40).map(|k| k * 2500).collect(); // 2.5k .. 100k
    let exact = lru_mrc(open(&TraceSpec::new(&path)).unwrap().as_mut(), &sizes).unwrap();
    let fixed_rate = Shards {
        rate: 0.01,
        ..Shards::default()
    };
    let sampled = shards_mrc(
        open(&TraceSpec::new(&path)).unwrap().as_mut(),
        &sizes,
        &fixed_rate,
    )
    .unwrap();
    let fixed_size = Shards {
        rate: 0.1,
        max_pages: Some(8192),
        seed: 0,
    };
    let bounded = shards_mrc(
        open(&TraceSpec::new(&path)).unwrap().as_mut(),
        &sizes,
        &fixed_size,
    )
    .unwrap();
    let (e1, e2) = (
        mean_abs_error(&exact, &sampled),
        mean_abs_error(&exact, &bounded),
    );
    println!(
        "OLTP ({} refs): SHARDS R=0.01 MAE {e1:.5} ({} sampled); fixed-size 8192 pages MAE {e2:.5} ({} sampled)",
        exact.accesses, sampled.sampled, bounded.sampled
    );
    assert!(sampled.sampled < exact.accesses / 50);
    assert!(e1 < 0.01, "fixed-rate MAE {e1}");
    assert!(e2 < 0.01, "fixed-size MAE {e2}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// On arbitrary traces the one-pass curve equals LRU run at each size.
    #[test]
    fn exact_mrc_equals_lru_everywhere(ids in proptest::collection::vec(0u64..50, 1..500)) {
        let sizes: Vec<usize> = (1..=55).collect();
        let mrc = lru_mrc(&mut Pages(ids.clone(), 0), &sizes).unwrap();
        let refs = make_refs(&ids.iter().map(|&p| (p, false)).collect::<Vec<_>>());
        for &(size, misses) in &mrc.points {
            let lru = check_policy(&PolicySpec::new("lru"), size, 1, &refs).unwrap();
            prop_assert_eq!(lru.misses, misses, "size {}", size);
        }
    }

    /// SHARDS at rate 1 samples everything and is exact.
    #[test]
    fn shards_at_rate_one_is_exact(ids in proptest::collection::vec(0u64..50, 1..300)) {
        let sizes: Vec<usize> = (1..=40).collect();
        let exact = lru_mrc(&mut Pages(ids.clone(), 0), &sizes).unwrap();
        let all = Shards { rate: 1.0, ..Shards::default() };
        let s = shards_mrc(&mut Pages(ids, 0), &sizes, &all).unwrap();
        prop_assert_eq!(exact.points, s.points);
    }
}
