//! Multi-thread scaling of one-pass sweeps, and trace ingest speed:
//!
//! `cargo run --release -p tierlab-core --example sweep -- [DIR] [N] [REPEATS]`
//!
//! Writes the Zipf(1.0) trace over 1M pages (N accesses, default 10M) to DIR
//! (default a temp dir) as a native `.tlt` and as a csv (`time,id`), then
//! 1. ingest: times reading each file to records (`TraceReader::read_batch`)
//!    and decoding them to dense page ids (records/s);
//! 2. sweep: runs 16 sizes (1%..16% of the pages) x 8 policies = 128
//!    instances over the native trace in one engine run (the trace is decoded
//!    once per run and every batch is fed to all 128 instances) with
//!    `threads` = 1 and 2, alternating, and prints the medians and the speedup.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::engine::{run, InstanceSpec, RunOptions};
use tierlab_core::trace::{Record, TraceSpec};

const POLICIES: [&str; 8] = [
    "fifo", "lru", "clock", "arc", "2q", "s3fifo", "sieve", "lirs",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds to read every record of `spec`, and the record count.
fn ingest(spec: &TraceSpec) -> tierlab_core::Result<(f64, u64)> {
    let t0 = Instant::now();
    let mut reader = tierlab_core::trace::open(spec)?;
    let mut batch: Vec<Record> = Vec::with_capacity(1 << 16);
    let mut n = 0u64;
    loop {
        batch.clear();
        let more = reader.read_batch(&mut batch, 1 << 16)?;
        n += batch.len() as u64;
        if !more {
            break;
        }
    }
    Ok((t0.elapsed().as_secs_f64(), n))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tmp = tempfile_dir(args.first())?;
    let n: u64 = args
        .get(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000_000);
    let repeats: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(3);
    let gen = format!("zipf:alpha=1.0,pages=1000000,n={n},seed=1");
    let native = tmp.join("zipf.tlt");
    let csv = tmp.join("zipf.csv");
    if !native.exists() {
        tierlab_core::trace::native::convert(&TraceSpec::new(&gen), &native, &mut |_| Ok(()))?;
    }
    let native_spec = TraceSpec::new(&native);
    let (ids, distinct) = {
        let mut r = tierlab_core::trace::open(&native_spec)?;
        tierlab_core::sim::bench::dense_ids(r.as_mut())?
    };
    if !csv.exists() {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&csv)?);
        writeln!(w, "time,id")?;
        for (i, id) in ids.iter().enumerate() {
            writeln!(w, "{i},{id}")?;
        }
        w.flush()?;
    }
    println!("trace {gen}: {} accesses, {distinct} distinct", ids.len());

    println!("\ningest (median of {repeats}):");
    for (name, spec) in [
        ("native", native_spec.clone()),
        ("csv", TraceSpec::new(&csv).with_format("csv")),
    ] {
        let bytes = std::fs::metadata(&spec.path)?.len();
        let mut secs = Vec::new();
        let mut recs = 0;
        for _ in 0..repeats {
            let (s, r) = ingest(&spec)?;
            secs.push(s);
            recs = r;
        }
        let s = median(secs);
        println!(
            "  {name:<7} {:>7.1} M records/s  ({:.0} MB/s, {:.1} MB, {recs} records)",
            recs as f64 / s / 1e6,
            bytes as f64 / s / 1e6,
            bytes as f64 / 1e6
        );
    }
    let mut dsecs = Vec::new();
    for _ in 0..repeats {
        let mut r = tierlab_core::trace::open(&native_spec)?;
        let t0 = Instant::now();
        tierlab_core::sim::bench::dense_ids(r.as_mut())?;
        dsecs.push(t0.elapsed().as_secs_f64());
    }
    println!(
        "  native + dense ids: {:.1} M refs/s",
        ids.len() as f64 / median(dsecs) / 1e6
    );

    let instances: Vec<InstanceSpec> = POLICIES
        .iter()
        .flat_map(|p| {
            (1..=16).map(move |pct| InstanceSpec {
                policy: PolicySpec::parse(p).expect("known policy"),
                capacity: distinct * pct / 100,
            })
        })
        .collect();
    let system = System::resolve(&SystemSpec::default(), &DeviceCatalog::default())?;
    println!(
        "\nsweep: {} instances (16 sizes x {} policies), one pass each run",
        instances.len(),
        POLICIES.len()
    );
    let mut times = [Vec::new(), Vec::new()];
    let mut misses: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for (k, threads) in [1usize, 2].into_iter().enumerate() {
            let opts = RunOptions {
                threads,
                ..RunOptions::default()
            };
            let mut reader = tierlab_core::trace::open(&native_spec)?;
            let t0 = Instant::now();
            let out = run(reader.as_mut(), &instances, &system, &opts, &mut |_| Ok(()))?;
            times[k].push(t0.elapsed().as_secs_f64());
            misses[k] = out.results.iter().map(|r| r.stats.misses_total()).collect();
        }
    }
    assert_eq!(misses[0], misses[1], "threads must not change results");
    let (t1, t2) = (median(times[0].clone()), median(times[1].clone()));
    let refs = ids.len() as f64 * instances.len() as f64;
    println!(
        "  threads=1: {t1:.2} s ({:.1} M instance-accesses/s)",
        refs / t1 / 1e6
    );
    println!(
        "  threads=2: {t2:.2} s ({:.1} M instance-accesses/s)",
        refs / t2 / 1e6
    );
    println!("  speedup: {:.2}x", t1 / t2);
    Ok(())
}

fn tempfile_dir(arg: Option<&String>) -> std::io::Result<PathBuf> {
    let dir = match arg {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join("tierlab-sweep-bench"),
    };
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
