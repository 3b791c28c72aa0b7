//! Single-thread replay speed of policies with the engine's accounting sink (and, to tell the
//! policy's share from the accounting's, with a sink that only counts hits and misses),
//! on references decoded once up front (the loop the Python harness's
//! `policy_seconds` times), plus the floor and the leanest CLOCK and LRU kernels
//! (`bench::clock_kernel`, `bench::lru_kernel`: same misses, no sink), what those two policies
//! can do on this machine:
//!
//! `cargo run --release -p tierlab-core --example throughput -- [TRACE] [CACHE_FRACTION] [REPEATS] [POLICY...]`
//!
//! Every kernel runs after the policies unless kernels are named among the policies
//! (`kernel:sampled64`, ...; `kernel:none` runs none). With `lru` and `kernel:lru` in the run,
//! each sampled kernel's time plus what `lru` spends beyond its bare kernel (sink and loop) is
//! printed as a ratio to `lru`: the bound of a sampling policy with that many samples.
//!
//! TRACE defaults to `zipf:alpha=1.0,pages=1000000,n=10000000,seed=1`, the
//! cache to 10% of the generator's pages (of the distinct pages for files).
//! `benches/policies.py` sizes its Zipf cells as fractions of the distinct pages of a
//! converted copy (731,781 of the 1,000,000 for its trace, so 30% is 219,534 pages, not
//! 300,000): to reproduce one of its cells here, pass the converted file
//! (`tierlab.convert.convert`), not the `zipf:` spec.
//! Also small enough to run under `valgrind --tool=callgrind` with a short
//! trace (e.g. `zipf:alpha=1.0,pages=100000,n=1000000,seed=1`).
//!
//! The system is one DRAM tier over NVMe; `THROUGHPUT_TIERS=dram,pcm` (comma-separated device
//! names) gives the memory tiers instead, for the policies that need two (hybrid, tiered).

mod common;

use std::time::Instant;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::{PolicyCtx, PolicySpec};
use tierlab_core::sim::accounting::DeviceRequest;
use tierlab_core::sim::bench;
use tierlab_core::sim::engine::{
    build_instance, fill_next_use, EngineSink, InstanceResult, RunOptions,
};
use tierlab_core::sim::RefBatch;
use tierlab_core::sim::{Accounting, PageOut, PageRef, Sink, Stats};
use tierlab_core::trace::TraceSpec;

/// A sink that counts hits and misses and nothing else.
#[derive(Default)]
struct HitMissCounter {
    hits: u64,
    misses: u64,
}
impl Sink for HitMissCounter {
    fn hit(&mut self, _: &PageRef, _: u8) {
        self.hits += 1;
    }
    fn miss(&mut self, _: &PageRef, _: u8) {
        self.misses += 1;
    }
    fn miss_bypass(&mut self, _: &PageRef) {
        self.misses += 1;
    }
    fn evict(&mut self, _: PageOut) {}
    fn write_back(&mut self, _: &[PageOut]) {}
    fn migrate(&mut self, _: u32, _: u64, _: u8, _: u8) {}
}
impl EngineSink for HitMissCounter {
    fn grow(&mut self, _: usize) {}
    fn into_parts(self) -> (Stats, Option<Vec<DeviceRequest>>) {
        let mut s = Stats::default();
        s.hits[0][0] = self.hits;
        s.misses[0][0] = self.misses;
        (s, None)
    }
}

