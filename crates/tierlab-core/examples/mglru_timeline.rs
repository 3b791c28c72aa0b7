//! The model's side of the in-VM generation diagnostic (`TIERLAB_VM_LRU_GEN`,
//! docs/kernel-check.md): MGLRU's memory-cgroup reclaims and generations over
//! a kernel-check cell's references, each line stamped with the file misses
//! so far, the clock the kernel's lines carry (its page-cache insertions).
//!
//! `cargo run -p tierlab-core --example mglru_timeline -- TRACE CAPACITY [CONFIG]`
//!
//! TRACE is a cell's kept trace (`--keep-traces`), CAPACITY the cell's
//! capacity in pages (the `capacity` column of kernel-check's CSV), CONFIG the
//! policy's parameters as JSON (default: the configuration kernel-check
//! replays on 6.12's anonymous cells, `{"file_access": "read",
//! "reclaim_batch": 32, "version": "6.1", "sync_swap": true}`). One line per
//! reference that reclaimed: `<file misses> R <anon reclaimed> <file
//! reclaimed> <agings> | <seq>:<anon pages>:<file pages> ... | anon ...
//! file ...` (the generations after it, oldest first, `-` for a type's
//! generation below its `min_seq`; then the refault controller per type and
//! tier, `<refaulted>r<evicted>e<protected>p<avg_refaulted>R<avg_total>T`,
//! the counts the kernel's `lru_gen_full` prints), and a last line `total`
//! with the policy's counters. Cost: one pass over the references; a line
//! per reclaim.

use std::collections::HashMap;
use std::path::Path;
use tierlab_core::kernel::driver::references_from_trace;
use tierlab_core::kernel::workload::{ANON_BIT, PAGE_MASK, WRITE_BIT};
use tierlab_core::policy::swap::mglru::{Mglru, MglruConfig};
use tierlab_core::policy::{Policy, PolicyCtx, PolicyDef};
use tierlab_core::sim::check::NullSink;
use tierlab_core::sim::{RefBatch, RefFields};
use tierlab_core::trace::{Kind, Op};

fn gens(p: &Mglru) -> String {
    let (max_seq, min_seq) = p.seqs();
    let lo = min_seq[0].min(min_seq[1]);
    let mut s = String::new();
    for seq in lo..=max_seq {
        let n = |file: bool| {
            if seq < min_seq[file as usize] {
                "-".to_string()
            } else {
                p.gen_len(seq, file).to_string()
            }
        };
        s += &format!(" {seq}:{}:{}", n(false), n(true));
    }
    s
}

/// The refault controller per type and tier: `refaulted/evicted/protected`
/// of the current generation and `avg_refaulted/avg_total`, as the kernel's
/// `lru_gen_full` prints them (r e p, R T).
fn ctrl(p: &Mglru) -> String {
    let mut s = String::new();
    for file in [false, true] {
        s += if file { " file" } else { " anon" };
        for tier in 0..4 {
            let (r, e, pr) = p.ctrl_counts(file, tier);
            let (ar, at) = p.ctrl_avg(file, tier);
            s += &format!(" {r}r{e}e{pr}p{ar}R{at}T");
        }
    }
    s
}

fn counter(p: &Mglru, name: &str) -> u64 {
    p.counters().iter().find(|c| c.0 == name).map_or(0, |c| c.1)
}

fn run(args: &[String]) -> Result<(), String> {
    if args.len() < 3 {
        return Err("usage: mglru_timeline TRACE CAPACITY [CONFIG_JSON]".into());
    }
    let refs = references_from_trace(Path::new(&args[1])).map_err(|e| e.to_string())?;
    let capacity: usize = args[2]
        .parse()
        .map_err(|_| format!("CAPACITY: expected pages, found '{}'", args[2]))?;
    let cfg = args.get(3).map_or(
        r#"{"file_access": "read", "reclaim_batch": 32, "version": "6.1", "sync_swap": true}"#,
        |s| s.as_str(),
    );
    let cfg: MglruConfig = serde_json::from_str(cfg).map_err(|e| format!("CONFIG '{cfg}': {e}"))?;
    let ctx = PolicyCtx {
        capacity,
        tiers: 1,
        page_size: 4096,
    };
    let mut p = Mglru::build(&cfg, &ctx).map_err(|e| e.to_string())?;
    let mut ids: HashMap<u64, u32> = HashMap::new();
    for &r in &refs {
        let n = ids.len() as u32;
        ids.entry(r & (PAGE_MASK | ANON_BIT)).or_insert(n);
    }
    p.grow(ids.len());
    let mut sink = NullSink;
    let mut file_misses = 0u64;
    let (mut ra, mut rf, mut aging) = (0, 0, 0);
    for (i, &r) in refs.iter().enumerate() {
        let kind = if r & ANON_BIT != 0 {
            Kind::Anon
        } else {
            Kind::File
        };
        let id = ids[&(r & (PAGE_MASK | ANON_BIT))];
        let resident = p.seq_of(id).is_some();
        let one = RefBatch::single(
            i as u64,
            RefFields {
                time: i as u64,
                page: r & PAGE_MASK,
                id,
                app: 0,
                op: if r & WRITE_BIT != 0 {
                    Op::Write
                } else {
                    Op::Read
                },
                kind,
                req_start: true,
            },
        );
        p.access(&one.get(0), &mut sink);
        if !resident && kind == Kind::File {
            file_misses += 1;
        }
        let (a, f, g) = (
            counter(&p, "reclaimed_anon"),
            counter(&p, "reclaimed_file"),
            counter(&p, "aging"),
        );
        if (a, f, g) != (ra, rf, aging) {
            println!(
                "{} R {} {} {} |{} |{}",
                file_misses - u64::from(!resident && kind == Kind::File),
                a - ra,
                f - rf,
                g - aging,
                gens(&p),
                ctrl(&p)
            );
            (ra, rf, aging) = (a, f, g);
        }
    }
    let c: Vec<String> = p
        .counters()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    println!("total file_misses={file_misses} {}", c.join(" "));
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = run(&args) {
        eprintln!("mglru_timeline: {e}");
        std::process::exit(1);
    }
}
