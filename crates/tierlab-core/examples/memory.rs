//! Bytes of policy metadata per resident page and per distinct page, measured
//! with a counting global allocator (live heap bytes, as requested from the
//! allocator, so `Vec` slack capacity counts):
//!
//! `cargo run --release -p tierlab-core --example memory -- [TRACE] [CACHE_FRACTION] [POLICY...]`
//!
//! TRACE defaults to `zipf:alpha=1.0,pages=1000000,n=10000000,seed=1`, the
//! cache to 10% of the distinct pages. For each policy:
//! - `per_distinct`: heap that `grow(distinct)` adds before any access (the
//!   page-id -> slot table and any other per-id array), divided by the
//!   distinct pages;
//! - `per_resident`: everything else the policy holds after replaying the
//!   trace (frames, list links, ghost entries, free lists, slack), divided by
//!   the pages resident at the end (== capacity once the cache has filled).
//!
//! Every reference carries its next use, as in a run with an offline policy. Hybrid and tiered
//! policies are built for two memory tiers. The policy runs against a sink that keeps nothing, so the engine's own
//! per-run state (the accounting sink's swap bitmap: 1 bit per distinct page)
//! is not included.

mod common;

use std::alloc::{GlobalAlloc, Layout, System as SysAlloc};
use std::sync::atomic::{AtomicIsize, Ordering};
use tierlab_core::policy::{all_policies, PolicyCtx, PolicySpec};
use tierlab_core::sim::check::NullSink;
use tierlab_core::sim::engine::build_instance;
use tierlab_core::sim::RefBatch;
use tierlab_core::trace::TraceSpec;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { SysAlloc.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { SysAlloc.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { SysAlloc.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { SysAlloc.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = common::args()?;
    let (trace, frac, rest) = (args.trace, args.fraction, args.rest);
    let policies = common::policies(
        &rest,
        &[
            "fifo", "lru", "clock", "arc", "2q", "s3fifo", "sieve", "lirs",
        ],
    );
    let mut reader = tierlab_core::trace::open(&TraceSpec::new(&trace))?;
    let page_size = reader.page_size();
    let (mut refs, distinct) = tierlab_core::sim::bench::dense_refs(reader.as_mut())?;
    // Each reference's next use, as a run gives the offline policies (OPT, OPT-WB, BeladySize);
    // without it BeladySize inserts nothing (it skips pages never used again).
    tierlab_core::sim::engine::fill_next_use(&mut refs, distinct);
    let batches = refs.batches(1 << 16);
    drop(refs);
    let capacity = common::capacity(&trace, frac, distinct);
    println!(
        "trace {trace}: {} accesses, {distinct} distinct pages; cache {capacity} pages",
        batches.iter().map(RefBatch::len).sum::<usize>()
    );
    println!(
        "{:<8} {:>10} {:>13} {:>13} {:>12}",
        "policy", "resident", "per_resident", "per_distinct", "total_MiB"
    );
    for p in &policies {
        let spec = PolicySpec::parse(p)?;
        // Hybrid and tiered policies need two memory tiers.
        let two = all_policies()
            .iter()
            .any(|i| i.name == spec.name && matches!(i.family, "hybrid" | "tiered"));
        let ctx = PolicyCtx {
            capacity,
            tiers: if two { 2 } else { 1 },
            page_size,
        };
        let before = live();
        let mut inst = build_instance(&spec, &ctx, NullSink)?;
        let built = live();
        inst.grow(distinct);
        let per_distinct_bytes = live() - built;
        for batch in &batches {
            inst.run(batch, &[]);
        }
        let total = live() - before;
        let result = inst.finish();
        // A policy may end with nothing resident (BeladySize drops each page at its last use):
        // then there is nothing to divide by, and `-` says so.
        let per_resident = match result.resident_at_end {
            0 => "-".to_string(),
            n => format!("{:.1}", (total - per_distinct_bytes) as f64 / n as f64),
        };
        println!(
            "{:<8} {:>10} {:>13} {:>13.1} {:>12.1}",
            p,
            result.resident_at_end,
            per_resident,
            per_distinct_bytes as f64 / distinct as f64,
            total as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}