/// One instance of `spec` over `sink`, fed `refs` in the engine's batches.
fn replay<S: EngineSink>(
    spec: &PolicySpec,
    ctx: &PolicyCtx,
    sink: S,
    batches: &[RefBatch],
    distinct: usize,
) -> tierlab_core::Result<InstanceResult> {
    let mut inst = build_instance(spec, ctx, sink)?;
    inst.grow(distinct);
    for batch in batches {
        inst.run(batch, &[]);
    }
    Ok(inst.finish())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::args()?;
    let (trace, frac, rest) = (args.trace, args.fraction, args.rest);
    let repeats: usize = rest.first().map(|s| s.parse()).transpose()?.unwrap_or(3);
    // Names starting `kernel:` choose kernels (`kernel:none` for none); without any, every
    // kernel runs after the policies.
    let (kernel_names, named): (Vec<String>, Vec<String>) = rest
        .get(1..)
        .unwrap_or_default()
        .iter()
        .cloned()
        .partition(|p| p.starts_with("kernel:"));
    let policies = common::policies(
        &named,
        &[
            "fifo",
            "lru",
            "clock",
            "arc",
            "2q",
            "s3fifo",
            "sieve",
            "lirs(libcachesim=true)",
        ],
    );
    let mut reader = tierlab_core::trace::open(&TraceSpec::new(&trace))?;
    let page_size = reader.page_size();
    let t0 = Instant::now();
    let (mut refs, distinct) = bench::dense_refs(reader.as_mut())?;
    let decode_s = t0.elapsed().as_secs_f64();
    // Offline policies (beladysize, opt) need the future; the others never read it.
    fill_next_use(&mut refs, distinct);
    let capacity = common::capacity(&trace, frac, distinct);
    let n = refs.len() as f64;
    let ids = refs.ids.clone();
    let batches = refs.batches(RunOptions::default().batch);
    let floor = median(
        (0..repeats)
            .map(|_| bench::floor(&ids, distinct).0)
            .collect(),
    );
    println!(
        "trace {trace}: {} refs, {distinct} distinct, cache {capacity}; read+decode {:.1} M refs/s; floor {:.1} M/s",
        refs.len(),
        n / decode_s / 1e6,
        n / floor / 1e6
    );
    let mut spec = SystemSpec::default();
    if let Ok(tiers) = std::env::var("THROUGHPUT_TIERS") {
        spec.tiers = tiers.split(',').map(String::from).collect();
    }
    let system = System::resolve(&spec, &DeviceCatalog::default())?;
    let tiers = spec.tiers.len();
    println!(
        "{:<24} {:>8} {:>10} {:>12} {:>14} {:>10}",
        "policy", "M/s", "floor/x", "misses", "counting M/s", "floor/x"
    );
    // `lru`'s median seconds, when it ran: the sampled kernels' bounds are read against it.
    let mut lru_seconds = None;
    for p in &policies {
        let spec = PolicySpec::parse(p)?;
        let ctx = PolicyCtx {
            capacity,
            tiers,
            page_size,
        };
        let (mut secs, mut counting_secs) = (Vec::new(), Vec::new());
        let mut misses = 0;
        for _ in 0..repeats {
            let r = replay(
                &spec,
                &ctx,
                Accounting::new(system.clone()),
                &batches,
                distinct,
            )?;
            secs.push(r.policy_seconds);
            misses = r.stats.misses_total();
            // The same policy reporting to a sink that only counts hits and misses: how much
            // of the loop is the policy and how much the accounting.
            let r = replay(&spec, &ctx, HitMissCounter::default(), &batches, distinct)?;
            assert_eq!(r.stats.misses_total(), misses, "{p}: sinks disagree");
            counting_secs.push(r.policy_seconds);
        }
        let (s, c) = (median(secs), median(counting_secs));
        if p == "lru" {
            lru_seconds = Some(s);
        }
        println!(
            "{:<24} {:>8.2} {:>10.1} {:>12} {:>14.2} {:>10.1}",
            p,
            n / s / 1e6,
            s / floor,
            misses,
            n / c / 1e6,
            c / floor
        );
    }
    // The leanest CLOCK and LRU we could write (same misses, no sink): what those two policies
    // can do on this machine, to read the floor ratios against; and the leanest sampled
    // eviction with 16, 64 and 128 samples (LHD's, Hyperbolic's and BeladySize's counts), the
    // most a sampling policy with that many samples can do, with and without the draws' cost.
    // `-free`: the draws made before the clock starts, no generator at all.
    type Kernel = Box<dyn Fn(&[u32], usize, usize) -> (f64, u64)>;
    let mut kernels: Vec<(String, Kernel)> = vec![
        ("kernel:clock".into(), Box::new(bench::clock_kernel)),
        ("kernel:lru".into(), Box::new(bench::lru_kernel)),
    ];
    for free in [false, true] {
        for samples in [16, 64, 128] {
            let name = format!("kernel:sampled{samples}{}", if free { "-free" } else { "" });
            let kernel = move |i: &[u32], d, c| bench::sampled_kernel(i, d, c, samples, free);
            kernels.push((name, Box::new(kernel)));
        }
    }
    let mut kernel_seconds = Vec::new();
    for (name, kernel) in kernels {
        if !kernel_names.is_empty() && !kernel_names.contains(&name) {
            continue;
        }
        let mut misses = 0;
        let s = median(
            (0..repeats)
                .map(|_| {
                    let (s, m) = kernel(&ids, distinct, capacity);
                    misses = m;
                    s
                })
                .collect(),
        );
        println!(
            "{:<24} {:>8.2} {:>10.1} {:>12}",
            name,
            n / s / 1e6,
            s / floor,
            misses
        );
        kernel_seconds.push((name, s));
    }
    // A sampling policy pays what `lru` pays beyond its bare kernel (the accounting sink, the
    // engine's loop) on top of its sampled eviction: the kernel's time plus that difference is
    // the most such a policy can do, as a ratio to `lru` of this run.
    let bare_lru = kernel_seconds.iter().find(|(k, _)| k == "kernel:lru");
    if let (Some(lru), Some((_, bare))) = (lru_seconds, bare_lru) {
        let overhead = (lru - bare).max(0.0);
        println!(
            "lru's sink and loop: {:.1} ns a reference; a sampled policy's bound (x lru):",
            overhead / n * 1e9
        );
        for (name, s) in kernel_seconds.iter().filter(|(k, _)| k.contains("sampled")) {
            println!("  {name:<22} {:>6.3}", lru / (s + overhead));
        }
    }
    Ok(())
}
